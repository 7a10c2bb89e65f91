"""autograd's newer graph APIs against PyTorch: `allow_mutation_on_saved_tensors`,
`increment_version`, `GradientEdge` / `get_gradient_edge`, `register_multi_grad_hook`
and `Tensor.register_post_accumulate_grad_hook`.

Each scenario is a function of the module (`torch` or `minigrad`) that returns what
it saw, step by step: gradients and values (as lists; only IEEE-exact ops are used,
so they must match exactly), versions, node names, which hooks ran with what, and
errors as (type, message) with `torch` read as `minigrad`. Both lists must be equal.
"""

from __future__ import annotations

import contextlib

import pytest
from parity_harness import raised


def _same(torch, scenario) -> list:
    import minigrad

    theirs, ours = scenario(torch), scenario(minigrad)
    assert ours == theirs
    return ours


def _v(t) -> list | None:
    return None if t is None else t.tolist()


def _node(edge_or_node) -> str:
    node = getattr(edge_or_node, "node", edge_or_node)
    return node.name().replace("torch::", "minigrad::")


# -- allow_mutation_on_saved_tensors ---------------------------------------------------------


def _mutation_context(m):
    return m.autograd.graph.allow_mutation_on_saved_tensors()


def _mutated_after_saving(m, mutate):
    """`b * b` saves `b`; `mutate(b)` then changes it in place; backward inside."""
    seen = []
    with _mutation_context(m) as ctx:
        seen.append(type(ctx).__name__)
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        out = (b * b).sum()
        mutate(m, b)
        seen += [b._version, _v(b)]
        out.backward()
        seen.append(_v(a.grad))
    return seen


MUTATIONS = {
    "mul_": lambda m, b: b.mul_(10),
    "twice": lambda m, b: (b.mul_(2), b.add_(1)),
    "zero_ under no_grad": lambda m, b: _under_no_grad(m, lambda: b.zero_()),
    "copy_": lambda m, b: b.copy_(m.tensor([7.0, 8.0, 9.0])),
    "setitem of the first element": lambda m, b: b.__setitem__(0, 10.0),
    "a view at the same address": lambda m, b: b[:2].mul_(10),
    # PyTorch matches by (address, version): a view that starts further in is not
    # noticed, and the hooks turned the version check off: the gradient is wrong.
    "a view further in (not noticed)": lambda m, b: b[1:].mul_(10),
    "fill_": lambda m, b: b.fill_(4.0),
}


def _under_no_grad(m, fn):
    with m.no_grad():
        fn()


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_saved_tensor_mutated_in_place_is_cloned_first(torch, name):
    _same(torch, lambda m: _mutated_after_saving(m, MUTATIONS[name]))


def test_without_the_context_the_same_program_fails_the_version_check(torch):
    def scenario(m):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        out = (b * b).sum()
        b.mul_(10)
        return raised(out.backward)

    assert _same(torch, scenario)[0] == "RuntimeError"


def test_the_saved_output_of_an_op_is_cloned_too(torch):
    def scenario(m):
        with _mutation_context(m):
            a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            e = a * a  # (a non-leaf to mutate)
            r = e.relu()  # relu saves its output
            out = (r * 3).sum()
            r.mul_(-1)
            out.backward()
            return [_v(a.grad), r._version]

    _same(torch, scenario)


def test_an_optimizer_step_between_forward_and_backward(torch):
    def scenario(m):
        with _mutation_context(m):
            w = m.tensor([1.0, 2.0], requires_grad=True)
            loss = (w * w).sum()
            w.grad = m.tensor([1.0, 1.0])
            m.optim.SGD([w], lr=0.5).step()
            loss.backward()
            return [_v(w), _v(w.grad), w._version]

    _same(torch, scenario)


def test_saved_tensor_unpacks_to_the_clone_and_the_context_clears_on_exit(torch):
    def scenario(m):
        with _mutation_context(m) as ctx:
            a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a.clone()
            out = b * b
            before = [len(ctx.cloned), len(ctx.original), len(ctx.sid_to_tid)]
            b.mul_(2)
            saved = out.grad_fn._saved_self
            seen = [before, len(ctx.cloned), len(ctx.original), _v(saved), saved._version,
                    saved is b, saved.requires_grad, _node(saved.grad_fn)]
            out.sum().backward(retain_graph=True)
            out.sum().backward()
            seen.append(_v(a.grad))
        seen += [len(ctx.cloned), len(ctx.original), len(ctx.sid_to_tid)]
        return seen

    _same(torch, scenario)


def test_mutation_before_saving_needs_no_clone(torch):
    def scenario(m):
        with _mutation_context(m) as ctx:
            a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a.clone()
            b.mul_(2)
            out = (b * b).sum()
            out.backward()
            return [_v(a.grad), len(ctx.cloned)]

    _same(torch, scenario)


def test_backward_outside_the_context_is_refused(torch):
    def scenario(m):
        with _mutation_context(m):
            a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a.clone()
            out = (b * b).sum()
            b.mul_(3)
        seen = [raised(out.backward), raised(lambda: out.grad_fn._saved_self)]
        with _mutation_context(m):  # (another context: not the one that recorded)
            seen.append(raised(out.backward))
        return seen

    seen = _same(torch, scenario)
    assert seen[0][0] == "AssertionError"


def test_contexts_cannot_be_nested_and_trying_switches_the_outer_one_off(torch):
    def scenario(m):
        with _mutation_context(m):
            a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            out = (a.clone() * a.clone()).sum()

            def nest():
                with _mutation_context(m):
                    pass

            return [raised(nest), raised(out.backward)]

    seen = _same(torch, scenario)
    assert seen[0] == ("RuntimeError", "allow_mutation_on_saved_tensors contexts cannot be nested")


def test_a_graph_freed_by_backward_forgets_its_saved_tensors(torch):
    def scenario(m):
        with _mutation_context(m) as ctx:
            a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            b = a.clone()
            out = (b * b).sum()
            out.backward()
            del out
            b.sin_()  # (nothing to clone: the saved b went with the graph)
            return [len(ctx.cloned), _v(a.grad)]

    _same(torch, scenario)


def test_a_saved_number_is_a_wrapped_number_the_context_hands_on_as_a_number(torch):
    # A node's saved Python number is a 0-d tensor that promotes as the number does;
    # inside the context PyTorch's dispatch mode sees it as the number itself, so
    # detaching it, reading it or its numpy array fails there (and works outside).
    def scenario(m):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        saved = [(a * number).grad_fn._saved_other for number in (-1.5, 3)]
        seen = [str((m.ones(2, dtype=m.int64) * saved[0]).dtype).split(".")[-1]]
        with _mutation_context(m):
            for v in saved:
                seen += [raised(v.detach), raised(v.item), raised(v.numpy), v.tolist()]
        return seen + [raised(saved[0].detach), saved[1].item()]

    seen = _same(torch, scenario)
    assert seen[0] == "float32" and seen[1][0] == "RuntimeError"


def test_inside_the_context_backward_builds_gradients_out_of_place(torch):
    # Under the context's dispatch mode PyTorch's backward formulas (indexing's,
    # sort's, max's) and its input buffer work out of place: the leaf's `.grad` is at
    # version 0 after one backward (1, 2 outside), then 1 after adding into it.
    programs = [lambda a: a[a > 0], lambda a: a.sort()[0], lambda a: a.max(0)[0],
                lambda a: a.exp() * 1 + a.sin() * 1, lambda a: a.gather(0, a.argsort())]

    def scenario(m):
        seen = []
        for inside in (False, True):
            for program in programs:
                a = m.tensor([1.0, -2.0, 3.0], requires_grad=True, dtype=m.float64)
                with _mutation_context(m) if inside else contextlib.nullcontext():
                    out = program(a).sum()
                    out.backward(retain_graph=True)
                    first = a.grad._version
                    out.backward()
                seen.append((first, a.grad._version, _v(a.grad)))
        return seen

    seen = _same(torch, scenario)
    assert seen[0][:2] == (1, 2) and seen[len(programs)][:2] == (0, 1)


# -- increment_version ---------------------------------------------------------------------


def test_increment_version(torch):
    def scenario(m):
        iv = m.autograd.graph.increment_version
        a = m.ones(3)
        seen = []
        iv(a)
        seen.append(a._version)
        iv([a, a])
        seen.append(a._version)
        iv(t for t in (a,))
        seen.append(a._version)
        x = m.ones(3, requires_grad=True)
        v = x[1:]
        iv(v)  # a view and its base share one count
        seen += [x._version, v._version]
        for bad in (3, None, [3], [a, 3]):  # ([a, 3] counts a, then refuses 3)
            seen += [raised(lambda bad=bad: iv(bad)), a._version]
        return seen

    _same(torch, scenario)


def test_increment_version_makes_backward_refuse_a_saved_tensor(torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        out = (y * y).sum()
        m.autograd.graph.increment_version(y)  # (as if y had been written behind autograd)
        return [y._version, raised(out.backward)]

    seen = _same(torch, scenario)
    assert seen[1][0] == "RuntimeError"


# -- GradientEdge / get_gradient_edge --------------------------------------------------------


def test_get_gradient_edge(torch):
    def scenario(m):
        g = m.autograd.graph
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = [g.GradientEdge._fields, raised(lambda: g.get_gradient_edge(m.ones(2)))]
        e = g.get_gradient_edge(x)
        seen += [_node(e), e.output_nr, e.ownership_token, len(e), isinstance(e, tuple),
                 e.node is x.grad_fn, e.node is g.get_gradient_edge(x).node]
        y = x * 2
        e = g.get_gradient_edge(y)
        seen += [_node(e), e.output_nr, e.node is y.grad_fn]
        _, second = m.stack([x, x]).unbind()
        e = g.get_gradient_edge(second)
        seen += [_node(e), e.output_nr]
        return seen

    _same(torch, scenario)


def test_a_view_made_in_no_grad_mode_has_no_edge(torch):
    # Such a view requires grad (its base does) but has neither a grad_fn nor an
    # AccumulateGrad: no gradient edge (PyTorch's AssertionError), and as an input of
    # grad() or backward(inputs=) it is unused. minigrad had made it an AccumulateGrad
    # of its own, and refused it as an input ("does not require grad").
    def scenario(m):
        g = m.autograd.graph
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with m.no_grad():
            v = a.view(3)
        out = (v * a).sum()
        seen = [v.requires_grad, v.is_leaf, out.grad_fn.next_functions[0][0].next_functions[0],
                raised(lambda: g.get_gradient_edge(v)),
                raised(lambda: g.register_multi_grad_hook([v, a], print)),
                raised(lambda: m.autograd.grad(out, [v, a], retain_graph=True))]
        got = m.autograd.grad(out, [v, a], allow_unused=True, retain_graph=True)
        seen.append([_v(t) for t in got])
        out.backward(inputs=[v], retain_graph=True)
        seen += [_v(a.grad), _v(v.grad)]
        out.backward(inputs=[v, a])
        seen += [_v(a.grad), _v(v.grad)]
        return seen

    _same(torch, scenario)


def test_a_gradient_edge_as_an_input_of_grad(torch):
    def scenario(m):
        g = m.autograd.graph
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        y = x * 2
        z = (y * 3).sum()
        seen.append([_v(t) for t in m.autograd.grad(z, g.get_gradient_edge(y), retain_graph=True)])
        seen.append([_v(t) for t in m.autograd.grad(z, [g.get_gradient_edge(x), y])])
        # The tensor y stood for is modified in place: its edge still names its place.
        y = x * 2
        edge = g.get_gradient_edge(y)
        z = (y * 3).sum()
        y.add_(1)
        seen.append([_v(t) for t in m.autograd.grad(z, edge)])
        other = m.ones(2, requires_grad=True)
        for kwargs in ({}, {"materialize_grads": True}, {"allow_unused": True}):
            z = (x * 3).sum()
            seen.append(raised(lambda kwargs=kwargs, z=z: m.autograd.grad(
                z, [g.get_gradient_edge(other)], **kwargs)))
        z = (x * 3).sum()
        seen.append(m.autograd.grad(z, [g.get_gradient_edge(other)], allow_unused=True))
        seen.append(raised(lambda: m.autograd.grad((x * 3).sum(), [g.GradientEdge(None, 0)])))
        seen.append(raised(lambda: m.autograd.grad((x * 3).sum(), [(x.grad_fn, 0)])))
        seen.append(raised(lambda: m.autograd.grad((x * 3).sum(), "x")))
        return seen

    _same(torch, scenario)


def test_a_gradient_edge_as_an_input_of_backward(torch):
    def scenario(m):
        g = m.autograd.graph
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        (y * 3).sum().backward(inputs=[g.get_gradient_edge(x)])
        seen = [_v(x.grad)]
        y = x * 2
        # A non-leaf's edge: its node runs, and nothing is stored anywhere.
        (y * 3).sum().backward(inputs=g.get_gradient_edge(y))
        seen += [_v(x.grad), y.retains_grad]
        return seen

    _same(torch, scenario)


def _edge_output_calls(m):
    """Calls with a GradientEdge among the outputs, each on a fresh graph: (name,
    call) pairs; `x` the leaf, `y = x * 2` the edge's tensor, `z` a scalar of it."""
    g = m.autograd.graph
    f64 = m.float64

    def graph(scalar=False):
        x = m.tensor([1.0, 2.0, 3.0], dtype=f64, requires_grad=True)
        y = x * 2 if not scalar else (x * 2).sum()
        return x, y, g.get_gradient_edge(y), (y * y).sum()

    def ones(*shape, **kw):
        return m.ones(*shape, dtype=kw.pop("dtype", f64), **kw)

    def grad(*args, scalar=False, **kw):
        x, y, e, z = graph(scalar)
        got = m.autograd.grad(*[{"x": x, "y": y, "e": e, "z": z}.get(a, a) if isinstance(
            a, str) else [{"x": x, "y": y, "e": e, "z": z}.get(b, b) for b in a]
            for a in args], **kw)
        return [_v(t.detach()) for t in got] + [None if t.grad_fn is None else _node(t.grad_fn)
                                                for t in got]

    def backward(outputs, grads, scalar=False, leaf_edge=False, **kw):
        x, y, e, z = graph(scalar)
        names = {"x": x, "y": y, "e": g.get_gradient_edge(x) if leaf_edge else e, "z": z}
        m.autograd.backward([names[o] for o in outputs], grads, **kw)
        return _v(x.grad)

    return {
        "grad_outputs given": lambda: grad("e", "x", ones(3)),
        "no grad_outputs, 3 elements": lambda: grad("e", "x"),
        "no grad_outputs, a scalar": lambda: grad("e", "x", scalar=True),
        "a None grad_output": lambda: grad(["e"], ["x"], [None]),
        "with a tensor output": lambda: grad(["e", "z"], ["x"], [ones(3), None]),
        "the edge's shape checked": lambda: grad(["e"], ["x"], [ones(2)]),
        "a scalar edge, 3 gradients": lambda: grad("e", "x", ones(3), scalar=True),
        "float32 grad_outputs": lambda: grad("e", "x", ones(3, dtype=m.float32)),
        "int64 grad_outputs": lambda: grad("e", "x", ones(3, dtype=m.int64)),
        "create_graph": lambda: grad("e", "x", ones(3, requires_grad=True), create_graph=True),
        "the edge as its own input": lambda: grad("e", "e", ones(3) * 5),
        "a leaf's edge": lambda: grad(m.autograd.graph.get_gradient_edge(
            m.tensor([1.0], requires_grad=True)), "x", ones(1), allow_unused=True),
        "a number as grad_outputs": lambda: grad("e", "x", 3.0),
        "backward": lambda: backward(["e"], [ones(3)]),
        "backward, no gradient": lambda: backward(["e"], None),
        "backward, a scalar edge": lambda: backward(["e"], None, scalar=True),
        "backward with a tensor": lambda: backward(["e", "z"], [ones(3), None]),
        "backward into a leaf's edge": lambda: backward(["e"], [ones(3) * 2], leaf_edge=True),
        "backward, inputs=": lambda: backward(["e"], [ones(3)], inputs=[graph()[0]]),
    }


@pytest.mark.parametrize("name", list(_edge_output_calls(__import__("minigrad"))))
def test_a_gradient_edge_as_an_output(torch, name):
    """`grad()` and `backward()` start from a GradientEdge as from its tensor: its
    gradient given, or ones for a one-element edge; PyTorch's errors otherwise."""
    _same(torch, lambda m: raised(_edge_output_calls(m)[name]))


def test_grad_into_one_edge_twice(torch):
    """Two GradientEdges to one place both get its gradient (by grad), and a leaf
    given twice (as itself and by its edges) gets its gradient once (by backward)."""
    def scenario(m):
        g = m.autograd.graph
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        z = (y * y).sum()
        edges = [g.get_gradient_edge(y), g.get_gradient_edge(y), g.get_gradient_edge(x)]
        seen = [[_v(t) for t in m.autograd.grad(z, [*edges, x, x], retain_graph=True)]]
        z.backward(inputs=[x, g.get_gradient_edge(x), g.get_gradient_edge(x)],
                   retain_graph=True)
        seen.append(_v(x.grad))
        return seen

    _same(torch, scenario)


def test_an_edge_made_by_hand_as_an_output_is_refused_clearly():
    """minigrad's nodes keep no shapes of their outputs: an edge not made by
    `get_gradient_edge` (nor to a leaf) cannot say what gradient it takes."""
    import minigrad

    x = minigrad.ones(3, requires_grad=True)
    edge = minigrad.autograd.graph.GradientEdge((x * 2).grad_fn, 0)
    with pytest.raises(NotImplementedError, match="get_gradient_edge"):
        minigrad.autograd.grad(edge, x, minigrad.ones(3))


# -- register_post_accumulate_grad_hook ------------------------------------------------------


def test_post_accumulate_grad_hook(torch):
    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen.append(raised(lambda: m.ones(2).register_post_accumulate_grad_hook(print)))
        seen.append(raised(lambda: (x * 2).register_post_accumulate_grad_hook(print)))
        handle = x.register_post_accumulate_grad_hook(
            lambda p: seen.append(("hook", p is x, _v(p.grad), p.grad._version,
                                   m.is_grad_enabled())))
        seen.append(type(handle).__name__)
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        m.autograd.grad((x * 2).sum(), x)  # (grad() accumulates nothing: no hook)
        seen.append("after grad()")
        (x * x).sum().backward(inputs=[x])
        handle.remove()
        (x * 2).sum().backward()
        seen.append(_v(x.grad))
        return seen

    _same(torch, scenario)


def test_post_accumulate_grad_hooks_run_after_tensor_hooks_in_order(torch):
    def scenario(m):
        seen = []
        x = m.ones(3, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        x.register_post_accumulate_grad_hook(lambda p: seen.append(("first", _v(p.grad))))
        x.register_post_accumulate_grad_hook(lambda p: setattr(p, "grad", None))
        x.register_post_accumulate_grad_hook(lambda p: seen.append(("third", _v(p.grad))))
        (x * 2).sum().backward()
        seen.append(_v(x.grad))
        return seen

    _same(torch, scenario)


def test_an_optimizer_step_inside_backward(torch):
    def scenario(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        u = m.tensor([3.0, -1.0], requires_grad=True)

        def step(p):
            with m.no_grad():
                p.sub_(p.grad * 0.5)
            p.grad = None

        for p in (w, u):
            p.register_post_accumulate_grad_hook(step)
        seen = []
        for _ in range(2):
            (w * u).sum().backward()
            seen += [_v(w), _v(u), w.grad, w._version]
        return seen

    _same(torch, scenario)


def test_a_post_accumulate_grad_hook_must_return_none(torch):
    def scenario(m):
        seen = []
        for result in (5, "grad", None):
            x = m.ones(2, requires_grad=True)
            x.register_post_accumulate_grad_hook(
                lambda p, result=result: m.ones(2) if result is None else result)
            seen += [raised(lambda x=x: (x * 2).sum().backward()), _v(x.grad)]

        def boom(p):
            raise ValueError("boom")

        x = m.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(boom)
        seen += [raised(lambda: (x * 2).sum().backward()), _v(x.grad)]
        return seen

    _same(torch, scenario)


def test_post_accumulate_grad_hook_with_create_graph(torch):
    import warnings

    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(
            lambda p: seen.append((_node(p.grad.grad_fn), m.is_grad_enabled())))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x * x).sum().backward(create_graph=True)
        return seen

    _same(torch, scenario)


def test_a_post_accumulate_hook_is_an_event_of_a_traced_backward():
    import minigrad
    from minigrad.autograd import events as ev

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)

    def step(p):
        p.grad = None

    x.register_post_accumulate_grad_hook(step)
    fired = [e for e in minigrad.autograd.backward_events((x * 3).sum())
             if isinstance(e, ev.HookFired)]
    assert [(e.kind, e.hook) for e in fired] == [("postaccumulate", step)]
    assert fired[0].before.tolist() == [3.0, 3.0] and fired[0].after is None
    assert x.grad is None


# -- register_multi_grad_hook ----------------------------------------------------------------


def _collect(seen, tag):
    return lambda grads: seen.append((tag, [_v(g) for g in grads]))


def test_multi_grad_hook_all(torch):
    def scenario(m):
        g = m.autograd.graph
        seen = []
        a = m.ones(2, requires_grad=True)
        b = m.full((2,), 2.0, requires_grad=True)
        c, d = a * b, a * b
        handle = g.register_multi_grad_hook((a, b, c, d), _collect(seen, "all"))
        seen.append((type(handle).__name__, len(handle.handles)))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        seen.append(raised(lambda: m.autograd.grad(c.sum(), a, retain_graph=True)))
        seen.append(_v(m.autograd.grad(c.sum(), c, retain_graph=True)[0]))
        m.autograd.grad(c.sum(), (c, d), allow_unused=True, retain_graph=True)
        (c.sum() + d.sum()).backward(retain_graph=True)
        handle.remove()
        c.sum().backward(retain_graph=True)
        seen.append("removed")
        return seen

    _same(torch, scenario)


def test_multi_grad_hook_any(torch):
    def scenario(m):
        g = m.autograd.graph
        seen = []
        a = m.ones(2, requires_grad=True)
        b = m.full((2,), 2.0, requires_grad=True)
        c = a * b
        handle = g.register_multi_grad_hook(
            (a, b, c, m.ones(2)), lambda grad: seen.append(_v(grad)), mode="any")
        seen.append(len(handle.handles))  # (tensors that need no grad get no hook)
        (c * 3).sum().backward(retain_graph=True)
        (c * 3).sum().backward()
        return seen

    _same(torch, scenario)


def test_multi_grad_hook_errors_and_order_with_tensor_hooks(torch):
    def scenario(m):
        g = m.autograd.graph
        seen = []
        a = m.ones(2, requires_grad=True)
        seen.append(raised(lambda: g.register_multi_grad_hook((a,), print, mode="some")))
        seen.append(raised(lambda: g.register_multi_grad_hook((a, m.ones(2)), print)))
        seen.append(raised(lambda: g.register_multi_grad_hook((a,), print, "all")))
        e = m.ones(2, requires_grad=True)
        f = e * 2
        g.register_multi_grad_hook((e, f), _collect(seen, "all"))
        f.register_hook(lambda grad: grad * 10)  # (runs after the multi-grad hook's own)
        f.sum().backward()
        seen.append(_v(e.grad))
        h = g.register_multi_grad_hook((a,), print)
        seen.append(len(h.handles))
        return seen

    _same(torch, scenario)


def test_backward_with_inputs_runs_post_accumulate_hooks_in_the_engines_order(torch):
    def scenario(m):
        seen = []
        a = m.ones(2, requires_grad=True)
        b = m.ones(2, requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda p: seen.append(("a", _v(b.grad))))
        b.register_post_accumulate_grad_hook(lambda p: seen.append(("b", _v(a.grad))))
        (a * 2 + b * 3).sum().backward(inputs=[a, b])
        (a * 2 + b * 3).sum().backward(inputs=[a, a])  # (a leaf named twice: once)
        seen.append(_v(a.grad))
        y = a * 4
        (y * 2 + b * 3).sum().backward(
            inputs=[y, a, m.autograd.graph.get_gradient_edge(b)])
        seen += [_v(a.grad), _v(b.grad), _v(y.grad)]
        return seen

    _same(torch, scenario)


def test_the_edge_of_one_output_of_a_multi_output_node(torch):
    def scenario(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        r0, r1 = x.unbind()
        out = (r1 * 5).sum() + (r0 * 7).sum()
        edge = m.autograd.graph.get_gradient_edge(r1)
        return [edge.output_nr, [_v(g) for g in m.autograd.grad(out, [edge, r0])]]

    _same(torch, scenario)


def test_the_context_with_other_saved_tensor_hooks(torch):
    def scenario(m):
        g = m.autograd.graph
        log = []
        with _mutation_context(m) as ctx:
            a = m.tensor([1.0, 2.0], requires_grad=True)
            b = a * 1
            # Inner hooks win: b is packed by them, so nothing is copied on the write.
            with g.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                       lambda t: log.append("unpack") or t):
                out = (b * b).sum()
            b.mul_(5)
            out.backward()
            log += [_v(a.grad), len(ctx.cloned)]

        def disabled_outside():
            with g.disable_saved_tensors_hooks("no hooks here"), _mutation_context(m):
                pass

        def disabled_inside():
            with _mutation_context(m), g.disable_saved_tensors_hooks("no hooks here"):
                pass

        log += [raised(disabled_outside), raised(disabled_inside)]
        with _mutation_context(m):  # (usable again after those failures)
            a = m.tensor([1.0, 2.0], requires_grad=True)
            b = a * 1
            out = (b * b).sum()
            b.add_(1)
            out.backward()
            log.append(_v(a.grad))
        return log

    _same(torch, scenario)

"""Saved-tensor hooks and checkpointing against PyTorch.

Each program runs inside `saved_tensors_hooks` whose pack and unpack hooks write to a
log, one entry per call, naming the tensor they were given (`x` or `o` for the
program's leaves, else its shape, producer, requires_grad, version and dtype). The
harness then describes the graph (reading every `_saved_*`, which unpacks) and runs
backward, so the log holds every pack and unpack call in order: it must be PyTorch's,
as must everything the harness compares.
"""

from __future__ import annotations

import threading
import warnings

import pytest
from parity_harness import check, raised

X = [0.5, -1.5, 2.0, 0.25, 1.0, -0.75]
O = [1.5, 0.5, -2.0, 3.0, -1.0, 0.25]


def _f(m):
    return m.nn.functional


# (name, program body): which ops pack what, in which order.
OPS = {
    "exp (saves its output)": lambda m, x, o: x.exp(),
    "tanh, sigmoid, relu": lambda m, x, o: x.tanh() + x.sigmoid() + x.relu(),
    "log, sqrt, abs": lambda m, x, o: x.abs().log() + x.abs().sqrt(),
    "reciprocal and neg": lambda m, x, o: -x.reciprocal(),
    "sum and add (nothing)": lambda m, x, o: (x + o - 1).sum(),
    "mean": lambda m, x, o: x.mean(),
    "mul": lambda m, x, o: x * o,
    "mul by a number (not packed)": lambda m, x, o: x * 2,
    "mul by a 0-d tensor": lambda m, x, o: x * m.tensor(2.0, dtype=m.float64),
    "mul, function form with a number": lambda m, x, o: m.mul(2, x),
    "mul, one input needs grad": lambda m, x, o: x.detach() * o,
    "div": lambda m, x, o: x / o,
    "div by a number": lambda m, x, o: x / 2,
    "number over tensor": lambda m, x, o: 2 / x,
    "pow by a number": lambda m, x, o: x ** 3,
    "pow by a tensor": lambda m, x, o: x.abs() ** o,
    "number to a tensor power": lambda m, x, o: 2 ** x,
    "atan2": lambda m, x, o: m.atan2(x, o),
    "clamp": lambda m, x, o: x.clamp(-1, 1),
    "maximum and minimum": lambda m, x, o: m.maximum(x, o) + m.minimum(x, o),
    "mm": lambda m, x, o: x.view(2, 3).mm(o.view(3, 2)),
    "matmul of a matrix and a vector": lambda m, x, o: x.view(2, 3) @ o[:3],
    "dot": lambda m, x, o: m.dot(x, o),
    "linear": lambda m, x, o: _f(m).linear(x.view(2, 3), o.view(2, 3), o[:2]),
    "max": lambda m, x, o: x.max(),
    "max and min over a dim": lambda m, x, o: (x.view(2, 3).max(1)[0]
                                              + x.view(2, 3).min(1).values),
    "softmax, log_softmax": lambda m, x, o: (x.view(2, 3).softmax(1)
                                            + x.view(2, 3).log_softmax(1)),
    "mse_loss": lambda m, x, o: _f(m).mse_loss(x, o),
    "l1, smooth l1, huber": lambda m, x, o: (_f(m).l1_loss(x, o) + _f(m).smooth_l1_loss(x, o)
                                             + _f(m).huber_loss(x, o)),
    "binary_cross_entropy": lambda m, x, o: _f(m).binary_cross_entropy(x.sigmoid(),
                                                                       o.sigmoid()),
    "bce with logits": lambda m, x, o: _f(m).binary_cross_entropy_with_logits(
        x, o.sigmoid(), pos_weight=o.detach().abs()),
    "cross_entropy with weights": lambda m, x, o: _f(m).cross_entropy(
        x.view(2, 3), m.tensor([2, 0]), weight=o[:3].detach().abs()),
    "nll_loss": lambda m, x, o: _f(m).nll_loss(x.view(2, 3), m.tensor([2, 0])),
    "index with a tensor": lambda m, x, o: x[m.tensor([0, 2, 2])],
    "mask": lambda m, x, o: x[x > 0],
    "where": lambda m, x, o: m.where(x > 0, x, o),
    "views (nothing)": lambda m, x, o: x.view(2, 3).t().expand(2, 3, 2).sum(),
    "unbind": lambda m, x, o: x.view(2, 3).unbind(0)[1],
    "exp_ (saves its output)": lambda m, x, o: (x * 1).exp_(),
    "mul_": lambda m, x, o: (x * 1).mul_(o),
    "mul_ by a number": lambda m, x, o: (x * 1).mul_(2),
    "in place on a view": lambda m, x, o: (x * 1)[:3].sigmoid_(),
}


def _run(torch, body, pack=None, unpack=None, leaves=(X, O)):
    """Run `body(m, x, o)` inside logging hooks under both libraries (harness
    compared); return minigrad's log after asserting it is PyTorch's."""
    logs: dict = {}

    def program(c):
        m = c.m
        log = logs.setdefault(m.__name__, [])
        x, o = (c.leaf(v) for v in leaves)

        def label(t):
            for name, leaf in (("x", x), ("o", o)):
                if t is leaf:
                    return name
            fn = t.grad_fn
            return (tuple(t.shape), None if fn is None else fn.name(), t.requires_grad,
                    t._version, str(t.dtype).split(".")[-1])

        def logging_pack(t):
            log.append(("pack", label(t), m.is_grad_enabled()))
            return (pack or (lambda t: t))(t)

        def logging_unpack(p):
            t = (unpack or (lambda p: p))(p)
            log.append(("unpack", label(t) if isinstance(t, m.Tensor) else repr(t)))
            return t

        with m.autograd.graph.saved_tensors_hooks(logging_pack, logging_unpack):
            return body(m, x, o)

    check(torch, program)
    assert logs["minigrad"] == logs["torch"]
    return logs["minigrad"]


@pytest.mark.parametrize("name", list(OPS))
def test_which_ops_pack_what_and_when_backward_unpacks(torch, name):
    _run(torch, OPS[name])


def test_a_number_is_not_packed_and_a_tensor_is_packed_once_per_save(torch):
    log = _run(torch, lambda m, x, o: (x * 2) * (x * 2))
    assert [e[0] for e in log].count("pack") == 2


def test_custom_function_save_for_backward_packs_in_order(torch):
    def body(m, x, o):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                y = a * b
                ctx.save_for_backward(b, None, y, a)
                return y

            @staticmethod
            def backward(ctx, g):
                b, none, y, a = ctx.saved_tensors
                assert none is None
                return g * b, g * a + 0 * y

        return Scale.apply(x, o)

    log = _run(torch, body)
    assert log[0] == ("pack", "o", False) and log[1][0] == "pack"


def test_hooks_that_move_tensors_out_and_back(torch):
    # The pack hook keeps a copy; unpack hands a fresh tensor back: gradients agree.
    _run(torch, lambda m, x, o: (x * o).exp().sum(),
         pack=lambda t: t.detach().clone(), unpack=lambda p: p.clone())


def test_save_on_cpu(torch):
    for pin in (False, True):
        def program(c, pin=pin):
            m = c.m
            x = c.leaf(X)
            with m.autograd.graph.save_on_cpu(pin_memory=pin):
                y = (x * x.exp()).sum()
            c.run_backward = False
            y.backward()
            saved = y.grad_fn.next_functions[0][0]._saved_self
            return saved._version, saved is x

        check(torch, program)


def test_nested_hooks_only_the_innermost_applies(torch):
    logs: dict = {}

    def program(c):
        m = c.m
        log = logs.setdefault(m.__name__, [])
        x, o = c.leaf(X), c.leaf(O)
        hooks = m.autograd.graph.saved_tensors_hooks
        with hooks(lambda t: log.append("outer") or t, lambda t: t):
            with hooks(lambda t: log.append("inner") or t, lambda t: t):
                y = x * o
            z = y.exp()
        return z

    check(torch, program)
    assert logs["minigrad"] == logs["torch"] == ["inner", "inner", "outer"]


def test_hooks_belong_to_the_thread_that_entered_them(torch):
    import minigrad

    for m in (torch, minigrad):
        log: list = []
        x = m.ones(3, requires_grad=True)

        def work(m=m, x=x, log=log):
            (x * x).sum()
            log.append("saved in thread")

        with m.autograd.graph.saved_tensors_hooks(lambda t, log=log: log.append("pack") or t,
                                                  lambda t: t):
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
            (x * 2.0).exp()
        assert log == ["saved in thread", "pack"], m.__name__


def test_the_version_check_does_not_apply_to_hooked_tensors(torch):
    # PyTorch checks no version of a tensor saved through hooks: the unpack hook's
    # result is used as it is, here the tensor as modified in place (a silent
    # wrong gradient), and a pack hook that copies keeps the old values.
    for pack in (lambda t: t, lambda t: t.clone()):
        def program(c, pack=pack):
            m = c.m
            x, o = c.leaf(X), c.leaf(O)
            with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                h = x * 1
                y = h * o
            h.add_(1)
            return y

        check(torch, program)


def test_what_raw_saved_shows_and_register_hooks(torch):
    def program(c):
        x, o = c.leaf(X), c.leaf(O)
        c.run_backward = False
        out = []
        y = x * o
        raw = y.grad_fn._raw_saved_self
        out.append(raw is y.grad_fn._raw_saved_self)
        out.append(raw.data is x)
        out.append(raw.unpack_hook is None)
        out.append(raw.unpack() is x)
        calls: list = []
        raw.register_hooks(lambda t: calls.append(("pack", t is x, t.requires_grad)) or t * 1,
                           lambda p: calls.append("unpack") or p)
        out.append(raw.data.requires_grad)
        out.append(raw.unpack_hook is not None)
        unpacked = y.grad_fn._saved_self
        out.append((unpacked is x, unpacked.is_leaf, unpacked.requires_grad))
        out.append(raised(lambda: raw.register_hooks(lambda t: t, lambda t: t)))
        e = x.exp()
        out.append(raised(lambda: e.grad_fn._raw_saved_result.unpack()))
        out.append(e.grad_fn._raw_saved_result.data.grad_fn is None)
        y.sum().backward()
        out.append(raw.data is None and raw.unpack_hook is None)
        out.append(raised(lambda: y.grad_fn._saved_self))
        out.append(raised(lambda: raw.register_hooks(lambda t: t, lambda t: t)))
        z = x * o
        z.sum().backward()
        out.append(raised(lambda: z.grad_fn._raw_saved_other.register_hooks(
            lambda t: t, lambda t: t)))
        out.append(z.grad_fn._raw_saved_other.data is None)
        n = x * 2
        out.append(n.grad_fn._raw_saved_other.data.item())
        out.append(calls)
        return out

    check(torch, program)


def test_errors(torch):
    def program(c):
        m = c.m
        g = m.autograd.graph
        x, o = c.leaf(X), c.leaf(O)
        c.run_backward = False
        out = []
        with g.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x * o
        out.append(raised(lambda: y.grad_fn._saved_self))
        out.append(raised(lambda: y.sum().backward()))
        with g.saved_tensors_hooks(lambda t: t, lambda t: None):
            y = x.exp()
        out.append(raised(lambda: y.grad_fn._saved_result))

        def modifies(t):
            t.add_(1)
            return t

        h = x * 1
        with g.saved_tensors_hooks(modifies, lambda t: t):
            out.append(raised(lambda: h * o))
        with g.saved_tensors_hooks(lambda t: 1 / 0, lambda t: t):
            out.append(raised(lambda: x * o))
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * o
        y.sum().backward()
        out.append(raised(lambda: y.sum().backward()))
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * o
        y.sum().backward(retain_graph=True)
        out.append(raised(lambda: y.sum().backward()))
        out.append(raised(lambda: y.sum().backward()))

        class Keep(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(None, a)
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        k = Keep.apply(x)
        out.append(raised(lambda: k.grad_fn._raw_saved_tensors[0].register_hooks(
            lambda t: t, lambda t: t)))
        out.append(k.grad_fn._raw_saved_tensors[0].data)
        return out

    check(torch, program)


def test_disable_saved_tensors_hooks(torch):
    def program(c):
        m = c.m
        g = m.autograd.graph
        x = c.leaf(X)
        out = []

        def enter_hooks():
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

        with g.disable_saved_tensors_hooks("no hooks here"):
            out.append(raised(enter_hooks))
            out.append(raised(lambda: g.save_on_cpu().__enter__()))
            with g.disable_saved_tensors_hooks("nor here"):
                out.append(raised(enter_hooks))
            out.append(raised(enter_hooks))
            y = x.exp()  # (saving itself is fine)
        out.append(raised(enter_hooks))

        def disable_inside():
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                with g.disable_saved_tensors_hooks("too late"):
                    pass

        out.append(raised(disable_inside))
        out.append(raised(enter_hooks))
        return [y, out]

    check(torch, program)


def test_register_hooks_refuses_what_is_not_callable(torch):
    import minigrad

    for m in (torch, minigrad):
        raw = (m.ones(2, requires_grad=True) * m.ones(2)).grad_fn._raw_saved_other
        for args in ((1, 2), (lambda t: t,)):
            with pytest.raises(TypeError, match=r"^register_hooks\(\): incompatible function "
                                                r"arguments\. The following argument types"):
                raw.register_hooks(*args)
        with pytest.raises(TypeError, match=r"^_push_saved_tensors_default_hooks\(\): "
                                            r"incompatible function arguments"):
            m.autograd.graph.saved_tensors_hooks(1, 2).__enter__()


def test_create_graph_unpacks_through_hooks(torch):
    def body(m, x, o):
        y = (x * o).exp().sum()
        gx, go = m.autograd.grad(y, (x, o), create_graph=True)
        return gx * go

    _run(torch, body)


# -- checkpointing ---------------------------------------------------------------------


def _mlp_block(m, w1, w2):
    def block(x):
        h = (x @ w1.t()).relu()
        return (h @ w2.t()).tanh()

    return block


def test_checkpoint_gives_the_same_gradients_and_saves_fewer_tensors(torch):
    counts: dict = {}

    def program(c):
        m = c.m
        w1 = c.leaf([[0.1 * (i - j) for j in range(4)] for i in range(8)])
        w2 = c.leaf([[0.05 * (i + j) - 0.3 for j in range(8)] for i in range(3)])
        x = c.leaf([[0.2 * (i - j) + 0.1 for j in range(4)] for i in range(5)],
                   requires_grad=False)
        block = _mlp_block(m, w1, w2)
        packed: list = []
        with m.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.shape) or t,
                                                  lambda t: t):
            plain = block(x)
            n_plain = len(packed)
            checkpointed = m.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        counts[m.__name__] = (n_plain, len(packed) - n_plain)
        return (plain - checkpointed).abs().sum() + (checkpointed ** 2).sum()

    check(torch, program)
    assert counts["minigrad"] == counts["torch"]
    plain, checkpointed = counts["minigrad"]
    assert checkpointed == 1 < plain  # (only the input, x)


def test_checkpoint_replays_the_random_numbers(torch):
    for preserve in (True, False):
        def program(c, preserve=preserve):
            m = c.m
            a = c.leaf([1.0, 2.0, 3.0, 4.0])
            m.manual_seed(3)

            def noisy(t):
                return t * m.rand(4, dtype=m.float64)

            y = m.utils.checkpoint.checkpoint(noisy, a, use_reentrant=False,
                                              preserve_rng_state=preserve)
            c.run_backward = False
            y.sum().backward()
            after = m.rand(2, dtype=m.float64)
            return y, after, (a.grad - y / a).abs().max()

        check(torch, program)


def test_checkpoint_recomputes_once_per_backward(torch):
    logs: dict = {}

    def program(c):
        m = c.m
        log = logs.setdefault(m.__name__, [])
        w = c.leaf(X)

        def fn(t):
            log.append("run")
            return (t * w).exp() * t

        x = c.leaf(O)
        y = m.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)
        c.run_backward = False
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        (gw,) = m.autograd.grad(y.sum() * 0 + (y * y).sum(), w, retain_graph=True)
        return gw

    check(torch, program)
    assert logs["minigrad"] == logs["torch"]


def test_checkpoint_errors_and_warnings(torch):
    def program(c):
        m = c.m
        ck = m.utils.checkpoint.checkpoint
        x = c.leaf(X)
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if m.__name__ == "torch":
                y = ck(lambda t: t.exp(), x)
            else:  # (minigrad has no reentrant variant: it says so, after the warning)
                out.append(raised(lambda: ck(lambda t: t.exp(), x)))
        out.append([(w.category.__name__, str(w.message).replace("torch", "minigrad"))
                    for w in caught])
        out.append(raised(lambda: ck(lambda t: t, x, use_reentrant=True, foo=1)))
        out.append(raised(lambda: ck(lambda t: t, x, use_reentrant=True,
                                     context_fn=lambda: (None, None))))
        out.append(raised(lambda: ck(lambda t: t, x, use_reentrant=False,
                                     determinism_check="strict")))
        first = [True]

        def changes(t):
            if first[0]:
                first[0] = False
                return t.exp().exp()
            return t.exp() * 2

        y = ck(changes, x, use_reentrant=False)
        out.append(raised(lambda: y.sum().backward()))
        flip = [True]

        def shape_changes(t):
            flip[0] = not flip[0]
            return t.exp() if flip[0] else t.view(2, 3).exp()

        y = ck(shape_changes, x, use_reentrant=False)
        out.append(raised(lambda: y.sum().backward()))
        with m.no_grad():
            z = ck(lambda t: t.exp(), x, use_reentrant=False)
        out.append(z.requires_grad)
        c.run_backward = False
        return out

    rec = check(torch, program)
    assert "error" not in rec


def test_checkpoint_inside_checkpoint(torch):
    def program(c):
        m = c.m
        ck = m.utils.checkpoint.checkpoint
        x = c.leaf(X)
        w = c.leaf(O)

        def inner(t):
            return (t * w).sin()

        def outer(t):
            return ck(inner, t.exp(), use_reentrant=False).cos() * t

        return ck(outer, x, use_reentrant=False)

    check(torch, program)

"""Plain backward through chains of nodes, against PyTorch.

The parity harness watches the order nodes run in through node pre-hooks, which send
every node the engine's long way round. These scenarios run a plain `backward()`,
where nodes without hooks take the engine's short path, and a chain of them runs
on without the input buffers and the ready queue (`engine._run_plain_chain`). Where
a chain must stop (a node with two consumers, a hooked node, a second output, a node
still waiting for another stream, another node ready), the gradients, the versions
of `.grad`, the hooks seen and the errors must still be PyTorch's.

Only IEEE-exact ops (+ - *, views) are used, so values compare exactly.
"""

from __future__ import annotations

import pytest
from parity_harness import raised


def _same(torch, scenario) -> list:
    import minigrad

    theirs, ours = scenario(torch), scenario(minigrad)
    assert ours == theirs
    return ours


def _grad(t) -> list:
    return [t.grad.tolist(), t.grad._version]


def _chain(y, n: int):
    for i in range(n):
        y = y * 1.5 if i % 3 == 0 else (y + 0.25 if i % 3 == 1 else y - 0.5)
    return y


def test_a_long_chain_and_grad_versions(torch):
    def scenario(m):
        x = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        _chain(x, 30).sum().backward()
        first = _grad(x)
        _chain(x, 30).sum().backward()  # (added into `.grad` in place: its version)
        return [first, _grad(x)]

    _same(torch, scenario)


def test_a_chain_ending_in_a_gradient_the_leaf_takes_over(torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        _chain(x * 2.0, 5).backward(m.tensor([1.0, -1.0], dtype=m.float64))
        w = m.tensor([3.0, 4.0], dtype=m.float64, requires_grad=True)
        seed = m.tensor([0.5, 0.25], dtype=m.float64)
        (w + 1.0).backward(seed)  # (the caller's seed flows to the leaf: copied)
        return [_grad(x), _grad(w), seed._version]

    _same(torch, scenario)


def test_backward_twice_through_a_released_chain(torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        loss = _chain(x, 7).sum()
        loss.backward()
        return [_grad(x), raised(loss.backward)]

    out = _same(torch, scenario)
    assert out[1][0] == "RuntimeError"


def test_a_saved_tensor_modified_in_the_middle_of_a_chain(torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a = _chain(x, 4)
        b = a * a  # (saves a twice)
        c = _chain(b, 4)
        with m.no_grad():
            a.add_(1.0)
        return [raised(lambda: c.sum().backward()), x.grad]

    out = _same(torch, scenario)
    assert out[0][0] == "RuntimeError"


def test_chains_that_branch_and_join(torch):
    def scenario(m):
        x = m.tensor([1.0, -1.0, 2.0], requires_grad=True)
        h = _chain(x, 5)
        left, right = _chain(h, 4), _chain(h * 2.0, 6)  # h: two consumers
        (left * right + _chain(h, 2)).sum().backward()
        return _grad(x)

    _same(torch, scenario)


def test_hooks_in_a_chain_run_in_pytorchs_order(torch):
    def scenario(m):
        seen = []
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a = _chain(x, 4)
        b = _chain(a, 3)
        a.register_hook(lambda g: seen.append(("a", g.tolist())))
        c = _chain(x * 3.0, 5)
        c.register_hook(lambda g: seen.append(("c", g.tolist())))
        b.retain_grad()
        x.register_post_accumulate_grad_hook(lambda t: seen.append(("x", t.grad.tolist())))
        (_chain(b, 2) * _chain(c, 2)).sum().backward()
        return [seen, _grad(x), _grad(b)]

    _same(torch, scenario)


def test_a_chain_through_a_second_output(torch):
    def scenario(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        first, second = x.unbind(0)
        (_chain(second, 5) * 2.0).sum().backward()
        y = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        parts = y.split(2)
        (_chain(parts[1], 4).sum() + _chain(parts[0], 3).sum()).backward()
        return [_grad(x), _grad(y)]

    _same(torch, scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_chain_retaining_its_graph(torch, dtype):
    def scenario(m):
        x = m.tensor([0.5, -1.5], dtype=getattr(m, dtype), requires_grad=True)
        loss = _chain(x, 9).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return [_grad(x), loss.grad_fn.next_functions[0][0]._saved_other.tolist()
                if hasattr(loss.grad_fn.next_functions[0][0], "_saved_other") else None]

    _same(torch, scenario)


def test_two_interleaved_chains_take_turns(torch):
    # Two chains recorded turn about: in backward their nodes take turns too (the
    # latest recorded first), so one chain must not run on while the other's node
    # is ready. A hook half-way up one chain sees whether the other reached its leaf.
    def scenario(m):
        seen = []
        w = m.tensor([1.0, 2.0], requires_grad=True)
        x = m.tensor([3.0, 4.0], requires_grad=True)
        a, b = w, x
        for i in range(6):
            a, b = _chain(a, 1) if i % 2 else a * 2.0, b + 0.5 if i % 2 else b * 0.5
            if i == 4:
                a.register_hook(lambda g: seen.append(("a", x.grad is None, w.grad is None)))
        (a * b).sum().backward()
        return [seen, _grad(w), _grad(x)]

    _same(torch, scenario)


def test_a_gradient_handed_on_unchanged_is_still_taken_over(torch):
    # `+ 0.5` hands its incoming gradient on as it is: when that node starts a chain,
    # the gradient must have no reference left from its input buffer by the time the
    # leaf's AccumulateGrad decides to keep it (version 0) or to copy it (version 1).
    def scenario(m):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        y = x + 0.5
        (y + y).sum().backward()
        w = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        v = _chain(-1.5 + w, 3)
        (v + v).backward(m.tensor([1.0, 2.0], dtype=m.float64))
        return [_grad(x), _grad(w)]

    _same(torch, scenario)


# PyTorch's AccumulateGrad keeps an incoming gradient that obeys the layout contract
# and that nothing else refers to, though it may view memory other gradients view:
# the gradients of two 0-d leaves under `cat`, `stack` or `t()` of `sum()`'s
# spread-out gradient are views of one element, so both `.grad` share it (and a
# version counter), and a second backward adds into it twice: 3, not 2. (Found by the
# random programs; minigrad had copied them, and stack's 0-d slices were numpy
# scalars, which lost the shared counter too.)
SHARED_0D_GRADS = {
    "cat of views": lambda m, a, b: m.cat([a.view(1), b.view(1)]).sum(),
    "stack": lambda m, a, b: m.stack([a, b]).sum(),
    "stack, mean": lambda m, a, b: m.stack([a, b]).mean(),
    "t() of both": lambda m, a, b: a.t() + b.t(),
    "stack with a twice": lambda m, a, b: m.stack([a, b, a]).sum(),
    "cat, weighted": lambda m, a, b: (m.cat([a.view(1), b.view(1)]) * m.tensor([2.0, 3.0])).sum(),
}


@pytest.mark.parametrize("program", list(SHARED_0D_GRADS))
def test_0d_leaves_keep_gradients_that_share_memory(torch, program):
    import minigrad

    def run(m):
        a = m.tensor(1.0, requires_grad=True)
        b = m.tensor(2.0, requires_grad=True)
        y = SHARED_0D_GRADS[program](m, a, b)
        seen = []
        for _ in range(2):
            y.backward(retain_graph=True)
            seen.append((a.grad.item(), b.grad.item(), a.grad._version, b.grad._version))
        a.grad.mul_(10)
        seen.append((b.grad.item(), b.grad._version))
        return seen

    assert run(minigrad) == run(torch)

"""trapezoid, trapz and cumulative_trapezoid against PyTorch where the OpInfo test and
the reduction properties do not reach: the errors of calls PyTorch's argument parser
refuses (its "invalid combination of arguments", which names each function's own
signatures), of 0-d samples, and the graph of the `dx` form (dx a C++ double, dim
passed on as given)."""

from __future__ import annotations

import pytest
from parity_harness import raised

NAMES = ["trapezoid", "trapz", "cumulative_trapezoid"]

CALLS = {
    "keepdim": lambda f, y, x: f(y, dim=0, keepdim=True),
    "x and keepdim": lambda f, y, x: f(y, x, keepdim=True),
    "dim by position": lambda f, y, x: f(y, x, 0),
    "dx by position": lambda f, y, x: f(y, 2.0),
    "x and dx": lambda f, y, x: f(y, dx=2.0, x=x),
    "dim a string": lambda f, y, x: f(y, dim="a"),
    "dx a string": lambda f, y, x: f(y, dx="a"),
    "an unknown keyword": lambda f, y, x: f(y, x, dim=0, foo=1),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("name", NAMES)
def test_calls_pytorch_refuses_raise_its_error(torch, name, call):
    import minigrad

    def seen(m):
        y, x = m.ones(3, dtype=m.float64), m.ones(3, dtype=m.float64)
        return raised(lambda: CALLS[call](getattr(m, name), y, x))

    assert seen(minigrad) == seen(torch)
    assert seen(minigrad)[0] == "TypeError"


@pytest.mark.parametrize("name", NAMES)
def test_0d_samples_raise_pytorchs_errors(torch, name):
    import minigrad

    def seen(m):
        y = m.tensor(1.5, dtype=m.float64)
        spacings = [None, m.tensor(1.0), m.ones(1), m.ones(2, 1)]
        f = getattr(m, name)
        return [raised(lambda x=x, d=d: f(y, dim=d) if x is None else f(y, x, dim=d))
                for d in (-1, 0, 1, -2) for x in spacings]

    assert seen(minigrad) == seen(torch)


@pytest.mark.parametrize("name", NAMES)
def test_the_dx_form_keeps_dim_as_given_and_dx_as_a_double(torch, name):
    import minigrad

    def seen(m):
        y = m.ones(2, 3, dtype=m.float64, requires_grad=True)
        out = getattr(m, name)(y, dx=2)
        nodes, stack = [], [out.grad_fn]
        while stack:
            node = stack.pop()
            if node is None:
                continue
            saved = {a: getattr(node, a) for a in dir(node)
                     if a in ("_saved_dim", "_saved_other")}
            nodes.append((node.name().replace("torch::", "minigrad::"), saved))
            stack.extend(n for n, _ in node.next_functions)
        return nodes

    assert seen(minigrad) == seen(torch)

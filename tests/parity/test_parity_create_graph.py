"""`create_graph=True` against PyTorch: the graph the backward pass records.

Each program takes gradients with `create_graph=True` and returns them, so the
harness describes the graph *they* have (every node's name, `next_functions`,
`_saved_*` values and versions) and then runs backward through it: the second
derivatives (and, where a program differentiates again, the third) must be
PyTorch's too. With the formulas written as PyTorch's are, even the order of the
operations is the same, so float64 values agree to the harness's 1e-10.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import warnings

import pytest
from parity_harness import check

X = [0.5, -1.5, 2.0, 0.25]
O = [1.5, 0.5, -2.0, 3.0]

# (name, program body): `m` is the module, `x` and `o` float64 leaves.
UNARY = {
    "exp": lambda m, x: x.exp(),
    "log": lambda m, x: x.abs().log(),
    "log1p": lambda m, x: x.abs().log1p(),
    "expm1": lambda m, x: x.expm1(),
    "sin": lambda m, x: x.sin(),
    "cos": lambda m, x: m.cos(x),
    "tanh": lambda m, x: x.tanh(),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "relu": lambda m, x: x.relu(),
    "sqrt": lambda m, x: x.abs().sqrt(),
    "abs": lambda m, x: x.abs(),
    "sgn": lambda m, x: x.sgn() * x,
    "floor": lambda m, x: x.floor() + x,
    "neg": lambda m, x: -x,
    "reciprocal": lambda m, x: x.reciprocal(),
    "pow3": lambda m, x: x ** 3,
    "pow2.5": lambda m, x: x.abs() ** 2.5,
    "pow0": lambda m, x: x ** 0 + x,
    "number ops": lambda m, x: (2 - x) * 3.0 / 4 + 1,
    "mean": lambda m, x: (x * x).mean(),
    "sum dims": lambda m, x: (x.view(2, 2) ** 2).sum(1),
    "mean keepdim": lambda m, x: (x.view(2, 2).exp()).mean(0, keepdim=True),
    "expand": lambda m, x: x.view(4, 1).expand(4, 3).sin(),
    "view and t": lambda m, x: x.view(2, 2).t().exp(),
    "unsqueeze and squeeze": lambda m, x: x.unsqueeze(0).exp().squeeze(),
    "clone and to": lambda m, x: x.clone().float().double().exp(),
}


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("name", list(UNARY))
def test_gradient_graph_of_a_function_of_one_tensor(torch, name, order):
    def program(c):
        x = c.leaf(X)
        y = UNARY[name](c.m, x)
        (g,) = c.m.autograd.grad(y.sum(), x, create_graph=True)
        if order == 3 and g.requires_grad:
            (g,) = c.m.autograd.grad((g * g).sum(), x, create_graph=True)
        return c.keep(g)

    check(torch, program)


BINARY = {
    "mul": lambda m, x, o: x * o,
    "add": lambda m, x, o: x + o,
    "add alpha": lambda m, x, o: m.add(x, o, alpha=2.5),
    "sub alpha": lambda m, x, o: m.sub(x, o, alpha=3),
    "div": lambda m, x, o: x / o,
    "broadcast": lambda m, x, o: x.view(4, 1) * o.view(1, 4) + o,
    "mm": lambda m, x, o: x.view(2, 2).mm(o.view(2, 2)).tanh(),
    "mm of a transposed matrix": lambda m, x, o: x.view(2, 2).t().mm(o.view(2, 2)) ** 2,
    "linear": lambda m, x, o: m.nn.functional.linear(x.view(2, 2), o.view(2, 2),
                                                     o.view(2, 2).sum(0)).sigmoid(),
    "mixed dtypes": lambda m, x, o: x.float() * o,
    "cat": lambda m, x, o: m.cat([x, o * x]).exp(),
    "cat dim 1": lambda m, x, o: m.cat([x.view(2, 2), o.view(2, 2)], 1) ** 2,
    "stack": lambda m, x, o: m.stack([x, o], 1).sin(),
    "var": lambda m, x, o: (x * o).var(),
    "var dim": lambda m, x, o: (x * o).view(2, 2).var(1),
    "var dim keepdim biased": lambda m, x, o: (x * o).view(2, 2).var(0, False, True),
    "prod": lambda m, x, o: (x * o).prod(),
    "prod dim": lambda m, x, o: (x * o).view(2, 2).prod(1),
    "bmm": lambda m, x, o: m.bmm(x.view(1, 2, 2), o.view(1, 2, 2)).tanh(),
    "batched matmul": lambda m, x, o: (x.view(2, 1, 2) @ o.view(2, 2, 1)) ** 2,
    "batched matmul folded": lambda m, x, o: (x.view(2, 1, 2) @ o.view(2, 2)).exp(),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_gradient_graph_of_a_function_of_two_tensors(torch, name):
    def program(c):
        x, o = c.leaf(X), c.leaf(O)
        y = BINARY[name](c.m, x, o)
        return c.keep(*c.m.autograd.grad(y.sum(), (x, o), create_graph=True))

    check(torch, program)


def test_gradient_penalty_reaches_the_weights(torch):
    """WGAN-GP style: the norm of an input gradient, then backward to the weights."""
    def program(c):
        w = c.leaf([[0.5, -1.0], [2.0, 0.25], [1.5, -0.5]])
        b = c.leaf([0.1, -0.2, 0.3])
        x = c.leaf([[1.0, 2.0], [-0.5, 0.75]])
        h = c.m.nn.functional.linear(x, w, b).tanh()
        out = (h * h).sum()
        (gx,) = c.m.autograd.grad(out, x, create_graph=True)
        penalty = ((gx * gx).sum(1).sqrt() - 1) ** 2
        return c.keep(penalty.mean())

    check(torch, program)


def test_hessian_vector_product_by_double_backward(torch):
    def program(c):
        x = c.leaf([0.5, -1.0, 2.0])
        v = c.leaf([1.0, 0.5, -0.25], requires_grad=False)
        f = (x.exp() * x.sin()).sum() + (x ** 3).sum()
        (g,) = c.m.autograd.grad(f, x, create_graph=True)
        (hv,) = c.m.autograd.grad((g * v).sum(), x, create_graph=True)
        return c.keep(g, hv)

    check(torch, program)


def test_backward_with_create_graph_gives_grad_a_graph(torch):
    """`.grad` is a copy (CopyBackwards, version 1) of the first gradient; a second
    backward adds out of place (AddBackward0, version 0); a retained gradient is a
    clone."""
    def program(c):
        x = c.leaf([1.0, 2.0, -0.5])
        y = x * x
        y.retain_grad()
        with warnings.catch_warnings():  # (warned once per process: see below)
            warnings.simplefilter("ignore")
            (y.exp()).sum().backward(create_graph=True)
            first = x.grad
            (x ** 3).sum().backward(create_graph=True)
        return c.keep(first, x.grad, y.grad)

    check(torch, program)


def test_backward_with_create_graph_and_inputs(torch):
    def program(c):
        x, o = c.leaf([1.0, 2.0]), c.leaf([0.5, -1.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * o).exp().sum().backward(inputs=[o], create_graph=True)
        return c.keep(o.grad)

    check(torch, program)


def test_a_hook_sees_and_may_replace_recorded_gradients(torch):
    def program(c):
        x = c.leaf([1.0, -2.0])
        y = x.tanh()
        y.register_hook(lambda g: g * 2)
        (g,) = c.m.autograd.grad((y * y).sum(), x, create_graph=True)
        return c.keep(g)

    check(torch, program)


def test_create_graph_keeps_the_graph_unless_told_not_to(torch):
    def program(c):
        x = c.leaf([1.0, 2.0])
        y = (x.exp() * 2).sum()
        c.m.autograd.grad(y, x, create_graph=True)
        (g,) = c.m.autograd.grad(y, x, create_graph=True, retain_graph=False)
        c.m.autograd.grad(y, x)  # freed now: PyTorch's error
        return g

    check(torch, program)


_WARNING_PROGRAM = textwrap.dedent("""
    import warnings, {lib} as m
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
        m.autograd.grad((x * x).sum(), x, create_graph=True)
    print([str(w.category.__name__) + ": " + str(w.message) for w in caught])
""")


def test_the_reference_cycle_warning_comes_once_per_process(torch):
    out = {}
    for lib in ("torch", "minigrad"):
        run = subprocess.run([sys.executable, "-c", _WARNING_PROGRAM.format(lib=lib)],
                             capture_output=True, text=True, check=True)
        # (PyTorch appends where in its C++ the warning was raised)
        out[lib] = re.sub(r" \(Triggered internally at [^)]*\)", "", run.stdout)
    assert out["minigrad"] == out["torch"]
    assert out["minigrad"].count("Using backward() with create_graph=True") == 1


def test_only_the_wanted_gradients_are_computed_and_recorded(torch):
    """`grad(y, x, create_graph=True)` with w also requiring grad: w's gradient is
    neither computed nor recorded, so the nodes are numbered as PyTorch numbers them."""
    def program(c):
        x, w = c.leaf([1.0, -2.0]), c.leaf([0.5, 3.0])
        y = (x * w).tanh() * w
        (gx,) = c.m.autograd.grad(y.sum(), x, create_graph=True)
        # (how many nodes the backward pass made, counted by their numbers)
        made = gx.grad_fn._sequence_nr() - y.grad_fn._sequence_nr()
        return c.keep(gx), c.keep(c.m.tensor(float(made)))

    check(torch, program)


# The double backward of `f(x).abs()`: abs's gradient `grad * self.sgn()` sends sgn's
# gradient back to f, and that is PyTorch's efficient zero tensor, which its mul and
# div pass on as a zero without computing: log's `grad / self` at 0 is 0, not 0 / 0 =
# nan, so `x.grad` at 0 is the other stream's inf (minigrad's was nan).
@pytest.mark.parametrize("value", [0.0, -1.0, float("inf"), 2.0])
@pytest.mark.parametrize("fn", ["log", "log2", "sqrt", "rsqrt", "reciprocal", "exp", "tanh",
                                "sigmoid", "erf", "atan"])
def test_double_backward_through_abs_passes_sgns_zero_on(torch, fn, value):
    import minigrad

    def run(m):
        x = m.tensor(value, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(getattr(x, fn)().abs(), x, create_graph=True)
        g.backward()
        return str(g.item()), str(x.grad.item()), x.grad._version

    assert run(minigrad) == run(torch)

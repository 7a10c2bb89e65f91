"""`create_graph=True` through the ops of views, indexing, reductions that pick,
linear algebra, losses and activations, against PyTorch.

As in `test_parity_create_graph.py`, each program takes gradients with
`create_graph=True` (twice for the third order) and the harness compares the graph
they have (node names, `next_functions`, `_saved_*`) and the derivatives one order
higher with PyTorch's (float64 to 1e-10). `gradgradcheck` then checks the second
derivatives against finite differences, so a formula that records PyTorch's graph
but computes a wrong value cannot pass either.
"""

from __future__ import annotations

import pytest
from parity_harness import check

from minigrad.autograd.graph import Node
from minigrad.ops.formulas import Formula

X = [0.5, -1.5, 2.0, 0.25, 1.0, -0.75]
O = [1.5, 0.5, -2.0, 3.0, 0.5, 2.0]

# (name, function of the module and two float64 tensors of six elements each).
# Nonlinear on purpose: a second derivative must pass through the op's own gradient.
OPS = {
    # views
    "transpose": lambda m, x, o: x.view(2, 3).transpose(0, 1).exp() * o.view(3, 2),
    "transpose_": lambda m, x, o: (x * o).view(2, 3).transpose_(0, 1).sin(),
    "permute": lambda m, x, o: (x * o).view(1, 2, 3).permute(2, 0, 1).tanh(),
    "slice": lambda m, x, o: x[1:5:2].exp() * o[-2:],
    "slice of a dim": lambda m, x, o: (x * o).view(2, 3)[:, -2:] ** 2,
    "split": lambda m, x, o: (x * o).split(4)[0].exp(),
    "split with sizes": lambda m, x, o: m.cat([p.sin() for p in (x * o).split([1, 2, 3])[1:]]),
    "unbind": lambda m, x, o: (x * o).view(3, 2).unbind(1)[1].exp(),
    "alias": lambda m, x, o: (x * o)[...].exp(),
    # indexing
    "index": lambda m, x, o: x[m.tensor([0, 2, 2])].exp() * o[:3],
    "index with a mask": lambda m, x, o: (x * o)[x > 0] ** 3,
    "index of a dim": lambda m, x, o: (x * o).view(2, 3)[:, [2, 0]].sin(),
    "index_put": lambda m, x, o: _put(m, x, o) ** 2,
    "where": lambda m, x, o: m.where(x > 0, x.exp(), o * o),
    "where with a number": lambda m, x, o: m.where(x > 0, x * o, 0.5).exp(),
    "masked_fill": lambda m, x, o: (x * o).masked_fill(x < 0, 2.0).exp(),
    "masked_fill_": lambda m, x, o: (x * o).masked_fill_(x > 1.5, 0.0) ** 2,
    "masked_fill with a tensor": lambda m, x, o: (x * o).masked_fill(x > 0.3, o[2] * o[0]) ** 3,
    "masked_fill with a tensor, broadcast": lambda m, x, o: (x * o).view(2, 3).masked_fill(
        m.tensor([True, False, True]), (o * o).sum() * 0.1).exp(),
    "masked_fill_ with a tensor": lambda m, x, o: (x * o).masked_fill_(x < 0.3, o.sum()).sin(),
    # picking and bounding
    "max dim": lambda m, x, o: (x * o).view(2, 3).max(1).values ** 3,
    "max dim kept": lambda m, x, o: (x * o).view(3, 2).max(0, keepdim=True)[0].exp() * o[:2],
    "min dim -1": lambda m, x, o: (x * o).view(2, 3).min(-1).values.sin() * x[:2],
    "min dim of a 0-d tensor": lambda m, x, o: (x * o).sum().min(0).values ** 3,
    # (evenly_distribute_backward fills with masked_fill_(mask, tensor): a third
    # derivative goes through masked_select)
    "max": lambda m, x, o: (x * o + x).max() ** 2,
    "max with ties": lambda m, x, o: (x * o).max() ** 2,
    "min": lambda m, x, o: (x * o).min() * x,
    "maximum": lambda m, x, o: m.maximum(x * x, o) ** 2,
    "maximum with ties": lambda m, x, o: m.maximum(x, x.detach().clamp(0, 1)).exp() * o,
    "minimum": lambda m, x, o: m.minimum((x * o).view(2, 3), o[3:] * 0.9).sin(),
    "minimum with a tie": lambda m, x, o: m.minimum((x * o).view(2, 3), o[:3]).sin(),
    "clamp": lambda m, x, o: (x * o).clamp(-1, 1) ** 2,
    "clamp min": lambda m, x, o: (x * o).clamp(min=-1).exp(),
    "clamp max": lambda m, x, o: m.clamp(x * o, max=0.6).sin(),
    "clamp at the bound": lambda m, x, o: m.clamp(x * o, max=0.5).sin(),
    "clamp_": lambda m, x, o: (x * o).clamp_(-1, 1) ** 2,
    "round": lambda m, x, o: (x * o).round() * x + (x * o).round(decimals=1) * o,
    # powers and products
    "atan2": lambda m, x, o: m.atan2(x * o, o.exp()) ** 2,
    "atan2 at the origin": lambda m, x, o: m.atan2(x * m.tensor([0.0, 1, 1, 1, 0, 1],
                                                                dtype=m.float64), o * 0) * x,
    "pow": lambda m, x, o: x.abs() ** o,
    "pow at 0": lambda m, x, o: (x * m.tensor([0.0, 1, 1, 1, 0, 1], dtype=m.float64)) ** o.abs(),
    "number ** tensor": lambda m, x, o: 2 ** (x * o),
    "0 ** tensor": lambda m, x, o: 0 ** (x * o) + x,
    "div rounded": lambda m, x, o: m.div(x, o, rounding_mode="floor") * x + x * o,
    "dot": lambda m, x, o: m.dot(x * x, o).exp(),
    "mv": lambda m, x, o: m.mv((x * x).view(2, 3), o[:3]).sin(),
    # a product with a zero factor: its gradient is prod_safe_zeros_backward's cumprods,
    # whose own gradient (third order) is cumprod_backward's O(n^2) graph
    "prod with a zero": lambda m, x, o: (x * _ZERO(m)).prod() * o,
    "prod with two zeros": lambda m, x, o: (x * _ZERO(m) * _ZERO(m)[[0, 2, 3, 1, 4, 5]]).prod()
    * o,
    "prod with the zero first": lambda m, x, o: (x * _ZERO(m)[[1, 0, 2, 3, 4, 5]]).prod() * o,
    "prod with the zero last": lambda m, x, o: (x * _ZERO(m)[[0, 2, 3, 4, 5, 1]]).prod() * o,
    "prod dim with a zero": lambda m, x, o: (x * _ZERO(m)).view(2, 3).prod(1) ** 2,
    "prod dim kept with a zero": lambda m, x, o: (x * _ZERO(m) + o).view(3, 2).prod(
        0, keepdim=True).exp(),
    "prod dim 0 of a matrix with zeros": lambda m, x, o: (
        (x * _ZERO(m)[[1, 0, 2, 3, 4, 5]] * o).view(3, 2).prod(0) ** 2).sum() * x[0],
    "prod dim -1 with zeros at either end": lambda m, x, o: (
        (x * _ZERO(m)[[1, 0, 2, 3, 4, 5]] * _ZERO(m)[[0, 2, 3, 4, 5, 1]]).view(2, 3)
        .prod(-1) * o[:2]).exp(),
    # losses and the last layer of a classifier
    "mse_loss": lambda m, x, o: m.nn.functional.mse_loss(x.exp(), o),
    "mse_loss sum": lambda m, x, o: m.nn.functional.mse_loss(x * o, o.sin(), reduction="sum"),
    "mse_loss none": lambda m, x, o: m.nn.functional.mse_loss(x, o * o, reduction="none"),
    "smooth_l1_loss": lambda m, x, o: m.nn.functional.smooth_l1_loss(x * o, o.sin(), beta=1.5),
    "smooth_l1_loss sum": lambda m, x, o: m.nn.functional.smooth_l1_loss(
        x.exp(), o, reduction="sum") * x,
    "smooth_l1_loss none": lambda m, x, o: m.nn.functional.smooth_l1_loss(
        x * x, o, reduction="none", beta=2.0) ** 2,
    "huber_loss": lambda m, x, o: m.nn.functional.huber_loss(x * o, o.sin(), delta=1.5),
    "huber_loss sum": lambda m, x, o: m.nn.functional.huber_loss(
        x.exp(), o, reduction="sum", delta=0.5) * x,
    "huber_loss none": lambda m, x, o: m.nn.functional.huber_loss(
        x * x, o, reduction="none", delta=2.0) ** 2,
    "binary_cross_entropy": lambda m, x, o: m.nn.functional.binary_cross_entropy(
        x.sigmoid(), (x * o).sigmoid()),
    "binary_cross_entropy sum, weighted": lambda m, x, o: m.nn.functional.binary_cross_entropy(
        (x * o).sigmoid(), o.sigmoid(), weight=_W(m), reduction="sum") * x,
    "binary_cross_entropy none": lambda m, x, o: m.nn.functional.binary_cross_entropy(
        x.sigmoid(), o.sigmoid(), reduction="none") ** 2,
    "binary_cross_entropy mean, weighted": lambda m, x, o: m.nn.functional.binary_cross_entropy(
        x.sigmoid().view(2, 3), o.sigmoid().view(2, 3), weight=_W(m)[:3]),
    "binary_cross_entropy_with_logits": lambda m, x, o:
        m.nn.functional.binary_cross_entropy_with_logits(x * o, o.sigmoid()),
    "binary_cross_entropy_with_logits sum, weighted": lambda m, x, o:
        m.nn.functional.binary_cross_entropy_with_logits(
            x, (x * o).sigmoid(), weight=_W(m), reduction="sum") * o,
    "binary_cross_entropy_with_logits none": lambda m, x, o:
        m.nn.functional.binary_cross_entropy_with_logits(
            x * o, o.sigmoid(), reduction="none") ** 2,
    "binary_cross_entropy_with_logits pos_weight": lambda m, x, o:
        m.nn.functional.binary_cross_entropy_with_logits(
            x * o, (x + o).sigmoid(), pos_weight=_W(m) * 2),
    "binary_cross_entropy_with_logits pos_weight, weighted, none": lambda m, x, o:
        m.nn.functional.binary_cross_entropy_with_logits(
            (x * o).view(2, 3), o.sigmoid().view(2, 3), weight=_W(m)[3:],
            pos_weight=_W(m)[:3], reduction="none").exp(),
    "softmax": lambda m, x, o: (x * o).view(2, 3).softmax(1) * o.view(2, 3),
    "softmax dim 0": lambda m, x, o: m.softmax((x * o).view(2, 3), 0).log(),
    "log_softmax": lambda m, x, o: (x * o).view(2, 3).log_softmax(-1) * o.view(2, 3),
    "log_softmax dim 0": lambda m, x, o: m.nn.functional.log_softmax(x.view(3, 2), 0) ** 2,
    "nll_loss": lambda m, x, o: m.nn.functional.nll_loss((x * o).view(2, 3), _T(m)) ** 2,
    "nll_loss weighted": lambda m, x, o: m.nn.functional.nll_loss(
        (x * o).view(3, 2), m.tensor([1, 0, 1]), weight=m.tensor([0.5, 2.0], dtype=m.float64)) ** 2,
    "nll_loss none, ignored": lambda m, x, o: m.nn.functional.nll_loss(
        (x * o).view(3, 2), m.tensor([1, -100, 0]), reduction="none").exp(),
    "cross_entropy": lambda m, x, o: m.nn.functional.cross_entropy((x * o).view(2, 3), _T(m)),
    "cross_entropy smoothed": lambda m, x, o: m.nn.functional.cross_entropy(
        (x * o).view(2, 3), _T(m), label_smoothing=0.1) * o[0],
    "cross_entropy with probabilities": lambda m, x, o: m.nn.functional.cross_entropy(
        x.view(2, 3), o.view(2, 3).softmax(1)),
    "leaky_relu": lambda m, x, o: m.nn.functional.leaky_relu(x * o, 0.1) ** 2,
    "cosh and sinh": lambda m, x, o: (x * o).cosh() * x.sinh(),
    "gelu": lambda m, x, o: m.nn.functional.gelu(x * o) * o,
    "gelu tanh": lambda m, x, o: m.nn.functional.gelu(x * o, approximate="tanh") * x,
    "leaky_relu_": lambda m, x, o: m.nn.functional.leaky_relu(x * o, 0.2, inplace=True) * x,
    # statistics
    "std": lambda m, x, o: (x * o).std() * o,
    "std dim": lambda m, x, o: (x * o).view(2, 3).std(1, keepdim=True) ** 2,
    "std of equal values": lambda m, x, o: (x * 0 + o[0]).view(3, 2).std(0).exp(),
    "norm": lambda m, x, o: (x * o).norm() * o,
    "norm dim": lambda m, x, o: (x * o).view(2, 3).norm(dim=1).exp(),
    "norm 1": lambda m, x, o: m.linalg.vector_norm(x * o, 1) * o,
    "norm inf": lambda m, x, o: m.linalg.vector_norm(x * o, float("inf")) * o,
    "norm 3": lambda m, x, o: m.linalg.vector_norm(x * o, 3) * o,
    "norm 1.5": lambda m, x, o: m.linalg.vector_norm(x * o, 1.5, dim=0) * o,
    "norm 0.5": lambda m, x, o: m.linalg.vector_norm(x * o, 0.5) * o,
    "cumsum": lambda m, x, o: (x * o).cumsum(0) ** 2,
    "cumsum dim 1": lambda m, x, o: (x * o).view(2, 3).cumsum(-1).exp(),
    "embedding": lambda m, x, o: m.nn.functional.embedding(
        m.tensor([[0, 2], [2, 1]]), (x * o).view(3, 2)) ** 2,
    "embedding with padding": lambda m, x, o: m.nn.functional.embedding(
        m.tensor([0, 2, 1, 2]), (x * o).view(3, 2), padding_idx=2).exp(),
    "diagonal": lambda m, x, o: (x * o).view(2, 3).diagonal() ** 2,
    "diagonal offset": lambda m, x, o: (x * o).view(1, 2, 3).diagonal(-1, 2, 1).exp(),
    "einsum trace": lambda m, x, o: m.einsum("ii->i", (x * o)[:4].view(2, 2)).sin(),
    # normalization (its one backward op, then PyTorch's double backward formulas)
    "batch_norm": lambda m, x, o: m.nn.functional.batch_norm(
        (x * x + x).view(3, 2), None, None, o[:2], o[4:], training=True) ** 3 * o.view(3, 2),
    "batch_norm 3-D": lambda m, x, o: m.nn.functional.batch_norm(
        (x * x + x).view(1, 2, 3), _stat(m), _stat(m, 1.5), o[:2] ** 2, o[2:4],
        training=True).exp(),
    "batch_norm without affine": lambda m, x, o: m.nn.functional.batch_norm(
        (x * o + x).view(3, 2), _stat(m), _stat(m, 1.5), training=True) ** 3,
    "batch_norm weight only": lambda m, x, o: m.nn.functional.batch_norm(
        (x * x + x).view(2, 3, 1), None, None, o[:3], training=True).sin() * o.view(2, 3, 1),
    "batch_norm eval": lambda m, x, o: m.nn.functional.batch_norm(
        (x * o).view(3, 2), _stat(m), _stat(m, 1.5), o[:2], o[2:4]) ** 3,
    "batch_norm eval 3-D": lambda m, x, o: m.nn.functional.batch_norm(
        (x * o).view(1, 2, 3), _stat(m), _stat(m, 1.5), o[:2] * o[:2], o[2:4]).exp(),
    "batch_norm eval without affine": lambda m, x, o: m.nn.functional.batch_norm(
        (x * o + x).view(3, 2), _stat(m), _stat(m, 1.5)) ** 3,
    "layer_norm": lambda m, x, o: m.nn.functional.layer_norm(
        (x * x + x).view(2, 3), (3,), o[:3], o[3:]) ** 3 * o.view(2, 3),
    "layer_norm 3-D": lambda m, x, o: m.nn.functional.layer_norm(
        (x * o - x).view(1, 2, 3), (3,), o[:3] ** 2, o[3:]).exp(),
    "layer_norm of two dims": lambda m, x, o: m.nn.functional.layer_norm(
        (x * x + x).view(1, 2, 3), (2, 3), o.view(2, 3), None).sin() * o.view(1, 2, 3),
    "layer_norm without affine": lambda m, x, o: m.nn.functional.layer_norm(
        (x * o + x).view(3, 2), (2,)) ** 3,
    "layer_norm weight only": lambda m, x, o: m.nn.functional.layer_norm(
        (x * x + x).view(2, 3), (3,), o[3:] * o[:3]).exp(),
}


def _stat(m, shift=0.0):  # a running statistic of two channels (requires no grad)
    return m.tensor([0.25 + shift, -0.5 + 2 * shift], dtype=m.float64)


def _T(m):  # noqa: N802 - class targets for a (2, 3) input
    return m.tensor([2, 0])


def _W(m):  # noqa: N802 - a loss's weight, which may not require grad
    return m.tensor([0.5, 2.0, 1.0, 1.5, 0.25, 3.0], dtype=m.float64)


# Through abs, whose gradient calls sgn: at the third order sgn's efficient zero
# gradient reaches the formulas of a `create_graph=True` backward, whose mul passes it
# on without computing, as PyTorch's does (minigrad's had computed zeros there, added
# in place into x.grad: one more _version than PyTorch's).
OPS["l1_loss"] = lambda m, x, o: m.nn.functional.l1_loss(x * x, o)
OPS["norm inf dim"] = lambda m, x, o: m.linalg.vector_norm((x * o + x).view(3, 2),
                                                           float("inf"), 1)


def _ZERO(m):  # noqa: N802 - a factor with one zero
    return m.tensor([1.0, 0.0, 2.0, 1.0, 1.0, 1.0], dtype=m.float64)


# Programs at a kink (ties, bounds, steps, 0 ** p): PyTorch's formulas pick one
# side there, which finite differences straddling the kink cannot confirm.
AT_KINKS = {"std of equal values", "maximum with ties", "minimum with a tie",
            "clamp at the bound", "round", "pow at 0", "0 ** tensor", "div rounded",
            "max with ties", "atan2 at the origin"}


def _put(m, x, o):
    y = x * o
    y[m.tensor([1, 3])] = o[:2] * x[4:]
    return y


def check_second_and_third_order(torch, make, order: int) -> None:
    """`make(m, x, o)` of two float64 leaves, differentiated with create_graph=True
    (`order` 2: once; 3: its gradients' squares once more), compared with PyTorch."""
    def program(c):
        x, o = c.leaf(X), c.leaf(O)
        grads = c.m.autograd.grad(make(c.m, x, o).sum(), (x, o), create_graph=True)
        if order == 3:
            total = sum((g * g).sum() for g in grads if g.requires_grad)
            grads = c.m.autograd.grad(total, (x, o), create_graph=True, allow_unused=True)
        return c.keep(*[g for g in grads if g is not None])

    check(torch, program)


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("name", list(OPS))
def test_second_and_third_order_gradients(torch, name, order):
    check_second_and_third_order(torch, OPS[name], order)


@pytest.mark.parametrize("name", [n for n in OPS if n not in AT_KINKS])
def test_second_derivatives_match_finite_differences(name):
    import minigrad

    make = OPS[name]
    x = minigrad.tensor(X, dtype=minigrad.float64, requires_grad=True)
    o = minigrad.tensor(O, dtype=minigrad.float64, requires_grad=True)
    assert minigrad.autograd.gradgradcheck(lambda x, o: make(minigrad, x, o), (x, o))


MASKED_FILL = {
    "a number": lambda m, x: x.masked_fill(m.tensor([True, False, True]), 5.5),
    "broadcast": lambda m, x: m.masked_fill(x, m.tensor([[True], [False]]), -1),
    "a 0-dim tensor": lambda m, x: x.masked_fill(m.tensor([False, True, True]),
                                                 m.tensor(2.0, requires_grad=True)).exp(),
    "an integer tensor": lambda m, x: m.tensor([1, 2]).masked_fill(m.tensor([True, False]),
                                                                   5.5),
    "in place": lambda m, x: (x * 2).masked_fill_(m.tensor([True, False, True]), 0),
    "a long mask": lambda m, x: x.masked_fill(m.tensor([1, 0, 1]), 0),
    "a 1-dim value": lambda m, x: x.masked_fill(m.tensor([True, False, True]),
                                                m.tensor([1.0, 2.0])),
    "a string value": lambda m, x: x.masked_fill(m.tensor([True, False, True]), "a"),
    "in place beyond the shape": lambda m, x: (x * 1).masked_fill_(
        m.tensor([[True], [False]]), 5),
    "a mask that does not broadcast": lambda m, x: x.masked_fill(m.tensor([True, False]), 5),
    "a leaf in place": lambda m, x: x.masked_fill_(m.tensor([True, False, True]), 1),
}


def test_nll_loss_refuses_a_weight_that_requires_grad(torch):
    def program(c):
        x, w = c.leaf([[0.5, -1.0], [2.0, 0.25]]), c.leaf([1.0, 2.0])
        with c.m.no_grad():
            c.m.nn.functional.nll_loss(x, c.m.tensor([0, 1]), weight=w)  # (allowed)
        return c.m.nn.functional.nll_loss(x.detach(), c.m.tensor([0, 1]), weight=w)

    check(torch, program)


@pytest.mark.parametrize("create_graph", [False, True])
def test_leaky_relu_in_place_with_a_negative_slope_refuses_backward(torch, create_graph):
    def program(c):
        x = c.leaf([0.4, -0.3, 0.7])
        y = x * 1
        c.m.nn.functional.leaky_relu(y, -0.5, inplace=True)
        return c.m.autograd.grad((y * 1).sum(), x, create_graph=create_graph)

    check(torch, program)


@pytest.mark.parametrize("name", list(MASKED_FILL))
def test_masked_fill(torch, name):
    def program(c):
        x = c.leaf([1.0, 2.0, 3.0])
        return c.keep(MASKED_FILL[name](c.m, x))

    check(torch, program)



class _OpaqueBackward0(Node):
    """A node with a plain backward only: no formulas as minigrad code."""

    def backward(self, grad):
        return (grad * 2,)


class _UnrecordableBackward0(_OpaqueBackward0):
    """A node whose formulas would not record PyTorch's graph."""

    formulas = (Formula("self", "grad * 2"),)
    recordable = False


@pytest.mark.parametrize("node_cls", [_OpaqueBackward0, _UnrecordableBackward0])
def test_create_graph_refuses_a_node_without_a_recordable_backward(node_cls):
    """A node with no formula written as minigrad code (or one marked `recordable =
    False`) has no graph to record: a create_graph=True backward through it refuses,
    naming it, and a plain backward still runs."""
    import minigrad
    from minigrad.autograd.record import record

    x = minigrad.tensor(X, dtype=minigrad.float64, requires_grad=True)
    y = minigrad.Tensor._make(x.detach().numpy() * 2)
    record(node_cls, y, x)
    with pytest.raises(NotImplementedError, match=f"backward of {node_cls.__name__} yet"):
        minigrad.autograd.grad((y * x).sum(), x, create_graph=True)
    (g,) = minigrad.autograd.grad((y * x).sum(), x)
    assert g.tolist() == [4 * v for v in X]


# The losses of a prediction and a target once more: float32, a target that needs no
# gradient, only the target needing one, and a target broadcast to the input.
P = [[0.2, 0.9, 0.5], [0.35, 0.05, 0.7]]
T = [[0.0, 1.0, 0.25], [0.5, 0.5, 1.0]]
LOSSES = {
    "smooth_l1_loss": lambda F, x, t: F.smooth_l1_loss(x * 3, t, beta=0.5),
    "huber_loss": lambda F, x, t: F.huber_loss(x * 3, t, reduction="sum", delta=0.5),
    "binary_cross_entropy": lambda F, x, t: F.binary_cross_entropy(x, t),
    "binary_cross_entropy_with_logits": lambda F, x, t: F.binary_cross_entropy_with_logits(
        x * 4, t, pos_weight=t[0].detach() + 0.5, reduction="none"),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("needs_grad", ["input", "target", "both"])
@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_second_and_third_order(torch, name, needs_grad, dtype):
    def program(c):
        x = c.leaf(P, dtype, requires_grad=needs_grad != "target")
        t = c.leaf(T, dtype, requires_grad=needs_grad != "input")
        wrt = [v for v in (x, t) if v.requires_grad]
        y = LOSSES[name](c.m.nn.functional, x, t)
        grads = c.m.autograd.grad((y * y).sum(), wrt, create_graph=True)
        grads = c.m.autograd.grad(sum((g * g).sum() for g in grads), wrt, create_graph=True,
                                  allow_unused=True)
        return c.keep(*[g for g in grads if g is not None])

    check(torch, program)


# nn's normalization layers, in training and in eval mode: gradients taken with
# create_graph=True (by `autograd.grad`, or by `backward` into `.grad`), then
# differentiated again by the harness's backward (the layers' parameters are leaves).
NORM_LAYERS = {
    "BatchNorm1d": (lambda m: m.nn.BatchNorm1d(3), (4, 3), True),
    "BatchNorm1d 3-D": (lambda m: m.nn.BatchNorm1d(2, momentum=0.3), (2, 2, 3), True),
    "BatchNorm1d eval": (lambda m: m.nn.BatchNorm1d(3), (4, 3), False),
    "BatchNorm1d eval 3-D": (lambda m: m.nn.BatchNorm1d(2), (2, 2, 3), False),
    "BatchNorm1d without affine": (lambda m: m.nn.BatchNorm1d(3, affine=False), (4, 3), True),
    "BatchNorm1d without running stats": (
        lambda m: m.nn.BatchNorm1d(2, track_running_stats=False), (3, 2, 2), True),
    "LayerNorm": (lambda m: m.nn.LayerNorm(3), (4, 3), True),
    "LayerNorm 3-D": (lambda m: m.nn.LayerNorm((2, 3)), (2, 2, 3), True),
    "LayerNorm without bias": (lambda m: m.nn.LayerNorm(3, bias=False), (2, 2, 3), True),
    "LayerNorm without affine": (
        lambda m: m.nn.LayerNorm(4, elementwise_affine=False), (3, 4), True),
}

X12 = [0.5, -1.5, 2.0, 0.25, 1.0, -0.75, 0.3, 1.2, -0.4, 0.9, -2.0, 0.6]


@pytest.mark.parametrize("how", ["grad", "backward"])
@pytest.mark.parametrize("name", list(NORM_LAYERS))
def test_normalization_layers_differentiated_twice(torch, name, how):
    make, shape, training = NORM_LAYERS[name]

    def program(c):
        m = c.m
        layer = make(m).double()
        params = [p for p in layer.parameters()]
        for p in params:
            c.keep(p)
        if not training:  # (one step in training first: running statistics of the data)
            with m.no_grad():
                layer(m.tensor(X12, dtype=m.float64).view(shape) ** 2 * 2)
            layer.eval()
        x = c.leaf(X12)
        y = layer((x * x - x).view(shape)) ** 3 * m.tensor(X12, dtype=m.float64).view(shape)
        if how == "grad":
            grads = m.autograd.grad(y.sum(), [x, *params], create_graph=True)
        else:
            y.sum().backward(create_graph=True)
            grads = [x.grad, *[p.grad for p in params]]
            for t in (x, *params):  # (the harness's backward accumulates anew)
                t.grad = None
        buffers = [b for b in (getattr(layer, "running_mean", None),
                               getattr(layer, "running_var", None)) if b is not None]
        return c.keep(*grads, *buffers)

    check(torch, program)


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss"])
def test_losses_with_a_broadcast_target_second_order(torch, name):
    def program(c):
        x, t = c.leaf(P), c.leaf([0.5, 0.0, 1.0])
        y = getattr(c.m.nn.functional, name)(x * 2, t)  # (warns: the shapes differ)
        return c.keep(*c.m.autograd.grad(y, (x, t), create_graph=True))

    check(torch, program)


def test_normalization_backward_saves_in_pytorchs_order(torch):
    """The double backward nodes pack their saved tensors in PyTorch's order (what a
    saved-tensor hook sees)."""
    seen = {}
    for lib in (torch, __import__("minigrad")):
        packed = []

        def pack(t, packed=packed):
            packed.append(tuple(t.shape))
            return t

        x = lib.tensor(X12, dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.5, -0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.batch_norm(x.view(4, 3), None, None, w, training=True) ** 2
        z = lib.nn.functional.layer_norm(x.view(2, 6), (6,)) ** 2
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            lib.autograd.grad(y.sum() + z.sum(), x, create_graph=True)
        seen[lib.__name__] = packed
    assert seen["minigrad"] == seen["torch"]


# A reduction over one negative dim: its gradient's formula puts the dim back with
# `unsqueeze(dim)` as given (PyTorch's unsqueeze_multiple unsqueezes one dim so, several
# in increasing order), and var's mean takes the dims as given: the recorded
# UnsqueezeBackward0 and MeanBackward1 save -1, -2 (as unsigned 64-bit numbers), where
# minigrad had saved the wrapped dims. (Found by the random programs.)
NEGATIVE_DIMS = {
    "sum(-1)": lambda m, x: x.sum(-1), "sum((-1, 0))": lambda m, x: x.sum((-1, 0)),
    "var(-1)": lambda m, x: x.var(-1), "std(-2)": lambda m, x: x.std(-2),
    "var((-1, 0))": lambda m, x: x.var((-1, 0)), "norm(1, -1)": lambda m, x: x.norm(1, -1),
    "vector_norm(x, 3, (-1, -2))": lambda m, x: m.linalg.vector_norm(x, 3, (-1, -2)),
    "logsumexp(-1)": lambda m, x: x.logsumexp(-1),
}


@pytest.mark.parametrize("name", list(NEGATIVE_DIMS))
def test_reductions_over_negative_dims_record_pytorchs_saved_dims(torch, name):
    import numpy as np

    import minigrad

    def saved_dims(m):
        x = m.tensor(np.arange(1.0, 7.0).reshape(2, 3) / 3, dtype=m.float64, requires_grad=True)
        y = NEGATIVE_DIMS[name](m, x)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        seen, stack, found = set(), [g.grad_fn], []
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            found += [(node.name(), a, getattr(node, a)) for a in dir(node)
                      if a.startswith("_saved_") and "dim" in a]
            stack.extend(n for n, _ in node.next_functions)
        return sorted(map(str, found))

    assert saved_dims(minigrad) == saved_dims(torch)

"""Forward-mode AD through the ops whose tangent is a formula of its own (PyTorch's
`result:` entries in derivatives.yaml, its `*_jvp` helpers): element-wise ops,
reductions, joining and indexing, losses and normalization, and the ops backward
formulas call. Each program's tangents are compared with PyTorch's (within the float
policy's CHAIN, `float_policy.py`), and so are the gradients of a tangent that requires
grad (`ON_GRAPHS`).
"""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats
from parity_harness import raised
from test_parity_forward_ad import M3, TA, TB, TM3, TV, A, V, check_forward, dual, fad

import minigrad
from minigrad.autograd import forward_ad as mf
from minigrad.autograd.record import record
from minigrad.ops.formulas import BACKWARD_OPS


def F(m):
    return m.nn.functional


def _bce(m):
    p, tp = 1 / (1 + np.exp(-A)), TA * 0.1
    q = 1 / (1 + np.exp(-A.T.copy().T * 2))
    f = F(m)
    return (f.binary_cross_entropy(dual(m, p, tp), m.tensor(q)),
            f.binary_cross_entropy(dual(m, p, tp), dual(m, q, tp * 2), reduction="sum"),
            f.binary_cross_entropy(m.tensor(p), dual(m, q, tp), weight=m.tensor(V + 2),
                                   reduction="none"),
            f.binary_cross_entropy_with_logits(dual(m, A, TA), m.tensor(q)),
            f.binary_cross_entropy_with_logits(dual(m, A, TA), dual(m, q, tp), reduction="sum",
                                               pos_weight=m.tensor(V + 2)),
            f.binary_cross_entropy_with_logits(m.tensor(A), dual(m, q, tp), weight=m.tensor(V),
                                               pos_weight=m.tensor(V + 2), reduction="none"),
            f.binary_cross_entropy_with_logits(m.tensor(A), dual(m, q, tp)))


def _aten_op(m, name: str):
    return getattr(m.ops.aten, name) if m is not minigrad else BACKWARD_OPS[name]


def _backward_ops(m):
    """The ops backward formulas call, on dual tensors (a backward inside a dual
    level runs them so)."""
    def op(name):
        return _aten_op(m, name)
    return (op("mse_loss_backward")(dual(m, 2.0, 0.5), dual(m, A, TA), dual(m, A * 2, TA), 1),
            op("mse_loss_backward")(m.tensor(V), m.tensor(A), dual(m, A * 2, TA), 0),
            op("select_backward")(dual(m, V, TV), (3, 4), 0, 1),
            op("slice_backward")(dual(m, A[:, :2], TA[:, :2]), (3, 4), 1, 0, 3, 2),
            op("diagonal_backward")(dual(m, V[:3], TV[:3]), (3, 4), 0, 0, 1),
            op("flip")(dual(m, A, TA), (0,)),
            op("embedding_dense_backward")(dual(m, A, TA), m.tensor([0, 2, 2]), 5, -1, False),
            op("nll_loss_backward")(dual(m, np.array(2.0), np.array(0.7)), m.tensor(A),
                                    m.tensor([0, 1, 2]), None, 1, -100,
                                    m.tensor(3.0, dtype=m.float64)),
            op("nll_loss_backward")(dual(m, V[:3], TV[:3]), m.tensor(A), m.tensor([0, 1, 3]),
                                    m.tensor(V + 2), 0, 1, m.tensor(3.0, dtype=m.float64)),
            op("nll_loss2d_backward")(dual(m, np.array(2.0), np.array(0.7)),
                                      m.tensor(M3.reshape(2, 3, 2, 2)),
                                      m.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]]),
                                      m.tensor(V[:3] + 2), 1, 2, m.tensor(5.0, dtype=m.float64)))


def _softmax_backward_ops(m):
    """The gradients of softmax and log_softmax, on dual tensors."""
    y = m.tensor(A).softmax(1)
    ly = m.tensor(A).log_softmax(0)
    g = dual(m, A[::-1].copy(), TA[::-1].copy())
    softmax_backward = _aten_op(m, "_softmax_backward_data")
    log_softmax_backward = _aten_op(m, "_log_softmax_backward_data")
    return (softmax_backward(g, dual(m, y.numpy(), TA), 1, m.float64),
            softmax_backward(g, y, 1, m.float64),
            softmax_backward(m.tensor(A), dual(m, y.numpy(), TA), 0, m.float64),
            log_softmax_backward(g, dual(m, ly.numpy(), TA), 0, m.float64),
            log_softmax_backward(m.tensor(A), dual(m, ly.numpy(), TA), 1, m.float64),
            log_softmax_backward(dual(m, A, TA), ly, 1, m.float64))


def _put(m, x, index, value):
    """`x[index] = value` on a copy of x (an in-place index_put_)."""
    x = x * 1
    x[index] = value
    return x


FORMULAS = {
    # element-wise ops with formulas of their own
    "clamp": lambda m: (dual(m, A, TA).clamp(-0.5, 0.5), dual(m, A, TA).clamp(min=0.0),
                        m.clamp(dual(m, A, TA), max=A[0, 0])),
    "maximum and minimum": lambda m: (
        m.maximum(dual(m, A, TA), dual(m, A.T.copy().T * 0.5, TA * 3)),
        m.minimum(dual(m, A, TA), m.tensor(np.where(A > 0, A, 0.0))),
        m.maximum(m.tensor(V), dual(m, A, TA)), m.minimum(dual(m, V, TV), dual(m, A, TA))),
    "round": lambda m: (dual(m, A * 3, TA).round(), dual(m, A, TA).round(decimals=1)),
    "pow of two tensors": lambda m: (
        dual(m, np.abs(A) + 0.5, TA) ** dual(m, A, TA * 2),
        m.tensor(np.abs(A)) ** dual(m, A, TA), dual(m, np.abs(A), TA) ** m.tensor(V),
        m.pow(dual(m, np.r_[0.0, 1.0, 2.0, 0.0], TV), m.tensor(np.r_[0.0, 2.0, -1.0, 1.5]))),
    "pow of a number": lambda m: (2.5 ** dual(m, A, TA), m.pow(0.0, dual(m, A, TA)),
                                  m.pow(-2.0, dual(m, A, TA))),
    "gelu": lambda m: (m.nn.functional.gelu(dual(m, A, TA)),
                       m.nn.functional.gelu(dual(m, A, TA), approximate="tanh")),
    "leaky_relu": lambda m: (m.nn.functional.leaky_relu(dual(m, A, TA)),
                             m.nn.functional.leaky_relu(dual(m, A, TA), 0.2),
                             m.nn.functional.leaky_relu(dual(m, A, TA) * 1, 0.3, inplace=True)),
    "masked_fill": lambda m: (
        dual(m, A, TA).masked_fill(m.tensor(A) > 0, 2.0),
        dual(m, A, TA).masked_fill(m.tensor(V) > 0, dual(m, 3.0, 0.5)),
        m.tensor(A).masked_fill(m.tensor(A) > 0, dual(m, 3.0, 0.5)),
        dual(m, A, TA).masked_fill(m.tensor(A) > 0, m.tensor(1.5)),
        (dual(m, A, TA) * 1).masked_fill_(m.tensor(A) < 0, 0.0)),
    # reductions with formulas of their own
    "max and min of everything": lambda m: (
        dual(m, A, TA).max(), dual(m, A, TA).min(), dual(m, np.ones((2, 3)), TA[:2, :3]).max(),
        dual(m, np.r_[1.0, 3.0, 3.0, -3.0], TV).max(),
        dual(m, np.r_[1.0, 3.0, 3.0, -3.0], TV).min()),
    "max and min along a dim": lambda m: (
        dual(m, A, TA).max(1).values, dual(m, A, TA).min(0, keepdim=True).values,
        dual(m, M3, TM3).max(-2)[0], dual(m, 2.0, 1.5).max(0).values,
        m.max(dual(m, A.T.copy().T, TA), dim=0, keepdim=False).values),
    "prod": lambda m: (dual(m, A, TA).prod(), dual(m, A, TA).prod(1),
                       dual(m, M3, TM3).prod(0, keepdim=True), dual(m, 2.0, 1.5).prod(0),
                       dual(m, np.r_[1.0, 0.0, 2.0, 3.0], TV).prod(),
                       dual(m, np.where(A > 1, 0.0, A), TA).prod(1)),
    "var and std": lambda m: (
        dual(m, A, TA).var(), dual(m, A, TA).var(1), dual(m, M3, TM3).var((0, 2), keepdim=True),
        dual(m, A, TA).var(0, correction=0), dual(m, A, TA).std(), dual(m, A, TA).std(1),
        dual(m, M3, TM3).std((0, 2), keepdim=True, correction=0),
        dual(m, np.ones((2, 3)), TA[:2, :3]).std(1)),
    "norm": lambda m: tuple(
        m.linalg.vector_norm(dual(m, A, TA), o, d, k)
        for o in (2, 1, 0, 3, 1.5, 0.5, float("inf"), -float("inf"))
        for d, k in ((None, False), (1, False), ((0, 1), True))) + (
        dual(m, A, TA).norm(), m.linalg.vector_norm(dual(m, np.zeros(4), TV))),
    "softmax and log_softmax": lambda m: (
        dual(m, A, TA).softmax(1), dual(m, M3, TM3).softmax(0), dual(m, A, TA).log_softmax(-1),
        m.nn.functional.log_softmax(dual(m, M3, TM3), dim=1), dual(m, 2.0, 1.5).softmax(0),
        dual(m, A * 50, TA).log_softmax(0)),
    # joining, splitting, indexing
    "cat": lambda m: (m.cat([dual(m, A, TA), m.tensor(A), dual(m, A * 2, TA * 3)]),
                      m.cat([m.tensor(A), dual(m, A[::-1].copy(), TA[::-1].copy())], 0),
                      m.cat([dual(m, A, TA), dual(m, A, TA).t().t()], -1)),
    "stack": lambda m: (m.stack([dual(m, A, TA), m.tensor(A)]),
                        m.stack([m.tensor(V), dual(m, V, TV), dual(m, V * 2, TV)], 1)),
    "split, chunk, unbind": lambda m: (
        dual(m, A, TA).split(2, 1) + dual(m, M3, TM3).split([1, 2], 1)
        + dual(m, A, TA).chunk(3, 0) + dual(m, A, TA).unbind(1)
        + dual(m, M3, TM3).transpose(0, 2).unbind()
        + tuple(p.exp() for p in dual(m, A, TA).t().split(1))),
    "index_put": lambda m: (
        _put(m, dual(m, A, TA), m.tensor(A) > 0, dual(m, 3.0, 0.5)),
        _put(m, m.tensor(A), m.tensor(A) < 0, dual(m, 2.0, 1.0)),
        _put(m, dual(m, A, TA), m.tensor(A) > 0, 0.0),
        _put(m, dual(m, A, TA), (slice(None), [0, 2]), dual(m, np.ones((3, 2)), TB[:3])),
        _put(m, m.tensor(A), [2, 0], dual(m, V, TV))),
    "embedding": lambda m: (
        m.nn.functional.embedding(m.tensor([[0, 2], [1, 0]]), dual(m, A, TA)),
        m.nn.functional.embedding(m.tensor([0, 2, 1]), dual(m, A, TA), padding_idx=2)),
    # losses and normalization
    "mse_loss": lambda m: (F(m).mse_loss(dual(m, A, TA), m.tensor(A.T.copy().T * 2)),
                           F(m).mse_loss(m.tensor(A), dual(m, A * 2, TA), reduction="sum"),
                           F(m).mse_loss(dual(m, A, TA), dual(m, -A, TA * 3), reduction="none")),
    "smooth_l1 and huber": lambda m: tuple(
        f(dual(m, A, TA), m.tensor(A * 0.3) if i % 2 else dual(m, A * 0.3, TA * 2),
          reduction=r, **{k: v})
        for i, (f, k, v) in enumerate(((F(m).smooth_l1_loss, "beta", 1.0),
                                       (F(m).smooth_l1_loss, "beta", 0.5),
                                       (F(m).huber_loss, "delta", 1.0),
                                       (F(m).huber_loss, "delta", 0.4)))
        for r in ("mean", "sum", "none")),
    "nll_loss and cross_entropy": lambda m: (
        F(m).nll_loss(dual(m, A, TA), m.tensor([0, 3, 1])),
        F(m).nll_loss(dual(m, A, TA), m.tensor([0, 3, 1]), weight=m.tensor(V + 3),
                      reduction="sum"),
        F(m).nll_loss(dual(m, A, TA), m.tensor([0, 3, 1]), ignore_index=3, reduction="none"),
        F(m).cross_entropy(dual(m, A, TA), m.tensor([2, 0, 1])),
        # (more than 2 dims: nll_loss2d, 3-D input viewed as 4-D)
        F(m).nll_loss(dual(m, M3, TM3), m.tensor([[0, 2, 1, 1], [2, 0, 0, 1]])),
        F(m).nll_loss(dual(m, M3.reshape(2, 3, 2, 2), TM3.reshape(2, 3, 2, 2)),
                      m.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]]), weight=m.tensor(V[:3] + 3),
                      ignore_index=1, reduction="none"),
        F(m).cross_entropy(dual(m, M3, TM3), m.tensor([[0, 2, 1, 1], [2, 0, 0, 1]]),
                           reduction="sum")),
    "group norms": lambda m: (
        F(m).layer_norm(dual(m, M3, TM3), (4,)),
        F(m).layer_norm(dual(m, M3, TM3), (3, 4), dual(m, A, TA), m.tensor(A + 1)),
        F(m).layer_norm(dual(m, M3, TM3), (4,), m.tensor(V), dual(m, V, TV)),
        F(m).batch_norm(dual(m, M3, TM3), None, None, training=True),
        F(m).batch_norm(dual(m, A, TA), None, None, dual(m, V, TV), m.tensor(V), training=True),
        F(m).batch_norm(dual(m, M3, TM3), m.tensor(V[:3]), m.tensor(np.abs(V[:3]) + 1),
                        m.tensor(V[1:]), dual(m, V[:3], TV[:3]))),
    "binary cross-entropy": _bce,
    "backward ops": _backward_ops,
    "the gradients of softmax and log_softmax": _softmax_backward_ops,
}


@pytest.mark.parametrize("name", list(FORMULAS))
def test_tangents_of_ops_with_formulas(torch, name):
    check_forward(torch, FORMULAS[name])


# One op on a dual tensor whose primal and tangent both require grad: the tangent
# then has a graph of its own, and its gradients (of `tangent.sum()`) reach both.
ON_GRAPHS = {
    "tanh": lambda m, d: d.tanh(),
    "sigmoid": lambda m, d: d.sigmoid(),
    "relu": lambda m, d: d.relu(),
    "clamp": lambda m, d: d.clamp(-0.5, 0.5),
    "maximum": lambda m, d: m.maximum(d, m.tensor(A.T.copy().T * 0.5)),
    "round": lambda m, d: d.round(),
    "pow of two tensors": lambda m, d: (d.abs() + 0.5) ** d,
    "pow of a number": lambda m, d: 2.5 ** d,
    "leaky_relu": lambda m, d: m.nn.functional.leaky_relu(d, 0.2),
    "masked_fill": lambda m, d: d.masked_fill(m.tensor(A) > 0, 2.0),
    "max": lambda m, d: d.max(),
    "max along a dim": lambda m, d: d.max(1).values,
    "prod": lambda m, d: d.prod(1),
    "var": lambda m, d: d.var(1),
    "std": lambda m, d: d.std(),
    "norm": lambda m, d: m.linalg.vector_norm(d, 3, 1),
    "softmax": lambda m, d: d.softmax(1),
    "log_softmax": lambda m, d: d.log_softmax(0),
    "cat": lambda m, d: m.cat([d, d * 2], 1),
    "split": lambda m, d: d.split(2, 1)[1],
    "index_put": lambda m, d: _put(m, d, m.tensor(A) > 0, 1.0),
    "embedding": lambda m, d: F(m).embedding(m.tensor([0, 2, 2]), d),
    "mse_loss": lambda m, d: F(m).mse_loss(d, m.tensor(A * 2)),
    "smooth_l1_loss": lambda m, d: F(m).smooth_l1_loss(d, m.tensor(A * 0.3), beta=0.5),
    "huber_loss": lambda m, d: F(m).huber_loss(d, m.tensor(A * 0.3), delta=0.4),
    "binary_cross_entropy_with_logits": lambda m, d: F(m).binary_cross_entropy_with_logits(
        d, m.tensor(np.abs(A) / 3)),
    "nll_loss": lambda m, d: F(m).nll_loss(d, m.tensor([0, 3, 1])),
    "layer_norm": lambda m, d: F(m).layer_norm(d, (4,)),
    "batch_norm": lambda m, d: F(m).batch_norm(d, None, None, training=True),
}


def _through_graphs(m, op):
    """The tangent, and the gradients of its sum (None: none), or the error raised."""
    x = m.tensor(A, requires_grad=True)
    t = m.tensor(TA, requires_grad=True)
    with fad(m).dual_level():
        tangent = fad(m).unpack_dual(op(m, fad(m).make_dual(x, t))).tangent
        found = [tangent.requires_grad, tangent.detach().numpy().copy()]
        error = raised(lambda: tangent.sum().backward())
    if error != ("no error", ""):
        return found + [error]
    return found + [_array_or_none(a) for a in (x.grad, t.grad)]


def _array_or_none(grad):
    """A gradient's values; None for none, and for PyTorch's efficient zero tensor
    (where PyTorch records a product with a missing tangent, minigrad records nothing)."""
    if grad is None or getattr(grad, "_is_zerotensor", lambda: False)():
        return None
    return grad.numpy()


@pytest.mark.parametrize("name", list(ON_GRAPHS))
def test_a_tangent_that_requires_grad_has_pytorchs_gradients(torch, name):
    want = _through_graphs(torch, ON_GRAPHS[name])
    got = _through_graphs(minigrad, ON_GRAPHS[name])
    assert len(want) == len(got) and want[0] == got[0]
    for w, g in zip(want[1:], got[1:]):
        if isinstance(w, np.ndarray) and isinstance(g, np.ndarray):
            assert_floats(g, w, CHAIN)
        else:
            assert w == g


def test_mse_loss_backward_of_a_mean_refuses_a_missing_tangent_as_pytorch_does(torch):
    # (PyTorch's formula divides its efficient zero tensor, the missing tangent's
    # part, in place; minigrad raises when the tangent is computed, here by unpack_dual)
    def program(m):
        with fad(m).dual_level():
            out = _aten_op(m, "mse_loss_backward")(dual(m, 2.0, 0.5), dual(m, A, TA),
                                                   m.tensor(A), 1)
            fad(m).unpack_dual(out)

    assert raised(lambda: program(torch)) == raised(lambda: program(minigrad))


# A node with no tangent formula (all of minigrad's ops have one now; PyTorch's
# custom Functions without a jvp have none either): it refuses a dual input when it runs.
class NoTangentBackward0(minigrad.autograd.graph.Node):
    """A node that says nothing about tangents."""


def _op_without_tangent(x):
    out = minigrad.Tensor._make(x._data * 2)
    record(NoTangentBackward0, out, x)
    return out


WITHOUT_TANGENT = {"no_tangent": _op_without_tangent}


def test_leaky_relu_in_place_with_a_negative_slope_refuses_as_pytorch_does(torch):
    def program(m):
        with fad(m).dual_level():
            d = dual(m, A, TA) * 1
            F(m).leaky_relu(d, -0.2, inplace=True)
            return fad(m).unpack_dual(d).tangent

    assert raised(lambda: program(torch)) == raised(lambda: program(minigrad))


@pytest.mark.parametrize("op", list(WITHOUT_TANGENT))
def test_an_op_without_a_tangent_formula_refuses_it_when_it_runs(op):
    with mf.dual_level():
        d = dual(minigrad, A, TA)
        with pytest.raises(NotImplementedError,
                           match=rf"^Trying to use forward AD with {op} that does not support it "
                                 r"because it has not been implemented yet"):
            WITHOUT_TANGENT[op](d)
        WITHOUT_TANGENT[op](minigrad.tensor(A))  # (without a dual input, the op runs as ever)

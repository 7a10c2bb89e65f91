"""Forward-mode AD (`autograd.forward_ad`) against PyTorch's `torch.autograd.forward_ad`.

Every program runs under both libraries inside a dual level and returns tensors; each
is unpacked with `unpack_dual`, and the primals and tangents must be PyTorch's. The
tangent formulas are PyTorch's own, evaluated with the same ops in the same order, so
in float64 a tangent is PyTorch's bit for bit wherever the primal it is computed from
is (`tanh`, `sigmoid`, `expm1` and `atan2` round their *primal* differently from
PyTorch's vectorised CPU kernels on some machines, by an ulp, and so do minigrad's
matrix products, numpy's BLAS against PyTorch's: there, and for the tangents of
products, which are sums of products, they agree to the parity harness's 1e-10).
Views, in-place ops, errors, the named tuple, grad modes, saved-tensor hooks and
backward through dual tensors are compared too.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import raised

import minigrad
from minigrad.autograd import forward_ad as mf
from minigrad.ops.formulas import BACKWARD_OPS

RNG = np.random.default_rng(20)
A = RNG.standard_normal((3, 4))
TA = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
TB = RNG.standard_normal((4, 2))
V = RNG.standard_normal(4)
TV = RNG.standard_normal(4)
M3 = RNG.standard_normal((2, 3, 4))
TM3 = RNG.standard_normal((2, 3, 4))


def fad(m):
    return m.autograd.forward_ad


def _unpacked(m, outputs) -> list:
    """(primal values, tangent values or None) of each output."""
    found = []
    for out in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        primal, tangent = fad(m).unpack_dual(out)
        found.append((primal.detach().numpy().copy(),
                      None if tangent is None else tangent.detach().numpy().copy()))
    return found


def run(m, program):
    with fad(m).dual_level():
        return _unpacked(m, program(m))


def assert_same(expected: list, got: list, exact: bool = True, rtol: float = 1e-10) -> None:
    assert len(expected) == len(got)
    for (p_want, t_want), (p_got, t_got) in zip(expected, got):
        assert p_want.shape == p_got.shape
        np.testing.assert_allclose(p_got, p_want, rtol=1e-10, atol=0)
        assert (t_want is None) == (t_got is None), (t_want, t_got)
        if t_want is None:
            continue
        assert t_want.shape == t_got.shape and t_want.dtype == t_got.dtype
        if exact and np.array_equal(p_want, p_got, equal_nan=True):
            assert np.array_equal(t_want, t_got, equal_nan=True), (t_want - t_got)
        else:
            np.testing.assert_allclose(t_got, t_want, rtol=rtol, atol=rtol * 1e-3)


def check_forward(torch, program, exact: bool = True, rtol: float = 1e-10) -> None:
    assert_same(run(torch, program), run(minigrad, program), exact, rtol)


def dual(m, values, tangent):
    return fad(m).make_dual(m.tensor(values), m.tensor(tangent))


# -- tangents of ops ----------------------------------------------------------------------

UNARY = ["exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt",
         "abs", "neg", "reciprocal", "floor", "ceil", "sign", "sgn"]


@pytest.mark.parametrize("name", UNARY)
def test_tangent_of_a_declared_element_wise_op(torch, name):
    positive = name in ("log", "log1p", "sqrt")

    def program(m):
        x = dual(m, np.abs(A) + 0.1 if positive else A, TA)
        return getattr(x, name)(), getattr(m, name)(x.t())

    check_forward(torch, program)


PROGRAMS = {
    # element-wise ops of two tensors, of a tensor and a number, broadcasting
    "mul": lambda m: dual(m, A, TA) * dual(m, A.T.copy(), TA.T.copy()).t(),
    "mul by a plain tensor": lambda m: dual(m, A, TA) * m.tensor(A + 1),
    "plain tensor times dual": lambda m: m.tensor(A) * dual(m, A, TA),
    "add and sub, alpha": lambda m: (m.add(dual(m, A, TA), m.tensor(A), alpha=2.5),
                                     m.sub(m.tensor(A), dual(m, A, TA), alpha=0.5)),
    "div": lambda m: (dual(m, A, TA) / dual(m, A + 3, TA * 2), m.tensor(A) / dual(m, A, TA)),
    "numbers": lambda m: (3 - dual(m, A, TA) * 2.5 + 1, dual(m, A, TA) / 4, 2 * dual(m, A, TA),
                          dual(m, A, TA) - 0.5),
    "broadcast": lambda m: (m.tensor(A) + dual(m, V, TV), dual(m, A, TA) * dual(m, V, TV),
                            dual(m, V, TV) / (m.tensor(A) ** 2 + 1)),
    "pow by a number": lambda m: (dual(m, A, TA) ** 3, dual(m, np.abs(A), TA) ** 2.5,
                                  dual(m, A, TA) ** 0),
    "atan2": lambda m: (m.atan2(dual(m, A, TA), dual(m, A.T.copy().T + 1, TA * 3)),
                        m.atan2(m.tensor(A), dual(m, A, TA))),
    "div rounded": lambda m: m.div(dual(m, A, TA), m.tensor(A + 3), rounding_mode="floor"),
    "chain": lambda m: ((dual(m, A, TA).sin() * 3 + 1).exp() / 10).tanh().relu(),
    # products
    "mm": lambda m: (dual(m, A, TA).mm(dual(m, B, TB)), m.mm(m.tensor(A), dual(m, B, TB))),
    "mv": lambda m: (dual(m, A, TA).mv(dual(m, V, TV)), m.tensor(A).mv(dual(m, V, TV))),
    "dot": lambda m: (m.dot(dual(m, V, TV), dual(m, V * 2, TV + 1)),
                      m.dot(m.tensor(V), dual(m, V, TV))),
    "matmul": lambda m: (dual(m, A, TA) @ dual(m, B, TB), dual(m, A, TA) @ m.tensor(V),
                         dual(m, M3, TM3) @ m.tensor(B), m.tensor(M3) @ dual(m, B, TB)),
    "bmm": lambda m: dual(m, M3, TM3).bmm(m.tensor(M3).transpose(1, 2)),
    "linear (addmm)": lambda m: m.nn.functional.linear(
        dual(m, A, TA), dual(m, B.T.copy(), TB.T.copy()), dual(m, np.ones(2), np.arange(2.0))),
    # reductions
    "sum": lambda m: (dual(m, A, TA).sum(), dual(m, A, TA).sum(1), dual(m, M3, TM3).sum((0, 2)),
                      dual(m, M3, TM3).sum(-1, keepdim=True)),
    "mean": lambda m: (dual(m, A, TA).mean(), dual(m, A, TA).mean(0),
                       dual(m, M3, TM3).mean((0, 1), keepdim=True)),
    # views and indexing: a view's tangent is the same view of its input's tangent
    "view and reshape": lambda m: (dual(m, A, TA).view(2, 6), dual(m, A, TA).t().reshape(-1),
                                   dual(m, A, TA).reshape(4, 3)),
    "transpose and permute": lambda m: (dual(m, M3, TM3).transpose(0, 2),
                                        dual(m, M3, TM3).permute(2, 0, 1), dual(m, A, TA).T),
    "select and slice": lambda m: (dual(m, A, TA)[1], dual(m, A, TA)[:, 1:3],
                                   dual(m, M3, TM3)[1, ::2, -1], dual(m, A, TA)[..., 0]),
    "unsqueeze, squeeze, expand": lambda m: (dual(m, V, TV).unsqueeze(0).expand(3, 4),
                                             dual(m, A, TA)[None, :, None].squeeze(),
                                             dual(m, A, TA)[:1].squeeze(0)),
    "diagonal": lambda m: (dual(m, A, TA).diagonal(1), dual(m, A, TA).t().diagonal(),
                           m.diagonal(dual(m, M3, TM3), -1, 1, 2)),
    "advanced indexing": lambda m: (dual(m, A, TA)[[2, 0, 2]], dual(m, A, TA)[m.tensor(A) > 0],
                                    dual(m, A, TA)[:, [1, 3]]),
    "clone, contiguous, to": lambda m: (dual(m, A, TA).t().clone(), dual(m, A, TA).t().contiguous(),
                                        dual(m, A, TA).float(), dual(m, A, TA).t().exp()),
    "where": lambda m: (m.where(m.tensor(A) > 0, dual(m, A, TA), m.tensor(V)),
                        m.where(m.tensor(A) > 0, m.tensor(A), dual(m, V, TV)),
                        m.where(m.tensor(V) > 0, dual(m, A, TA), 0.0)),
    "cumsum": lambda m: (dual(m, A, TA).cumsum(1), dual(m, M3, TM3).cumsum(0)),
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
                      m.cat([m.tensor(A), dual(m, B.T.copy(), TB.T.copy())], 0),
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
        F(m).cross_entropy(dual(m, A, TA), m.tensor([2, 0, 1]))),
    "group norms": lambda m: (
        F(m).layer_norm(dual(m, M3, TM3), (4,)),
        F(m).layer_norm(dual(m, M3, TM3), (3, 4), dual(m, A, TA), m.tensor(A + 1)),
        F(m).layer_norm(dual(m, M3, TM3), (4,), m.tensor(V), dual(m, V, TV)),
        F(m).batch_norm(dual(m, M3, TM3), None, None, training=True),
        F(m).batch_norm(dual(m, A, TA), None, None, dual(m, V, TV), m.tensor(V), training=True),
        F(m).batch_norm(dual(m, M3, TM3), m.tensor(V[:3]), m.tensor(np.abs(V[:3]) + 1),
                        m.tensor(V[1:]), dual(m, V[:3], TV[:3]))),
    "ops on views": lambda m: (dual(m, A, TA).t().exp() * dual(m, A, TA)[0].unsqueeze(1)),
}


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
            op("embedding_dense_backward")(dual(m, A, TA), m.tensor([0, 2, 2]), 5, -1, False))


def _put(m, x, index, value):
    """`x[index] = value` on a copy of x (an in-place index_put_)."""
    x = x * 1
    x[index] = value
    return x


PROGRAMS["binary cross-entropy"] = _bce
PROGRAMS["backward ops"] = _backward_ops

# (matrix products round as numpy's BLAS does, see the module's docstring)
PRODUCTS = {"mm", "mv", "dot", "matmul", "bmm", "linear (addmm)"}


# Tangents that read exp's value: minigrad's exp rounds an ulp away from PyTorch's
# vectorised one for some inputs, so these agree to 1e-12 (relative; 1e-15 absolute
# for tangents that cancel to nearly zero) rather than bit for bit.
ROUNDED = {"softmax and log_softmax", "binary cross-entropy", "nll_loss and cross_entropy"}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_tangents_of_ops(torch, name):
    if name in ROUNDED:
        check_forward(torch, PROGRAMS[name], exact=False, rtol=1e-12)
    else:
        check_forward(torch, PROGRAMS[name], exact=name not in PRODUCTS)


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
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
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


def test_a_view_tangent_is_the_same_view_of_the_base_tangent(torch):
    for m in (torch, minigrad):
        with fad(m).dual_level():
            t = m.tensor(TA)
            d = fad(m).make_dual(m.tensor(A), t)
            view = d.t()[1:3]
            tangent = fad(m).unpack_dual(view).tangent
            assert tangent._base is t
            assert tangent.stride() == view.stride()
            assert fad(m).unpack_dual(d).tangent is t  # (laid out like its primal: kept)


def test_make_dual_copies_a_tangent_laid_out_otherwise(torch):
    for m in (torch, minigrad):
        with fad(m).dual_level():
            t = m.tensor(TA.T.copy()).t()  # (column-major)
            d = fad(m).make_dual(m.tensor(A), t)
            kept = fad(m).unpack_dual(d).tangent
            assert kept is not t and kept.stride() == (4, 1)
            assert np.array_equal(kept.numpy(), TA)
            # a view primal is in a larger memory: its tangent is copied too
            row = m.tensor(TA[0].copy())
            assert fad(m).unpack_dual(fad(m).make_dual(m.tensor(A)[1], row)).tangent is not row


# -- in-place ops -----------------------------------------------------------------------------

def _mul_by_a_number(m):
    d = dual(m, A, TA)
    return d.mul_(2), d


def _add_of_a_plain_tensor(m):
    return (dual(m, A, TA).add_(m.tensor(A), alpha=2),)


def _div_by_a_plain_tensor(m):
    return (dual(m, A, TA).div_(m.tensor(V) + 3),)


def _plain_tensor_div_by_a_dual(m):
    b = m.tensor(A)
    return b.div_(dual(m, V + 3, TV)), b


def _plain_tensor_add_of_a_broadcast_dual(m):
    return (m.tensor(A).add_(dual(m, V, TV)),)


def _pow_sin_exp(m):
    return (dual(m, A, TA).pow_(3).sin_().exp_(),)


def _exp_on_a_view_of_a_dual(m):
    d = dual(m, A, TA)
    return d[1].exp_(), d, d[0]


def _a_view_of_a_plain_tensor_mul_by_a_dual(m):
    b = m.tensor(A)
    return b[0].mul_(dual(m, V, TV)), b, b[1]


def _a_view_made_before_its_base_became_dual(m):
    b = m.tensor(A)
    v = b.t()
    return b.mul_(dual(m, A, TA)), v


def _copy_from_a_dual_and_from_a_plain_tensor(m):
    return dual(m, A, TA).copy_(dual(m, V, TV)), dual(m, A, TA).copy_(m.tensor(V))


def _zero_and_fill(m):
    return dual(m, A, TA).zero_(), dual(m, A, TA).fill_(2.0)


def _assignment_through_a_view(m):
    b = m.tensor(A)
    b[0, 1:3] = dual(m, V[:2], TV[:2])
    return (b,)


def _inplace_view_ops(m):
    d = dual(m, A, TA)
    return d.t_(), d.unsqueeze_(0), d.squeeze_()


def _relu_and_sigmoid_of_views(m):
    d = dual(m, A, TA)
    return d.t().relu_(), d[2].sigmoid_(), d


def _an_inplace_op_after_ops_that_read_its_input(m):
    d = dual(m, A, TA)
    y, z = d.sin(), d.sum(0)
    return d.mul_(3), y, z


INPLACE = {f.__name__[1:].replace("_", " "): f for f in (
    _mul_by_a_number, _add_of_a_plain_tensor, _div_by_a_plain_tensor,
    _plain_tensor_div_by_a_dual, _plain_tensor_add_of_a_broadcast_dual, _pow_sin_exp,
    _exp_on_a_view_of_a_dual, _a_view_of_a_plain_tensor_mul_by_a_dual,
    _a_view_made_before_its_base_became_dual, _copy_from_a_dual_and_from_a_plain_tensor,
    _zero_and_fill, _assignment_through_a_view, _inplace_view_ops,
    _relu_and_sigmoid_of_views, _an_inplace_op_after_ops_that_read_its_input)}


@pytest.mark.parametrize("name", list(INPLACE))
def test_tangents_of_inplace_ops(torch, name):
    check_forward(torch, INPLACE[name])


def test_an_inplace_op_writes_into_the_tangent_it_has(torch):
    for m in (torch, minigrad):
        with fad(m).dual_level():
            d = dual(m, A, TA)
            tangent = fad(m).unpack_dual(d).tangent
            d.add_(m.tensor(A))
            d.mul_(dual(m, A, TA))
            d.exp_()
            assert fad(m).unpack_dual(d).tangent is tangent
            assert tangent._version == 3


# -- the API: levels, make_dual, unpack_dual ---------------------------------------------------


def test_unpack_dual_returns_the_named_tuple(torch):
    for m in (torch, minigrad):
        unpacked_type = fad(m).UnpackedDualTensor
        assert unpacked_type.__name__ == "UnpackedDualTensor"
        assert unpacked_type._fields == ("primal", "tangent")
        x = m.tensor(A)
        outside = fad(m).unpack_dual(x)
        assert type(outside) is unpacked_type and outside.primal is x and outside.tangent is None
        with fad(m).dual_level() as level:
            assert level == 0
            t = m.tensor(TA)
            d = fad(m).make_dual(x, t)
            primal, tangent = fad(m).unpack_dual(d)
            assert tangent is t and primal is not d and primal._base is x
            assert fad(m).unpack_dual(primal).tangent is None
            assert fad(m).unpack_dual(x).tangent is None  # (make_dual gives x no tangent)
            assert d._base is x and not d.requires_grad
        # leaving the level drops every tangent
        assert fad(m).unpack_dual(d).tangent is None


def test_a_dual_tensor_prints_its_tangent(torch):
    def shown(m):
        with fad(m).dual_level():
            small = fad(m).make_dual(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0]))
            return [repr(small), repr(dual(m, A, TA).t()[:2] * 2), repr(small.sum())]

    assert shown(minigrad) == [text.replace("torch", "minigrad") for text in shown(torch)]


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_levels_enter_and_exit(torch, lib):
    m = torch if lib == "torch" else minigrad
    assert fad(m).enter_dual_level() == 0
    fad(m).exit_dual_level(level=0)

    @fad(m).dual_level()
    def decorated():
        return fad(m).unpack_dual(dual(m, A, TA).exp()).tangent is not None

    assert decorated()


def _error_cases(m):
    """Each bad use, a thunk (run outside any level unless it enters one)."""
    f = fad(m)
    x, t = m.tensor(A), m.tensor(TA)

    def inside(fn):
        def run():
            with f.dual_level():
                return fn()
        return run

    return {
        "make_dual outside a level": lambda: f.make_dual(x, t),
        "exit outside a level": lambda: f.exit_dual_level(),
        "nested dual_level": inside(lambda: f.dual_level().__enter__()),
        "nested enter_dual_level": inside(lambda: f.enter_dual_level()),
        "exit another level": inside(lambda: f.exit_dual_level(level=1)),
        "tangent of another size": inside(lambda: f.make_dual(x, m.tensor(V))),
        "integer primal": inside(lambda: f.make_dual(x.long(), t)),
        "integer tangent": inside(lambda: f.make_dual(x, t.long())),
        "a level that does not exist": inside(lambda: f.make_dual(x, t, level=1)),
        "make_dual of a dual": inside(lambda: f.make_dual(f.make_dual(x, t), t)),
        "unpack_dual at another level": inside(lambda: f.unpack_dual(f.make_dual(x, t), level=1)),
        "unpack_dual of a number": inside(lambda: f.unpack_dual(3)),
        "make_dual of a number": inside(lambda: f.make_dual(3, t)),
        "in-place op of a shape a dual cannot take": inside(
            lambda: f.make_dual(m.tensor(V), m.tensor(TV)).add_(x)),
    }


@pytest.mark.parametrize("name", list(_error_cases(minigrad)))
def test_errors(torch, name):
    assert raised(_error_cases(torch)[name]) == raised(_error_cases(minigrad)[name])
    # (a refused level leaves none behind)
    leftover = raised(lambda: mf.make_dual(minigrad.tensor(A), minigrad.tensor(TA)))
    assert leftover[0] == "RuntimeError"


def test_a_custom_function_refuses_a_dual_input(torch):
    def program(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with fad(m).dual_level():
            return Twice.apply(dual(m, A, TA))

    assert raised(lambda: program(torch)) == raised(lambda: program(minigrad))


def _aten(name: str):
    return BACKWARD_OPS[name]


# The ops that still have no tangent formula in minigrad, all of them ops only backward
# formulas call (PyTorch has a formula for each): each refuses a dual input when it runs.
WITHOUT_TANGENT = {
    "softmax_backward_data": lambda d: _aten("_softmax_backward_data")(
        d, d.detach().softmax(0), 0, minigrad.float64),
    "log_softmax_backward_data": lambda d: _aten("_log_softmax_backward_data")(
        d, d.detach().log_softmax(1), 1, minigrad.float64),
    "nll_loss_backward": lambda d: _aten("nll_loss_backward")(
        d.detach().sum(), d, minigrad.tensor([0, 1, 2]), None, 1, -100, minigrad.tensor(3.0)),
}


@pytest.mark.parametrize("op", list(WITHOUT_TANGENT))
def test_an_op_without_a_tangent_formula_refuses_it_when_it_runs(op):
    with mf.dual_level():
        d = dual(minigrad, A, TA)
        with pytest.raises(NotImplementedError,
                           match=rf"^Trying to use forward AD with {op} that does not support it "
                                 r"because it has not been implemented yet"):
            WITHOUT_TANGENT[op](d)
        WITHOUT_TANGENT[op](minigrad.tensor(A))  # (without a dual input, the op runs as ever)


# -- grad modes, backward, saved-tensor hooks -------------------------------------------------


def test_forward_ad_works_in_no_grad_mode(torch):
    def program(m):
        with m.no_grad():
            d = dual(m, A, TA)
            return (d.sin() * d).sum(0), d.t()[0].exp()

    check_forward(torch, program)


def _with_backward(m):
    """A dual tensor that requires grad: its tangent has a graph, backward is as ever."""
    x = m.tensor(A, requires_grad=True)
    with fad(m).dual_level():
        d = fad(m).make_dual(x, m.tensor(TA))
        y = (d.exp() * d).sum(1)
        primal, tangent = fad(m).unpack_dual(y)
        names = (d.grad_fn.name(), fad(m).unpack_dual(d).primal.grad_fn.name(),
                 y.grad_fn.name(), tangent.requires_grad, tangent.grad_fn.name())
        y.backward(m.tensor([0.5, 1.0, -2.0]), retain_graph=True)
        first = x.grad.numpy().copy()
        x.grad = None
        tangent.sum().backward()
    return names, first, x.grad.numpy().copy(), tangent.detach().numpy()


def test_a_dual_tensor_that_requires_grad_works_with_backward(torch):
    want, got = _with_backward(torch), _with_backward(minigrad)
    assert got[0] == tuple(n.replace("torch", "minigrad") if isinstance(n, str) else n
                           for n in want[0])
    for w, g in zip(want[1:], got[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _packed(m):
    shapes = []
    x = m.tensor(A)
    with m.autograd.graph.saved_tensors_hooks(lambda a: shapes.append(tuple(a.shape)) or a,
                                              lambda a: a):
        with fad(m).dual_level():
            d = fad(m).make_dual(x, m.tensor(TA))
            (d.exp() * d).sin().sum(0)
            only_forward = list(shapes)
            d2 = fad(m).make_dual(x.clone().requires_grad_(), m.tensor(TA))
            assert fad(m).unpack_dual(d2.exp()).tangent is not None
    return only_forward, shapes


def test_saved_tensor_hooks_see_only_what_backward_saves(torch):
    assert _packed(minigrad) == _packed(torch)


def test_jvp_of_autograd_functional_is_unchanged(torch):
    def jvp(m):
        out, v = m.autograd.functional.jvp(lambda a: (a.exp() * a).sum(0), m.tensor(A),
                                           m.tensor(TA))
        return out.numpy(), v.numpy()

    for w, g in zip(jvp(torch), jvp(minigrad)):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    # and forward mode gives the same product, in one pass
    with mf.dual_level():
        y = (dual(minigrad, A, TA).exp() * dual(minigrad, A, TA)).sum(0)
        np.testing.assert_allclose(mf.unpack_dual(y).tangent.numpy(), jvp(minigrad)[1],
                                   rtol=1e-12)

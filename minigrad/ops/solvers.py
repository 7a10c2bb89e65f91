"""Determinants, inverses, linear solves and the Cholesky factorisation:
`linalg.det`, `linalg.inv` (`inv_ex`), `linalg.solve` (`solve_ex`),
`linalg.cholesky` (`cholesky_ex`).

The factorisations are numpy's LAPACK calls, as PyTorch's are its LAPACK's: two
builds of LAPACK round differently, so these results agree with PyTorch's to within
the matrix's conditioning, not bit for bit. What PyTorch saves for backward is saved
under its names (`_saved_LU`, `_saved_pivots`: an LU factorisation with partial
pivoting, made here the textbook way; minigrad has no int32, so the pivots are int64).
The gradients are PyTorch's formulas (`derivatives.yaml`), written with minigrad
ops beside the ops (`@helper`), each with its array twin (`@on_arrays`) for the plain
backward.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._creation import zeros
from .._warn import Once, warn_user
from ..arrays.broadcasting import broadcast_shape as batch_shape
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from . import batched, views
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, named, on_arrays
from .tangent_formulas import ZERO, Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the linear algebra.)
OP_FAMILY = "linalg"


def _return_type(name: str, fields: list[str]):
    """A named tuple shown as PyTorch's `torch.return_types.<name>`."""
    base = namedtuple(name, fields)
    return type(name, (base,), {"__slots__": (), "__module__": "minigrad.return_types"})


inv_ex_result = _return_type("linalg_inv_ex", ["inverse", "info"])
solve_ex_result = _return_type("linalg_solve_ex", ["result", "info"])
cholesky_ex_result = _return_type("linalg_cholesky_ex", ["L", "info"])


# -- checks ----------------------------------------------------------------------------------


def _check_square(A: Tensor, fn: str) -> None:  # noqa: N803 - PyTorch's name
    """PyTorch's checks of a (batch of) square floating matrices, in its order."""
    shape = A._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.type_name}")


class _LinAlgError(RuntimeError):
    """A matrix a factorisation cannot take (singular, not positive-definite):
    PyTorch's `torch.linalg.LinAlgError`, a RuntimeError."""


_LinAlgError.__module__ = "minigrad.linalg"


def _first_failure(info: np.ndarray) -> tuple | None:
    """The batch index of the first matrix whose `info` is not 0, or None."""
    flat = np.flatnonzero(info)
    return np.unravel_index(int(flat[0]), info.shape) if flat.size else None


def _batch_prefix(A: np.ndarray, index: tuple) -> str:
    """PyTorch's "(Batch element i): " before a batched matrix's error."""
    if A.ndim <= 2:
        return ""
    return f"(Batch element {int(np.ravel_multi_index(index, A.shape[:-2]))}): "


# -- LU ----------------------------------------------------------------------------------------


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LU factorisation with partial pivoting (LAPACK's getrf) of every matrix of
    `a`: the factors packed in one matrix (L's unit diagonal left out), the pivots
    (1-based: row k was swapped with row pivots[k] - 1) and `info` (the first zero of
    U's diagonal, 1-based, or 0)."""
    lu = np.array(a, copy=True)
    n = lu.shape[-1]
    pivots = np.zeros(lu.shape[:-1], np.int64)
    info = np.zeros(lu.shape[:-2], np.int64)
    with np.errstate(all="ignore"):
        for index in np.ndindex(lu.shape[:-2]):
            m = lu[index]
            for k in range(n):
                p = k + int(np.argmax(np.abs(m[k:, k])))  # the largest; the first on a tie
                pivots[index + (k,)] = p + 1
                m[[k, p]] = m[[p, k]]
                if m[k, k] == 0:
                    info[index] = info[index] or k + 1
                    continue
                m[k + 1:, k] /= m[k, k]
                m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return lu, pivots, info


def column_major(x: np.ndarray) -> np.ndarray:
    """`x` with each matrix laid out column by column (the batch still row-major), as
    LAPACK writes its results and PyTorch returns them: strides (n * k, 1, n)."""
    if x.ndim < 2:
        return np.ascontiguousarray(x)
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


def _save_lu(node, A: Tensor, lu: np.ndarray, pivots: np.ndarray) -> None:
    node._saved["A"] = SavedTensor(A)
    node._saved["LU"] = SavedTensor(Tensor._make(lu))
    node._saved["pivots"] = SavedTensor(Tensor._make(pivots))


# -- inv ---------------------------------------------------------------------------------------


class LinalgInvExBackward0(ArrayFormulaNode):
    """A^-1: its gradient is -A^-T @ grad @ A^-T. Saves its output (the inverse)."""

    tangent = Tangent("inv_jvp(A_t, result)")  # (result: the inverse)
    saves = {"inverse": OUTPUT}
    formulas = (Formula("A", "inv_backward(grad, inverse)"),)


def _inverse(A: Tensor, fn: str, check_errors: bool) -> tuple[Tensor, np.ndarray]:  # noqa: N803
    _check_square(A, fn)
    a = A._data
    info = lu_factor(a)[2] if a.size else np.zeros(a.shape[:-2], np.int64)
    index = _first_failure(info)
    if check_errors and index is not None:
        raise _LinAlgError(
            f"{fn}: {_batch_prefix(a, index)}The diagonal element {int(info[index])} is zero, "
            "the inversion could not be completed because the input matrix is singular.")
    with np.errstate(all="ignore"):
        data = np.linalg.inv(a) if index is None else _inverse_or_inf(a)
    out = Tensor._make(column_major(np.asarray(data, a.dtype)))
    node = record(LinalgInvExBackward0, out, A)
    if node is not None:
        node._saved["inverse"] = SavedTensor(out, is_output=True)
    return out, info


def _inverse_or_inf(a: np.ndarray) -> np.ndarray:
    """The inverses of the matrices that have one, nan for the singular ones (what
    `inv_ex` returns for those is LAPACK's partial work: no value to rely on)."""
    out = np.full_like(a, np.nan)
    for index in np.ndindex(a.shape[:-2]):
        try:
            out[index] = np.linalg.inv(a[index])
        except np.linalg.LinAlgError:
            pass
    return out


def inv(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The inverse of a square matrix (of each in a batch); PyTorch's error for a
    singular one."""
    return _inverse(A, "linalg.inv", True)[0]


def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple:  # noqa: N803
    """`inv`, and `info`: 0, or the first zero of U's diagonal for a singular matrix
    (raising only with `check_errors`)."""
    out, info = _inverse(A, "linalg.inv_ex", check_errors)
    return inv_ex_result(out, Tensor._make(np.asarray(info, np.int64)))


@helper
def inv_backward(grad: Tensor, inverse: Tensor) -> Tensor:
    """-A^-T @ grad @ A^-T (PyTorch's `-matmul(inverse.mH(), matmul(grad, inverse.mH()))`)."""
    inverse_t = inverse.mT
    return -batched.matmul(inverse_t, batched.matmul(grad, inverse_t))


@on_arrays("inv_backward")
def _inv_backward(grad: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    inverse_t = np.swapaxes(inverse, -1, -2)
    with np.errstate(all="ignore"):
        return np.ascontiguousarray(-np.matmul(inverse_t, np.matmul(grad, inverse_t)))


@helper
def inv_jvp(A_t, inverse: Tensor):  # noqa: N803
    """The tangent of the inverse: -A^-1 @ dA @ A^-1."""
    if A_t is ZERO:
        return ZERO
    return -batched.matmul(batched.matmul(inverse, A_t), inverse)


# -- det ---------------------------------------------------------------------------------------


class LinalgDetBackward0(ArrayFormulaNode):
    """det(A): its gradient is grad * det(A) * A^-T (the cofactor matrix), or, for a
    singular A, the cofactors from the SVD, as PyTorch's linalg_det_backward."""

    tangent = Tangent("det_jvp(A_t, result, A)")
    saves = {"A": INPUT, "LU": VALUE, "pivots": VALUE, "result": OUTPUT}
    formulas = (Formula("A", "linalg_det_backward(grad, result, A)"),)


def det(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The determinant of a square matrix (of each in a batch)."""
    _check_square(A, "linalg.det")
    a = A._data
    with np.errstate(all="ignore"):
        out = Tensor._make(np.asarray(np.linalg.det(a) if a.size else
                                      np.ones(a.shape[:-2], a.dtype), a.dtype))
    node = record(LinalgDetBackward0, out, A)
    if node is not None:
        lu, pivots, _ = lu_factor(a)
        _save_lu(node, A, lu, pivots)
        node._saved["result"] = SavedTensor(out, is_output=True)
    return out


def _cofactors(a: np.ndarray, det: np.ndarray) -> np.ndarray:
    """d det(A) / dA for every matrix: det * A^-T, or for a singular one the SVD's
    form U diag(prod of the other singular values) V^T times det(U) det(V^T)."""
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        for index in np.ndindex(a.shape[:-2]):
            m = a[index]
            if det[index] != 0:
                out[index] = det[index] * np.linalg.inv(m).T
                continue
            u, s, vh = np.linalg.svd(m)
            others = np.array([np.prod(np.delete(s, i)) for i in range(s.shape[0])], a.dtype)
            out[index] = np.linalg.det(u) * np.linalg.det(vh) * (u * others) @ vh
    return out


@helper
def linalg_det_backward(grad: Tensor, det: Tensor, A: Tensor) -> Tensor:  # noqa: N803
    """grad times the cofactor matrix of A (PyTorch's linalg_det_backward)."""
    if A.numel() == 0:
        return zeros(*A.shape, dtype=A.dtype)
    if A.shape[-1] == 1:  # (the cofactor of a 1x1 matrix is 1, whatever its value)
        return views.unsqueeze(views.unsqueeze(grad, -1), -1)
    if bool((det._data == 0).any()):
        raise NotImplementedError("minigrad cannot differentiate the backward of det at a "
                                  "singular matrix yet (create_graph=True)")
    scale = views.unsqueeze(views.unsqueeze(grad * det, -1), -1)
    return scale * inv(A).mT


@on_arrays("linalg_det_backward")
def _linalg_det_backward(grad: np.ndarray, det: np.ndarray, A: np.ndarray  # noqa: N803
                         ) -> np.ndarray:
    if A.size == 0:
        return np.zeros(A.shape, A.dtype)
    if A.shape[-1] == 1:
        return np.asarray(grad)[..., None, None]
    with np.errstate(all="ignore"):
        return column_major(np.asarray(np.asarray(grad)[..., None, None]
                                       * _cofactors(A, np.asarray(det)), A.dtype))


@helper
def det_jvp(A_t, det: Tensor, A: Tensor):  # noqa: N803
    """The tangent of det: det(A) * trace(A^-1 dA)."""
    if A_t is ZERO:
        return ZERO
    solved = batched.matmul(inv(A), A_t)
    return det * solved.diagonal(0, -2, -1).sum(-1)


# -- slogdet, logdet ---------------------------------------------------------------------------

slogdet_result = _return_type("linalg_slogdet", ["sign", "logabsdet"])


class LinalgSlogdetBackward0(ArrayFormulaNode):
    """(sign, log|det A|), one node for both outputs (output 0 the sign, 1 the log):
    for real A the sign's gradient is zero, so A's is grad_logabsdet * A^-T."""

    saves = {"A": INPUT, "LU": VALUE, "pivots": VALUE, "sign": OUTPUT}
    formulas = (Formula("A", "slogdet_backward(grads, A, sign)"),)

    def _num_outputs(self) -> int:
        return 2


def slogdet(A: Tensor) -> tuple:  # noqa: N803 - PyTorch's name
    """The sign of det(A) and the log of its absolute value (which does not overflow
    where det(A) would), for a square matrix (of each in a batch)."""
    _check_square(A, "linalg.slogdet")
    a = A._data
    with np.errstate(all="ignore"):
        sign, log = np.linalg.slogdet(a) if a.size else (
            np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], a.dtype))
    sign_t = Tensor._make(np.asarray(sign, a.dtype))
    log_t = Tensor._make(np.asarray(log, a.dtype))
    node = record(LinalgSlogdetBackward0, None, A)
    if node is not None:
        lu, pivots, _ = lu_factor(a)
        _save_lu(node, A, lu, pivots)
        sign_t._grad_fn, sign_t._output_nr = node, 0
        log_t._grad_fn, log_t._output_nr = node, 1
        node._saved["sign"] = SavedTensor(sign_t, is_output=True)
    return slogdet_result(sign_t, log_t)


@helper
def slogdet_backward(grads: list, A: Tensor, sign: Tensor) -> Tensor:  # noqa: N803
    """grad_logabsdet * A^-T (PyTorch's slogdet_backward for real A); zeros when only
    the sign got a gradient."""
    g = grads[1] if len(grads) > 1 else None
    if g is None:
        return zeros(*A.shape, dtype=A.dtype)
    return views.unsqueeze(views.unsqueeze(g, -1), -1) * inv(A).mT


@on_arrays("slogdet_backward")
def _slogdet_backward(grads: tuple, A: np.ndarray, sign: np.ndarray) -> np.ndarray:  # noqa: N803
    g = grads[1] if len(grads) > 1 else None
    if g is None or A.size == 0:
        return np.zeros(A.shape, A.dtype)
    with np.errstate(all="ignore"):
        return column_major(np.asarray(
            np.asarray(g)[..., None, None] * np.swapaxes(_inverse_or_inf(A), -1, -2),
            A.dtype))


def logdet(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """log(det(A)): PyTorch's `where(sign == -1, nan, logabsdet)` over slogdet (nan for
    a negative determinant, -inf for a zero one)."""
    _check_square(A, "logdet")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"logdet: Expected a floating point tensor as input. Got "
                           f"{A.dtype.type_name}")
    sign, log = slogdet(A)
    return named("where")(sign == -1.0, float("nan"), log)


# -- solve -------------------------------------------------------------------------------------


class LinalgSolveExBackward0(ArrayFormulaNode):
    """X = A^-1 B: B's gradient is A^-T grad, A's is -(that) X^T (for left=False,
    X = B A^-1, the mirror images)."""

    tangent = Tangent("solve_jvp(A_t, B_t, A, result, left)")
    saves = {"A": INPUT, "LU": VALUE, "left": VALUE, "pivots": VALUE, "result": OUTPUT}
    formulas = (Formula("A", "solve_backward_A(grad, A, result, left)"),
                Formula("B", "solve_backward_B(grad, A, result, left)"))


def _is_vector_rhs(A: np.ndarray, B: np.ndarray) -> bool:  # noqa: N803
    """PyTorch's rule: B is a (batch of) vector(s) if it is 1-D, or has one dim fewer
    than A and A's shape but the last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def _solve(A: Tensor, B: Tensor, left: bool, fn: str, check_errors: bool  # noqa: N803
           ) -> tuple[Tensor, np.ndarray]:
    _check_square(A, fn)
    a, b = A._data, B._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype.type_name} and B of type {B.dtype.type_name} "
                           "instead")
    vector = _is_vector_rhs(a, b)
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    if bm.shape[-2 if left else -1] != n:
        raise RuntimeError(
            f"{fn}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
            f"{bm.shape[-2]}x{bm.shape[-1]})")
    batch_shape(bm.shape[:-2], a.shape[:-2])  # (PyTorch's error if they do not broadcast)
    lu, pivots, info = lu_factor(a)
    index = _first_failure(info)
    if check_errors and index is not None:
        raise _LinAlgError(
            f"minigrad.{fn}: {_batch_prefix(a, index)}The solver failed because the input "
            "matrix is singular.")
    with np.errstate(all="ignore"):
        if left:
            x = np.linalg.solve(a, bm) if index is None else np.matmul(_inverse_or_inf(a), bm)
        else:
            x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(bm, -1, -2)),
                            -1, -2) if index is None else np.matmul(bm, _inverse_or_inf(a))
    x = np.asarray(x[..., 0] if vector else x, a.dtype)
    # (PyTorch's layout: LAPACK's columns for A X = B, and rows for X A = B, solved as
    # A^T X^T = B^T)
    x = (np.asfortranarray(x) if vector else column_major(x)) if left else \
        np.ascontiguousarray(x)
    out = Tensor._make(x)
    node = record(LinalgSolveExBackward0, out, A, B)
    if node is not None:
        _save_lu(node, A, lu, pivots)
        node._saved["left"] = left
        node._saved["result"] = SavedTensor(out, is_output=True)
    return out, info


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """X with A X = B (`left=False`: X A = B), for square A (batches broadcast)."""
    return _solve(A, B, left, "linalg.solve", True)[0]


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             check_errors: bool = False) -> tuple:
    """`solve`, and `info` (0, or the first zero of U's diagonal for a singular A)."""
    out, info = _solve(A, B, left, "linalg.solve_ex", check_errors)
    return solve_ex_result(out, Tensor._make(np.asarray(info, np.int64)))


def _as_matrix(x: Tensor, vector: bool) -> Tensor:
    return views.unsqueeze(x, -1) if vector else x


@helper
def solve_backward_B(grad: Tensor, A: Tensor, result: Tensor, left: bool) -> Tensor:  # noqa: N802, N803
    """B's gradient: A^-T grad (left) or grad A^-T (PyTorch's linalg_solve_backward)."""
    vector = _is_vector_rhs(A._data, result._data)
    g = solve(A.mT, _as_matrix(grad, vector), left=left)
    return g.squeeze(-1) if vector else g


@helper
def solve_backward_A(grad: Tensor, A: Tensor, result: Tensor, left: bool) -> Tensor:  # noqa: N802, N803
    """A's gradient: -gB X^T (left) or -X^T gB."""
    vector = _is_vector_rhs(A._data, result._data)
    g_b = solve(A.mT, _as_matrix(grad, vector), left=left)
    x = _as_matrix(result, vector)
    return -batched.matmul(g_b, x.mT) if left else -batched.matmul(x.mT, g_b)


def _solve_arrays(a: np.ndarray, g: np.ndarray, left: bool) -> np.ndarray:
    a_t = np.swapaxes(a, -1, -2)
    with np.errstate(all="ignore"):
        if left:
            return np.linalg.solve(a_t, g)
        return np.swapaxes(np.linalg.solve(a, np.swapaxes(g, -1, -2)), -1, -2)


@on_arrays("solve_backward_B")
def _solve_backward_b(grad: np.ndarray, A: np.ndarray, result: np.ndarray,  # noqa: N803
                      left: bool) -> np.ndarray:
    vector = _is_vector_rhs(A, result)
    g = _solve_arrays(A, grad[..., None] if vector else grad, left)
    if vector:
        return np.ascontiguousarray(g[..., 0])
    return column_major(g) if left else np.ascontiguousarray(g)


@on_arrays("solve_backward_A")
def _solve_backward_a(grad: np.ndarray, A: np.ndarray, result: np.ndarray,  # noqa: N803
                      left: bool) -> np.ndarray:
    vector = _is_vector_rhs(A, result)
    g_b = _solve_arrays(A, grad[..., None] if vector else grad, left)
    x_t = np.swapaxes(result[..., None] if vector else result, -1, -2)
    with np.errstate(all="ignore"):
        return np.ascontiguousarray(-(np.matmul(g_b, x_t) if left else np.matmul(x_t, g_b)))


@helper
def solve_jvp(A_t, B_t, A: Tensor, result: Tensor, left: bool):  # noqa: N803
    """The tangent of X = A^-1 B: A^-1 (dB - dA X) (left), (dB - X dA) A^-1 (right)."""
    vector = _is_vector_rhs(A._data, result._data)
    x = _as_matrix(result, vector)
    rhs = ZERO if B_t is ZERO else _as_matrix(B_t, vector)
    if A_t is not ZERO:
        change = batched.matmul(A_t, x) if left else batched.matmul(x, A_t)
        rhs = -change if rhs is ZERO else rhs - change
    if rhs is ZERO:
        return ZERO
    out = solve(A, rhs, left=left)
    return out.squeeze(-1) if vector else out


# -- cholesky ----------------------------------------------------------------------------------


class LinalgCholeskyExBackward0(ArrayFormulaNode):
    """A = L L^T: A's gradient is L^-T Phi(L^T grad) L^-1, Phi taking the lower
    triangle with the diagonal halved and mirrored (PyTorch's cholesky_backward)."""

    tangent = Tangent("cholesky_jvp(self_t, result, upper)")  # (result: L)
    saves = {"L": OUTPUT, "upper": VALUE}
    formulas = (Formula("self", "cholesky_backward(grad, upper, L)"),)


class CholeskyBackward0(ArrayFormulaNode):
    """The deprecated `cholesky`: linalg.cholesky's gradient, its own node (saving
    the factor as `result`); no forward mode, as in PyTorch."""

    saves = {"result": OUTPUT, "upper": VALUE}
    formulas = (Formula("self", "cholesky_backward(grad, upper, result)"),)


def _cholesky(A: Tensor, upper: bool, fn: str, check_errors: bool,  # noqa: N803
              node_cls=LinalgCholeskyExBackward0) -> tuple[Tensor, np.ndarray]:
    _check_square(A, fn)
    a = A._data
    out = np.zeros_like(a)
    info = np.zeros(a.shape[:-2], np.int64)
    for index in np.ndindex(a.shape[:-2]):
        try:
            out[index] = np.linalg.cholesky(a[index])
        except np.linalg.LinAlgError:
            info[index] = _failing_minor(a[index])
            if check_errors:
                raise _LinAlgError(
                    f"{fn}: {_batch_prefix(a, index)}The factorization could not be completed "
                    "because the input is not positive-definite (the leading minor of order "
                    f"{info[index]} is not positive-definite).") from None
            out[index] = np.nan
    if upper:
        out = np.swapaxes(out, -1, -2)
    result = Tensor._make(column_major(np.asarray(out, a.dtype)))
    node = record(node_cls, result, A)
    if node is not None:
        name = "L" if node_cls is LinalgCholeskyExBackward0 else "result"
        node._saved[name] = SavedTensor(result, is_output=True)
        node._saved["upper"] = upper
    return result, info


def _failing_minor(m: np.ndarray) -> int:
    """The order of the first leading minor that is not positive-definite."""
    for k in range(1, m.shape[0] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """L with A = L L^T (`upper`: U = L^T, A = U^T U), for a symmetric positive-definite
    A; only A's lower triangle is read."""
    return _cholesky(A, upper, "linalg.cholesky", True)[0]


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> tuple:  # noqa: N803
    """`cholesky`, and `info` (0, or the order of the first leading minor that is not
    positive-definite)."""
    out, info = _cholesky(A, upper, "linalg.cholesky_ex", check_errors)
    return cholesky_ex_result(out, Tensor._make(np.asarray(info, np.int64)))


_CHOLESKY_DEPRECATED = Once()  # (PyTorch warns once per process)


def cholesky_deprecated(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """`linalg.cholesky` under its old name (deprecated in PyTorch, which warns once)."""
    if _CHOLESKY_DEPRECATED.due():
        warn_user(
            "minigrad.cholesky is deprecated in favor of minigrad.linalg.cholesky and will be "
            "removed in a future PyTorch release.\nL = minigrad.cholesky(A)\nshould be "
            "replaced with\nL = minigrad.linalg.cholesky(A)\nand\nU = minigrad.cholesky(A, "
            "upper=True)\nshould be replaced with\nU = minigrad.linalg.cholesky(A).mH\nThis "
            "transform will produce equivalent results for all valid (symmetric positive "
            "definite) inputs.")
    shape = input._data.shape
    if len(shape) >= 2 and shape[-1] == shape[-2] and not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"cholesky_cpu\" not implemented for '{input.dtype.type_name}'")
    return _cholesky(input, upper, "cholesky", True, CholeskyBackward0)[0]


cholesky_deprecated.__name__ = cholesky_deprecated.__qualname__ = "cholesky"


def _lower_mask(n: int, k: int, dtype) -> np.ndarray:
    return np.tril(np.ones((n, n), dtype), k)


@helper
def cholesky_backward(grad: Tensor, upper: bool, L: Tensor) -> Tensor:  # noqa: N803
    """PyTorch's cholesky_backward in minigrad ops (the triangular solves as products
    with L's inverse)."""
    if upper:
        L, grad = L.mT, grad.mT  # noqa: N806
    n = L.shape[-1]
    lower = Tensor._make(_lower_mask(n, 0, L._data.dtype))
    strict = Tensor._make(_lower_mask(n, -1, L._data.dtype))
    g = batched.matmul(L.mT, grad) * lower
    g = 0.5 * (g + (g * strict).mT)
    l_inv = inv(L)
    return batched.matmul(batched.matmul(l_inv.mT, g), l_inv)


@on_arrays("cholesky_backward")
def _cholesky_backward(grad: np.ndarray, upper: bool, L: np.ndarray) -> np.ndarray:  # noqa: N803
    if upper:
        L, grad = np.swapaxes(L, -1, -2), np.swapaxes(grad, -1, -2)  # noqa: N806
    with np.errstate(all="ignore"):
        g = np.tril(np.matmul(np.swapaxes(L, -1, -2), grad))
        g = 0.5 * (g + np.swapaxes(np.tril(g, -1), -1, -2))
        l_inv = np.linalg.inv(L)
        out = np.matmul(np.matmul(np.swapaxes(l_inv, -1, -2), g), l_inv)
    return column_major(np.asarray(out, grad.dtype))


@helper
def cholesky_jvp(dA, L: Tensor, upper: bool):  # noqa: N803
    """The tangent of L: L Phi(L^-1 dA L^-T), Phi the lower triangle with the diagonal
    halved (PyTorch's cholesky_jvp)."""
    if dA is ZERO:
        return ZERO
    if upper:
        L = L.mT  # noqa: N806
    n = L.shape[-1]
    l_inv = inv(L)
    phi = batched.matmul(batched.matmul(l_inv, dA), l_inv.mT)
    lower = Tensor._make(_lower_mask(n, -1, L._data.dtype))
    diag = Tensor._make(np.eye(n, dtype=L._data.dtype))
    phi = phi * lower + 0.5 * (phi * diag)
    out = batched.matmul(L, phi)
    return out.mT if upper else out



# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("slogdet", nodes=(LinalgSlogdetBackward0,), function=slogdet, method=True)
declare("logdet", function=logdet, method=True)  # (records WhereBackward0 over slogdet's)
declare("det", nodes=(LinalgDetBackward0,), function=det, method=True)
declare("inverse", nodes=(LinalgInvExBackward0,), function=inv, method=True)
declare("linalg_solve", nodes=(LinalgSolveExBackward0,))
declare("cholesky", nodes=(CholeskyBackward0,), function=cholesky_deprecated, method=True)
declare("linalg_cholesky", nodes=(LinalgCholeskyExBackward0,))


# -- triangular solves --------------------------------------------------------------------------


class LinalgSolveTriangularBackward0(ArrayFormulaNode):
    """X = A^-1 B for triangular A: B's gradient is A^-T grad (a triangular solve
    too), A's is -(that) X^T, kept to A's triangle (PyTorch's
    linalg_solve_triangular_backward)."""

    tangent = Tangent("solve_triangular_jvp(self_t, B_t, self_p, result, upper, left, "
                      "unitriangular)")
    saves = {"left": VALUE, "result": OUTPUT, "self": INPUT, "unitriangular": VALUE,
             "upper": VALUE}
    formulas = (
        Formula("self", "solve_triangular_backward_A(grad, self, result, upper, left, "
                        "unitriangular)"),
        Formula("B", "solve_triangular_backward_B(grad, self, upper, left, unitriangular)"),
    )


def _triangle(n: int, upper: bool, unitriangular: bool, dtype) -> np.ndarray:
    """The 0/1 mask of the triangle a triangular solve reads (its diagonal left out
    for a unit triangle, whose diagonal is taken as ones)."""
    ones_ = np.ones((n, n), dtype)
    k = int(unitriangular)
    return np.triu(ones_, k) if upper else np.tril(ones_, -k)


def _substitute(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """A^-1 B for triangular A by substitution, row by row (LAPACK's trsm does the
    same); a zero on the diagonal gives inf and nan, as there."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], b.dtype)
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):
        for i in rows:
            rest = slice(i + 1, n) if upper else slice(0, i)
            value = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, rest], x[..., rest, :])
            x[..., i, :] = value if unit else value / a[..., i, i, None]
    return x


def _solve_triangular_arrays(a: np.ndarray, b: np.ndarray, upper: bool, left: bool,
                             unit: bool) -> np.ndarray:
    if left:
        return _substitute(a, b, upper, unit)
    swap = np.swapaxes  # X A = B  <=>  A^T X^T = B^T, A^T the other triangle
    return swap(_substitute(swap(a, -1, -2), swap(b, -1, -2), not upper, unit), -1, -2)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (`left=False`: X A = B) for a triangular A: only its upper (or
    lower) triangle is read, and with `unitriangular` its diagonal is taken as ones."""
    fn = "linalg.solve_triangular"
    for name, t in (("A", A), ("B", B)):
        if t._data.ndim < 2:
            raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    a, b = A._data, B._data
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if b.shape[-2 if left else -1] != a.shape[-1]:
        raise RuntimeError(
            f"{fn}: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
            f"{b.shape[-2]}x{b.shape[-1]})")
    batch_shape(b.shape[:-2], a.shape[:-2])  # (PyTorch's error if they do not broadcast)
    dtype = np.result_type(a, b)
    if dtype.kind != "f":
        name = {"i": "Long", "b": "Bool"}[dtype.kind]
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{name}'")
    if a.dtype != dtype:
        A = A.to(B.dtype)  # noqa: N806 - (a ToCopyBackward0, as PyTorch's promotion)
    if b.dtype != dtype:
        B = B.to(A.dtype)  # noqa: N806
    a, b = A._data, B._data
    x = _solve_triangular_arrays(a * _triangle(a.shape[-1], upper, unitriangular, dtype), b,
                                 upper, left, unitriangular)
    out = Tensor._make(column_major(np.asarray(x, dtype)))
    node = record(LinalgSolveTriangularBackward0, out, A, B)
    if node is not None:
        node._saved.update(left=left, upper=upper, unitriangular=unitriangular)
        node._saved["self"] = SavedTensor(A)
        node._saved["result"] = SavedTensor(out, is_output=True)
    return out


def _kept_triangle(g: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    """g.triu(unitriangular) (upper) or g.tril(-unitriangular), as a product with the
    triangle's mask."""
    mask = _triangle(g.shape[-1], upper, unitriangular, g._data.dtype)
    return g * Tensor._make(mask)


@helper
def solve_triangular_backward_B(grad: Tensor, A: Tensor, upper: bool, left: bool,  # noqa: N802, N803
                                unitriangular: bool) -> Tensor:
    """B's gradient: the triangular solve with A^T (the other triangle)."""
    return solve_triangular(A.mT, grad, upper=not upper, left=left,
                            unitriangular=unitriangular)


@helper
def solve_triangular_backward_A(grad: Tensor, A: Tensor, X: Tensor, upper: bool,  # noqa: N802, N803
                                left: bool, unitriangular: bool) -> Tensor:
    """A's gradient: -gB X^T (left) or -X^T gB, kept to A's triangle."""
    g_b = solve_triangular_backward_B(grad, A, upper, left, unitriangular)
    g_a = -batched.matmul(g_b, X.mT) if left else -batched.matmul(X.mT, g_b)
    return _kept_triangle(g_a, upper, unitriangular)


@on_arrays("solve_triangular_backward_B")
def _solve_triangular_backward_b(grad: np.ndarray, A: np.ndarray, upper: bool,  # noqa: N803
                                 left: bool, unitriangular: bool) -> np.ndarray:
    a_t = np.swapaxes(A, -1, -2)
    a_t = a_t * _triangle(a_t.shape[-1], not upper, unitriangular, a_t.dtype)
    return column_major(_solve_triangular_arrays(a_t, grad, not upper, left, unitriangular))


@on_arrays("solve_triangular_backward_A")
def _solve_triangular_backward_a(grad: np.ndarray, A: np.ndarray, X: np.ndarray,  # noqa: N803
                                 upper: bool, left: bool, unitriangular: bool) -> np.ndarray:
    g_b = _solve_triangular_backward_b(grad, A, upper, left, unitriangular)
    x_t = np.swapaxes(X, -1, -2)
    with np.errstate(all="ignore"):
        g_a = -(np.matmul(g_b, x_t) if left else np.matmul(x_t, g_b))
        g_a = g_a * _triangle(A.shape[-1], upper, unitriangular, A.dtype)
    return np.ascontiguousarray(g_a, A.dtype)


@helper
def solve_triangular_jvp(A_t, B_t, A: Tensor, X: Tensor, upper: bool, left: bool,  # noqa: N803
                         unitriangular: bool):
    """The tangent: A^-1 (dB - dA X) (left), dA kept to A's triangle."""
    rhs = B_t
    if A_t is not ZERO:
        projected = _kept_triangle(A_t, upper, unitriangular)
        change = batched.matmul(projected, X) if left else batched.matmul(X, projected)
        rhs = -change if rhs is ZERO else rhs - change
    if rhs is ZERO:
        return ZERO
    return solve_triangular(A, rhs, upper=upper, left=left, unitriangular=unitriangular)


declare("linalg_solve_triangular", nodes=(LinalgSolveTriangularBackward0,))

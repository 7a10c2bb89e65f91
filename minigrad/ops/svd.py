"""The singular value decomposition: `linalg.svd` (A = U diag(S) Vh), `linalg.svdvals`
(S alone) and the older `svd` (U, S and V = Vh^T).

As in PyTorch, all three are one op with one node, `LinalgSvdBackward0` (PyTorch's
`_linalg_svd`), whose three outputs are U (output 0), S (1) and Vh (2): `svdvals`
returns output 1 only, but computes and saves U and Vh whenever a gradient may be
needed, because S's gradient is U diag(gS) Vh. The factorisation is numpy's LAPACK
call (gesdd, as PyTorch's on the CPU): two builds of LAPACK round differently, and a
singular vector is only defined up to its sign, so U and Vh may differ from
PyTorch's by the sign of a column of U together with the same row of Vh; S, U diag(S)
Vh and the gradients of anything that does not depend on those signs agree.
The gradient is PyTorch's `svd_backward`, the tangent its `linalg_svd_jvp` (both
from `FunctionsManual.cpp`), written with minigrad ops (`@helper`) and, for the
plain backward, on arrays (`@on_arrays`).
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros
from ..autograd.graph import OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..autograd.tangents import BY_DECOMPOSITION, DUAL, set_tangent, tangent_of
from ..grad_mode import STATE
from ..tensor import Tensor
from . import batched
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .joining import cat
from .solvers import _batch_prefix, _LinAlgError, _return_type, column_major

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the linear algebra.)
OP_FAMILY = "linalg"

svd_result = _return_type("linalg_svd", ["U", "S", "Vh"])
old_svd_result = _return_type("svd", ["U", "S", "V"])


class LinalgSvdBackward0(ArrayFormulaNode):
    """A = U diag(S) Vh, one node for the three outputs (U 0, S 1, Vh 2): A's gradient
    is U (diag(gS) + the parts from gU and gVh) Vh (PyTorch's svd_backward), which
    assumes distinct singular values when gU or gVh is given. With `full_matrices`
    only the first min(m, n) columns of U (rows of Vh) take part."""

    # (no decomposition, but the same contract: the op gives its three outputs their
    # tangents itself, PyTorch's linalg_svd_jvp; see `_give_tangents`)
    tangent = BY_DECOMPOSITION
    saves = {"full_matrices": VALUE, "S": OUTPUT, "S_sym_argsize_minus_1": VALUE,
             "U": OUTPUT, "Vh": OUTPUT}
    formulas = (Formula("A", "svd_backward_full(grads, full_matrices, U, S, Vh)"),)

    def _num_outputs(self) -> int:
        return 3


# -- the forward -------------------------------------------------------------------------------


def _check(A: Tensor, driver) -> None:  # noqa: N803 - PyTorch's name
    """PyTorch's checks, in its order: a (batch of) matrices, floating; no driver."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError("linalg.svd: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.type_name}")
    if driver is not None:
        raise RuntimeError("minigrad.linalg.svd: keyword argument `driver=` is only supported "
                           "on CUDA inputs with cuSOLVER backend.")


def _lapack(a: np.ndarray, full_matrices: bool, compute_uv: bool) -> tuple:
    """(U, S, Vh) of every matrix of `a` (U and Vh None unless `compute_uv`), laid out
    as PyTorch's: U and Vh column by column, as LAPACK writes them. A matrix holding
    a NaN makes LAPACK fail (PyTorch's LinAlgError); one holding only infinities
    gives NaN throughout, as PyTorch's LAPACK does."""
    m, n = a.shape[-2:]
    k = min(m, n)
    nan = np.isnan(a).any(axis=(-2, -1)) if a.size else np.zeros(a.shape[:-2], bool)
    if nan.any():
        index = np.unravel_index(int(np.flatnonzero(nan)[0]), nan.shape)
        raise _LinAlgError(f"linalg.svd: {_batch_prefix(a, index)}The algorithm failed to "
                           "converge because the input matrix contained non-finite values.")
    shape_u = a.shape[:-1] + ((m,) if full_matrices else (k,))
    shape_vh = a.shape[:-2] + (((n,) if full_matrices else (k,)) + (n,))
    u = np.zeros(shape_u, a.dtype)
    s = np.zeros(a.shape[:-2] + (k,), a.dtype)
    vh = np.zeros(shape_vh, a.dtype)
    if a.size == 0:  # (no values: the full factors of an empty side are identities)
        u[...] = np.eye(*shape_u[-2:], dtype=a.dtype)
        vh[...] = np.eye(*shape_vh[-2:], dtype=a.dtype)
    else:
        finite = np.isfinite(a).all(axis=(-2, -1))
        safe = np.where(finite[..., None, None], a, 0)
        if compute_uv:
            u, s, vh = np.linalg.svd(safe, full_matrices=full_matrices)
        else:
            s = np.linalg.svd(safe, compute_uv=False)
        s = np.where(finite[..., None], s, np.nan)
        if compute_uv:
            u = np.where(finite[..., None, None], u, np.nan)
            vh = np.where(finite[..., None, None], vh, np.nan)
    s = np.ascontiguousarray(s, a.dtype)
    if not compute_uv:
        return None, s, None
    return column_major(np.asarray(u, a.dtype)), s, column_major(np.asarray(vh, a.dtype))


def _needs_factors(A: Tensor) -> bool:  # noqa: N803
    """PyTorch's `_may_require_fw_or_bw_grad`: U and Vh are computed for `svdvals` too
    when a gradient or a tangent of S may be asked for."""
    return (STATE.grad_enabled and A.requires_grad) or (
        DUAL.active and tangent_of(A) is not None)


def _svd(A: Tensor, full_matrices: bool, compute_uv: bool) -> tuple:  # noqa: N803
    """PyTorch's `_linalg_svd`: (U, S, Vh) as tensors (U and Vh None unless
    `compute_uv`), recorded as one node."""
    u, s, vh = _lapack(A._data, full_matrices, compute_uv)
    S = Tensor._make(s)  # noqa: N806
    if not compute_uv:
        return None, S, None
    U, Vh = Tensor._make(u), Tensor._make(vh)  # noqa: N806
    node = record(LinalgSvdBackward0, None, A)
    if node is not None:
        for nr, out in enumerate((U, S, Vh)):
            out._grad_fn, out._output_nr = node, nr
        node._saved["full_matrices"] = full_matrices
        node._saved["S_sym_argsize_minus_1"] = s.shape[-1]
        for name, out in (("U", U), ("S", S), ("Vh", Vh)):
            node._saved[name] = SavedTensor(out, is_output=True)
    if DUAL.active and tangent_of(A) is not None:
        _give_tangents(tangent_of(A), U, S, Vh, full_matrices)
    return U, S, Vh


def svd(A: Tensor, full_matrices: bool = True, *, driver=None) -> tuple:  # noqa: N803
    """U, S, Vh with A = U diag(S) Vh, S descending (for each matrix of a batch).
    `full_matrices=False`: U (m, k) and Vh (k, n), k = min(m, n), instead of square."""
    _check(A, driver)
    return svd_result(*_svd(A, full_matrices, True))


def svdvals(A: Tensor, *, driver=None) -> Tensor:  # noqa: N803
    """The singular values of A (of each matrix of a batch), in descending order."""
    _check(A, driver)
    return _svd(A, False, _needs_factors(A))[1]


def svd_old(input: Tensor, some: bool = True, compute_uv: bool = True) -> tuple:  # noqa: A002
    """The older `torch.svd`: U, S and V (not Vh: V = Vh^T, a view), reduced unless
    `some=False`; with `compute_uv=False`, U and V are zeros (m x m, n x n)."""
    if input._data.ndim < 2:
        raise RuntimeError("linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input._data.ndim} dimensions instead")
    if compute_uv:
        U, S, Vh = svd(input, full_matrices=not some)  # noqa: N806
    else:
        S = svdvals(input)  # noqa: N806
        *batch, m, n = input.shape
        U = zeros(*batch, m, m, dtype=input.dtype)  # noqa: N806
        Vh = zeros(*batch, n, n, dtype=input.dtype)  # noqa: N806
    return old_svd_result(U, S, Vh.mT)


svd_old.__name__ = svd_old.__qualname__ = "svd"


# -- the backward ------------------------------------------------------------------------------


def _three(grads) -> list:
    """The gradients of U, S and Vh, None for those that got none."""
    return [*list(grads), None, None, None][:3]


@helper
def svd_backward_full(grads: list, full_matrices: bool, U: Tensor, S: Tensor,  # noqa: N803
                      Vh: Tensor) -> Tensor | None:
    """derivatives.yaml's `_linalg_svd` entry: with `full_matrices`, the first k =
    min(m, n) columns of U (rows of Vh) and of their gradients, then `svd_backward`."""
    gU, gS, gVh = _three(grads)  # noqa: N806
    if full_matrices:
        k = S.shape[-1]
        gU = None if gU is None else gU.narrow(-1, 0, k)  # noqa: N806
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)  # noqa: N806
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)  # noqa: N806
    return svd_backward(gU, gS, gVh, U, S, Vh)


def _gaps(S: Tensor) -> Tensor:  # noqa: N803
    """E[j, k] = S_k^2 - S_j^2, with ones on the diagonal (only ever divided into 0)."""
    S2 = S * S  # noqa: N806
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)  # noqa: N806
    E.diagonal(0, -2, -1).fill_(1)
    return E


def svd_backward(gU, gS, gVh, U: Tensor, S: Tensor, Vh: Tensor) -> Tensor | None:  # noqa: N803
    """PyTorch's svd_backward for real matrices: gA = U (diag(gS) + (skew(U^T gU) S +
    S skew(Vh gVh^T)) / E) Vh, plus the part of gU (gVh) outside U's (Vh's) span for
    a tall (wide) A."""
    if gU is None and gS is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:  # (svdvals: gA = U diag(gS) Vh)
        if m >= n:
            return batched.matmul(U, gS.unsqueeze(-1) * Vh)
        return batched.matmul(U * gS.unsqueeze(-2), Vh)
    UhgU = None if gU is None else _skew(batched.matmul(U.mT, gU))  # noqa: N806
    VhgV = None if gVh is None else _skew(batched.matmul(Vh, gVh.mT))  # noqa: N806
    E = _gaps(S)  # noqa: N806
    if UhgU is not None and VhgV is not None:
        ret = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        ret = UhgU * (S.unsqueeze(-2) / E)
    else:
        ret = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        ret = ret + gS.diag_embed()
    if m > n and gU is not None:
        gA = batched.matmul(U, ret)  # noqa: N806
        gUSinv = gU / S.unsqueeze(-2)  # noqa: N806
        gA = gA + gUSinv - batched.matmul(U, batched.matmul(U.mT, gUSinv))  # noqa: N806
        return batched.matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = batched.matmul(ret, Vh)  # noqa: N806
        SinvgVh = gVh / S.unsqueeze(-1)  # noqa: N806
        gA = gA + SinvgVh - batched.matmul(batched.matmul(SinvgVh, Vh.mT), Vh)  # noqa: N806
        return batched.matmul(U, gA)
    if m >= n:
        return batched.matmul(U, batched.matmul(ret, Vh))
    return batched.matmul(batched.matmul(U, ret), Vh)


def _skew(X: Tensor) -> Tensor:  # noqa: N803
    return X - X.mT


@on_arrays("svd_backward_full")
def _svd_backward_full(grads: tuple, full_matrices: bool, U: np.ndarray,  # noqa: N803
                       S: np.ndarray, Vh: np.ndarray) -> np.ndarray | None:
    gU, gS, gVh = _three(grads)  # noqa: N806
    if full_matrices:
        k = S.shape[-1]
        gU = None if gU is None else gU[..., :k]  # noqa: N806
        gVh = None if gVh is None else gVh[..., :k, :]  # noqa: N806
        U, Vh = U[..., :k], Vh[..., :k, :]  # noqa: N806
    with np.errstate(all="ignore"):
        return _svd_backward_arrays(gU, gS, gVh, U, S, Vh)


def _svd_backward_arrays(gU, gS, gVh, U, S, Vh):  # noqa: N803
    """`svd_backward` on arrays, step for step."""
    if gU is None and gS is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    mT = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731, N806
    if gU is None and gVh is None:
        if m >= n:
            return U @ (gS[..., :, None] * Vh)
        return (U * gS[..., None, :]) @ Vh
    UhgU = None if gU is None else mT(U) @ gU  # noqa: N806
    VhgV = None if gVh is None else Vh @ mT(gVh)  # noqa: N806
    UhgU = None if UhgU is None else UhgU - mT(UhgU)  # noqa: N806
    VhgV = None if VhgV is None else VhgV - mT(VhgV)  # noqa: N806
    S2 = S * S  # noqa: N806
    E = S2[..., None, :] - S2[..., :, None]  # noqa: N806
    k = S.shape[-1]
    E[..., np.arange(k), np.arange(k)] = 1
    if UhgU is not None and VhgV is not None:
        ret = (UhgU * S[..., None, :] + S[..., :, None] * VhgV) / E
    elif UhgU is not None:
        ret = UhgU * (S[..., None, :] / E)
    else:
        ret = S[..., :, None] * (VhgV / E)
    if gS is not None:
        ret = ret + gS[..., :, None] * np.eye(k, dtype=S.dtype)
    if m > n and gU is not None:
        gUSinv = gU / S[..., None, :]  # noqa: N806
        return ((U @ ret) + gUSinv - U @ (mT(U) @ gUSinv)) @ Vh
    if m < n and gVh is not None:
        SinvgVh = gVh / S[..., :, None]  # noqa: N806
        return U @ ((ret @ Vh) + SinvgVh - (SinvgVh @ mT(Vh)) @ Vh)
    if m >= n:
        return U @ (ret @ Vh)
    return (U @ ret) @ Vh


# -- the tangent -------------------------------------------------------------------------------


def _give_tangents(dA: Tensor, U: Tensor, S: Tensor, Vh: Tensor,  # noqa: N803
                   full_matrices: bool) -> None:
    """The three outputs' tangents (PyTorch's linalg_svd_jvp), from the input's."""
    for out, t in zip((U, S, Vh), svd_jvp(dA, U, S, Vh, full_matrices)):
        set_tangent(out, t)


@helper
def svd_jvp(dA: Tensor, U_: Tensor, S: Tensor, Vh_: Tensor,  # noqa: N803
            full_matrices: bool) -> tuple:
    """dS = diag(dP), dU = U (sym(dX S) / E), dVh = -(sym(S dX) / E) Vh, with dP = U^T dA V
    and dX = dP - diag(dS); plus, for a tall (wide) A, the part of dA V S^-1
    (S^-1 U^T dA) outside U's (V's) span; the full factors' extra columns (rows) get
    zeros."""
    m, n = dA.shape[-2], dA.shape[-1]
    k = S.shape[-1]
    U = U_.narrow(-1, 0, k) if full_matrices else U_  # noqa: N806
    Vh = Vh_.narrow(-2, 0, k) if full_matrices else Vh_  # noqa: N806
    V = Vh.mT  # noqa: N806
    if m >= n:
        dP = batched.matmul(U.mT, batched.matmul(dA, V))  # noqa: N806
    else:
        dP = batched.matmul(batched.matmul(U.mT, dA), V)  # noqa: N806
    dS = dP.diagonal(0, -2, -1)  # noqa: N806
    dP = dP - dS.diag_embed()  # noqa: N806
    E = _gaps(S)  # noqa: N806
    dU = batched.matmul(U, _sym(dP * S.unsqueeze(-2)) / E)  # noqa: N806
    if m > n:
        dAVSinv = batched.matmul(dA, V / S.unsqueeze(-2))  # noqa: N806
        dU = dU + dAVSinv - batched.matmul(U, batched.matmul(U.mT, dAVSinv))  # noqa: N806
        if full_matrices:
            dU = cat([dU, zeros(*dU.shape[:-1], m - n, dtype=dU.dtype)], -1)  # noqa: N806
    dVh = batched.matmul(_sym(dP * (-S).unsqueeze(-1)) / E, Vh)  # noqa: N806
    if m < n:
        UHdASinv = batched.matmul(U.mT / S.unsqueeze(-1), dA)  # noqa: N806
        dVh = dVh + UHdASinv - batched.matmul(batched.matmul(UHdASinv, V), Vh)  # noqa: N806
        if full_matrices:
            dVh = cat([dVh, zeros(*dVh.shape[:-2], n - m, n, dtype=dVh.dtype)], -2)  # noqa: N806
    return dU, dS, dVh


def _sym(X: Tensor) -> Tensor:  # noqa: N803
    return X + X.mT


declare("linalg_svd", nodes=(LinalgSvdBackward0,))
declare("svd", function=svd_old, method=True)

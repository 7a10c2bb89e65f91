"""The scaled products: `beta * self + alpha * (a product)`, BLAS's own form.

`addmv` (matrix @ vector), `addr` (an outer product), `baddbmm` (a stack of matrix
products) and `addbmm` (their sum) each add a product, times `alpha`, to `self`,
times `beta`, as one op with one node, as in PyTorch (`addmm`, nn.Linear's, lives in
`linalg.py`). PyTorch's rules for the two scalars are followed:
* `beta == 0` ignores `self` altogether, so a nan or inf in it does not show;
* for integer tensors a float `alpha` or `beta` is truncated to an integer (addr
  refuses one instead, and takes a bool only for bool tensors).
The arithmetic is numpy's BLAS call, as for every matrix product in minigrad.
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import INPUT, VALUE, Node, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .linalg import _NAMES, as_scalars, ger, refuse_expand, scaled_sum
from .tangent_formulas import ZERO, Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the linear algebra.)
OP_FAMILY = "linalg"


# -- the nodes ---------------------------------------------------------------------------


class AddmvBackward0(ArrayFormulaNode):
    """beta * self + alpha * (mat @ vec): grad * beta for self, alpha * outer(grad,
    vec) for mat, alpha * mat.T @ grad for vec. Each operand is saved only when the
    other one needs a gradient."""

    tangent = Tangent("maybe_multiply(self_t, beta) + maybe_multiply(mv(mat_t, vec_p), alpha)"
                      " + maybe_multiply(mv(mat_p, vec_t), alpha)")
    saves = {"alpha": VALUE, "beta": VALUE, "mat": INPUT, "vec": INPUT}
    scalars = ("alpha", "beta")
    formulas = (
        Formula("self", "maybe_multiply(grad, beta)"),
        Formula("mat", "maybe_multiply(ger(grad, vec), alpha)"),
        Formula("vec", "maybe_multiply(mat.t().mv(grad), alpha)"),
    )


class AddrBackward0(ArrayFormulaNode):
    """beta * self + alpha * outer(vec1, vec2): alpha * grad @ vec2 for vec1, alpha *
    grad.T @ vec1 for vec2."""

    tangent = Tangent("maybe_multiply(self_t, beta) + maybe_multiply(outer_of(vec1_t, vec2_p),"
                      " alpha) + maybe_multiply(outer_of(vec1_p, vec2_t), alpha)")
    saves = {"alpha": VALUE, "beta": VALUE, "vec1": INPUT, "vec2": INPUT}
    scalars = ("alpha", "beta")
    formulas = (
        Formula("self", "maybe_multiply(grad, beta)"),
        Formula("vec1", "maybe_multiply(grad.mv(vec2), alpha)"),
        Formula("vec2", "maybe_multiply(grad.t().mv(vec1), alpha)"),
    )


class BaddbmmBackward0(ArrayFormulaNode):
    """beta * self + alpha * (batch1 @ batch2), matrix by matrix."""

    tangent = Tangent("maybe_multiply(self_t, beta) + maybe_multiply(bmm(batch1_t, batch2_p), "
                      "alpha) + maybe_multiply(bmm(batch1_p, batch2_t), alpha)")
    saves = {"alpha": VALUE, "batch1": INPUT, "batch2": INPUT, "beta": VALUE}
    scalars = ("alpha", "beta")
    formulas = (
        Formula("self", "maybe_multiply(grad, beta)"),
        Formula("batch1", "maybe_multiply(grad.bmm(batch2.transpose(1, 2)), alpha)"),
        Formula("batch2", "maybe_multiply(batch1.transpose(1, 2).bmm(grad), alpha)"),
    )


class AddbmmBackward0(ArrayFormulaNode):
    """beta * self + alpha * (the sum of the products batch1[i] @ batch2[i]): each
    product's gradient is the same incoming one, expanded over the batch."""

    tangent = Tangent("maybe_multiply(self_t, beta) + maybe_multiply(sum_of_bmm(batch1_t, "
                      "batch2_p), alpha) + maybe_multiply(sum_of_bmm(batch1_p, batch2_t), alpha)")
    saves = {"alpha": VALUE, "batch1": INPUT, "batch1_sym_argsize_0": VALUE,
             "batch1_sym_argsize_1": VALUE, "batch2": INPUT, "batch2_sym_argsize_2": VALUE,
             "beta": VALUE}
    scalars = ("alpha", "beta")
    formulas = (
        Formula("self", "maybe_multiply(grad, beta)"),
        Formula("batch1", "maybe_multiply(grad.unsqueeze(0).expand((batch1_sym_argsize_0, "
                          "batch1_sym_argsize_1, batch2_sym_argsize_2)).bmm("
                          "batch2.transpose(1, 2)), alpha)"),
        Formula("batch2", "maybe_multiply(batch1.transpose(1, 2).bmm(grad.unsqueeze(0).expand("
                          "(batch1_sym_argsize_0, batch1_sym_argsize_1, "
                          "batch2_sym_argsize_2))), alpha)"),
    )


# -- alpha, beta and the sum -----------------------------------------------------------------


def _save_each_for_the_other(node: Node, first: int, names: tuple, a: Tensor,
                             b: Tensor) -> None:
    """Input `first` (`a`) is saved if input `first + 1` needs a gradient, and vice
    versa: each one's gradient is made of the other."""
    if node.needs_grad(first + 1):
        node._saved[names[0]] = SavedTensor(a)
    if node.needs_grad(first):
        node._saved[names[1]] = SavedTensor(b)


# -- the ops -------------------------------------------------------------------------------


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat @ vec), `input` broadcast to the result's length."""
    m, v = mat._data, vec._data
    if m.ndim != 2 or v.ndim != 1 or input._data.ndim > 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"{input._data.ndim}, {m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0] or (input._data.ndim == 1 and input._data.shape[0]
                                    not in (1, m.shape[0])):
        raise RuntimeError(
            f"size mismatch, got input ({input._data.shape[0] if input._data.ndim else 1}), "
            f"mat ({m.shape[0]}x{m.shape[1]}), vec ({v.shape[0]})")
    if not input._data.dtype == m.dtype == v.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{input.dtype.type_name}, {mat.dtype.type_name}, and {vec.dtype.type_name}")
    if m.dtype == np.bool_:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    a, b = as_scalars(m.dtype, alpha, beta)
    with np.errstate(all="ignore"):
        product = np.asarray(m @ v, m.dtype)
    out = Tensor._make(scaled_sum(product, input._data, a, b))
    node = record(AddmvBackward0, out, input, mat, vec)
    if node is not None:
        node._saved["alpha"], node._saved["beta"] = alpha, beta
        _save_each_for_the_other(node, 1, ("mat", "vec"), mat, vec)
    return out


def _addr_scalars(dtype: np.dtype, alpha, beta) -> None:
    """addr's own checks of its scalars (PyTorch's `check_addr_scalar`)."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if dtype != np.bool_ and isinstance(value, bool):
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if dtype.kind in "iub" and isinstance(value, float):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number.")


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2), `input` broadcast to the result's shape
    (for bool tensors: (beta and input) or (alpha and vec1 and vec2))."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    dtype = np.result_type(input._data, vec1._data, vec2._data)
    _addr_scalars(dtype, alpha, beta)
    shape = (vec1._data.shape[0], vec2._data.shape[0])
    refuse_expand(input._data.shape, shape, input.dtype.type_name)
    u, v, s = (np.asarray(t._data, dtype) for t in (input, vec1, vec2))
    with np.errstate(all="ignore"):  # (inf * 0 is nan, silently, as in PyTorch)
        outer = np.multiply.outer(v, s)
    if dtype == np.bool_:
        data = (outer & bool(alpha)) | (np.broadcast_to(u, shape) & bool(beta))
        data = np.ascontiguousarray(data)
    else:
        data = scaled_sum(outer, u, alpha, beta)
    out = Tensor._make(data)
    node = record(AddrBackward0, out, input, vec1, vec2)
    if node is not None:
        node._saved["alpha"], node._saved["beta"] = alpha, beta
        _save_each_for_the_other(node, 1, ("vec1", "vec2"), vec1, vec2)
    return out


def _check_batches(batch1: Tensor, batch2: Tensor) -> None:
    """The checks baddbmm and addbmm make of their two stacks, in PyTorch's order."""
    b1, b2 = batch1._data, batch2._data
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1  # noqa: A002
            ) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2) for stacks of matrices, `input`
    broadcast to the result's shape."""
    b1, b2 = batch1._data, batch2._data
    if b1.ndim >= 2 and b2.ndim >= 3:  # (PyTorch expands input to the result's shape first)
        refuse_expand(input._data.shape, (b1.shape[0], b1.shape[1], b2.shape[2]),
                      input.dtype.type_name)
    _check_batches(batch1, batch2)
    if b2.shape[0] != b1.shape[0] or b2.shape[1] != b1.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, {b2.shape[1]}].")
    if input._data.dtype != b1.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_NAMES[input.dtype.name]}, "
            f"batch1: {_NAMES[batch1.dtype.name]}, batch2: {_NAMES[batch2.dtype.name]}")
    if b2.dtype != b1.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype.type_name} but found "
                           f"{batch2.dtype.type_name}")
    if b1.dtype == np.bool_:
        raise NotImplementedError("\"baddbmm\" not implemented for 'Bool'")
    a, b = as_scalars(b1.dtype, alpha, beta)
    with np.errstate(all="ignore"):
        product = np.asarray(np.matmul(b1, b2), b1.dtype)
    out = Tensor._make(scaled_sum(product, input._data, a, b))
    node = record(BaddbmmBackward0, out, input, batch1, batch2)
    if node is not None:
        node._saved["alpha"], node._saved["beta"] = alpha, beta
        _save_each_for_the_other(node, 1, ("batch1", "batch2"), batch1, batch2)
    return out


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1  # noqa: A002
           ) -> Tensor:
    """beta * input + alpha * (the sum over the batch of batch1[i] @ batch2[i])."""
    _check_batches(batch1, batch2)
    b1, b2 = batch1._data, batch2._data
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                           f"{b1.shape[0]} and {b2.shape[0]}")
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} "
                           f"and {b2.shape[1]}x{b2.shape[2]})")
    shape = (b1.shape[1], b2.shape[2])
    refuse_expand(input._data.shape, shape, input.dtype.type_name)
    # (PyTorch's addbmm is an addmm of the stacks laid side by side: addmm's checks)
    if input._data.dtype != b2.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{input.dtype.type_name} and {batch2.dtype.type_name}")
    if b1.dtype != b2.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{batch1.dtype.type_name} and {batch2.dtype.type_name}")
    if b1.dtype == np.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    a, b = as_scalars(b1.dtype, alpha, beta)
    with np.errstate(all="ignore"):
        product = np.asarray(np.matmul(b1, b2).sum(0) if b1.shape[0] else
                             np.zeros(shape, b1.dtype), b1.dtype)
    out = Tensor._make(scaled_sum(product, input._data, a, b))
    node = record(AddbmmBackward0, out, input, batch1, batch2)
    if node is not None:
        s = node._saved
        s["alpha"], s["beta"] = alpha, beta
        s["batch1_sym_argsize_0"], s["batch1_sym_argsize_1"] = b1.shape[0], b1.shape[1]
        s["batch2_sym_argsize_2"] = b2.shape[2]
        _save_each_for_the_other(node, 1, ("batch1", "batch2"), batch1, batch2)
    return out



# -- the helpers the formulas call, on tensors and on arrays -----------------------------


@helper
def outer_of(a, b):
    """The outer product of two vectors in a tangent formula: ZERO if either is."""
    if a is ZERO or b is ZERO:
        return ZERO
    return ger(a, b)


@helper
def sum_of_bmm(a, b):
    """The sum over the batch of a @ b, matrix by matrix (addbmm's tangent)."""
    if a is ZERO or b is ZERO:
        return ZERO
    return a.bmm(b).sum(0)


@on_arrays("unsqueeze", method=True)
def _unsqueeze(a: np.ndarray, dim: int) -> np.ndarray:
    return np.expand_dims(a, dim)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("addmv", nodes=(AddmvBackward0,), function=addmv, method=True)
declare("addr", nodes=(AddrBackward0,), function=addr, method=True)
declare("baddbmm", nodes=(BaddbmmBackward0,), function=baddbmm, method=True)
declare("addbmm", nodes=(AddbmmBackward0,), function=addbmm, method=True)

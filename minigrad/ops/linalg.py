"""Matrix products. The arithmetic is numpy's BLAS call: for matrix products a
hand-written loop would be many times slower and teach nothing new."""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ..arrays.broadcasting import broadcast_shape
from ..arrays.layout import contiguous_strides, with_strides
from ..arrays.quiet import quietly
from ..autograd.graph import INPUT, VALUE, Node, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor, element_strides
from . import views, views_in_place
from .arithmetic import maybe_multiply
from .declaration import declare
from .formulas import ARRAY_ARITHMETIC, ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import Tangent


def _check_float(a: Tensor, b: Tensor, kernel: str = "addmm_impl_cpu_") -> None:
    """Both operands of a product must have one dtype, and it must not be bool
    (`kernel` is the name PyTorch's refusal gives)."""
    if a._data.dtype is not b._data.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_NAMES[a.dtype.name]} != {_NAMES[b.dtype.name]}"
        )
    if a._data.dtype.kind == "b":
        _refuse_bool(a, kernel)


def _refuse_bool(a: Tensor, kernel: str) -> None:
    if a._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}


def _column_major(sizes: tuple, strides: tuple) -> bool:
    """Whether a matrix was laid out column by column (a transposed view, `w.t()`).
    (Strides are saved only for an operand that requires grad: `()` otherwise.)"""
    return len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]


class MmBackward0(ArrayFormulaNode):
    """A @ B for matrices: grad @ B.T for A, A.T @ grad for B (`mm_mat1_backward`,
    `mm_mat2_backward`, at the bottom). Each operand is saved only if the other one
    needs a gradient."""

    tangent = Tangent("mm(self_t, mat2_p) + mm(self_p, mat2_t)")

    saves = {
        "self": INPUT, "mat2": INPUT, "self_sym_sizes": VALUE, "self_sym_strides": VALUE,
        "mat2_sym_sizes": VALUE, "mat2_sym_strides": VALUE,
    }
    formulas = (
        Formula("self", "mm_mat1_backward(grad, mat2, self_sym_sizes, self_sym_strides, 1)"),
        Formula("mat2", "mm_mat2_backward(grad, self, mat2_sym_sizes, mat2_sym_strides, 1)"),
    )
    exact = True  # (both matrices have one dtype, which `mm` checks)


class MvBackward0(ArrayFormulaNode):
    """A @ v: outer(grad, v) for A, A.T @ grad for v."""

    tangent = Tangent("mv(self_t, vec_p) + mv(self_p, vec_t)", inputs=("self", "vec"))

    saves = {"self": INPUT, "vec": INPUT}
    formulas = (Formula("self", "ger(grad, vec)"), Formula("vec", "self.t().mv(grad)"))


class DotBackward0(ArrayFormulaNode):
    """u . v: grad * v for u, grad * u for v."""

    tangent = Tangent("dot(self_t, tensor_p) + dot(self_p, tensor_t)",
                      inputs=("self", "tensor"))

    saves = {"self": INPUT, "tensor": INPUT}
    formulas = (Formula("self", "grad * tensor"), Formula("tensor", "grad * self"))


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b by numpy's BLAS. A transposed right operand much smaller than `a` (the
    weights of a layer with few outputs: `hidden @ w.t()`) is first copied to
    row-major order: the copy is cheap next to the product, and OpenBLAS multiplies
    by a row-major matrix up to twice as fast as by a transposed one there."""
    if not b.flags.c_contiguous and b.size * 8 <= a.size:
        b = np.ascontiguousarray(b)
    # inf * 0 inside a product is nan, without numpy's "invalid value" warning (PyTorch
    # gives none)
    out = quietly(np.matmul, a, b)
    if not out.size:  # (numpy's empty product has strides 0; PyTorch's is row-major)
        return with_strides(out.shape, out.dtype, contiguous_strides(out.shape))
    return out


def _save_each_for_the_other(node: Node, first: int, a: Tensor, b: Tensor, a_name: str,
                             b_name: str) -> None:
    """A product of `a` and `b` (inputs `first` and `first + 1` of `node`): the
    gradient for `a` is made of `b` and vice versa, so each operand is saved only if
    the OTHER one needs a gradient."""
    _save_in_name_order(node._saved, a_name, a if node.needs_grad(first + 1) else None,
                        b_name, b if node.needs_grad(first) else None)


# "mat2" -> ("mat2_sym_sizes", "mat2_sym_strides"): made once, not per product.
_SYM_NAMES = {name: (f"{name}_sym_sizes", f"{name}_sym_strides")
              for name in ("self", "mat1", "mat2")}


def _save_operands(node: Node, first: int, a: Tensor, b: Tensor, a_name: str,
                   b_name: str) -> None:
    """What a matrix product `a @ b` saves: both sizes, the strides of each operand
    that requires grad, and the operands as `_save_each_for_the_other` says."""
    s = node._saved
    a_sizes, a_strides = _SYM_NAMES[a_name]
    b_sizes, b_strides = _SYM_NAMES[b_name]
    (a_edge, _), (b_edge, _) = node.next_functions[first:first + 2]
    a_needs, b_needs = a_edge is not None, b_edge is not None  # (`needs_grad`)
    s[a_sizes], s[b_sizes] = a._data.shape, b._data.shape
    # The strides go by `requires_grad`, as PyTorch's `strides_or_error`: not the same
    # as having an edge for a view made under no_grad of a tensor that requires grad
    # (it requires grad, yet has no edge)
    s[a_strides] = element_strides(a._data) if a.requires_grad else ()
    s[b_strides] = element_strides(b._data) if b.requires_grad else ()
    # (`_save_each_for_the_other`, with the needs already known)
    _save_in_name_order(s, a_name, a if b_needs else None, b_name, b if a_needs else None)


def _save_in_name_order(saved: dict, a_name: str, a: Tensor | None, b_name: str,
                        b: Tensor | None) -> None:
    """Save the operands that are not None, in the order of their names, as PyTorch
    saves (and packs: see `saved_tensors_hooks`) them: `mat2` before `self`."""
    if b_name < a_name:
        a_name, a, b_name, b = b_name, b, a_name, a
    if a is not None:
        saved[a_name] = SavedTensor(a)
    if b is not None:
        saved[b_name] = SavedTensor(b)


def _refuse_mm(a: Tensor, b: Tensor) -> None:
    """PyTorch's errors for a matrix product of `a` and `b`, in PyTorch's order."""
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x{a._data.shape[1]} "
            f"and {b._data.shape[0]}x{b._data.shape[1]})"
        )
    _check_float(a, b)


def mm(a: Tensor, b: Tensor) -> Tensor:
    ad, bd = a._data, b._data
    if (ad.ndim != 2 or bd.ndim != 2 or ad.shape[1] != bd.shape[0]
            or ad.dtype is not bd.dtype or ad.dtype.kind == "b"):
        _refuse_mm(a, b)  # (raises)
    out = Tensor._make(product(ad, bd))
    node = record(MmBackward0, out, a, b)
    if node is not None:
        _save_operands(node, 0, a, b, "self", "mat2")
    return out


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a._data.ndim == 0:  # PyTorch sizes the result by a.size(0) first
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if a._data.ndim != 2 or v._data.ndim != 1:
        # PyTorch's mv is addmv into a 1-D result: its dims come first.
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"1, {a._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a._data.shape[0]}), mat ({a._data.shape[0]}x"
            f"{a._data.shape[1]}), vec ({v._data.shape[0]})"
        )
    if a.dtype is not v.dtype:
        # addmv's result (listed first) takes the vector's dtype.
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{v.dtype.type_name}, {a.dtype.type_name}, and {v.dtype.type_name}"
        )
    _refuse_bool(a, "addmv_impl_cpu")
    with np.errstate(all="ignore"):
        out = Tensor._make(a._data @ v._data)
    node = record(MvBackward0, out, a, v)
    if node is not None:
        _save_each_for_the_other(node, 0, a, v, "self", "vec")
    return out


def dot(u: Tensor, v: Tensor) -> Tensor:
    if u._data.ndim != 1 or v._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {u._data.ndim}D and {v._data.ndim}D tensors"
        )
    if u.dtype is not v.dtype:  # checked before the sizes, as PyTorch does
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{u.dtype.type_name} and {v.dtype.type_name}")
    _refuse_bool(u, "dot")
    if u._data.shape != v._data.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{u._data.shape[0]}] and src "
            f"[{v._data.shape[0]}] to have the same number of elements, but got "
            f"{u._data.shape[0]} and {v._data.shape[0]} elements respectively"
        )
    with np.errstate(all="ignore"):
        out = Tensor._make(np.asarray(np.dot(u._data, v._data), u._data.dtype))
    node = record(DotBackward0, out, u, v)
    if node is not None:
        _save_each_for_the_other(node, 0, u, v, "self", "tensor")
    return out


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """`a @ b` for 1-D and 2-D operands, dispatched as PyTorch does (mm, mv, dot,
    and vector @ matrix as unsqueeze -> mm -> squeeze). `minigrad.matmul` is
    `batched.matmul`, which adds the batched products."""
    if not isinstance(b, Tensor):
        raise TypeError("matmul(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(b).__name__}")
    da, db = a._data.ndim, b._data.ndim
    if da == 2 and db == 2:  # (the usual case, asked first)
        return mm(a, b)
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        # PyTorch finishes vector @ matrix with `squeeze_(0)` on mm's fresh result: in
        # place, so the result is no view, is at version 1 and has SqueezeBackward4.
        return views_in_place.squeeze_(mm(views.unsqueeze(a, 0), b), 0)
    # (3-D and more: `ops/batched.py`, which calls this for the rest)
    raise NotImplementedError("linalg.matmul multiplies 1-D and 2-D tensors; see batched.matmul")


def _refuse_batched(a: Tensor, b: Tensor) -> None:
    """PyTorch's error for operands of a batched product (one of them 3-D or more)
    that cannot be multiplied. minigrad computes no batched products, but the error
    for a shape mistake should be PyTorch's. PyTorch either folds the batch into the
    rows of one matrix and calls mm or mv (`_folds`), or broadcasts the batch dims
    and calls bmm; each path has its own message."""
    sa, sb = a._data.shape, b._data.shape
    if _folds(a, b):
        # The folded matrix (rows x k) times the other operand (a matrix or a vector).
        if len(sa) >= len(sb):  # a's leading dims become rows
            rows, k, other = int(np.prod(sa[:-1])), sa[-1], sb
        else:  # b is folded, transposed: a @ b is (b.mT @ a.mT).mT
            rows, k, other = int(np.prod(sb[:-2])) * sb[-1], sb[-2], sa[::-1]
        if k != other[0]:
            if len(other) == 1:
                raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), "
                                   f"vec ({other[0]})")
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                               f"{other[0]}x{other[1]})")
        return
    batch = broadcast_shape(sa[:-2], sb[:-2])  # (PyTorch's error if they do not broadcast)
    k, k2 = sa[-1], (sb[-2] if len(sb) >= 2 else sb[0])
    if k != k2:
        size = int(np.prod(batch))
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size}, {k}] but got: [{size}, {k2}].")


def _folds(a: Tensor, b: Tensor) -> bool:
    """PyTorch's choice (`should_fold`) for a batched product: fold when the larger
    operand is 3-D or more and the other 1-D or 2-D, and either the smaller one
    requires grad, or the first one is not a matrix and the larger one (transposed,
    if it is b) has its leading dims laid out one after another, so folding them
    needs no copy (an empty one always folds)."""
    big, small = (a, b) if a._data.ndim >= b._data.ndim else (b, a)
    if big._data.ndim < 3 or small._data.ndim > 2:
        return False
    if small.requires_grad:
        return True
    if a._data.ndim == 2:  # (b, transposed, would be folded: its result copied back)
        return False
    return _leading_dims_contiguous(big, transposed=big is b)


def _leading_dims_contiguous(t: Tensor, transposed: bool) -> bool:
    """Whether all but the last dim of `t` (of `t.mT` if `transposed`) view as one."""
    shape, strides = list(t._data.shape), list(element_strides(t._data))
    if transposed:
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    if t._data.size == 0:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


_ = _dtype


class AddmmBackward0(ArrayFormulaNode):
    """beta * bias + alpha * (mat1 @ mat2), the op behind `nn.Linear`. Like mm, each
    matrix is saved only when the other one needs a gradient; the bias needs nothing
    saved (its gradient is the incoming one, which the engine sums over the broadcast
    rows)."""

    tangent = Tangent("maybe_multiply(self_t, beta) + maybe_multiply(mm(mat1_t, mat2_p), alpha) "
                      "+ maybe_multiply(mm(mat1_p, mat2_t), alpha)")

    saves = {
        "alpha": VALUE, "beta": VALUE, "mat1": INPUT, "mat2": INPUT,
        "mat1_sym_sizes": VALUE, "mat1_sym_strides": VALUE,
        "mat2_sym_sizes": VALUE, "mat2_sym_strides": VALUE,
    }
    scalars = ("alpha", "beta")
    formulas = (
        Formula("self", "maybe_multiply(grad, beta)"),
        Formula("mat1", "mm_mat1_backward(grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha)"),
        Formula("mat2", "mm_mat2_backward(grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha)"),
    )


def addmm(bias: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * bias + alpha * (mat1 @ mat2), bias broadcast over the rows."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m._data.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m._data.ndim}-D tensor")
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1._data.shape[0]}x"
            f"{mat1._data.shape[1]} and {mat2._data.shape[0]}x{mat2._data.shape[1]})"
        )
    _check_float(mat1, mat2)
    if bias._data.shape != (mat1._data.shape[0], mat2._data.shape[1]):
        refuse_expand(bias._data.shape, (mat1._data.shape[0], mat2._data.shape[1]),
                      bias.dtype.type_name)
    if bias._data.dtype is not mat2._data.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{bias.dtype.type_name} and {mat2.dtype.type_name}")
    result = product(mat1._data, mat2._data)
    if alpha == 1 and beta == 1:  # (nn.Linear's: quietly, as PyTorch adds inf + -inf)
        quietly(np.add, result, bias._data, out=result)
    else:
        result = scaled_sum(result, bias._data, *as_scalars(result.dtype, alpha, beta))
    out = Tensor._make(result)
    node = record(AddmmBackward0, out, bias, mat1, mat2)
    if node is not None:
        node._saved["alpha"], node._saved["beta"] = alpha, beta
        _save_operands(node, 1, mat1, mat2, "mat1", "mat2")
    return out


def as_scalars(dtype: np.dtype, alpha, beta) -> tuple:
    """alpha and beta as PyTorch's kernels read them: truncated to integers for an
    integer tensor (0.6 is 0)."""
    if dtype.kind in "iu":
        return int(alpha), int(beta)
    return alpha, beta


def scaled_sum(product: np.ndarray, bias: np.ndarray, alpha, beta) -> np.ndarray:
    """beta * bias + alpha * product in `product`'s dtype and shape (`bias` broadcast to
    it); `beta == 0` ignores `bias` (its nans too), as BLAS does."""
    with np.errstate(all="ignore"):  # (inf * 0 is nan, silently, as in PyTorch)
        out = product if alpha == 1 else product * alpha
        if beta == 0:
            return np.ascontiguousarray(out, product.dtype)
        return np.asarray(out + (bias if beta == 1 else bias * beta), product.dtype)


def refuse_expand(have: tuple, shape: tuple, dtype: str = "Double") -> None:
    """PyTorch's error when a tensor of shape `have` (of `dtype`'s type name) does not
    expand to `shape` (the dims compared from the last one back)."""
    if len(have) > len(shape):
        raise RuntimeError(f"expand(minigrad.{dtype}Tensor{{{list(have)}}}, size={list(shape)}): "
                           f"the number of sizes provided ({len(shape)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(have)})")
    lead = len(shape) - len(have)
    for i in reversed(range(len(have))):
        if have[i] not in (1, shape[i + lead]):
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i + lead]}) must match the existing "
                f"size ({have[i]}) at non-singleton dimension {i + lead}.  Target sizes: "
                f"{list(shape)}.  Tensor sizes: {list(have)}")


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias, decomposed into the same nodes PyTorch records:
    AddmmBackward0 (with a ViewBackward0 around it for 1-D or batched input) when
    there is a bias, a plain matmul when there is none."""
    wt = views.t(weight)
    if bias is None:
        if x._data.ndim > 2:
            raise NotImplementedError("minigrad's linear without bias takes 1-D or 2-D input")
        return matmul(x, wt)
    if x._data.ndim == 2:
        return addmm(bias, x, wt)
    if x._data.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"0D and {weight._data.ndim}D")
    lead = x._data.shape[:-1]
    # (the rows counted, not -1: a (0,) input is one row of no features, as in PyTorch)
    rows = (int(np.prod(lead)), x._data.shape[-1])
    if views._reshape_view(x._data, rows) is None:
        # Rows that no view can flatten (an expanded input): PyTorch's matmul, then
        # the bias added in place (AddBackward0, the result at version 1).
        return (x @ wt).add_(bias)  # (the batched matmul of `ops/batched.py`)
    flat_x = views.view(x, rows)
    out = addmm(bias, flat_x, wt)
    return views.view(out, (*lead, out._data.shape[-1]))


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("mm", nodes=(MmBackward0,), function=mm, method=True)
declare("mv", nodes=(MvBackward0,), function=mv, method=True)
declare("dot", nodes=(DotBackward0,), function=dot, method=True)
declare("addmm", nodes=(AddmmBackward0,), function=addmm, method=True)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def mm_mat1_backward(grad: Tensor, mat2: Tensor, sizes: tuple, strides: tuple,
                     alpha) -> Tensor:
    """The gradient of the first matrix of a product: grad @ mat2.T, or, when that
    matrix was column-major, (mat2 @ grad.T).T, which comes out column-major too, as
    PyTorch arranges it: that is what the saved `*_sym_strides` are for."""
    if _column_major(sizes, strides):
        return maybe_multiply(mat2.mm(grad.t()).t(), alpha)
    return maybe_multiply(grad.mm(mat2.t()), alpha)


@on_arrays("mm_mat1_backward")
def _mm_mat1_backward_on_arrays(grad: np.ndarray, mat2: np.ndarray, sizes: tuple,
                                strides: tuple, alpha) -> np.ndarray:
    if _column_major(sizes, strides):
        g = product(mat2, grad.T).T
    else:
        g = product(grad, mat2.T)
    return g if alpha == 1 else ARRAY_ARITHMETIC["Mult"](g, alpha)


@helper
def mm_mat2_backward(grad: Tensor, mat1: Tensor, sizes: tuple, strides: tuple,
                     alpha) -> Tensor:
    """The gradient of the second matrix of a product: mat1.T @ grad, or (grad.T @
    mat1).T when that matrix was column-major. For `x @ w.t()` that makes the gradient
    of `w.t()` column-major, so the gradient `TBackward0` hands to `w` is row-major
    like `w` itself and `AccumulateGrad` can keep it without copying."""
    if _column_major(sizes, strides):
        return maybe_multiply(grad.t().mm(mat1).t(), alpha)
    return maybe_multiply(mat1.t().mm(grad), alpha)


@on_arrays("mm_mat2_backward")
def _mm_mat2_backward_on_arrays(grad: np.ndarray, mat1: np.ndarray, sizes: tuple,
                                strides: tuple, alpha) -> np.ndarray:
    if _column_major(sizes, strides):
        g = product(grad.T, mat1).T
    else:
        g = product(mat1.T, grad)
    return g if alpha == 1 else ARRAY_ARITHMETIC["Mult"](g, alpha)


@helper
def ger(vec1: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors, as PyTorch computes it: vec1 as a column
    times vec2 (broadcast)."""
    return vec1.reshape(vec1.shape[0], 1) * vec2


@on_arrays("ger")
def _ger_on_arrays(vec1: np.ndarray, vec2: np.ndarray) -> np.ndarray:
    return quietly(np.multiply, vec1.reshape(vec1.shape[0], 1), vec2)


@on_arrays("mv", method=True)
def _mv_on_arrays(mat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    return np.asarray(quietly(np.matmul, mat, vec), mat.dtype)

"""Views: tensors that look at another tensor's memory (copies are in `copies.py`).

A view shares its base's data *and version counter*, so modifying either in place
is seen by both, and by every saved tensor that points at that memory. Modifying a
view in place also rewrites the base's history: the base's new `grad_fn` is a
`CopySlices` node that routes the gradient of the modified region through the
in-place op, and the rest of it to the base's old history.
"""

from __future__ import annotations

import numpy as np

from .._args import (
    combination_error,
    int_arg,
    is_int,
    type_name,
    unpack_error,
    view_shape,
)
from ..arrays.layout import (
    element_strides,
    restrided,
    unsqueezed_strides,
    view_strides,
    with_strides,
)
from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim, make_view
from .copies import clone
from .declaration import declare
from .formulas import BACKWARD_OPS, ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .tangent_formulas import SAME_VIEW, Tangent

INT64_MAX = 2**63 - 1


def _view_of(x: Tensor, data: np.ndarray, node_cls, creation_meta=None, **saved) -> Tensor:
    out = make_view(x, data) if creation_meta is None else make_view(x, data, creation_meta)
    node = record(node_cls, out, x)
    if node is not None and saved:
        node._saved.update(saved)
    return out


# -- reshaping views ----------------------------------------------------------------------


@on_arrays("unsqueeze_to")
def _unsqueeze_to(grad: np.ndarray, sizes: tuple, dims=None) -> np.ndarray:
    """`unsqueeze_to` on an array: the squeezed dims are the 1s of `sizes`."""
    return grad if grad.shape == sizes else grad.reshape(sizes)


@on_arrays("permute_backwards")
def _permute_backwards(grad: np.ndarray, dims: tuple) -> np.ndarray:
    """`permute_backwards` on an array: the inverse permutation."""
    return np.transpose(grad, np.argsort([d % len(dims) for d in dims]))


# The view ops' plain backwards are their formulas, run on arrays (`ArrayFormulaNode`).


class _ReshapeBack(ArrayFormulaNode):
    """The gradient is the incoming one reshaped back to the input's shape."""

    tangent = SAME_VIEW

    saves = {"self_sym_sizes": VALUE}
    formulas = (Formula("self", "grad.reshape(self_sym_sizes)"),)


class ViewBackward0(_ReshapeBack):
    __doc__ = _ReshapeBack.__doc__


class UnsafeViewBackward0(_ReshapeBack):
    __doc__ = _ReshapeBack.__doc__
    # (the reshape of a copy: not a view of its input, so the tangent is reshaped too)
    tangent = Tangent("self_t.reshape(result.shape)", linear=True)


class ReshapeAliasBackward0(_ReshapeBack):
    __doc__ = _ReshapeBack.__doc__


class _UnsqueezeBack(_ReshapeBack):
    """The gradient with the squeezed dims put back (itself when there were none)."""

    formulas = (Formula("self", "unsqueeze_to(grad, self_sym_sizes)"),)


class SqueezeBackward0(_UnsqueezeBack):
    __doc__ = _UnsqueezeBack.__doc__


class SqueezeBackward1(_UnsqueezeBack):
    __doc__ = _UnsqueezeBack.__doc__
    saves = {"dim": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "unsqueeze_to(grad, self_sym_sizes, dim)"),)


class SqueezeBackward2(SqueezeBackward1):
    __doc__ = _UnsqueezeBack.__doc__


class SqueezeBackward4(SqueezeBackward1):
    __doc__ = _UnsqueezeBack.__doc__


def _infer_shape(shape, numel: int) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"[{', '.join(map(str, shape))}]")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape [{', '.join(map(str, shape))}]"
                " because the unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of "
                               f"size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(
            f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}"
        )
    return shape


def _reshape_view(data: np.ndarray, shape: tuple) -> np.ndarray | None:
    """A view with the new shape and PyTorch's strides (`view_strides`), or None if
    it would need a copy."""
    try:
        view = data.view()
        view.shape = shape
    except AttributeError:
        view = None
    strides = view_strides(data.shape, element_strides(data), shape)
    if strides is None or (view is not None and strides == element_strides(view)):
        return view
    out = restrided(data, shape, strides)
    return view if out is None else out


def view(x: Tensor, *shape) -> Tensor:
    """The same memory seen with another shape (no copy, ever)."""
    shape = _infer_shape(view_shape(shape, "view", "size"), x._data.size)
    data = _reshape_view(x._data, shape)
    if data is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _view_of(x, data, ViewBackward0, self_sym_sizes=x._data.shape)


def reshape(x: Tensor, *shape) -> Tensor:
    """Like `view` when the memory allows it, otherwise a copy (clone + view)."""
    shape = _infer_shape(view_shape(shape, "reshape", "shape"), x._data.size)
    data = _reshape_view(x._data, shape)
    if data is not None:
        # (PyTorch views a contiguous tensor; any other it aliases with new strides)
        cls = ViewBackward0 if x._data.flags.c_contiguous else ReshapeAliasBackward0
        return _view_of(x, data, cls, self_sym_sizes=x._data.shape)
    copy = clone(x)
    out = Tensor._make(copy._data.reshape(shape))
    node = record(UnsafeViewBackward0, out, copy)
    if node is not None:
        node._saved["self_sym_sizes"] = x._data.shape
    return out


def view_as(x: Tensor, other: Tensor) -> Tensor:
    return view(x, *other.shape)


def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    return reshape(x, *other.shape)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim into one."""
    if x._data.ndim == 0:  # (its dims are checked as a 1-d tensor's: 0 and -1 only)
        _wrap_dim(start_dim, 0), _wrap_dim(end_dim, 0)
        return reshape(x, 1)
    s = _wrap_dim(start_dim, x._data.ndim)
    e = _wrap_dim(end_dim, x._data.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    shape = x._data.shape
    new = shape[:s] + (int(np.prod(shape[s : e + 1])),) + shape[e + 1 :]
    return reshape(x, *new)


class TransposeBackward0(ArrayFormulaNode):
    """transpose(dim0, dim1): transpose the gradient back."""

    tangent = SAME_VIEW

    saves = {"dim0": VALUE, "dim1": VALUE}
    formulas = (Formula("self", "grad.transpose(dim0, dim1)"),)


class TBackward0(ArrayFormulaNode):
    """t(): transpose the gradient back. Nothing saved."""

    tangent = SAME_VIEW

    formulas = (Formula("self", "grad.t()"),)
    exact = True


class PermuteBackward0(ArrayFormulaNode):
    """permute(dims): apply the inverse permutation to the gradient."""

    tangent = SAME_VIEW

    saves = {"dims": VALUE}
    formulas = (Formula("self", "permute_backwards(grad, dims)"),)


_MISSING = object()


def transpose(x: Tensor, dim0: int = _MISSING, dim1: int = _MISSING) -> Tensor:
    """Swap two dims (a view; also `swapdims`, `swapaxes`)."""
    missing = [f'"{n}"' for n, v in (("dim0", dim0), ("dim1", dim1)) if v is _MISSING]
    if missing:  # (PyTorch's own wording, plural and all)
        raise TypeError(f"transpose() missing {len(missing)} required positional "
                        f"argument{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")
    dim0, dim1 = int_arg(dim0, "transpose", "dim0", 1), int_arg(dim1, "transpose", "dim1", 2)
    d0 = _wrap_dim(dim0, x._data.ndim)
    d1 = _wrap_dim(dim1, x._data.ndim)
    data = np.swapaxes(x._data, d0, d1) if x._data.ndim else x._data.view()
    return _view_of(x, data, TransposeBackward0, dim0=u64(dim0), dim1=u64(dim1))


def t(x: Tensor) -> Tensor:
    """Transpose a matrix (vectors and scalars are returned as views unchanged)."""
    if x._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D"
        )
    return _view_of(x, x._data.T, TBackward0)


def permute(x: Tensor, *dims) -> Tensor:
    """The dims in a new order (a view)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    elif dims and not is_int(dims[0]):  # PyTorch's parser reads dims as one argument
        if len(dims) > 1:
            raise TypeError(f"permute() takes 1 positional argument but {len(dims)} were given")
        raise TypeError("permute(): argument 'dims' (position 1) must be tuple of ints, not "
                        f"{type_name(dims[0])}")
    for i, d in enumerate(dims):
        if not is_int(d):
            raise unpack_error("permute", "dims", i + 1,
                               f"type must be tuple of ints,but got {type_name(d)}")
    if len(dims) != x._data.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match "
            "the length of the desired ordering of dimensions i.e. input.dim() = "
            f"{x._data.ndim} is not equal to len(dims) = {len(dims)}"
        )
    perm = tuple(_wrap_dim(d, x._data.ndim) for d in dims)
    if len(set(perm)) != len(perm):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_of(x, np.transpose(x._data, perm), PermuteBackward0,
                    dims=tuple(u64(d) for d in dims))


def T(x: Tensor) -> Tensor:  # noqa: N802 - the attribute is called T
    """`x.T`: all dims reversed (PyTorch records it as a permute)."""
    if x._data.ndim not in (0, 2):
        raise NotImplementedError(
            "minigrad supports .T on 2-D tensors only (PyTorch deprecates it for other ranks)"
        )
    if x._data.ndim == 0:
        return x
    return permute(x, 1, 0)


class UnsqueezeBackward0(ArrayFormulaNode):
    """unsqueeze(dim): squeeze that dim out of the gradient."""

    tangent = SAME_VIEW

    saves = {"dim": VALUE}
    formulas = (Formula("self", "grad.squeeze(dim)"),)


def unsqueezed(data: np.ndarray, d: int) -> np.ndarray:
    """`data` with a dim of size 1 inserted at `d`, PyTorch's strides kept: the new
    dim's is the extent of the dim it goes before (1 at the end). numpy's own
    choice differs when a dim of size 1 has an odd stride, or where no memory is
    walked (no elements)."""
    shape = data.shape[:d] + (1,) + data.shape[d:]
    if data.flags.c_contiguous and 1 not in data.shape and data.size:
        return data.reshape(shape)  # (the common case: row-major, as PyTorch's view is)
    strides = unsqueezed_strides(data.shape, element_strides(data), d)
    if not data.size:
        return with_strides(shape, data.dtype, strides)
    out = data.reshape(shape)
    if element_strides(out) == strides:
        return out
    odd = restrided(data, shape, strides)
    return out if odd is None else odd


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    dim = int_arg(dim, "unsqueeze", "dim", 1)
    d = _wrap_dim(dim, x._data.ndim + 1)
    return _view_of(x, unsqueezed(x._data, d), UnsqueezeBackward0, dim=u64(dim))


def _squeezed_dims(shape: tuple, dims) -> tuple:
    """Those of `dims` (a dim or a tuple of them; None: all) that have size 1. (A 0-d
    tensor takes dim 0 or -1, as PyTorch's does, and has no dim to remove.)"""
    ndim = len(shape)
    if dims is None:
        return tuple([i for i, n in enumerate(shape) if n == 1])
    if not isinstance(dims, (tuple, list)):  # (one dim: the common case)
        d = _wrap_dim(dims, ndim)
        return (d,) if d < ndim and shape[d] == 1 else ()
    wrapped = [_wrap_dim(d, ndim) for d in dims]
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(i for i in sorted(wrapped) if i < ndim and shape[i] == 1)


def squeezed(data: np.ndarray, dims: tuple) -> np.ndarray:
    """`data` without its dims `dims` (of size 1), the others keeping their strides,
    as PyTorch's squeeze does (a reshape would give a size-1 dim numpy's stride)."""
    if data.size:
        if not dims:
            return data.view()
        if len(dims) == data.shape.count(1):  # (none left: numpy's reshape keeps the
            return data.reshape([n for n in data.shape if n != 1])  # others' strides)
        return np.squeeze(data, dims)
    strides = element_strides(data)
    return with_strides(tuple(n for i, n in enumerate(data.shape) if i not in dims),
                        data.dtype, tuple(s for i, s in enumerate(strides) if i not in dims))


def squeeze(x: Tensor, *args, dim=None) -> Tensor:
    """Remove size-1 dims (all of them, or those of the given dim or dims)."""
    if args or dim is not None:
        dim = _squeeze_dim(args, dim)
    shape = x._data.shape
    data = squeezed(x._data, _squeezed_dims(shape, dim))
    if dim is None:
        return _view_of(x, data, SqueezeBackward0, self_sym_sizes=shape)
    node_cls = SqueezeBackward2 if isinstance(dim, (tuple, list)) else SqueezeBackward1
    saved_dim = tuple(map(u64, dim)) if node_cls is SqueezeBackward2 else u64(dim)
    return _view_of(x, data, node_cls, dim=saved_dim, self_sym_sizes=shape)


def _squeeze_dim(args: tuple, dim, fn: str = "squeeze"):
    """squeeze's dim, given positionally or by keyword: an int or a tuple of ints, as
    PyTorch's parser takes it, else its error listing squeeze's three signatures."""
    kwargs = {} if dim is None else {"dim": dim}
    if len(args) == 1 and not kwargs:
        dim = args[0]
    ok = is_int(dim) or (isinstance(dim, (tuple, list)) and all(is_int(d) for d in dim))
    if len(args) + len(kwargs) > 1 or not ok:
        raise combination_error(fn, args, kwargs, ["", "int dim", "tuple of ints dim"],
                                tail=False)
    return dim


# -- selecting views -----------------------------------------------------------------------


@on_arrays("select_backward")
def _select_backward(grad: np.ndarray, sizes: tuple, dim: int, index: int) -> np.ndarray:
    """`select_backward` on an array: `grad` in row `index` of zeros of `sizes`."""
    out = np.zeros(sizes, grad.dtype)
    out[(slice(None),) * (dim % len(sizes)) + (index, Ellipsis)] = grad
    return out


@on_arrays("slice_backward_wrapper")
def _slice_backward(grad: np.ndarray, sizes: tuple, dim: int, start: int, end: int,
                    step: int) -> np.ndarray:
    """`slice_backward_wrapper` on an array: `grad` in those rows of zeros of `sizes`
    (the bounds as the slice kept them, which Python's slice reads the same way)."""
    out = np.zeros(sizes, grad.dtype)
    out[(slice(None),) * (dim % len(sizes)) + (slice(start, end, step),)] = grad
    return out


class SelectBackward0(ArrayFormulaNode):
    """x[i] along a dim: the gradient lands in row i of a zero tensor."""

    tangent = SAME_VIEW

    saves = {"dim": VALUE, "index": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "select_backward(grad, self_sym_sizes, dim, index)"),)


class SliceBackward0(ArrayFormulaNode):
    """x[a:b:s] along a dim: the gradient lands in those rows of a zero tensor."""

    tangent = SAME_VIEW

    saves = {"dim": VALUE, "start": VALUE, "end": VALUE, "step": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "slice_backward_wrapper(grad, self_sym_sizes, dim, start, end, "
                                "step)"),)


class AliasBackward0(ArrayFormulaNode):
    """x[...]: the same tensor again; the gradient passes unchanged."""

    tangent = SAME_VIEW
    formulas = (Formula("self", "grad"),)


class SelectBackwardBackward0(FormulaNode):
    """select_backward(grad, sizes, dim, index): a zero tensor of the input's sizes
    with `grad` in row `index`; its own gradient is that row again."""

    tangent = Tangent("select_backward(grad_output_t, result.shape, dim, index)", linear=True)

    saves = {"dim": VALUE, "index": VALUE}
    formulas = (Formula("grad_output", "grad.select(dim, index)"),)


def select_backward(grad: Tensor, sizes: tuple, dim: int, index: int) -> Tensor:
    """The gradient of `select` (PyTorch's aten::select_backward): `grad` placed in
    row `index` along `dim` of zeros shaped like the input."""
    d = _wrap_dim(dim, len(sizes))
    data = np.zeros(sizes, grad._data.dtype)
    data[(slice(None),) * d + (index, Ellipsis)] = grad._data
    out = Tensor._make(data)
    node = record(SelectBackwardBackward0, out, grad)
    if node is not None:
        node._saved.update(dim=u64(dim), index=u64(index))
    return out




class SliceBackwardBackward0(FormulaNode):
    """slice_backward(grad, sizes, dim, start, end, step): a zero tensor of the
    input's sizes with `grad` in the sliced rows; its own gradient is those rows."""

    tangent = Tangent("slice_backward(grad_output_t, result.shape, dim, start, end, step)",
                      linear=True)

    saves = {"dim": VALUE, "end": VALUE, "start": VALUE, "step": VALUE}
    formulas = (Formula("grad_output", "slice_dim(grad, dim, start, end, step)"),)


def slice_backward(grad: Tensor, sizes: tuple, dim: int, start: int, end: int,
                   step: int) -> Tensor:
    """The gradient of a slice (PyTorch's aten::slice_backward): `grad` placed in rows
    start:end:step along `dim` of zeros shaped like the input."""
    d = _wrap_dim(dim, len(sizes))
    data = np.zeros(sizes, grad._data.dtype)
    data[(slice(None),) * d + (slice(start, end, step),)] = grad._data
    out = Tensor._make(data)
    node = record(SliceBackwardBackward0, out, grad)
    if node is not None:
        node._saved.update(dim=u64(dim), start=u64(start), end=u64(end), step=u64(step))
    return out


def select(x: Tensor, dim: int, index: int, _index_pos: int | None = None) -> Tensor:
    """`x.select(dim, index)`; `x[..., i]` passes the position of `i` in its index
    (`_index_pos`) because PyTorch's indexing error names that position."""
    if x._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if not -size <= index < size:
        if _index_pos is not None:
            raise IndexError(
                f"index {index} is out of bounds for dimension {_index_pos} with size {size}"
            )
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"[{', '.join(map(str, x._data.shape))}] at dimension {d}"
        )
    where = (slice(None),) * d + (index, Ellipsis)
    return _view_of(x, x._data[where], SelectBackward0, dim=u64(dim), index=u64(index),
                    self_sym_sizes=x._data.shape)


def slice_dim(x: Tensor, dim: int, start, stop, step) -> Tensor:
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step is not None and step < 0:
        raise ValueError("step must be greater than zero")
    d = _wrap_dim(dim, x._data.ndim)
    where = (slice(None),) * d + (slice(start, stop, step),)
    # PyTorch keeps the bounds as written (negative ones wrapped to unsigned).
    return _view_of(
        x, x._data[where], SliceBackward0, dim=u64(dim), start=0 if start is None else u64(start),
        end=INT64_MAX if stop is None else u64(stop), step=1 if step is None else step,
        self_sym_sizes=x._data.shape,
    )


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`length` elements from `start` along `dim` (a negative start counts from the end;
    a start tensor must be a 0-d integer one)."""
    if isinstance(start, Tensor):
        if start._data.ndim != 0 or start._data.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start._data)
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = x._data.shape[_wrap_dim(dim, x._data.ndim)]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    start = start % size if start < 0 else start
    if start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return slice_dim(x, dim, start, start + length, 1)


def alias(x: Tensor) -> Tensor:
    return _view_of(x, x._data.view(), AliasBackward0)


def mT(x: Tensor) -> Tensor:  # noqa: N802 - the attribute is called mT
    """`x.mT`: swap the last two dims (matrices only, as in PyTorch)."""
    if x.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. "
            f"Got {x.ndim}-D tensor."
        )
    return transpose(x, -2, -1)


def mH(x: Tensor) -> Tensor:  # noqa: N802 - the attribute is called mH
    """`x.mH`: the conjugate transpose of the matrices, for real tensors `x.mT`."""
    if x.ndim < 2:
        raise RuntimeError(
            "tensor.mH is only supported on matrices or batches of matrices. "
            f"Got {x.ndim}-D tensor."
        )
    return transpose(x, -2, -1)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------


declare("view", nodes=(ViewBackward0,), method=view)
declare("view_as", method=view_as)
declare("reshape", nodes=(ReshapeAliasBackward0, UnsafeViewBackward0), function=reshape,
        method=True)
declare("reshape_as", method=reshape_as)
declare("flatten", function=flatten, method=True)
declare("transpose", nodes=(TransposeBackward0,), function=transpose, method=True,
        aliases=("swapaxes", "swapdims"), attributes={"mT": property(mT), "mH": property(mH)})
declare("t", nodes=(TBackward0,), function=t, method=True)
declare("permute", nodes=(PermuteBackward0,), function=permute, method=True,
        attributes={"T": property(T)})
declare("unsqueeze", nodes=(UnsqueezeBackward0,), function=unsqueeze, method=True)
declare("squeeze", nodes=(SqueezeBackward0, SqueezeBackward1, SqueezeBackward2),
        function=squeeze, method=True)
declare("select", nodes=(SelectBackward0,), function=select, method=True)
declare("narrow", nodes=(SliceBackward0,), function=narrow, method=True)
declare("alias", nodes=(AliasBackward0,))
declare("select_backward", nodes=(SelectBackwardBackward0,), aten=select_backward)
declare("slice_backward", nodes=(SliceBackwardBackward0,), aten=slice_backward)
declare("slice_dim", aten=slice_dim)  # (PyTorch's aten::slice)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def unsqueeze_to(grad: Tensor, sizes: tuple, dims=None) -> Tensor:
    """The gradient of a squeeze: the squeezed dims (those of `dims`, or all) put back
    where the input had a 1 (a 0-d input had none: its dims wrap as a scalar's)."""
    if not sizes:
        return grad
    if dims is not None:
        dims = {d % len(sizes) for d in (dims if isinstance(dims, tuple) else (dims,))}
    for d, n in enumerate(sizes):
        if n == 1 and (dims is None or d in dims):
            grad = grad.unsqueeze(d)
    return grad


@helper
def permute_backwards(grad: Tensor, dims: tuple) -> Tensor:
    """The gradient of `permute(dims)`: the inverse permutation."""
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return grad.permute(inverse)


@helper
def slice_backward_wrapper(grad: Tensor, sizes: tuple, dim: int, start: int, end: int,
                           step: int) -> Tensor:
    """The gradient of a slice: `slice_backward`, the bounds as the slice kept them
    (an end not given, None, as INT64_MAX)."""
    end = 2**63 - 1 if end is None else end  # (INT64_MAX)
    return BACKWARD_OPS["slice_backward"](grad, sizes, dim, start, end, step)

"""`x[index]` and `x[index] = value`.

Basic indexing (ints, slices, None, ...) makes views, one view op per index item,
as PyTorch does: `M[0, 1:3]` is a SliceBackward0 on top of a SelectBackward0.
Lists, integer tensors and boolean masks gather a copy (IndexBackward0).

Assignment through basic indexing is an in-place copy into a view, so the
tensor's history goes through CopySlices; through a list or mask it is
`index_put_` (IndexPutBackward0).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._creation import tensor, zeros
from .._dtype import check_scalar_fits, result_type
from ..arrays.layout import WRAPPED_NUMBER, element_strides, empty_result, in_result_layout
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor, bump_version
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from . import copies, expand, multi_output, views
from .declaration import declare
from .formulas import BACKWARD_OPS, ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import Tangent, dense


def _is_advanced(item) -> bool:
    if isinstance(item, Tensor):
        return item._data.ndim > 0 or item.dtype.name == "bool"
    return isinstance(item, (list, np.ndarray))


def _as_index_array(item) -> np.ndarray:
    arr = item._data if isinstance(item, Tensor) else np.asarray(item)
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iu":
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors"
        )
    return arr.astype(np.int64)


def _expand_ellipsis(index: tuple, ndim: int) -> tuple:
    """`index` with its ellipsis spelled out as whole-dim slices. PyTorch takes more
    than one ellipsis (`x[..., ...]`): the first stands for the dims no other item
    takes, which leaves none for the others."""
    consumed = sum(
        (_as_index_array(i).ndim if _is_advanced(i) and _as_index_array(i).dtype == np.bool_
         else 1)
        for i in index if i is not None and i is not Ellipsis
    )
    if consumed > ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {ndim}"
        )
    out = []
    expanded = False
    for i in index:
        if i is Ellipsis:
            if not expanded:
                out.extend([slice(None)] * (ndim - consumed))
            expanded = True
        else:
            out.append(i)
    return tuple(out)


_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[minigrad.tensor(seq)], which will result either in an "
    "error or a different result"
)


def parse_index(index) -> tuple:
    """`x[index]`'s index as a tuple of items PyTorch's way, before any tensor is read.

    A list (or a string) holding a sequence, a slice, an ellipsis or None is read as a
    tuple, with PyTorch's deprecation warning (numpy's old rule): `x[[[0]]]` is
    `x[[0]]`. A Python bool is a 0-d mask (`x[True]` adds a dim of length 1). A list
    becomes an index tensor as `minigrad.tensor` makes it (a list of floats is cut to
    integers, as PyTorch does). An int must fit an int64; a string is refused.
    """
    if isinstance(index, (list, str, bytes)) and len(index) < 32 and any(
        isinstance(i, (list, tuple, str, bytes, range, slice, np.ndarray, Tensor))
        or i is None or i is Ellipsis for i in index
    ):
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=3)
        index = tuple(index)
    elif not isinstance(index, tuple):
        index = (index,)
    return tuple(_parse_item(i) for i in index)


def _parse_item(item):
    if isinstance(item, bool):
        return np.array(item)
    if isinstance(item, (int, np.integer)):
        if not -(2**63) <= int(item) < 2**63:
            raise ValueError("Overflow when unpacking long long")
        return item
    if isinstance(item, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
    if isinstance(item, (list, range)):
        arr = tensor(item)._data
        return arr if arr.dtype.kind in "bi" else arr.astype(np.int64)
    if isinstance(item, Tensor) and item._data.ndim == 0 and item.dtype.name not in (
            "bool", "int64"):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return item


def _check_broadcast(advanced: list) -> None:
    """PyTorch's error when the index tensors' shapes do not broadcast (a mask stands
    for one index tensor per dim it covers, each as long as its count of True)."""
    shapes = []
    for _, arr, _ in advanced:
        if arr.dtype == np.bool_:
            shapes.extend([(int(np.count_nonzero(arr)),)] * max(arr.ndim, 1))
        else:
            shapes.append(arr.shape)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(f"[{', '.join(map(str, sh))}]" for sh in shapes)
        ) from None


class IndexBackward0(ArrayFormulaNode):
    """x[indices] with lists or masks: the gradient is scattered back (added, so a
    repeated index receives several contributions)."""

    tangent = Tangent("self_t[_where]", inputs=("self",), linear=True)

    saves = {"indices": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "index_backward(grad.new_zeros(self_sym_sizes), indices, "
                                "grad)"),)


def _covers(item: slice, length: int) -> bool:
    """Whether a slice takes a whole dim of this length, as PyTorch decides it: start
    0, step 1 and a stop at or past the end (`-3:` is not whole, even of 3)."""
    return ((item.start is None or item.start == 0) and (item.step is None or item.step == 1)
            and (item.stop is None or item.stop >= length))


def getitem(x: Tensor, index) -> Tensor:
    """Basic and advanced indexing as PyTorch 2.13 records it. A lone slice (`x[a:b]`,
    even `x[:]`) is always a SliceBackward0; inside a tuple, a slice taking a whole
    dim is skipped, and an index that leaves the tensor as it was gives an alias."""
    lone_slice = isinstance(index, slice)
    index = parse_index(index)
    if x._data.ndim == 0:
        # PyTorch's errors for a lone int or slice (inside a tuple: "too many indices").
        if lone_slice:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if len(index) == 1 and isinstance(index[0], (int, np.integer)):
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
    if len(index) == 1 and index[0] is Ellipsis:
        return views.alias(x)
    index = _expand_ellipsis(index, x._data.ndim)
    result, dim, advanced = x, 0, []
    for pos, item in enumerate(index):
        if item is None:
            result = views.unsqueeze(result, dim)
            dim += 1
        elif isinstance(item, (int, np.integer)) or (
            isinstance(item, Tensor) and item._data.ndim == 0 and item.dtype.name != "bool"
        ):
            result = views.select(result, dim, int(item), _index_pos=pos)
        elif isinstance(item, slice):
            if lone_slice or not _covers(item, result._data.shape[dim]):
                result = views.slice_dim(result, dim, item.start, item.stop, item.step)
            dim += 1
        elif _is_advanced(item):
            arr = _as_index_array(item)
            advanced.append((dim, arr, item))
            dim += arr.ndim if arr.dtype == np.bool_ else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                "Variables are valid indices (got " + type(item).__name__ + ")"
            )
    if not advanced:
        return result if result is not x else views.alias(x)
    return _gather(result, advanced)


def _where_of(shape: tuple, advanced: list) -> tuple:
    where: list = []
    dim = 0
    for d, arr, _ in advanced:
        where.extend([slice(None)] * (d - dim))
        where.append(arr)
        dim = d + (arr.ndim if arr.dtype == np.bool_ else 1)
    return tuple(where)


def _saved_indices(advanced: list) -> tuple:
    """The index tensors as PyTorch saves them: one entry per index item, None for
    each dim taken whole before it (a mask takes one entry for all the dims it
    covers, as in `_where_of`), the caller's own tensor when one was given, so
    modifying it in place before backward is caught by the version check."""
    indices: list = []
    dim = 0
    for d, arr, item in advanced:
        indices.extend([None] * (d - dim))
        indices.append(SavedTensor(item if isinstance(item, Tensor) else Tensor._make(arr)))
        dim = d + (arr.ndim if arr.dtype == np.bool_ else 1)
    return tuple(indices)


def _check_advanced(shape: tuple, advanced: list) -> None:
    """PyTorch's errors for a mask of the wrong shape or an index out of range.

    (An out-of-range index is reported by its position among the list/tensor
    indices, because PyTorch moves the indexed dims to the front before checking.)
    (Returns whether the result has elements: see `_check_empty_indexed`.)
    """
    _check_masks(shape, advanced)
    if not _check_empty_indexed(shape, advanced):
        return False
    for k, (d, arr, _) in enumerate(advanced):
        if arr.dtype == np.bool_:
            continue
        if arr.size:
            size = shape[d]
            bad = arr[(arr >= size) | (arr < -size)]
            if bad.size:
                raise IndexError(
                    f"index {bad.flat[0]} is out of bounds for dimension {k} with size {size}"
                )
    return True


def _check_empty_indexed(shape: tuple, advanced: list) -> bool:
    """PyTorch's error for an index into a dim of size 0 (no number is a valid index
    there); and whether the result has elements: if not, PyTorch reads no index, so
    checks none of them against its dim."""
    indexed, index_shapes = [], []
    for d, arr, _ in advanced:
        mask = arr.dtype == np.bool_
        indexed.extend(shape[d:d + arr.ndim] if mask else [shape[d]])
        index_shapes.append((int(arr.sum()),) if mask else arr.shape)
    replacement = np.broadcast_shapes(*index_shapes)
    if 0 in indexed and 0 not in replacement:
        raise IndexError("index is out of bounds for dimension with size 0")
    kept = [n for i, n in enumerate(shape) if not _is_indexed(i, advanced)]
    return 0 not in kept and 0 not in replacement


def _is_indexed(dim: int, advanced: list) -> bool:
    return any(d <= dim < d + (arr.ndim if arr.dtype == np.bool_ else 1)
               for d, arr, _ in advanced)


def _check_masks(shape: tuple, advanced: list) -> None:
    for d, arr, _ in advanced:
        if arr.dtype == np.bool_:
            for i, m in enumerate(arr.shape):
                if d + i >= len(shape) or m != shape[d + i]:
                    raise IndexError(
                        f"The shape of the mask [{', '.join(map(str, arr.shape))}] at index "
                        f"{i} does not match the shape of the indexed tensor "
                        f"[{', '.join(map(str, shape))}] at index {d + i}"
                    )


def _gather(x: Tensor, advanced: list) -> Tensor:
    _check_broadcast(advanced)
    if not _check_advanced(x._data.shape, advanced):
        # (a result of no elements reads no index: in range or not, any will do)
        advanced = [(d, arr if arr.dtype == np.bool_ else np.zeros_like(arr), item)
                    for d, arr, item in advanced]
    where = _where_of(x._data.shape, advanced)
    data = x._data[where]
    out = Tensor._make(np.ascontiguousarray(data))
    node = record(IndexBackward0, out, x)
    if node is not None:
        node._saved.update({"indices": _saved_indices(advanced),
                            "self_sym_sizes": x._data.shape, "_where": where})
    return out


class IndexPutBackward0(ArrayFormulaNode):
    """x[indices] = values: the overwritten places get no gradient; the values
    get the gradient gathered from those places."""

    tangent = Tangent("index_put_jvp(self_t, self_p, values_t, values_p, _where, accumulate)")
    saves = {"indices": VALUE, "accumulate": VALUE}
    # (`values_meta`: the shape and dtype of the values, which PyTorch keeps to make
    # the zeros of the first formula)
    unshown = ("values_meta",)
    formulas = (Formula("self", "grad if accumulate else "
                                "index_put(grad, indices, zeros_of(values_meta), False)"),
                Formula("values", "index(grad, indices)"))


def _check_value(x: Tensor, value) -> None:
    """PyTorch's checks on the value of `x[i] = value`: a tensor, or a Python number
    (numpy ints and float64 count) that x's dtype can hold; not a list, a string,
    None, an array or a numpy float32."""
    if isinstance(value, Tensor):
        return
    if isinstance(value, complex):
        raise RuntimeError(f"value cannot be converted to type {x.dtype.c_name} without overflow")
    if not isinstance(value, (int, float, np.integer)):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else \
            f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"can't assign a {name} to a minigrad.{x.dtype.tensor_type}")
    if isinstance(value, (int, np.integer)) and not -(2**63) <= int(value) < 2**63:
        raise ValueError("Overflow when unpacking long long")
    check_scalar_fits(value.item() if isinstance(value, np.generic) else value, x.dtype)


def setitem(x: Tensor, index, value) -> None:
    index = parse_index(index)
    _check_value(x, value)
    value_t = value if isinstance(value, Tensor) else None
    whole = all(i is Ellipsis or isinstance(i, slice) for i in index) and all(
        _covers(i, n) for i, n in zip(_expand_ellipsis(index, x._data.ndim), x._data.shape))
    if whole:
        # x[...] = v, x[:] = v, x[:, 0:3] = v (slices that take whole dims): PyTorch
        # writes into x itself, no view involved.
        if value_t is None:
            copies.fill_(x, Tensor._make(np.array(value, x._data.dtype)))
        else:
            copies.copy_(x, value_t)
        return
    if any(_is_advanced(i) for i in index):
        _index_put(x, index, value)
        return
    target = getitem(x, index)
    if value_t is None:
        value_t = Tensor._make(np.array(value, x._data.dtype))
    else:
        # PyTorch expands the value to the target's shape first (and says so).
        expand.expanded_shape(value_t, target._data.shape)
    copies.copy_(target, value_t, _stretched=True)


def _index_put(x: Tensor, index: tuple, value) -> None:
    index = _expand_ellipsis(index, x._data.ndim)
    if any(i is None for i in index) or any(
        isinstance(i, (int, np.integer)) for i in index
    ):
        raise NotImplementedError(
            "minigrad supports assignment with lists or masks combined with slices only"
        )
    advanced, dim = [], 0
    for item in index:
        if _is_advanced(item):
            arr = _as_index_array(item)
            advanced.append((dim, arr, item))
            dim += arr.ndim if arr.dtype == np.bool_ else 1
        elif isinstance(item, slice) and item == slice(None):
            dim += 1
        else:
            raise NotImplementedError(
                "minigrad supports assignment with lists or masks combined with ':' only"
            )
    _check_broadcast(advanced)
    _check_advanced(x._data.shape, advanced)
    where = _where_of(x._data.shape, advanced)
    value_t = value if isinstance(value, Tensor) else Tensor._make(
        np.array(value, x._data.dtype))
    lone_mask = len(index) == 1 and advanced[0][1].dtype == np.bool_
    if value_t.dtype is not x.dtype and not (lone_mask and value_t._data.size == 1):
        # (PyTorch fills through a lone mask with one value, converting it.)
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_name(x)} for the destination and {_scalar_name(value_t)} for the source."
        )
    node = begin_inplace(IndexPutBackward0, x, value_t)
    x._data[where] = value_t._data
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"indices": _saved_indices(advanced), "accumulate": False,
                            "_where": where,
                            "_values_meta": (value_t._data.shape, value_t.dtype)})


# -- the ops the gradients of indexing call ----------------------------------------------------


class IndexPutImplBackward0(IndexPutBackward0):
    """_index_put_impl_(x, indices, values, accumulate, unsafe), in place: what the
    gradient of `x[indices]` is made with (it adds the gradient into zeros)."""


def _indexed(indices: tuple) -> tuple:
    """Saved indices (a tensor or None per dim) as a numpy index."""
    return _numpy_index(tuple(None if i is None else i._data for i in indices))


def _numpy_index(indices: tuple) -> tuple:
    """Indices (an array or None per dim, as a formula on arrays reads them) as a numpy
    index."""
    return tuple(slice(None) if i is None else i for i in indices)


def _saved_index_tensors(indices: tuple) -> tuple:
    return tuple(None if i is None else SavedTensor(i) for i in indices)


def _put(data: np.ndarray, where: tuple, values: np.ndarray, accumulate: bool) -> None:
    if accumulate:
        np.add.at(data, where, values)
    else:
        data[where] = values


def index_put(x: Tensor, indices: tuple, values: Tensor, accumulate: bool = False) -> Tensor:
    """`x` with `values` put at `indices` (a tensor or None per dim), out of place
    (PyTorch's aten::index_put; IndexPutBackward0)."""
    where = _indexed(indices)
    data = x._data.copy()
    _put(data, where, values._data, accumulate)
    out = Tensor._make(data)
    node = record(IndexPutBackward0, out, x, values)
    if node is not None:
        node._saved.update({"indices": _saved_index_tensors(indices), "accumulate": accumulate,
                            "_where": where, "_values_meta": (values._data.shape, values.dtype)})
    return out


def index_put_impl_(x: Tensor, indices: tuple, values: Tensor, accumulate: bool,
                    unsafe: bool) -> Tensor:
    """`index_put` in place (PyTorch's aten::_index_put_impl_, IndexPutImplBackward0)."""
    node = begin_inplace(IndexPutImplBackward0, x, values)
    where = _indexed(indices)
    _put(x._data, where, values._data, accumulate)
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"indices": _saved_index_tensors(indices), "accumulate": accumulate,
                            "_where": where, "_values_meta": (values._data.shape, values.dtype)})
    return x


def index(x: Tensor, indices: tuple) -> Tensor:
    """`x` at the saved indices (PyTorch's aten::index, IndexBackward0)."""
    return getitem(x, tuple(slice(None) if i is None else i for i in indices))


def index_backward(zeros: Tensor, indices: tuple, grad: Tensor) -> Tensor:
    """The gradient of `x[indices]`: `grad` added into zeros shaped like x at those
    places (a repeated index gets every contribution)."""
    return index_put_impl_(zeros, indices, grad, True, True)


def zeros_of(meta: tuple) -> Tensor:
    """Zeros of a saved (shape, dtype)."""
    shape, dtype = meta
    return zeros(shape, dtype=dtype)


# -- the array versions of what the formulas of IndexBackward0 and IndexPutBackward0 call ------


@on_arrays("new_zeros", method=True)
def _new_zeros_on_arrays(a: np.ndarray, sizes: tuple) -> np.ndarray:
    return np.zeros(sizes, a.dtype)


@on_arrays("index_backward")
def _index_backward_on_arrays(zeros: np.ndarray, indices: tuple, grad: np.ndarray) -> np.ndarray:
    """`grad` added into `zeros` at `indices`, in place: PyTorch's `_index_put_impl_`
    step, which the gradient's `_version` counts. (An empty `grad` reads no index: one
    out of range is no error then, as in the forward.)"""
    if grad.size:
        np.add.at(zeros, _numpy_index(indices), grad)
    bump_version(zeros)
    return zeros


@on_arrays("index_put")
def _index_put_on_arrays(x: np.ndarray, indices: tuple, values: np.ndarray,
                         accumulate: bool) -> np.ndarray:
    data = x.copy()
    _put(data, _numpy_index(indices), values, accumulate)
    return data


@on_arrays("index")
def _index_on_arrays(x: np.ndarray, indices: tuple) -> np.ndarray:
    return x[_numpy_index(indices)]


@on_arrays("zeros_of")
def _zeros_of_on_arrays(meta: tuple) -> np.ndarray:
    shape, dtype = meta
    return np.zeros(shape, dtype.np)


@on_arrays("index_select_backward")
def _index_select_backward_on_arrays(grad: np.ndarray, sizes: tuple, dim: int,
                                     index: np.ndarray) -> np.ndarray:
    out = np.zeros(sizes, grad.dtype)
    bump_version(out)  # (PyTorch adds into its zeros with `index_add_`)
    if out.ndim == 0:  # (a 0-d input: its one element picked, maybe more than once)
        np.add.at(out.reshape(1), index.reshape(-1), grad.reshape(-1))
        return out
    np.add.at(out, (slice(None),) * (dim % len(sizes)) + (index.reshape(-1),), grad)
    return out


class IndexSelectBackward0(ArrayFormulaNode):
    """index_select(x, dim, index): each selected slice's gradient is added back into
    its place in zeros of x's sizes."""

    tangent = Tangent("index_select(self_t, dim, index)", linear=True)
    saves = {"dim": VALUE, "index": INPUT, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "index_select_backward(grad, self_sym_sizes, dim, index)"),)



def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of `x` along `dim` at `index` (PyTorch's aten::index_select; minigrad
    uses it only in embedding's second derivative)."""
    d = _wrap_dim(dim, x._data.ndim)
    out = Tensor._make(np.ascontiguousarray(np.take(x._data, index._data, axis=d)))
    node = record(IndexSelectBackward0, out, x)
    if node is not None:
        node._saved.update({"dim": u64(dim), "index": SavedTensor(index),
                            "self_sym_sizes": x._data.shape, "_dim": d})
    return out


def _scalar_name(t: Tensor) -> str:
    """PyTorch's scalar type name in messages: "Float" for float32, "Long" for int64."""
    return t.dtype.tensor_type.removesuffix("Tensor")


# -- where: pick from one tensor or the other ------------------------------------------------


@on_arrays("where")
def _where_on_arrays(condition: np.ndarray, a, b) -> np.ndarray:
    """where(condition, grad, 0) on arrays: a zero in the gradient's dtype."""
    dtype = a.dtype if isinstance(a, np.ndarray) else b.dtype
    return _chosen(condition, a, b).astype(dtype, copy=False)


def _chosen(condition: np.ndarray, a, b) -> np.ndarray:
    """np.where; a result of no elements laid out as PyTorch's TensorIterator lays it
    out from the three operands (`where(cond, grad, 0)` over (0, 1): strides (1, 0))."""
    out = np.asarray(np.where(condition, a, b))
    if out.size:  # (laid out by the condition first, then a and b, as PyTorch's)
        return in_result_layout(out, condition, *(x if type(x) is np.ndarray else WRAPPED_NUMBER
                                                  for x in (a, b)))
    operands = [np.asarray(x) for x in (condition, a, b)]
    return empty_result(out.shape, out.dtype,
                        *((x.shape, element_strides(x)) for x in operands))


class WhereBackward0(ArrayFormulaNode):
    """where(condition, x, y): the gradient goes to x where the condition holds, to y
    elsewhere; the branch not taken gets zeros, which its own backward may still
    turn into nan (`where(x > 0, x.sqrt(), 0)` at 0). Saves the condition."""

    tangent = Tangent("where(condition, dense(self_t, self_p), dense(other_t, other_p))",
                      inputs=("self", "other"))

    saves = {"condition": INPUT}
    formulas = (Formula("self", "where(condition, grad, 0)"),
                Formula("other", "where(condition, 0, grad)"))


def where(condition: Tensor, input=None, other=None):  # noqa: A002 - PyTorch's names
    """Element by element, `input` where `condition` holds, else `other` (broadcast;
    either may be a number). With the condition alone, the indices where it holds."""
    if input is None and other is None:
        # PyTorch's nonzero(condition).unbind(1): views into one (count, ndim) tensor.
        found = np.ascontiguousarray(np.transpose(np.nonzero(condition._data)), np.int64)
        return multi_output.unbind(Tensor._make(found), 1)
    if condition._data.dtype != np.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {condition.dtype.type_name}")
    dt = result_type(input, other)
    a = input._data if isinstance(input, Tensor) else np.array(input)
    b = other._data if isinstance(other, Tensor) else np.array(other)
    out = Tensor._make(_chosen(condition._data, a.astype(dt.np, copy=False),
                               b.astype(dt.np, copy=False)))
    node = record(WhereBackward0, out, input if isinstance(input, Tensor) else None,
                  other if isinstance(other, Tensor) else None)
    if node is not None:
        node._saved["condition"] = SavedTensor(condition)
    return out


def where_method(self: Tensor, condition: Tensor, other) -> Tensor:
    """`x.where(condition, y)`: `where(condition, x, y)`."""
    return where(condition, self, other)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------


declare("index", nodes=(IndexBackward0,), attributes={"__getitem__": getitem}, aten=index)
declare("index_put_", nodes=(IndexPutBackward0,), attributes={"__setitem__": setitem})
declare("where", nodes=(WhereBackward0,), function=where, method=where_method)
declare("_index_put_impl_", nodes=(IndexPutImplBackward0,))
# (index_select is declared with its public form, in `picking.py`)
# (functions the formulas call by PyTorch's aten names; their nodes are declared above)
declare("index_put", aten=index_put)
declare("index_backward", aten=index_backward)
declare("zeros_of", aten=zeros_of)


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


@helper
def index_put_jvp(self_t, self_p: Tensor, values_t, values_p: Tensor, where: tuple,
                  accumulate: bool) -> Tensor:
    """index_put's tangent: `self_t.index_put(indices, values_t, accumulate)` (zeros
    for a missing tangent), the indices rebuilt from the numpy index the op saved."""
    indices = tuple(None if isinstance(i, slice) else Tensor._make(np.asarray(i))
                    for i in where)
    return BACKWARD_OPS["index_put"](dense(self_t, self_p), indices,
                                     dense(values_t, values_p), accumulate)

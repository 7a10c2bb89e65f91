"""sum, mean, max, min: over the whole tensor or along dimensions."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.graph import INPUT, OUTPUT, Node, SavedTensor
from ..kernels import reductions as R
from ..tensor import Tensor, _wrap_dim, record
from ._util import spread, total, u64

VALUE = "value"


def _dims(dim, ndim: int) -> tuple[int, ...]:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = tuple(_wrap_dim(d, ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    return wrapped


def _expand_back(grad: np.ndarray, shape: tuple, dims: tuple, keepdim: bool) -> np.ndarray:
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim:
        for d in sorted(dims):
            grad = np.expand_dims(grad, d)
    return np.broadcast_to(grad, shape)


def _sum_dtype(x: Tensor):
    # Integer and bool sums are int64, like PyTorch.
    return x._data.dtype if x._data.dtype.kind == "f" else np.dtype(np.int64)


class SumBackward0(Node):
    """sum(): every element gets the incoming (scalar) gradient."""

    saves = {"self_sym_sizes": VALUE}

    def backward(self, grad):
        return (spread(grad, self._saved["self_sym_sizes"]),)


class SumBackward1(Node):
    """sum(dim): the gradient is broadcast back along the summed dims."""

    saves = {"dim": VALUE, "keepdim": VALUE, "self_sym_sizes": VALUE}

    def backward(self, grad):
        shape = self._saved["self_sym_sizes"]
        return (_expand_back(grad, shape, self._saved["_dims"], self._saved["keepdim"]),)


def sum(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum of all elements, or along `dim` (an int or a tuple of ints)."""
    dt = _sum_dtype(x)
    if dim is None:
        if x._data.dtype.kind == "f":
            data = np.array(total(x._data), dt)
        else:
            data = np.array(x._data.sum(dtype=dt))
        out = Tensor._make(data)
        node = record(SumBackward0, out, x)
        if node is not None:
            node._saved["self_sym_sizes"] = x._data.shape
        return out
    dims = _dims(dim, x._data.ndim)
    data = x._data.sum(axis=dims, keepdims=keepdim, dtype=dt) if x._data.ndim else x._data.copy()
    out = Tensor._make(np.asarray(data, dt))
    node = record(SumBackward1, out, x)
    if node is not None:
        raw = (dim,) if isinstance(dim, int) else tuple(dim)
        node._saved.update(
            {"dim": tuple(u64(d) for d in raw), "keepdim": keepdim,
             "self_sym_sizes": x._data.shape, "_dims": dims}
        )
    return out


class MeanBackward0(Node):
    """mean(): each element gets grad / numel."""

    saves = {"self_sym_numel": VALUE, "self_sym_sizes": VALUE}

    def backward(self, grad):
        n = self._saved["self_sym_numel"]
        return (spread(grad / grad.dtype.type(n), self._saved["self_sym_sizes"]),)


class MeanBackward1(Node):
    """mean(dim): grad / (number of elements averaged), broadcast back."""

    saves = {"dim": VALUE, "keepdim": VALUE, "self_sym_numel": VALUE, "self_sym_sizes": VALUE}

    def backward(self, grad):
        shape = self._saved["self_sym_sizes"]
        dims = self._saved["_dims"]
        count = int(np.prod([shape[d] for d in dims]))
        grad = grad / grad.dtype.type(count)
        return (_expand_back(grad, shape, dims, self._saved["keepdim"]),)


def mean(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Average of all elements, or along `dim`."""
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_TYPE_NAMES[x.dtype.name]}"
        )
    if dim is None:
        data = np.array(total(x._data) / x._data.size if x._data.size else np.nan,
                        x._data.dtype)
        out = Tensor._make(data)
        node = record(MeanBackward0, out, x)
        if node is not None:
            node._saved.update({"self_sym_numel": x._data.size, "self_sym_sizes": x._data.shape})
        return out
    dims = _dims(dim, x._data.ndim)
    out = Tensor._make(np.asarray(x._data.mean(axis=dims, keepdims=keepdim), x._data.dtype))
    node = record(MeanBackward1, out, x)
    if node is not None:
        raw = (dim,) if isinstance(dim, int) else tuple(dim)
        node._saved.update(
            {"dim": tuple(u64(d) for d in raw), "keepdim": keepdim,
             "self_sym_numel": x._data.size, "self_sym_sizes": x._data.shape, "_dims": dims}
        )
    return out


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}

def _return_type(name: str):
    """What `max(dim=...)` returns: a (values, indices) named tuple printed like
    PyTorch's `torch.return_types.max`."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self) -> str:
        return (f"minigrad.return_types.{name}(\nvalues={self.values!r},\n"
                f"indices={self.indices!r})")

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "minigrad.return_types"})


max_result = _return_type("max")
min_result = _return_type("min")


class _ExtremeAll(Node):
    """max()/min() of the whole tensor: the gradient is shared evenly by every
    element equal to the extreme value (ties split it)."""

    saves = {"self": INPUT, "result": OUTPUT}

    def backward(self, grad):
        x = self.saved("self")
        y = self.saved("result")
        mask = x == y
        return (np.where(mask, grad / grad.dtype.type(mask.sum()), grad.dtype.type(0)),)


class MaxBackward1(_ExtremeAll):
    __doc__ = _ExtremeAll.__doc__


class MinBackward1(_ExtremeAll):
    __doc__ = _ExtremeAll.__doc__


class _ExtremeDim(Node):
    """max(dim)/min(dim): the gradient goes to the selected index only."""

    saves = {"dim": VALUE, "indices": VALUE, "keepdim": VALUE, "self_sym_sizes": VALUE}

    def backward(self, grad):
        shape = self._saved["self_sym_sizes"]
        dim = self._saved["_dims"][0]
        idx = self.saved("indices")
        if not self._saved["keepdim"]:
            grad = np.expand_dims(grad, dim)
            idx = np.expand_dims(idx, dim)
        out = np.zeros(shape, grad.dtype)
        np.put_along_axis(out, idx, grad, axis=dim)
        return (out,)


class MaxBackward0(_ExtremeDim):
    __doc__ = _ExtremeDim.__doc__


class MinBackward0(_ExtremeDim):
    __doc__ = _ExtremeDim.__doc__


def _extreme(x: Tensor, dim, keepdim, is_max: bool):
    if isinstance(dim, Tensor):
        return (maximum if is_max else minimum)(x, dim)
    if x._data.size == 0:
        raise RuntimeError(
            f"{'max' if is_max else 'min'}(): Expected reduction dim to be specified for "
            "input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )
    if dim is None:
        arg = (R.argmax_all if is_max else R.argmin_all)(x._data) \
            if x._data.dtype.kind == "f" else \
            int((np.argmax if is_max else np.argmin)(x._data))
        out = Tensor._make(np.array(x._data.reshape(-1)[arg]))
        node = record(MaxBackward1 if is_max else MinBackward1, out, x)
        if node is not None:
            node._saved["self"] = SavedTensor(x)
            node._saved["result"] = SavedTensor(out, is_output=True)
        return out
    d = _wrap_dim(dim, x._data.ndim)
    data = x._data if x._data.ndim else x._data.reshape(1)
    idx = (np.argmax if is_max else np.argmin)(data, axis=d if x._data.ndim else 0)
    idx_k = np.expand_dims(idx, d if x._data.ndim else 0)
    values = np.take_along_axis(data, idx_k, axis=d if x._data.ndim else 0)
    if not keepdim or not x._data.ndim:
        values = values.reshape(idx.shape)
        idx_out = idx
    else:
        idx_out = idx_k
    # np.array, not ascontiguousarray: that one turns a 0-d result into shape (1,).
    out = Tensor._make(np.array(values, order="C"))
    indices = Tensor._make(np.array(idx_out, np.int64, order="C"))
    node = record(MaxBackward0 if is_max else MinBackward0, out, x)
    if node is not None:
        node._saved.update({"dim": u64(dim), "indices": SavedTensor(indices),
                            "keepdim": keepdim,
                            "self_sym_sizes": x._data.shape, "_dims": (d,)})
    return (max_result if is_max else min_result)(out, indices)


def max(x: Tensor, dim=None, keepdim: bool = False):  # noqa: A001
    """The largest element; with `dim`, a (values, indices) pair."""
    return _extreme(x, dim, keepdim, True)


def min(x: Tensor, dim=None, keepdim: bool = False):  # noqa: A001
    """The smallest element; with `dim`, a (values, indices) pair."""
    return _extreme(x, dim, keepdim, False)


def maximum(a: Tensor, b: Tensor) -> Tensor:
    raise NotImplementedError("minigrad does not implement element-wise maximum/minimum")


minimum = maximum

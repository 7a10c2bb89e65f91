"""inner, tensordot and kron: products that PyTorch builds from views, `mul` and `mm`
(outer and vdot live with the other vector products, in `matrix_functions.py`).

None has a node: PyTorch records the ops it composes them of (tensordot a permute and
reshape of each input, an `mm` and a reshape back, kron a `mul` of two reshapes), so
minigrad composes them the same way and its graph is PyTorch's, node for node.
"""

from __future__ import annotations

import numpy as np

from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .linalg import mm
from .views import UnsafeViewBackward0

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the products.)
OP_FAMILY = "linalg"


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(map(str, t._data.shape)) + "]"


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """The sum of products over `dims` of `a` and `b` (an int n: a's last n dims with
    b's first n; or two lists of dims), computed as PyTorch does: each input permuted
    and reshaped into a matrix, one `mm`, the result reshaped."""
    if out is not None:
        raise NotImplementedError("minigrad's ops take no out= argument")
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a._data.ndim, b._data.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    return _tensordot(a, b, dims_a, dims_b)


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, csize = a, b, 1
    for d1, d2 in zip(dims_a, dims_b):
        s1 = a._data.shape[_wrap_dim(d1, a._data.ndim)]
        s2 = b._data.shape[_wrap_dim(d2, b._data.ndim)]
        if s2 == 1:  # (a broadcast dim is summed right away)
            t1 = t1.sum(d1, True)
        elif s1 == 1:
            t2 = t2.sum(d2, True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} "
                               f"in dim {d1} and second has size {s2} in dim {d2}")
        else:
            csize *= s1
    contracted_a = {_wrap_dim(d, a._data.ndim) for d in dims_a}
    contracted_b = {_wrap_dim(d, b._data.ndim) for d in dims_b}
    kept_a = [i for i in range(a._data.ndim) if i not in contracted_a]
    kept_b = [i for i in range(b._data.ndim) if i not in contracted_b]
    size1 = int(np.prod([t1._data.shape[i] for i in kept_a], dtype=np.int64))
    size2 = int(np.prod([t2._data.shape[i] for i in kept_b], dtype=np.int64))
    rsizes = [t1._data.shape[i] for i in kept_a] + [t2._data.shape[i] for i in kept_b]
    m1 = t1.permute(kept_a + dims_a).reshape(size1, csize)
    m2 = t2.permute(dims_b + kept_b).reshape(csize, size2)
    return mm(m1, m2).reshape(rsizes)


def inner(x: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dim of both (a number times a tensor if
    either is 0-d)."""
    if x._data.ndim == 0 or other._data.ndim == 0:
        return x * other
    if x._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           f"shapes {_sizes(x)} and {_sizes(other)}")
    return _tensordot(x, other, [-1], [-1])


def _unsafe_view(x: Tensor, shape: tuple) -> Tensor:
    """`x` reshaped, recorded as a reshape of a copy (PyTorch's aten::_unsafe_view:
    a tensor of its own, not a view, whatever memory it reads)."""
    out = Tensor._make(x._data.reshape(shape))
    node = record(UnsafeViewBackward0, out, x)
    if node is not None:
        node._saved["self_sym_sizes"] = x._data.shape
    return out


def kron(x: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: each element of `x` times the whole of `other`, the
    blocks laid out as `x`'s elements (PyTorch: one `mul` of two interleaved
    reshapes, reshaped back)."""
    ndim = max(x._data.ndim, other._data.ndim)
    xs = (1,) * (ndim - x._data.ndim) + x._data.shape
    os_ = (1,) * (ndim - other._data.ndim) + other._data.shape
    a_shape = tuple(v for n in xs for v in (n, 1))
    b_shape = tuple(v for n in os_ for v in (1, n))
    product = _unsafe_view(x, a_shape) * _unsafe_view(other, b_shape)
    return _unsafe_view(product, tuple(n * m for n, m in zip(xs, os_)))


declare("inner", function=inner, method=True)
declare("tensordot", function=tensordot)
declare("kron", function=kron, method=True)

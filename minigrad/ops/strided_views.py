"""`as_strided`: any view of a tensor's memory, by sizes, strides and an offset.

`x.as_strided(size, stride, storage_offset)` sees the memory `x` lives in (its
*storage*: all of the memory of the tensor it is a view of) from element
`storage_offset` (by default `x`'s own), stepping `stride[d]` elements along dim `d`:
elements may be seen twice, or not at all. Its node, AsStridedBackward0, is the one
a view's history is rebuilt with after an in-place op on its base
(`autograd/inplace.py`): its backward is PyTorch's `as_strided_backward`, which adds
the gradient into a zero storage where the view saw each element, then reads the
input's geometry off it.
"""

from __future__ import annotations

import numpy as np

from .._args import fits_int64, is_int, type_name
from ..autograd.inplace import AsStridedBackward0
from ..tensor import Tensor
from .declaration import declare
from .view_history import as_strided_view

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the views.)
OP_FAMILY = "views"


def _ints(value, name: str, pos: int) -> tuple:
    """An int list argument (`size`, `stride`), with PyTorch's TypeError otherwise."""
    where = f"as_strided(): argument '{name}' (position {pos}) must be tuple of ints"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{where}, not {type_name(value)}")
    for i, v in enumerate(value):
        if not is_int(v) or not fits_int64(int(v)):
            raise TypeError(f"{where}, but found element of type {type_name(v)} at pos {i}")
    return tuple(int(v) for v in value)


def _storage(x: Tensor) -> tuple[np.ndarray, int]:
    """The memory `x` lives in, as a flat array of its elements (what PyTorch calls its
    storage: all of its base's memory), and where `x` starts in it."""
    owner = x._data
    while getattr(owner, "base", None) is not None:  # (through numpy's views and wrappers)
        owner = owner.base
    if not isinstance(owner, np.ndarray) or not owner.flags.c_contiguous:
        raise NotImplementedError("minigrad cannot take as_strided of a tensor whose memory "
                                  "numpy did not allocate as one array")
    item = x._data.itemsize
    start = owner.__array_interface__["data"][0]
    flat = np.ndarray((owner.nbytes // item,), x._data.dtype, buffer=owner)
    if not x._data.flags.writeable:
        flat.flags.writeable = False
    return flat, (x._data.__array_interface__["data"][0] - start) // item


def _as_strided(x: Tensor, size, stride, storage_offset, first: int) -> Tensor:
    size, stride = _ints(size, "size", first), _ints(stride, "stride", first + 1)
    if storage_offset is not None and not is_int(storage_offset):
        raise TypeError(f"as_strided(): argument 'storage_offset' (position {first + 2}) "
                        f"must be int, not {type_name(storage_offset)}")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    memory, start = _storage(x)
    offset = start if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item = memory.itemsize
    if all(size):
        needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if needed > memory.size:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {item} requiring a storage size of {needed * item} "
                f"are out of bounds for storage of size {memory.size * item}")
    data = np.lib.stride_tricks.as_strided(memory[offset:], size, [s * item for s in stride],
                                           writeable=memory.flags.writeable)
    return as_strided_view(x, data, storage_offset)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None  # noqa: A002
               ) -> Tensor:
    """A view of `input`'s storage with these sizes and strides (in elements), from
    element `storage_offset` of the storage (by default where `input` starts)."""
    return _as_strided(input, size, stride, storage_offset, 2)


def as_strided_method(self: Tensor, size, stride, storage_offset: int | None = None
                      ) -> Tensor:
    """`Tensor.as_strided`: see `as_strided`."""
    return _as_strided(self, size, stride, storage_offset, 1)


declare("as_strided", nodes=(AsStridedBackward0,), function=as_strided, method=as_strided_method)

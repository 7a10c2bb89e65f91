"""`create_graph=True` through the nodes of a rewritten view history: CopySlices
and AsStridedBackward0 (`autograd/inplace.py`), whose backward, run on tensors,
records what PyTorch's C++ records.

The nodes themselves stand in `autograd`, below the ops, so their recording
backward is attached to them here (as `Node.apply_recording` is by `formulas.py`).

CopySlices' backward (PyTorch's `CopySlices::apply_impl`), step by step:

1. `result = grad.new_empty_strided(base sizes, base strides); result.copy_(grad)`:
   CopyBackwards, into a fresh tensor laid out like the base;
2. `grad_slice = result.as_strided(view sizes, view strides, view offset)`:
   AsStridedBackward0 (PyTorch replays the view ops instead only for tensors that
   cannot be viewed with strides, which minigrad has not);
3. `res = fn(grad_slice.clone(contiguous))`: CloneBackward0, then the wrapped
   in-place node's own recording backward;
4. `grad_slice.copy_(res[0])`: an in-place copy into a view of `result`, so a
   CopySlices over CopyBackwards becomes `result`'s history, and `result` is the
   base's gradient; `fn`'s other gradients pass through.
"""

from __future__ import annotations

import numpy as np

from .._registry import attach
from ..autograd.graph import FREED_MESSAGE, Node
from ..autograd.inplace import (
    AsStridedBackward0,
    CopySlices,
    base_and_region,
    maybe_overlapping,
)
from ..autograd.record import record
from ..tensor import Tensor, make_view
from .copies import clone, copy_


def _copy_slices_recording(node: CopySlices, grads: list, wanted: list | None = None) -> list:
    """CopySlices' backward on tensors, recording PyTorch's graph (see the module)."""
    if node.fn is None:
        raise RuntimeError(FREED_MESSAGE)
    grad = grads[0]
    count = len(node.next_functions)
    if grad is None:
        return [None] * count
    result_data, slice_data = base_and_region(node._saved, grad._data.dtype)
    result = Tensor._make(result_data)
    copy_(result, grad)
    grad_slice = as_strided_view(result, slice_data)
    # `fn`'s first input is the view's old history, ours the base's: PyTorch lets the
    # base's edge decide whether `fn` computes that gradient (for `inputs=`), and
    # `fn`'s other edges are ours.
    res = node.fn.apply_recording([clone(grad_slice, row_major=True)], wanted)
    node._fn_recorded = True
    out: list = [None] * count
    for i, r in enumerate(res):
        if r is None or not (node.needs_grad(i) if wanted is None else wanted[i]):
            continue  # (PyTorch leaves an undefined gradient undefined)
        if i == 0:
            copy_(grad_slice, r)
            out[0] = result
        else:
            out[i] = r
    return out


attach(CopySlices, "apply_recording", _copy_slices_recording)


def as_strided_view(base: Tensor, data, storage_offset="") -> Tensor:
    """`base.as_strided(...)`: `data` (a numpy view into `base`'s memory) as a view of
    `base`, recorded as PyTorch's as_strided records (AsStridedBackward0, saving the
    view's sizes, strides and offset in `base`'s memory; `storage_offset`, where
    given, is the argument PyTorch shows as saved)."""
    out = make_view(base, data)
    node: Node | None = record(AsStridedBackward0, out, base)
    if node is not None:
        AsStridedBackward0.describe(node, out, base, storage_offset)
    return out


def _as_strided_recording(node: AsStridedBackward0, grads: list,
                          wanted: list | None = None) -> list:
    """AsStridedBackward0's backward on tensors: PyTorch's `as_strided_backward`,
    whose steps record SqueezeBackward1 (a dim of size 1), SumBackward1 (an
    expanded dim), CopySlices over CopyBackwards (the gradient copied into its
    region of a zero storage; IndexAddBackward0 where the view sees an element
    twice: added into it, each where the view sees it), DivBackward0 (where the input
    sees an element twice: the storage divided by how many times) and
    AsStridedBackward0 (the storage seen as the input)."""
    grad = grads[0]
    if grad is None or not (node.needs_grad(0) if wanted is None else wanted[0]):
        return [None]
    saved = node._saved
    sizes, strides, offset = saved["size"], saved["stride"], saved["_offset"]
    inp_sizes, inp_strides = saved["_base_shape"], saved["_base_stride"]
    dt = grad._data.dtype
    # The output's geometry without its dims of size 1 (squeezed out of the gradient)
    # and its expanded dims (summed), from the last dim to the first, as PyTorch.
    out_sizes: list = []
    out_strides: list = []
    for i in reversed(range(len(sizes))):
        if sizes[i] == 0:
            return [Tensor._make(np.zeros(inp_sizes, dt))]
        if sizes[i] == 1:
            grad = grad.squeeze(i)
        elif strides[i] == 0:
            grad = grad.sum(i)
        else:
            out_sizes.insert(0, sizes[i])
            out_strides.insert(0, strides[i])
    if 0 in inp_sizes:
        return [Tensor._make(np.zeros(inp_sizes, dt))]
    kept_sizes = [n for n in inp_sizes if n != 1]
    kept_strides = [s for n, s in zip(inp_sizes, inp_strides) if n != 1]
    shared = min(0, offset)  # (an as_strided view may start before its input)
    size = max(_min_storage_size(kept_sizes, kept_strides, -shared),
               _min_storage_size(out_sizes, out_strides, offset - shared))
    storage = Tensor._make(np.zeros(size, dt))  # (`grad.new_zeros`: no history)
    if maybe_overlapping(out_sizes, out_strides):
        storage.index_add_(0, _flat_indices(out_sizes, out_strides, offset - shared),
                           grad.reshape(-1))
    else:
        copy_(as_strided_view(storage, _strided(storage, out_sizes, out_strides,
                                                offset - shared)), grad)
    if maybe_overlapping(kept_sizes, kept_strides):
        places = _flat_indices(inp_sizes, inp_strides, -shared)
        count = Tensor._make(np.zeros(size, dt))
        count.index_add_(0, places, Tensor._make(np.ones(1, dt)).expand_as(places))
        storage.div_(count)  # (nan outside what the input sees, as PyTorch's)
    return [as_strided_view(storage, _strided(storage, inp_sizes, inp_strides, -shared))]


def _flat_indices(sizes, strides, offset: int) -> Tensor:
    """Where in memory each element of a geometry is, in row-major order (PyTorch's
    `flatten_full_indices`)."""
    places = offset + sum(i * s for i, s in zip(np.indices(tuple(sizes)), strides))
    return Tensor._make(np.asarray(places, np.int64).reshape(-1))


attach(AsStridedBackward0, "apply_recording", _as_strided_recording)


def _strided(storage: Tensor, sizes, strides, offset: int) -> np.ndarray:
    """Part of a 1-D tensor's memory seen with sizes and strides (in elements)."""
    data = storage._data
    return np.lib.stride_tricks.as_strided(
        data[offset:], tuple(sizes), tuple(s * data.itemsize for s in strides))


def _min_storage_size(sizes, strides, offset: int) -> int:
    """How many elements of memory a geometry reaches, from the start."""
    return offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides))

"""The input buffer: where the gradient streams flowing into one node are summed
before it runs (PyTorch's `InputBuffer`). A node with several consumers in forward
receives several streams in backward; the engine runs it once, on their sum.
"""

from __future__ import annotations

import sys

import numpy as np

from ..arrays.dispatch import binary, run_kernel
from ..arrays.layout import flat, is_dense, memory_order, plain
from ..grad_mode import STATE
from ..kernels import elementwise as K
from ..tensor import Tensor
from .graph import Node, bump_version, is_efficient_zeros
from .tangents import tangent_of


def add_to_buffer(buffers: dict, node: Node, nr: int, grad, siblings=()) -> None:
    """Sum a gradient stream into the node's input slot `nr` (PyTorch's InputBuffer).
    `siblings`: the gradients the formula that sent `grad` returned along with it."""
    buf = buffers.get(node)
    if buf is None:
        if nr == 0:  # the usual first stream: a one-slot buffer holding it
            buffers[node] = [grad]
            return
        buf = buffers[node] = [None] * (nr + 1)
    elif len(buf) <= nr:
        buf.extend([None] * (nr + 1 - len(buf)))
    if grad is None:
        return
    summed = buf[nr]
    if summed is None:
        buf[nr] = grad
    elif isinstance(grad, Tensor):
        # A backward that carries tensors (`create_graph=True`, or forward mode's
        # gradients): with grad mode on the sum is recorded (AddBackward0) and made
        # anew; with it off, added in place when only the buffer holds the sum so far
        # (its tangent too), as PyTorch's buffer does.
        if summed._fw_pending is not None:
            tangent_of(summed)  # (computed now: a tangent still to compute holds the sum)
        if not STATE.grad_enabled and tensor_summable_in_place(summed, grad, siblings):
            summed.add_(grad)
        else:
            buf[nr] = summed + grad
    elif summable_in_place(summed, grad, siblings):
        # Only this buffer refers to the sum so far: add into it, as PyTorch's
        # InputBuffer does, instead of making a new array. (A transposed or permuted
        # sum is walked in its memory order, and the stream in the same order.)
        into, stream = summed, grad
        if not summed.flags.c_contiguous:
            order = memory_order(summed)
            into, stream = summed.transpose(order), grad.transpose(order)
        run_kernel(K.add_into, flat(into), plain(stream))  # (one kernel signature)
        bump_version(summed)  # (as there, the gradient's version goes up)
    elif not (is_efficient_zeros(summed) and is_efficient_zeros(grad)):
        buf[nr] = binary(K.add, summed, grad, summed.dtype)
    # (else: zero plus zero stays PyTorch's efficient zero tensor: see `graph.py`)


def summable_in_place(summed: np.ndarray, grad: np.ndarray, siblings) -> bool:
    """PyTorch's rule for adding a stream into the running sum in place: the sum
    owns its memory (a view never qualifies: it shares its base's), nothing but the
    buffer refers to it (the engine is still handing on the formula's outputs, so a
    sibling's reference does not count), it is dense and writable, and the stream
    has its shape and dtype."""
    if summed.base is not None:
        return False
    refs = sys.getrefcount(summed) - _BUFFER_REFS
    for sibling in siblings:
        if sibling is summed:
            refs -= 1
    return (refs <= 0 and summed.shape == grad.shape and summed.dtype == grad.dtype
            and summed.flags.writeable
            and (summed.flags.c_contiguous or is_dense(summed)))


# References to the running sum when `summable_in_place` looks: the buffer list,
# `add_to_buffer`'s local, `summable_in_place`'s argument and `sys.getrefcount`'s.
_BUFFER_REFS = 4


def tensor_summable_in_place(summed: Tensor, grad: Tensor, siblings) -> bool:
    """`summable_in_place` for a running sum that is a tensor: nothing but the buffer
    refers to the tensor (`_BUFFER_REFS`, as above) and nothing but the tensor to its
    memory (the tensor's slot, the local below and `sys.getrefcount`'s argument)."""
    refs = sys.getrefcount(summed) - _BUFFER_REFS
    for sibling in siblings:
        if sibling is summed:
            refs -= 1
    data = summed._data
    return (refs <= 0 and summed._view is None and data.base is None
            and sys.getrefcount(data) <= 3 and data.shape == grad._data.shape
            and data.dtype == grad._data.dtype and data.flags.writeable
            and (data.flags.c_contiguous or is_dense(data)))

"""Broadcasting: the shape two operands broadcast to, PyTorch's errors when they do
not, and the way back for gradients (`sum_to`)."""

from __future__ import annotations

import numpy as np

from .summing import add_up, column_sums


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    """The broadcast shape of two shapes, with PyTorch's error message."""
    if len(b) <= len(a) and a[len(a) - len(b):] == b:
        return a  # b is a's trailing dims (a bias for a batch): the common case
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    # Checked from the last dim backwards: PyTorch reports the innermost mismatch.
    for i in reversed(range(ndim)):
        x, y = a[i], b[i]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def shape_mismatch(shape: tuple, broadcast: tuple) -> RuntimeError:
    """PyTorch's error when a result of `broadcast` shape must be written into a tensor
    of `shape` (an in-place op, `copy_`, `linear`'s bias)."""
    return RuntimeError(f"output with shape [{', '.join(map(str, shape))}] doesn't match the "
                        f"broadcast shape [{', '.join(map(str, broadcast))}]")


def check_inplace_shape(shape: tuple, other: tuple) -> None:
    """An in-place op keeps its tensor's shape: the other operand may broadcast to it,
    not beyond it (PyTorch's errors, the size mismatch first)."""
    full = broadcast_shape(shape, other)
    if full != shape:
        raise shape_mismatch(shape, full)


def sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Undo broadcasting: sum `grad` down to `shape` (leading dims, then size-1 dims)."""
    if grad.shape == shape:
        return grad
    # PyTorch's `sum_to` is `sum` over the broadcast dims, keeping them, so the float
    # sums add in PyTorch's order (`add_up`). Like PyTorch's, a sum that drops leading
    # dims comes back as a view of the summed array (which decides whether a later
    # stream may be added into it in place); one that keeps every dim is the summed
    # array itself, and so is a sum to no dims at all.
    if shape == ():
        return add_up(grad, tuple(range(grad.ndim)))
    if (grad.ndim == 2 and len(shape) == 1 and grad.shape[1] == shape[0]
            and grad.dtype.kind == "f"):
        # (a bias's gradient: a batch of rows summed into one, the commonest case; not
        # a (1,) operand broadcast along the rows too)
        return column_sums(grad).reshape(shape)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1
    )
    out = add_up(grad, axes, keepdim=True) if axes else grad
    return out if out.shape == shape else out.reshape(shape)


def _row_of(shape: tuple, batch: tuple) -> tuple | None:
    """`shape` without its leading 1s, when that is the trailing dims of `batch` and
    `batch` has more dims: one row repeated over `batch`'s leading dims, as a bias is
    over a batch. Else None."""
    row = shape
    while row and row[0] == 1:
        row = row[1:]
    if row and len(row) < len(batch) and batch[len(batch) - len(row):] == row:
        return row
    return None


def spread(value: np.ndarray, shape: tuple) -> np.ndarray:
    """A single value (a 0-d array) seen as a read-only array of `shape` without
    copying it: every stride is 0. What `sum()`'s and `mean()`'s backward return;
    the same as `np.broadcast_to`, which costs several times more to call."""
    if value.ndim != 0:
        return np.broadcast_to(value, shape)
    view = np.ndarray(shape, value.dtype, value, 0, (0,) * len(shape))
    view.flags.writeable = False
    return view

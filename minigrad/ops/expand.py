"""`expand()`: a view that repeats size-1 dims without copying (stride 0).

Its backward sums the gradient over the repeated dims, the same reduction the engine
applies to undo broadcasting.
"""

from __future__ import annotations

import numpy as np

from .._args import view_shape
from ..arrays.broadcasting import sum_to
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, on_arrays
from .tangent_formulas import SAME_VIEW
from .views import VALUE, _view_of

# (In lesson 4's table expand stands with the other views.)
OP_FAMILY = "views"

@on_arrays("sum_to_size", method=True)
def _sum_to_size(a: np.ndarray, shape: tuple) -> np.ndarray:
    return sum_to(a, tuple(shape))


class ExpandBackward0(ArrayFormulaNode):
    """expand(): sum the gradient over the expanded dims."""

    tangent = SAME_VIEW

    saves = {"self_sym_sizes": VALUE}
    formulas = (Formula("self", "grad.sum_to_size(self_sym_sizes)"),)


def expand(x: Tensor, *sizes) -> Tensor:
    sizes = view_shape(sizes, "expand", "size")
    shape = expanded_shape(x, tuple(sizes))
    # Writable like any view (writing through an expanded dim is refused later,
    # by `check_no_overlap`, with PyTorch's error).
    data = np.lib.stride_tricks.as_strided(
        x._data, shape, _expanded_strides(x._data, shape), writeable=x._data.flags.writeable)
    return _view_of(x, data, ExpandBackward0, self_sym_sizes=x._data.shape)


def _expanded_strides(a: np.ndarray, shape: tuple) -> tuple:
    """The strides PyTorch gives an expanded view (`inferExpandGeometry`): a dim that
    grows from 1 steps by 0; a dim that keeps its size keeps its stride, even a dim of
    size 1 (numpy's broadcast_to gives that one 0 too); a new leading dim of size 1
    steps over everything after it (0 when nothing follows: a 0-d input)."""
    strides = [0] * len(shape)
    lead = len(shape) - a.ndim
    for i in range(len(shape) - 1, -1, -1):
        d = i - lead
        if d >= 0:
            size, stride = a.shape[d], a.strides[d]
        else:
            size = 1
            stride = shape[i + 1] * strides[i + 1] if i + 1 < len(shape) else 0
        strides[i] = stride if size == shape[i] else 0
    return tuple(strides)


def expanded_shape(x: Tensor, sizes: tuple) -> tuple:
    """The shape `x.expand(*sizes)` has (-1 keeps a dim), with PyTorch's errors."""
    have = x._data.shape
    lead = len(sizes) - len(have)
    if lead < 0:
        raise RuntimeError(
            f"expand(minigrad.{x.dtype.tensor_type}{{[{', '.join(map(str, have))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(have)})"
        )
    shape = list(sizes)
    for i in reversed(range(len(sizes))):  # innermost first, like PyTorch
        want = sizes[i]
        if i < lead:
            if want == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            continue
        old = have[i - lead]
        if want == -1:
            shape[i] = old
        elif old != want and old != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size "
                f"({old}) at non-singleton dimension {i}.  Target sizes: "
                f"[{', '.join(map(str, sizes))}].  Tensor sizes: [{', '.join(map(str, have))}]"
            )
    return tuple(shape)


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    return expand(x, *other.shape)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------


declare("expand", nodes=(ExpandBackward0,), method=expand)
declare("expand_as", method=expand_as)

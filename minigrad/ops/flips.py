"""flip, fliplr, flipud, roll and rot90: the same elements in another order.

Each is a copy (not a view: no strides can read an array backwards in PyTorch), and
each is its own inverse up to a sign: flip's gradient is the gradient flipped again,
roll's is the gradient rolled back by the opposite shifts. fliplr and flipud are flips
of one dim; rot90's gradient is the gradient turned back.
"""

from __future__ import annotations

import numpy as np

from .._args import int_list_arg
from ..arrays.layout import empty_like
from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the views.)
OP_FAMILY = "views"


def _dims_arg(dims: tuple, fn: str, ndim: int) -> tuple[tuple, tuple]:
    """The dims as given (`int_list_arg`) and wrapped; repeated dims are refused."""
    given = int_list_arg(dims, fn, "dims")
    wrapped = tuple(_wrap_dim(d, ndim) for d in given)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return given, wrapped


# -- flip ----------------------------------------------------------------------------------


@on_arrays("flip", method=True)
def _flip(a: np.ndarray, dims: tuple) -> np.ndarray:
    """`flip` on an array: an owned copy laid out as PyTorch's flip lays it out, as
    `empty_like(a)` (a transposed input gives a transposed result)."""
    wrapped = tuple(d % a.ndim for d in dims) if a.ndim else ()
    out = empty_like(a)
    out[...] = np.flip(a, wrapped) if wrapped else a
    return out


class FlipBackward0(ArrayFormulaNode):
    """flip(dims): the gradient flipped back along the same dims."""

    tangent = Tangent("self_t.flip(dims)", linear=True)

    saves = {"dims": VALUE}
    formulas = (Formula("self", "grad.flip(dims)"),)


def flip(x: Tensor, *dims, **kwargs) -> Tensor:
    """The elements in reverse order along each of `dims` (a copy; `x.flip(0, 1)`,
    `flip(x, (0, 1))` or `flip(x, dims=(0, 1))`)."""
    if "dims" in kwargs and not dims:
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
    given, wrapped = _dims_arg(dims, "flip", x._data.ndim)
    out = Tensor._make(_flip(x._data, wrapped))
    node = record(FlipBackward0, out, x)
    if node is not None:
        node._saved["dims"] = tuple(u64(d) for d in given)
    return out


def fliplr(x: Tensor) -> Tensor:
    """Flip the columns (dim 1; at least 2-D, PyTorch's `flip(1)`)."""
    if x._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(x, 1)


def flipud(x: Tensor) -> Tensor:
    """Flip the rows (dim 0; at least 1-D, PyTorch's `flip(0)`)."""
    if x._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(x, 0)


# -- roll ----------------------------------------------------------------------------------


class RollBackward0(ArrayFormulaNode):
    """roll(shifts, dims): the gradient rolled back by the opposite shifts."""

    tangent = Tangent("self_t.roll(shifts, dims)", linear=True)

    saves = {"dims": VALUE, "shifts": VALUE}
    formulas = (Formula("self", "grad.roll(reverse_integers(shifts), dims)"),)


@helper
def reverse_integers(shifts: tuple) -> tuple:
    """The shifts that undo `shifts` (PyTorch's `reverse_integers`)."""
    return tuple(-s for s in shifts)


@on_arrays("reverse_integers")
def _reverse_integers(shifts: tuple) -> tuple:
    return tuple(-s for s in shifts)


def _rolled(a: np.ndarray, shifts: tuple, dims: tuple) -> np.ndarray:
    if not dims:  # (the flattened elements rolled, the shape kept)
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return np.roll(a, shifts, tuple(d % a.ndim for d in dims))


@on_arrays("roll", method=True)
def _roll(a: np.ndarray, shifts: tuple, dims: tuple) -> np.ndarray:
    """`roll` on an array: an owned copy."""
    return np.array(_rolled(a, shifts, dims), order="C")


def roll(x: Tensor, shifts, dims=()) -> Tensor:
    """The elements shifted along `dims` by `shifts`, wrapping round (with no dims,
    over the flattened tensor, the shape kept)."""
    shifts = int_list_arg((shifts,), "roll", "shifts")
    dims = int_list_arg((dims,), "roll", "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if x._data.size or len(dims) > 1:  # (PyTorch copies an empty tensor unchecked)
        for d in dims:
            if x._data.ndim == 0:
                raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
            _wrap_dim(d, x._data.ndim)
    out = Tensor._make(np.array(_rolled(x._data, shifts, dims), order="C"))
    node = record(RollBackward0, out, x)
    if node is not None:
        node._saved.update(dims=tuple(u64(d) for d in dims), shifts=shifts)
    return out


# -- rot90 ---------------------------------------------------------------------------------


@on_arrays("rot90", method=True)
def _rot90(a: np.ndarray, k: int, dims: tuple) -> np.ndarray:
    """`rot90` on an array, laid out as PyTorch's: a quarter turn is a flipped copy
    seen transposed (PyTorch's flip then transpose_), a half turn a flipped copy."""
    d0, d1 = dims[0] % a.ndim, dims[1] % a.ndim
    k %= 4
    if k == 1:
        return np.swapaxes(_flip(a, (d1,)), d0, d1)
    if k == 3:
        return np.swapaxes(_flip(a, (d0,)), d0, d1)
    return _flip(a, (d0, d1)) if k == 2 else np.array(a, order="C")


class Rot90Backward0(ArrayFormulaNode):
    """rot90(k, dims): the gradient turned back, -k quarter turns."""

    tangent = Tangent("self_t.rot90(k, dims)", linear=True)

    saves = {"dims": VALUE, "k": VALUE}
    # (PyTorch's `grad.rot90(-k, dims)`; formulas compiled for arrays take no operators)
    formulas = (Formula("self", "grad.rot90(opposite_turns(k), dims)"),)


@helper
def opposite_turns(k: int) -> int:
    """The quarter turns that undo `k` of them."""
    return -k


@on_arrays("opposite_turns")
def _opposite_turns(k: int) -> int:
    return -k


def rot90(x: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees `k` times in the plane of `dims`, from the first dim
    towards the second."""
    dims = int_list_arg((dims,), "rot90", "dims")
    ndim = x._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    _wrap_dim(dims[0], ndim), _wrap_dim(dims[1], ndim)
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    out = Tensor._make(_rot90(x._data, k, dims))
    node = record(Rot90Backward0, out, x)
    if node is not None:
        node._saved.update(dims=tuple(u64(d) for d in dims), k=u64(k))
    return out


declare("flip", nodes=(FlipBackward0,), function=flip, method=True)
declare("fliplr", function=fliplr, method=True)
declare("flipud", function=flipud, method=True)
declare("roll", nodes=(RollBackward0,), function=roll, method=True)
declare("rot90", nodes=(Rot90Backward0,), function=rot90, method=True)

"""cat and stack: many tensors joined into one.

Both take a list of tensors, so their node has one input per tensor, and one formula
(for `tensors`, as PyTorch's `derivatives.yaml` writes it) gives the list of every
input's gradient: each its own piece of the output's gradient, a `narrow` of it for
`cat`, one `select`-slice for `stack`. Neither needs any tensor saved, only the dim
(and, for `cat`, each input's size along it, which PyTorch keeps but does not show).
"""

from __future__ import annotations

import numpy as np

from .._args import type_name
from .._dtype import result_type
from ..arrays.scalars import u64
from ..autograd.graph import VALUE, Node, bump_version
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import Tangent, dense


class CatBackward0(ArrayFormulaNode):
    """cat(tensors, dim): each input's gradient is its slice of the gradient along
    `dim` (a view of it, `grad.narrow(dim, start, size)`); a legacy empty 1-D input
    gets zeros. One formula gives the list of them all."""

    tangent = Tangent("cat_jvp(tensors_t, tensors_p, dim)")
    saves = {"dim": VALUE}
    # (each input's size along `dim`, which PyTorch keeps too but does not show)
    unshown = ("sizes",)
    formulas = (Formula("tensors", "cat_tensors_backward(grad, sizes, dim)"),)


class StackBackward0(ArrayFormulaNode):
    """stack(tensors, dim): each input's gradient is one slice of the gradient along
    the new dim (`grad.select(dim, i)`); one formula gives the list of them all."""

    tangent = Tangent("stack_jvp(tensors_t, tensors_p, dim)")
    saves = {"dim": VALUE}
    formulas = (Formula("tensors", "stack_tensors_backward(grad, dim)"),)


def _empty_grad(dtype: np.dtype) -> np.ndarray:
    """The gradient of a skipped empty input: no elements (PyTorch's reaches the
    leaf's `.grad` at version 1, as a copy would)."""
    out = np.zeros((0,), dtype)
    bump_version(out)
    return out


def cat_tensors_backward(grad: Tensor, sizes: tuple, dim: int) -> list:
    """PyTorch's `cat_tensors_backward`: `grad.narrow(dim, start, size)` per input
    (a skipped empty 1-D input gets zeros)."""
    out, start = [], 0
    for size in sizes:
        if size is None:
            out.append(grad.new_zeros(0))
            continue
        out.append(grad.narrow(dim, start, size))
        start += size
    return out


def stack_tensors_backward(grad: Tensor, dim: int) -> list:
    """PyTorch's `stack_tensors_backward`: `grad.select(dim, i)` for each input."""
    return [grad.select(dim, i) for i in range(grad.shape[dim])]


@on_arrays("cat_tensors_backward")
def _cat_tensors_backward_on_arrays(grad: np.ndarray, sizes: tuple, dim: int) -> list:
    """Each input's slice of `grad`, a view (zeros for a skipped empty 1-D input)."""
    before = (slice(None),) * (dim % grad.ndim)
    out, start = [], 0
    for size in sizes:
        if size is None:
            out.append(_empty_grad(grad.dtype))
            continue
        out.append(grad[before + (slice(start, start + size),)])
        start += size
    return out


@on_arrays("stack_tensors_backward")
def _stack_tensors_backward_on_arrays(grad: np.ndarray, dim: int) -> list:
    """Each input's slice of `grad` along the new dim, a view (a 0-d one too: the
    `...` keeps numpy from handing out a scalar copy)."""
    before = (slice(None),) * (dim % grad.ndim)
    return [grad[before + (i, Ellipsis)] for i in range(grad.shape[dim])]


def _tensor_list(fn: str, tensors) -> list:
    """The `tensors` argument, checked as PyTorch's parser checks a TensorList."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type_name(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(t)}")
    return list(tensors)


def _join(node_cls: type[Node], tensors: list, data: np.ndarray, dim: int,
          sizes: tuple | None = None) -> Tensor:
    out = Tensor._make(np.ascontiguousarray(data))
    node = record(node_cls, out, *tensors)
    if node is not None:
        node._saved["dim"] = u64(dim)
        if sizes is not None:
            node._saved["_sizes"] = sizes
    return out


def cat(tensors, dim: int = 0) -> Tensor:
    """The tensors joined along an existing `dim` (their other sizes must match);
    mixed dtypes are promoted as for arithmetic."""
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("minigrad.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    # PyTorch still skips 1-D tensors of size 0 (a legacy rule), whatever the others are.
    kept = [t for t in tensors if t._data.shape != (0,)]
    first = kept[0] if kept else tensors[0]
    d = _wrap_dim(dim, first._data.ndim)
    for i, t in enumerate(tensors):
        if t._data.shape == (0,) and kept:
            continue
        if t._data.ndim != first._data.ndim:
            raise RuntimeError("Tensors must have same number of dimensions: got "
                               f"{first._data.ndim} and {t._data.ndim}")
        for k, (n, m) in enumerate(zip(first._data.shape, t._data.shape)):
            if k != d and n != m:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {n} "
                    f"but got size {m} for tensor number {i} in the list.")
    dt = result_type(*tensors).np
    arrays = [t._data for t in kept] or [tensors[0]._data]
    data = np.concatenate(arrays, axis=d, dtype=dt)
    # (PyTorch's backward gives any empty 1-D input zeros, even when all are)
    sizes = tuple(None if t._data.shape == (0,) else t._data.shape[d] for t in tensors)
    return _join(CatBackward0, tensors, data, dim, sizes)


def stack(tensors, dim: int = 0) -> Tensor:
    """The tensors (all of one shape) joined along a new `dim`."""
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    d = _wrap_dim(dim, len(shape) + 1)
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            first, other = (", ".join(map(str, s)) for s in (shape, t._data.shape))
            raise RuntimeError(f"stack expects each tensor to be equal size, but got [{first}] "
                               f"at entry 0 and [{other}] at entry {i}")
    dt = result_type(*tensors).np
    data = np.stack([t._data for t in tensors], axis=d).astype(dt, copy=False)
    return _join(StackBackward0, tensors, data, dim)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("cat", nodes=(CatBackward0,), function=cat, aliases=("concat", "concatenate"))
declare("stack", nodes=(StackBackward0,), function=stack)
declare("cat_tensors_backward", aten=cat_tensors_backward)
declare("stack_tensors_backward", aten=stack_tensors_backward)


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


@helper
def cat_jvp(tensors_t: list, tensors: list, dim: int) -> Tensor:
    """cat's tangent: the inputs' tangents joined (zeros for an input without one)."""
    return cat([dense(t, p) for t, p in zip(tensors_t, tensors)], dim)


@helper
def stack_jvp(tensors_t: list, tensors: list, dim: int) -> Tensor:
    """stack's tangent: the inputs' tangents stacked (zeros for an input without one)."""
    return stack([dense(t, p) for t, p in zip(tensors_t, tensors)], dim)

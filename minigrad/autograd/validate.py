"""What the engine checks of gradients: the ones backward starts from (PyTorch's
checks of `grad_tensors`, in PyTorch's order) and the ones each formula returns
(PyTorch's `validate_outputs`: one per input, summed back down to a broadcast
input's shape and cast to its dtype).
"""

from __future__ import annotations

import numpy as np

from .._dtype import from_numpy_dtype as _dtype_of
from ..arrays.broadcasting import sum_to
from ..tensor import Tensor
from .graph import Node


def _shape_str(shape) -> str:
    return f"minigrad.Size([{', '.join(map(str, shape))}])"


def root_gradients(tensors: tuple, grad_tensors: tuple, tensor_grads: bool = False) -> list:
    """The starting gradient of each root, with PyTorch's checks in PyTorch's order:
    arrays, or tensors (`tensor_grads`, the engine's name: a `create_graph=True`
    backward, or `grad()` inside a dual level), a given gradient itself with whatever
    graph it has.

    Extra gradients are ignored (PyTorch zips the two lists). A root that does not
    require grad and has no gradient given gets None: it needs no implicit gradient,
    and the caller then reports "element i of tensors does not require grad".
    A root may be a `GradientEdge` (always wanting a gradient), of the shape and dtype
    of the gradient it takes.
    """
    if 0 < len(grad_tensors) < len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    grads = []
    for i, t in enumerate(tensors):
        g = grad_tensors[i] if grad_tensors else None
        shape, dtype = (t._data.shape, t._data.dtype) if isinstance(t, Tensor) else t._meta()
        if g is None:
            if isinstance(t, Tensor) and not t.requires_grad:
                grads.append(None)
                continue
            if shape.count(1) != len(shape):  # (some dim is not 1)
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if dtype.kind != "f":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {_dtype_of(dtype)}")
            ones = np.empty(shape, dtype)
            ones.fill(1)  # (`np.ones`, without its Python frame: every backward() makes one)
            grads.append(Tensor._make(ones) if tensor_grads else ones)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
        if g._data.shape != shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {_shape_str(g._data.shape)} "
                f"and output[{i}] has a shape of {_shape_str(shape)}."
            )
        if tensor_grads:
            grads.append(g if g._data.dtype == dtype else g.to(_dtype_of(dtype)))
        else:
            grads.append(g._data.astype(dtype, copy=False))
    return grads


def validate(node: Node, grads) -> list:
    """Shape/dtype of each gradient must match the input it is for; broadcasting is
    undone by summing (PyTorch's `validate_outputs`). Gradients for inputs that
    need none are dropped."""
    meta = node._input_meta  # None where the input needs no gradient
    if len(grads) == len(meta):
        for g, m in zip(grads, meta):
            if g is not None and (m is None or g.shape != m[0] or g.dtype is not m[1]):
                break
        else:
            return grads  # the usual case: every gradient is what its input expects
    return _conform_all(node, grads)


def _check_count(node: Node, grads) -> tuple:
    """PyTorch's error for a formula that returned too few or too many gradients;
    the node's edges otherwise."""
    next_functions = node.next_functions
    if len(grads) != len(next_functions):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{len(next_functions)}, got {len(grads)})"
        )
    return next_functions


def _conform_all(node: Node, grads) -> list:
    """`validate` for gradients that need work (or an error)."""
    next_functions = _check_count(node, grads)
    meta = node._input_meta
    out = None  # copied only if some gradient has to change
    for i, g in enumerate(grads):
        if g is None:
            continue
        m = meta[i] if i < len(meta) else None
        if next_functions[i][0] is None:
            g = None
        elif m is None or (g.shape == m[0] and g.dtype == m[1]):
            continue  # exactly what the input expects
        else:
            g = _conform(node, i, g, m)
        if out is None:
            out = list(grads)
        out[i] = g
    return grads if out is None else out


def _conform(node: Node, i: int, g: np.ndarray, meta: tuple) -> np.ndarray:
    """Sum a broadcast gradient down to its input's shape and cast it to the input's
    dtype, or raise PyTorch's error when the shapes cannot match."""
    shape, dtype = meta
    if g.shape != shape:
        if not _expands_to(shape, g.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, g.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]"
            )
        g = sum_to(g, shape)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return g


def _expands_to(shape: tuple, target: tuple) -> bool:
    """Whether broadcasting turns `shape` into exactly `target` (so a gradient of
    `target`'s shape can be summed back down to `shape`)."""
    lead = len(target) - len(shape)
    if lead < 0:
        return False
    trailing = target[lead:]
    # (Equal trailing dims, a bias's gradient over a batch, is the usual case.)
    return trailing == shape or all(s == t or s == 1 for s, t in zip(shape, trailing))


def validate_recorded(node: Node, grads) -> list:
    """`validate` for gradients that are tensors (`create_graph=True`): a broadcast
    gradient is summed down (`sum_to_size`: SumBackward1, and ViewBackward0 where
    dims go) and a gradient of another dtype cast (ToCopyBackward0) with minigrad's
    own ops, so that the graph records them as PyTorch's does."""
    next_functions = _check_count(node, grads)
    meta = node._input_meta
    out = []
    for i, g in enumerate(grads):
        if g is None or next_functions[i][0] is None:
            out.append(None)
            continue
        m = meta[i] if meta is not None and i < len(meta) else None
        if m is not None:
            shape, dtype = m
            if g._data.shape != shape:
                if not _expands_to(shape, g._data.shape):
                    _conform(node, i, g._data, m)  # raises PyTorch's error
                g = g.sum_to_size(shape)  # (a method the ops attach to Tensor)
            if g._data.dtype != dtype:
                g = g.to(_dtype_of(dtype))
        out.append(g)
    return out

"""Matrix products. The arithmetic is numpy's BLAS call: for matrix products a
hand-written loop would be many times slower and teach nothing new."""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd.graph import INPUT, Node, SavedTensor
from ..tensor import Tensor, begin_inplace, finish_inplace, record
from . import views

VALUE = "value"


def _check_float(a: Tensor, b: Tensor):
    if a.dtype is not b.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_NAMES[a.dtype.name]} != {_NAMES[b.dtype.name]}"
        )
    return a.dtype


_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}


class MmBackward0(Node):
    """A @ B for matrices: grad @ B.T for A, A.T @ grad for B. Each operand is
    saved only if the other one needs a gradient."""

    saves = {
        "self": INPUT, "mat2": INPUT, "self_sym_sizes": VALUE, "self_sym_strides": VALUE,
        "mat2_sym_sizes": VALUE, "mat2_sym_strides": VALUE,
    }

    def backward(self, grad):
        ga = grad @ self.saved("mat2").T if self.needs_grad(0) else None
        gb = self.saved("self").T @ grad if self.needs_grad(1) else None
        return ga, gb


class MvBackward0(Node):
    """A @ v: outer(grad, v) for A, A.T @ grad for v."""

    saves = {"self": INPUT, "vec": INPUT}

    def backward(self, grad):
        ga = np.outer(grad, self.saved("vec")) if self.needs_grad(0) else None
        gv = self.saved("self").T @ grad if self.needs_grad(1) else None
        return ga, gv


class DotBackward0(Node):
    """u . v: grad * v for u, grad * u for v."""

    saves = {"self": INPUT, "tensor": INPUT}

    def backward(self, grad):
        gu = grad * self.saved("tensor") if self.needs_grad(0) else None
        gv = grad * self.saved("self") if self.needs_grad(1) else None
        return gu, gv


def _strides(t: Tensor) -> tuple:
    return tuple(s // t._data.itemsize for s in t._data.strides)


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x{a._data.shape[1]} "
            f"and {b._data.shape[0]}x{b._data.shape[1]})"
        )
    _check_float(a, b)
    out = Tensor._make(a._data @ b._data)
    node = record(MmBackward0, out, a, b)
    if node is not None:
        s = node._saved
        s["self_sym_sizes"], s["mat2_sym_sizes"] = a._data.shape, b._data.shape
        s["self_sym_strides"] = _strides(a) if node.needs_grad(0) else ()
        s["mat2_sym_strides"] = _strides(b) if node.needs_grad(1) else ()
        if node.needs_grad(1):
            s["self"] = SavedTensor(a)
        if node.needs_grad(0):
            s["mat2"] = SavedTensor(b)
    return out


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"{a._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a._data.shape[0]}), mat ({a._data.shape[0]}x"
            f"{a._data.shape[1]}), vec ({v._data.shape[0]})"
        )
    _check_float(a, v)
    out = Tensor._make(a._data @ v._data)
    node = record(MvBackward0, out, a, v)
    if node is not None:
        if node.needs_grad(1):
            node._saved["self"] = SavedTensor(a)
        if node.needs_grad(0):
            node._saved["vec"] = SavedTensor(v)
    return out


def dot(u: Tensor, v: Tensor) -> Tensor:
    if u._data.ndim != 1 or v._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {u._data.ndim}D and {v._data.ndim}D tensors"
        )
    if u._data.shape != v._data.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{u._data.shape[0]}] and src "
            f"[{v._data.shape[0]}] to have the same number of elements, but got "
            f"{u._data.shape[0]} and {v._data.shape[0]} elements respectively"
        )
    _check_float(u, v)
    out = Tensor._make(np.asarray(np.dot(u._data, v._data), u._data.dtype))
    node = record(DotBackward0, out, u, v)
    if node is not None:
        if node.needs_grad(1):
            node._saved["self"] = SavedTensor(u)
        if node.needs_grad(0):
            node._saved["tensor"] = SavedTensor(v)
    return out


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """`a @ b` for 1-D and 2-D operands, dispatched as PyTorch does (mm, mv, dot,
    and vector @ matrix as unsqueeze -> mm -> squeeze)."""
    if not isinstance(b, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(b).__name__}")
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        return _squeeze0_(mm(views.unsqueeze(a, 0), b))
    if da == 2 and db == 2:
        return mm(a, b)
    raise NotImplementedError("minigrad supports matmul of 1-D and 2-D tensors only")


def _squeeze0_(x: Tensor) -> Tensor:
    """`x.squeeze_(0)` on mm's fresh result, as PyTorch finishes vector @ matrix:
    in place, so the result is no view, is at version 1 and has SqueezeBackward4."""
    node = begin_inplace(views.SqueezeBackward4, x)
    shape = x._data.shape
    x._data = x._data.reshape(shape[1:])
    finish_inplace(x, node)
    if node is not None:
        node._saved.update({"dim": 0, "self_sym_sizes": shape})
    return x


_ = _dtype

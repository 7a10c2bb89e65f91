"""Whole-tensor copies, conversions, and the in-place ops that write a whole tensor.

`clone`, `contiguous` and a dtype change (`to_dtype`: `x.to(dtype)`, `x.float()`,
...) make new memory with a node that hands the gradient straight back (cast to the
input's dtype). `copy_`, `fill_`, `zero_` (and the random fills `uniform_`,
`normal_`) overwrite a tensor in place: its version goes up, and a view's base gets a
new history (see `autograd/inplace.py`).
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _args, _device, _dtype, _memory_format
from .._args import fill_number
from .._creation import ones, tensor, zeros
from .._device import device
from .._random import normal_, uniform_
from ..arrays.broadcasting import check_inplace_shape
from ..arrays.layout import (
    channels_last_strides,
    copy_in_order,
    copy_like,
    element_strides,
    is_efficient_zeros,
)
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import Tensor, as_tensor_arg
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula
from .tangent_formulas import Tangent


class CloneBackward0(ArrayFormulaNode):
    """clone(): the gradient passes unchanged."""

    tangent = Tangent("self_t.clone()", linear=True)

    formulas = (Formula("self", "grad"),)


def clone(x: Tensor, row_major: bool = False, *,
          memory_format: _memory_format.memory_format = _memory_format.preserve_format
          ) -> Tensor:
    """A copy with its own memory and version counter, still in the graph. Laid out
    as x is (PyTorch's `preserve_format`: a transposed tensor's clone is transposed
    too), or row-major if asked (`row_major`, or `memory_format=contiguous_format`)."""
    if memory_format is not _memory_format.preserve_format:
        row_major = _memory_format.row_major("clone", memory_format) or row_major
    data = x._data
    out = Tensor._make(np.array(data, copy=True, order="C") if row_major
                       else copy_like(data, data))
    record(CloneBackward0, out, x)
    return out


def contiguous(x: Tensor, *,
               memory_format: _memory_format.memory_format = _memory_format.contiguous_format
               ) -> Tensor:
    """`x` itself where it is row-major (so is PyTorch's efficient zero tensor, which
    has no memory), else a row-major copy. (`memory_format`: contiguous_format, the
    one format PyTorch's contiguous takes that minigrad has.)"""
    if memory_format is not _memory_format.contiguous_format:
        _memory_format.row_major("contiguous", memory_format, optional=False)  # (TypeError)
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    data = x._data
    return x if data.flags.c_contiguous or is_efficient_zeros(data) else \
        clone(x, row_major=True)


class CopyBackwards(ArrayFormulaNode):
    """self.copy_(src): self's old values are gone (zero gradient); src gets the
    gradient, summed to its shape."""

    tangent = Tangent("zeros_like(self_p) + src_t")

    _display_name = "minigrad::autograd::CopyBackwards"
    # (src's gradient is summed to its shape and cast to its dtype by the engine)
    formulas = (Formula("self", "zeros_like(grad)"), Formula("src", "grad"))


def copy_(x: Tensor, src, _stretched: bool = False) -> Tensor:
    """Overwrite x's values with src's (broadcast), in place. (`_stretched`: the
    caller, an assignment, stretched src to x's shape first, as PyTorch's does.)"""
    src = as_tensor_arg(src)
    if not isinstance(src, Tensor):
        src = Tensor._make(np.array(src, x._data.dtype))
    check_inplace_shape(x._data.shape, src._data.shape)
    if not x.dtype.is_floating_point:
        # An integer tensor cannot carry a gradient: PyTorch records nothing (and
        # checks nothing about grad) whatever src is.
        src = src.detach()
    stretched = _stretched and src._data.shape != x._data.shape
    node = begin_inplace(CopyBackwards, x, src, overlap_matters=not stretched)
    copy_in_order(x._data, src._data)
    finish_inplace(x, node)
    return x


class FillBackward2(ArrayFormulaNode):
    """fill_(number): every old value is overwritten, so the gradient is zero."""

    tangent = Tangent("zeros_like(self_p)", inputs=("self",))
    formulas = (Formula("self", "zeros_like(grad)"),)


class FillBackward3(ArrayFormulaNode):
    """fill_(0-d tensor): zero for self; the value gets the sum of the gradient."""

    tangent = Tangent("zeros_like(self_p) + value_t", inputs=("self", "value"))
    formulas = (Formula("self", "zeros_like(grad)"), Formula("value", "grad.sum()"))


class ZeroBackward0(ArrayFormulaNode):
    """zero_(): every old value is overwritten, so the gradient is zero."""

    tangent = Tangent("zeros_like(self_p)", inputs=("self",), linear=True)
    formulas = (Formula("self", "zeros_like(grad)"),)


def fill_(x: Tensor, value) -> Tensor:
    value = fill_number(x, value)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        node = begin_inplace(FillBackward3, x, value, overlap_matters=False)
        x._data[...] = value._data
    else:
        node = begin_inplace(FillBackward2, x)
        x._data[...] = value
    finish_inplace(x, node)
    return x


def zero_(x: Tensor) -> Tensor:
    """Fill `x` with zeros, in place (`torch.zero_(x)`, `x.zero_()`)."""
    node = begin_inplace(ZeroBackward0, x)
    x._data[...] = 0
    finish_inplace(x, node)
    return x


def to_dtype(x: Tensor, dt, copy: bool = False, row_major: bool = False) -> Tensor:
    """A copy in another dtype (the same tensor if the dtype already matches, unless
    `copy`), laid out as clone lays it out, or row-major (`row_major`)."""
    dt = _dtype.to_dtype(dt)
    if dt is x.dtype and not copy:
        return x
    # (PyTorch converts nan, inf and out-of-range values silently)
    data = x._data
    with np.errstate(over="ignore", invalid="ignore"):
        out = Tensor._make(np.array(data, dt.np, order="C") if row_major else
                           data.astype(dt.np) if data.flags.c_contiguous and 1 not in data.shape
                           else copy_like(data, data, dt.np))
    if dt.is_floating_point:
        node = record(ToCopyBackward0, out, x)
        if node is not None:
            node._input_meta = ((x._data.shape, x._data.dtype),)
    return out


class ToCopyBackward0(ArrayFormulaNode):
    """A dtype conversion: the gradient converted back (by the engine, which casts a
    gradient to its input's dtype)."""

    tangent = Tangent("self_t.to(result.dtype)", linear=True)

    formulas = (Formula("self", "grad"),)


def detach(x: Tensor) -> Tensor:
    """`minigrad.detach(x)`: `x.detach()`."""
    return x.detach()


def cpu(self: Tensor, memory_format=None) -> Tensor:
    """`x.cpu()`: x itself, already on the only device minigrad has."""
    return self


def cuda(self: Tensor, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
    """`x.cuda()`: refused as a CPU build of PyTorch refuses it (minigrad has no GPU)."""
    _device.check("cuda" if device is None else device)
    return self


# (`float` and `bool` name methods below; these are Python's types.)
_PYTHON_TYPES = (builtins.float, builtins.int, builtins.bool)


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """`to(dtype)` converts; `to("cpu")` is a no-op; any other device is refused.
    `copy=True` copies even then, laid out by `memory_format` (as clone)."""
    target = kwargs.get("dtype")
    if (target is not None and not isinstance(target, _dtype.dtype)) or not (
            kwargs.keys() <= _TO_KEYWORDS):
        raise _args.combination_error("to", args, kwargs, _TO_HEADS, tail=False)
    flags = []  # (non_blocking, copy: the bools after the device, dtype or tensor)
    for a in args:
        if isinstance(a, builtins.bool):
            flags.append(a)
        elif isinstance(a, _dtype.dtype):
            target = a
        elif isinstance(a, Tensor):  # `to(other)`: other's dtype (and device: the CPU)
            target = a.dtype
        elif a in _PYTHON_TYPES:  # `float` means float64, as in PyTorch
            target = _dtype.to_dtype(a)
        elif isinstance(a, (str, int, device)):
            _check_device(a)
    where = kwargs.get("device")
    if where is not None:
        _check_device(where)
    if len(flags) > 1 and "copy" in kwargs:  # (given twice)
        if len(args) == 4:
            raise TypeError("to() got multiple values for argument 'copy'")
        raise _args.combination_error("to", args, kwargs, _TO_HEADS, tail=False)
    copy = kwargs.get("copy", flags[1] if len(flags) > 1 else False)
    memory_format = kwargs.get("memory_format")
    row_major = memory_format is not None and _memory_format.row_major("to", memory_format)
    if row_major and self._data.ndim == 4 and not self._data.flags.c_contiguous and \
            element_strides(self._data) == channels_last_strides(self._data.shape):
        copy = True  # (a channels-last tensor asked for contiguous_format: PyTorch copies)
    if target is None and not copy:
        return self
    return to_dtype(self, self.dtype if target is None else target, copy, row_major)


_TO_KEYWORDS = {"device", "dtype", "non_blocking", "copy", "memory_format"}
_TO_TAIL = ("bool non_blocking = False, bool copy = False, *, "
            "minigrad.memory_format memory_format = None")
_TO_HEADS = [f"minigrad.device device = None, minigrad.dtype dtype = None, {_TO_TAIL}",
             f"minigrad.dtype dtype, {_TO_TAIL}", f"Tensor tensor, {_TO_TAIL}"]
_check_device = _device.check


def type_(self: Tensor, dtype=None):
    """`x.type()`: its type's name; `x.type(dtype)`: `x.to(dtype)`."""
    if dtype is None:
        return f"minigrad.{self.dtype.tensor_type}"
    return to_dtype(self, dtype)


def _converter(dt: _dtype.dtype):
    """`x.float()`, `x.long()`, ...: `x.to(dt)`, with `to`'s memory_format."""
    def convert(self: Tensor, memory_format=_memory_format.preserve_format) -> Tensor:
        if memory_format is _memory_format.preserve_format:
            return to_dtype(self, dt)
        return to(self, dt, memory_format=memory_format)
    return convert


# -- declarations: each op's public names (see `declaration.py`) ----------------------------


declare("clone", nodes=(CloneBackward0,), function=clone, method=True)
declare("contiguous", method=contiguous)
declare("copy_", nodes=(CopyBackwards,), method=copy_)
declare("fill_", nodes=(FillBackward2, FillBackward3), method=fill_)
declare("zero_", nodes=(ZeroBackward0,), function=zero_, method=zero_)
declare("uniform_", method=uniform_)
declare("normal_", method=normal_)
declare("detach", function=detach)
declare("to", nodes=(ToCopyBackward0,), method=to)
declare("type", method=type_)
declare("float", method=_converter(_dtype.float32))
declare("double", method=_converter(_dtype.float64))
declare("long", method=_converter(_dtype.int64))
declare("bool", method=_converter(_dtype.bool_))
declare("cpu", method=cpu)
declare("cuda", method=cuda)
# (factories: a new tensor of this one's dtype)
declare("new_zeros",
        method=lambda self, *s, **kw: zeros(*s, **{"dtype": self.dtype, **kw}))
declare("new_ones",
        method=lambda self, *s, **kw: ones(*s, **{"dtype": self.dtype, **kw}))
declare("new_tensor",
        method=lambda self, data, **kw: tensor(data, **{"dtype": self.dtype, **kw}))

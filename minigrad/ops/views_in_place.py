"""In-place view ops: `t_()`, `transpose_()`, `unsqueeze_()`, `squeeze_()`.

The tensor itself takes the new shape and strides; its version goes up and its
history grows by one node, but nothing is written, so its base gets no CopySlices.
"""

from __future__ import annotations

import numpy as np

from ..arrays.scalars import u64
from ..autograd.inplace import check_inplace
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .views import (
    SqueezeBackward1,
    SqueezeBackward4,
    TBackward0,
    TransposeBackward0,
    UnsqueezeBackward0,
    _squeeze_dim,
    _squeezed_dims,
    _UnsqueezeBack,
    squeezed,
    unsqueezed,
)

# (In lesson 4's table these nodes stand with the other views.)
OP_FAMILY = "views"


class TBackward1(TBackward0):
    __doc__ = TBackward0.__doc__


class TransposeBackward1(TransposeBackward0):
    __doc__ = TransposeBackward0.__doc__


class UnsqueezeBackward1(UnsqueezeBackward0):
    __doc__ = UnsqueezeBackward0.__doc__


class SqueezeBackward3(_UnsqueezeBack):
    __doc__ = _UnsqueezeBack.__doc__


class SqueezeBackward5(SqueezeBackward1):
    __doc__ = _UnsqueezeBack.__doc__


def _view_in_place(x: Tensor, data: np.ndarray, node_cls, **saved) -> Tensor:
    """`x.t_()`, `x.unsqueeze_(0)`, ...: `x` itself now sees its memory through the
    new shape and strides (`data`). Like every in-place op this bumps its version and
    records `node_cls` as its new producer, after its old one. On a view, unlike an
    in-place op that writes, nothing changes for the base (no CopySlices): only the
    view's own history grows."""
    check_inplace(x)
    node = record(node_cls, None, x)  # (before the change: x's current grad_fn)
    x._data = data
    x._version_counter.value += 1
    if node is not None:
        node._saved.update(saved)
        # (A retained gradient stays with the old node, as in PyTorch, which moves it
        # only for in-place ops that write.)
        x._grad_fn, x._output_nr = node, 0
    if x._view is not None:
        x._view.attr_version = x._version_counter.value  # (its new grad_fn is current)
    return x


def t_(x: Tensor) -> Tensor:
    """`t()` in place."""
    if x._data.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {x._data.ndim}D"
        )
    return _view_in_place(x, x._data.T, TBackward1)


def transpose_(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """`transpose(dim0, dim1)` in place (also `swapdims_`, `swapaxes_`)."""
    d0 = _wrap_dim(dim0, x._data.ndim)
    d1 = _wrap_dim(dim1, x._data.ndim)
    data = np.swapaxes(x._data, d0, d1) if x._data.ndim else x._data.view()
    return _view_in_place(x, data, TransposeBackward1, dim0=u64(dim0), dim1=u64(dim1),
                          _dims=(d0, d1))


def unsqueeze_(x: Tensor, dim: int) -> Tensor:
    """`unsqueeze(dim)` in place."""
    d = _wrap_dim(dim, x._data.ndim + 1)
    return _view_in_place(x, unsqueezed(x._data, d), UnsqueezeBackward1, dim=u64(dim),
                          _dim=d)


def squeeze_(x: Tensor, *args, dim=None) -> Tensor:
    """`squeeze(...)` in place."""
    if args or dim is not None:
        dim = _squeeze_dim(args, dim, "squeeze_")
    shape = x._data.shape
    data = squeezed(x._data, _squeezed_dims(shape, dim))
    if dim is None:
        return _view_in_place(x, data, SqueezeBackward3, self_sym_sizes=shape)
    node_cls = SqueezeBackward5 if isinstance(dim, (tuple, list)) else SqueezeBackward4
    saved_dim = tuple(map(u64, dim)) if node_cls is SqueezeBackward5 else u64(dim)
    return _view_in_place(x, data, node_cls, dim=saved_dim, self_sym_sizes=shape)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("t_", nodes=(TBackward1,), method=t_)
declare("transpose_", nodes=(TransposeBackward1,), method=transpose_,
        aliases=("swapaxes_", "swapdims_"))
declare("unsqueeze_", nodes=(UnsqueezeBackward1,), method=unsqueeze_)
declare("squeeze_", nodes=(SqueezeBackward3, SqueezeBackward4, SqueezeBackward5),
        method=squeeze_)

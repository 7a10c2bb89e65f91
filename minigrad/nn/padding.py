"""Padding layers: ConstantPad1d/2d/3d, ZeroPad1d/2d/3d, ReflectionPad1d/2d/3d and
ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, each `F.pad` of its input with its amounts."""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module


def _amounts(padding, n: int) -> tuple:
    """One int for every side, or the 2n amounts themselves (PyTorch's `_ntuple`)."""
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * (2 * n)


class _Pad(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _amounts(padding, self.dims)

    def forward(self, x: Tensor) -> Tensor:
        return F.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        return F.pad(x, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad):
    """Pad the last dim with `value`."""


class ConstantPad2d(_ConstantPad):
    """Pad the last 2 dims with `value`."""

    dims = 2


class ConstantPad3d(_ConstantPad):
    """Pad the last 3 dims with `value`."""

    dims = 3


class _ZeroPad(_ConstantPad):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPad):
    """Pad the last 2 dims with zeros."""

    dims = 2


class ZeroPad3d(_ZeroPad):
    """Pad the last 3 dims with zeros."""

    dims = 3


class ReflectionPad1d(_Pad):
    """Pad the last dim with its mirror image (the edge not repeated)."""

    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last 2 dims with their mirror image (the edge not repeated)."""

    dims = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pad the last 3 dims with their mirror image (the edge not repeated)."""

    dims = 3


class ReplicationPad1d(_Pad):
    """Pad the last dim by repeating its edge elements."""

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last 2 dims by repeating their edge elements."""

    dims = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pad the last 3 dims by repeating their edge elements."""

    dims = 3


class CircularPad1d(_Pad):
    """Pad the last dim with its other end (as if the row were a ring)."""

    mode = "circular"


class CircularPad2d(CircularPad1d):
    """Pad the last 2 dims with their other ends (as if each were a ring)."""

    dims = 2


class CircularPad3d(CircularPad1d):
    """Pad the last 3 dims with their other ends (as if each were a ring)."""

    dims = 3

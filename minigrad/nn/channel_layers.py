"""Layers that act on whole channels: channel-wise and alpha dropout, pixel and
channel shuffles, and Softmin (the module forms of their `nn.functional` ops)."""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .layers import Dropout, Softmax
from .module import Module


class Dropout1d(Dropout):
    """In training, zeroes whole channels of (N, C, L) input with probability `p`."""

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout1d(x, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """In training, zeroes whole channels of (N, C, H, W) input with probability `p`."""

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout2d(x, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """In training, zeroes whole channels of (N, C, D, H, W) input with probability `p`."""

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout3d(x, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """In training, dropout that keeps the mean and variance of SELU activations."""

    def forward(self, x: Tensor) -> Tensor:
        return F.alpha_dropout(x, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """In training, alpha dropout of whole channels."""

    def forward(self, x: Tensor) -> Tensor:
        return F.feature_alpha_dropout(x, self.p, self.training)


class Softmin(Softmax):
    """softmin along `dim`: softmax of the negated input."""

    def forward(self, x: Tensor) -> Tensor:
        return F.softmin(x, self.dim, _stacklevel=5)


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of `groups` groups."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        return F.channel_shuffle(x, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class GLU(Module):
    """The gated linear unit: a * sigmoid(b), for a and b the halves of the input
    along `dim`."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

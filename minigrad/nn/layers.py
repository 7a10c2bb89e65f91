"""The layers of the course's models: Linear, activations, Identity, Flatten,
Sequential, MSELoss."""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Iterator

from .. import _creation, _dtype
from ..grad_mode import no_grad
from ..ops.activations import padding_index
from ..ops.loss import legacy_reduction, mse_loss
from ..ops.unary import relu, relu_, sigmoid, tanh
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Linear(Module):
    """y = x @ weight.T + bias, initialised as PyTorch does: weight and bias from
    U(-1/sqrt(in_features), 1/sqrt(in_features)), each drawn in place (so both are
    at version 1 when the layer is built)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class ReLU(Module):
    """max(x, 0), element-wise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return relu_(x) if self.inplace else relu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), element-wise."""

    def forward(self, x: Tensor) -> Tensor:
        return tanh(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x)), element-wise."""

    def forward(self, x: Tensor) -> Tensor:
        return sigmoid(x)


class Softmax(Module):
    """softmax along `dim` (each slice sums to 1)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log_softmax along `dim`: what `NLLLoss` expects as its input."""

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.dim, _stacklevel=5)


class Dropout(Module):
    """In training, zeroes each element with probability `p` and scales the rest by
    1 / (1 - p); in eval mode, returns its input itself."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class LeakyReLU(Module):
    """x where x > 0, negative_slope * x elsewhere."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class GELU(Module):
    """x * Phi(x) (Phi the standard normal cdf), or its tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class BatchNorm1d(Module):
    """Normalises each feature (dim 1) of (N, C) or (N, C, L) input over the batch,
    then scales and shifts it (`weight`, `bias`). In training it updates the running
    statistics (buffers, in place, under no_grad) that eval mode then uses, and counts
    the batches in `num_batches_tracked` (for momentum=None: a cumulative average)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if device is not None:
            _creation.empty(0, device=device)  # (any device but the CPU is refused)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_creation.empty(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(_creation.empty(num_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 _creation.tensor(0, dtype=_dtype.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:  # (each in place: version 1, as PyTorch's)
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.dim()}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(x, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class LayerNorm(Module):
    """Normalises each sample over its trailing `normalized_shape` dims, then scales
    and shifts it elementwise (`weight`, `bias`, of that shape)."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(_creation.empty(self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: `embedding(indices)` is the rows of `weight` (num_embeddings x
    embedding_dim, drawn from N(0, 1)) named by the indices; the row `padding_idx`
    starts at zero and gets no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 padding_idx: int | None = None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_index(padding_idx, num_embeddings)
        self.weight = Parameter(_creation.empty(num_embeddings, embedding_dim, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, x: Tensor) -> Tensor:
        return F.embedding(x, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None
                       else "")


class Identity(Module):
    """Returns its input unchanged (the input itself: no node is recorded). Takes and
    ignores any arguments, as PyTorch's does, so it can stand in for another layer."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Flatten(Module):
    """Merges dims `start_dim`..`end_dim` (by default all but the batch dim) into one:
    a view when the memory allows it (ViewBackward0), as `Tensor.flatten`."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(Module):
    """Modules applied one after the other; `model[0]` is the first."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def __getitem__(self, index: int | slice) -> Module:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(OrderedDict(list(self._modules.items())[index]))
        index = operator.index(index)  # a str or float raises PyTorch's TypeError
        if not -len(items) <= index < len(items):
            raise IndexError(f"index {index} is out of range")
        return items[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, x):
        for module in self:
            x = module(x)
        return x


class MSELoss(Module):
    """The mean (or sum, or none) of squared differences between input and target."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:  # PyTorch's deprecated form
            reduction = legacy_reduction(size_average, reduce)
        self.reduction = reduction  # checked when called, as PyTorch does

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return mse_loss(input, target, reduction=self.reduction)

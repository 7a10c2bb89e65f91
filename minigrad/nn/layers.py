"""The layers of the course's models: Linear, activations, Identity, Flatten,
Sequential, MSELoss."""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Iterator

from .. import _creation
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

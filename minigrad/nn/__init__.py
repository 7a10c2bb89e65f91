"""Neural-network building blocks, as in `torch.nn`."""

from . import functional, init, utils
from .layers import (
    Flatten,
    Identity,
    Linear,
    LogSoftmax,
    MSELoss,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from .module import Module
from .parameter import Parameter

__all__ = [
    "Flatten", "Identity", "Linear", "LogSoftmax", "MSELoss", "Module", "Parameter", "ReLU",
    "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init", "utils",
]

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
from .loss import CrossEntropyLoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = [
    "CrossEntropyLoss", "Flatten", "functional", "Identity", "init", "Linear", "LogSoftmax",
    "Module", "MSELoss", "NLLLoss", "Parameter", "ReLU", "Sequential", "Sigmoid", "Softmax",
    "Tanh", "utils",
]

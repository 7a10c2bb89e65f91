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
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .parameter import Parameter

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Flatten", "functional", "HuberLoss",
    "Identity", "init", "L1Loss", "Linear", "LogSoftmax", "Module", "MSELoss", "NLLLoss",
    "Parameter", "ReLU", "Sequential", "Sigmoid", "SmoothL1Loss", "Softmax", "Tanh", "utils",
]

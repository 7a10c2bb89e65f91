"""Neural-network building blocks, as in `torch.nn`."""

from . import functional, init, utils
from .layers import Flatten, Identity, Linear, MSELoss, ReLU, Sequential, Sigmoid, Tanh
from .module import Module
from .parameter import Parameter

__all__ = [
    "Flatten", "Identity", "Linear", "MSELoss", "Module", "Parameter", "ReLU", "Sequential",
    "Sigmoid", "Tanh", "functional", "init", "utils",
]

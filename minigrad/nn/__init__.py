"""Neural-network building blocks, as in `torch.nn`."""

from . import functional, init
from .layers import Linear, MSELoss, ReLU, Sequential, Sigmoid, Tanh
from .module import Module
from .parameter import Parameter

__all__ = [
    "Linear", "MSELoss", "Module", "Parameter", "ReLU", "Sequential", "Sigmoid", "Tanh",
    "functional", "init",
]

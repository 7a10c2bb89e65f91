"""Neural-network building blocks, as in `torch.nn`."""

from . import functional, init, parallel, utils
from .activations import (
    CELU,
    ELU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LogSigmoid,
    Mish,
    ReLU6,
    SiLU,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .conv import Conv1d, Conv2d
from .layers import (
    GELU,
    BatchNorm1d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    LeakyReLU,
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
from .parallel import DataParallel
from .parameter import Parameter
from .pooling import AvgPool2d, MaxPool2d

__all__ = [
    "AvgPool2d", "BatchNorm1d", "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv2d",
    "CrossEntropyLoss", "DataParallel", "Dropout", "Embedding", "Flatten", "functional",
    "GELU", "HuberLoss", "Identity", "init", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MaxPool2d", "Module", "MSELoss", "NLLLoss", "parallel", "Parameter",
    "ReLU", "Sequential", "Sigmoid", "SmoothL1Loss", "Softmax", "Tanh", "utils",
    "Hardshrink", "Hardtanh", "ReLU6", "Softshrink", "Softsign", "Tanhshrink", "Threshold",
    "Hardsigmoid", "Hardswish", "Mish", "SiLU", "Softplus", "CELU", "ELU", "SELU",
    "LogSigmoid",
]

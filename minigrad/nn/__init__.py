"""Neural-network building blocks, as in `torch.nn`."""

from . import functional, init, parallel, utils
from .channel_layers import (
    AlphaDropout,
    ChannelShuffle,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    PixelShuffle,
    PixelUnshuffle,
    Softmin,
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
    "AlphaDropout", "AvgPool2d", "BatchNorm1d", "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv2d",
    "ChannelShuffle", "CrossEntropyLoss", "DataParallel", "Dropout", "Dropout1d", "Dropout2d",
    "Dropout3d", "Embedding", "FeatureAlphaDropout", "Flatten", "functional",
    "GELU", "HuberLoss", "Identity", "init", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax",
    "MaxPool2d", "Module", "MSELoss", "NLLLoss", "parallel", "Parameter", "PixelShuffle",
    "PixelUnshuffle", "ReLU", "Sequential", "Sigmoid", "SmoothL1Loss", "Softmax", "Softmin",
    "Tanh", "utils",
]

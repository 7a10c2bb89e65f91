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
    PReLU,
    ReLU6,
    RReLU,
    SiLU,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .channel_layers import (
    GLU,
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
from .distance import CosineSimilarity, PairwiseDistance
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
from .more_losses import (
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .parallel import DataParallel
from .parameter import Parameter
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool2d

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AlphaDropout", "AvgPool1d", "AvgPool2d",
    "BatchNorm1d", "BCELoss", "BCEWithLogitsLoss", "CELU", "ChannelShuffle",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "Conv1d", "Conv2d", "CosineEmbeddingLoss",
    "CosineSimilarity", "CrossEntropyLoss", "DataParallel", "Dropout", "Dropout1d",
    "Dropout2d", "Dropout3d", "ELU", "Embedding", "FeatureAlphaDropout", "Flatten",
    "functional", "GaussianNLLLoss", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish",
    "Hardtanh", "HingeEmbeddingLoss", "HuberLoss", "Identity", "init", "L1Loss", "LayerNorm",
    "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MarginRankingLoss", "MaxPool2d",
    "Mish", "Module", "MSELoss", "NLLLoss", "PairwiseDistance", "parallel", "Parameter",
    "PixelShuffle", "PixelUnshuffle", "PoissonNLLLoss", "PReLU", "ReflectionPad1d",
    "ReflectionPad2d", "RReLU",
    "ReflectionPad3d", "ReLU", "ReLU6", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "SELU", "Sequential", "Sigmoid", "SiLU", "SmoothL1Loss",
    "SoftMarginLoss", "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh",
    "Tanhshrink", "Threshold", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "utils",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]

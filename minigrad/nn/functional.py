"""Stateless versions of the layers: `F.linear(x, w, b)`, `F.relu(x)`, ..."""

from __future__ import annotations

import numpy as np

from .. import _generator
from .._args import is_int, type_name
from .._dtype import int64
from ..arrays.broadcasting import broadcast_shape, shape_mismatch
from ..ops import batched, linalg, views
from ..ops import softmax as _sm
from ..ops.activations import embedding, gelu, leaky_relu, leaky_relu_
from ..ops.adaptive_pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from ..ops.arithmetic import mul, mul_
from ..ops.convolution import conv1d, conv2d
from ..ops.cross_entropy import cross_entropy, nll_loss
from ..ops.distances import cosine_similarity, normalize, pairwise_distance
from ..ops.elu import celu, celu_, elu, elu_, selu, selu_
from ..ops.expand import expanded_shape
from ..ops.glu import glu
from ..ops.loss import (
    TYPE_NAMES,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from ..ops.loss_backward import log_sigmoid as logsigmoid
from ..ops.normalization import batch_norm, layer_norm
from ..ops.padding import pad
from ..ops.piecewise_activations import (
    hardshrink,
    hardtanh,
    hardtanh_,
    relu6,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from ..ops.pooling import avg_pool2d, max_pool2d, max_pool2d_with_indices
from ..ops.pooling1d import avg_pool1d, max_pool1d, max_pool1d_with_indices
from ..ops.prelu import prelu
from ..ops.public_forms import input_checked
from ..ops.rrelu import rrelu_functional as rrelu
from ..ops.shuffles import channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..ops.smooth_activations import hardsigmoid, hardswish, mish, silu, softplus
from ..ops.unary import relu as _relu
from ..ops.unary import relu_, sigmoid, tanh
from ..tensor import Tensor
from .composite_losses import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .dropout import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "alpha_dropout", "avg_pool1d",
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "celu", "celu_", "channel_shuffle", "conv1d", "conv2d", "cosine_embedding_loss",
    "cosine_similarity", "cross_entropy", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "elu", "elu_", "embedding", "feature_alpha_dropout", "gaussian_nll_loss", "gelu", "glu",
    "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
    "hinge_embedding_loss", "huber_loss", "l1_loss", "layer_norm", "leaky_relu",
    "leaky_relu_", "linear", "log_softmax", "logsigmoid", "margin_ranking_loss",
    "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "mish",
    "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance",
    "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu", "relu6", "rrelu",
    "selu", "selu_",
    "sigmoid", "silu", "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin",
    "softplus", "softshrink", "softsign", "tanh", "tanhshrink", "threshold", "threshold_",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """y = input @ weight.T + bias, as `torch.nn.functional.linear`.

    With a bias, PyTorch runs one `addmm` (bias + mat1 @ mat2) on the input flattened
    to 2-D, so its checks are addmm's: the input ("mat1") and the weight ("mat2") must
    share a dtype, then the bias ("self") too, and the bias must expand to the output's
    2-D shape. They are made here, before any work, with PyTorch's messages.
    """
    if bias is not None and input.ndim >= 1:
        weight_name = TYPE_NAMES[weight.dtype.name]
        if bias.dtype is not weight.dtype:
            raise RuntimeError("self and mat2 must have the same dtype, but got "
                               f"{TYPE_NAMES[bias.dtype.name]} and {weight_name}")
        if input.dtype is not weight.dtype:
            raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                               f"{TYPE_NAMES[input.dtype.name]} and {weight_name}")
        # (Input and weight that cannot be multiplied fail in addmm itself, first.)
        if weight.ndim == 2 and input.shape[-1] == weight.shape[1]:
            _check_bias_shape(input, weight, bias)
    if bias is None and input.ndim > 2:  # (a batched product with the weight, transposed)
        return batched.matmul(input, views.t(weight))
    return linalg.linear(input, weight, bias)


def _check_bias_shape(input: Tensor, weight: Tensor, bias: Tensor) -> None:  # noqa: A002
    """Raise PyTorch's error for a bias that does not fit the output."""
    rows = 1
    for n in input.shape[:-1]:
        rows *= n
    if bias.ndim <= 1 or input.ndim == 2:
        expanded_shape(bias, (rows, weight.shape[0]))  # raises expand's error
        return
    # PyTorch adds a 2-D (or more) bias to 1-D or batched input after the product,
    # by broadcasting, so the errors are those of that addition.
    out = (*input.shape[:-1], weight.shape[0])
    full = broadcast_shape(out, bias.shape)
    fits = bias.ndim == 2 and bias.shape[0] in (1, rows) and bias.shape[1] in (1, out[-1])
    if input.ndim == 1 and not fits:
        raise shape_mismatch(out, full)
    if not fits:
        raise NotImplementedError("minigrad's linear adds a bias to batched input only when "
                                  "it broadcasts to (rows, out_features) of the flattened input")


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`. Without a dim, PyTorch's deprecated choice
    (0 for 0-, 1- and 3-D input, else 1), with its warning."""
    if dim is None:
        dim = _sm.implicit_dim("softmax", input.ndim, _stacklevel)
    if dtype is None:
        return _sm.softmax_method(input, dim)
    return _sm.softmax_method(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype=None) -> Tensor:
    """log(softmax(x)) along `dim` (the implicit dim as for `softmax`)."""
    if dim is None:
        dim = _sm.implicit_dim("log_softmax", input.ndim, _stacklevel)
    if dtype is None:
        return _sm.log_softmax_method(input, dim)
    return _sm.log_softmax_method(input, dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype=None) -> Tensor:
    """softmax(-x) along `dim`: the smallest elements get the largest weights. As
    PyTorch's, a negation then a softmax (NegBackward0, SoftmaxBackward0)."""
    if dim is None:
        dim = _sm.implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is None:
        return _sm.softmax_method(-input, dim)
    return _sm.softmax_method(-input, dim, dtype=dtype)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Each class index of an int64 tensor as a row of zeros with a one at the index
    (a new last dim of `num_classes`, or of the largest index + 1 when -1)."""
    if not is_int(num_classes):
        raise TypeError("one_hot(): argument 'num_classes' must be int, not "
                        f"{type_name(num_classes)}")
    num_classes = int(num_classes)
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if data.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return Tensor._make(np.zeros((*data.shape, num_classes), np.int64))
    if data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(data.max()) + 1
    elif data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((data[..., None] == np.arange(num_classes)).astype(np.int64))


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0), element-wise; with `inplace=True` the input is overwritten (`relu_`)."""
    return relu_(input) if inplace else _relu(input)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` and scale the others by 1 / (1 - p)
    (training only; otherwise the input itself). As PyTorch's CPU dropout: a mask of
    PyTorch's `bernoulli_(1 - p)` numbers (the same for the same seed), divided by
    1 - p in place, then multiplied in (MulBackward0, which saves the mask)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        noise = Tensor._make(np.zeros((), input._data.dtype))
    else:
        data = np.empty_like(input._data)  # (laid out as the input, as empty_like is)
        _generator.bernoulli_into(data, 1 - p)
        data /= data.dtype.type(1 - p)
        noise = Tensor._make(data)
    return mul_(input, noise) if inplace else mul(input, noise)


# Called with something that is not a tensor (`F.relu(3)`), PyTorch's functions written
# in C name the argument ("relu(): argument 'input' (position 1) must be Tensor, not
# int"); those written in Python (softmax, the losses, ...) fail on their first look at
# it, as minigrad's do. The C ones, under the names their errors give:
_WRITTEN_IN_C = {
    "celu": "celu", "celu_": "celu_", "dropout": "dropout", "elu": "elu", "elu_": "elu_",
    "gelu": "gelu", "hardshrink": "hardshrink", "hardsigmoid": "hardsigmoid",
    "hardswish": "hardswish", "hardtanh": "hardtanh", "hardtanh_": "hardtanh_",
    "leaky_relu": "leaky_relu", "leaky_relu_": "leaky_relu_", "logsigmoid": "log_sigmoid",
    "mish": "mish", "one_hot": "one_hot", "prelu": "prelu", "relu": "relu", "relu6": "relu6",
    "rrelu": "rrelu", "selu": "selu",
    "selu_": "selu_", "silu": "silu", "softplus": "softplus", "softshrink": "softshrink",
}
for _name, _shown in _WRITTEN_IN_C.items():
    globals()[_name] = input_checked(globals()[_name], _shown)
del _name, _shown

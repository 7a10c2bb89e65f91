"""The layers and losses the random programs draw (`test_parity_random_programs.py`).

Each step is a function `(lib, a, b, opt, rng, made)`: `a` is the tensor it applies to
and `b` a second tensor of the program (a loss's target, when the shapes allow), `opt`
a number hypothesis draws that picks the step's settings (see `pick`), `rng` the
program's numpy generator (for class indices, probabilities and weights, drawn the
same under both libraries) and `made(module)` registers a module so that its
parameters' gradients and its buffers (running statistics and their `_version`s) are
compared. Modules are float64, their parameters drawn from the seeded default
generator, so both libraries start from the same values; so are dropout's masks.

A tensor of the wrong shape for a layer is first brought to one it takes (rows of
features), so that most steps run; some settings still make both libraries raise,
and those errors are compared too.
"""

from __future__ import annotations

import numpy as np
from parity_harness import seed_gradient

REDUCTIONS = ["mean", "sum", "none"]


def pick(opt: int, *choices: list) -> list:
    """One item of each list in `choices`, read from `opt` digit by digit (mixed radix),
    so every combination has its number."""
    out = []
    for options in choices:
        out.append(options[opt % len(options)])
        opt //= len(options)
    return out


def _rows(t):
    """`t` as (batch, features): a vector becomes a column, a number a 1 x 1 batch."""
    return t if t.ndim >= 2 else t.reshape(-1, 1)


def _writable(t):
    """A tensor an in-place layer may write (in place on a leaf is an error of its own,
    tested elsewhere)."""
    return t * 1 if t.is_leaf else t


def _constant(lib, values):
    return lib.tensor(values, dtype=lib.float64)


def _weighted(lib, y):
    """`y` times distinct weights (0.5, 0.75, ...). A normalization's output sums to a
    constant over what it normalizes, so the sum a program ends in would have a
    gradient of exactly zero there, which both libraries compute as a cancellation of
    terms as large as 1/std**3: last-bit noise of either sign, far above the absolute
    tolerance when the variance is small. Weighted, the gradient is not zero and that
    noise is tiny beside it."""
    return y * _constant(lib, seed_gradient(tuple(y.shape)))


# -- layers ------------------------------------------------------------------------------


def linear(lib, a, b, opt, rng, made):
    out_features, bias = pick(opt, [1, 2, 3], [True, False])
    x = a if a.ndim else a.reshape(1)
    return made(lib.nn.Linear(x.shape[-1], out_features, bias=bias, dtype=lib.float64))(x)


def dropout(lib, a, b, opt, rng, made):
    p, training, inplace = pick(opt, [0.3, 0.5, 0.0, 1.0], [True, False], [False, True])
    layer = made(lib.nn.Dropout(p, inplace=inplace)).train(training)
    return layer(_writable(a) if inplace else a)


def batch_norm(lib, a, b, opt, rng, made):
    """Training updates the running statistics in place (under no_grad: their versions
    count the updates); "train, eval" then normalizes with what it collected."""
    mode, momentum, affine, track = pick(opt, ["train", "eval", "train, eval"], [0.1, None],
                                         [True, False], [True, False])
    x = a if a.ndim == 3 else _rows(a)
    bn = made(lib.nn.BatchNorm1d(x.shape[1], momentum=momentum, affine=affine,
                                 track_running_stats=track, dtype=lib.float64))
    if mode == "eval":
        return bn.eval()(x)
    y = _weighted(lib, bn(x))
    if mode == "train, eval":
        y = y + bn.eval()(x * 2)
    return y


def layer_norm(lib, a, b, opt, rng, made):
    dims, affine, bias = pick(opt, [1, 2], [True, False], [True, False])
    shape = tuple(a.shape)[-dims:]
    return _weighted(lib, made(lib.nn.LayerNorm(shape, elementwise_affine=affine, bias=bias,
                                                dtype=lib.float64))(a))


def embedding(lib, a, b, opt, rng, made):
    """A module's own table, or the program's tensor as the table (its gradient is
    the index backward's)."""
    own, padding, index_shape = pick(opt, [True, False], [None, 0, -1], [(3,), (2, 2), ()])
    if own:
        table = made(lib.nn.Embedding(4, 2, padding_idx=padding, dtype=lib.float64))
        return table(lib.tensor(rng.integers(0, 4, index_shape)))
    weight = _rows(a) if a.ndim < 2 else a.reshape(-1, a.shape[-1])
    index = lib.tensor(rng.integers(0, weight.shape[0], index_shape))
    return lib.nn.functional.embedding(index, weight, padding_idx=padding)


def leaky_relu(lib, a, b, opt, rng, made):
    # (in place with a negative slope: PyTorch refuses its backward)
    slope, inplace = pick(opt, [0.01, 0.2, -0.5], [False, True])
    layer = made(lib.nn.LeakyReLU(slope, inplace=inplace))
    return layer(_writable(a) if inplace else a)


def gelu(lib, a, b, opt, rng, made):
    (approximate,) = pick(opt, ["none", "tanh"])
    return made(lib.nn.GELU(approximate=approximate))(a)


def softmax(lib, a, b, opt, rng, made):
    # (dim None: the implicit-dim warning)
    log, dim = pick(opt, [False, True], [-1, 0, None])
    return made((lib.nn.LogSoftmax if log else lib.nn.Softmax)(dim))(a)


def flatten(lib, a, b, opt, rng, made):
    (start,) = pick(opt, [1, 0])
    return made(lib.nn.Flatten(start))(a)


def identity(lib, a, b, opt, rng, made):
    return made(lib.nn.Identity())(a)


# -- convolution and pooling -------------------------------------------------------------
# The program's tensor as planes: (batch, channels, *spatial), spatial dims from its own
# last dims, so the settings drawn below fit it sometimes and not always (a kernel
# larger than the padded input, padding='same' with a stride, a pad more than half the
# kernel: both libraries raise, and the errors are compared).


def _planes(t, dims: int, channels_first: bool):
    """`t` as (1, C, *spatial) with `dims` spatial dims; `channels_first` takes C from
    t's first dim (else C is 1)."""
    shape = tuple(t.shape) or (1,)
    if channels_first and len(shape) > 1:
        c, rest = shape[0], shape[1:]
    else:
        c, rest = 1, shape
    if len(rest) < dims:
        rest = (1,) * (dims - len(rest)) + rest
    fold = len(rest) - dims + 1  # (extra leading dims fold into the first spatial one)
    spatial = (int(np.prod(rest[:fold])),) + rest[fold:]
    return t.reshape(1, c, *spatial)


def _conv(dims: int):
    """conv1d / conv2d as the functional op (its weight a constant scaled by another
    tensor of the program, so the weight has a gradient path) or as the nn module."""
    def conv(lib, a, b, opt, rng, made):
        (kernel, stride, padding, dilation, grouped, bias, channels_first,
         as_module) = pick(opt, [1, 2, 3], [1, 2], [0, 1, "same", "valid"], [1, 2],
                           [False, True], [True, False], [True, False], [False, True])
        x = _planes(a, dims, channels_first)
        c = x.shape[1]
        groups = c if grouped else 1
        out = 2 * groups
        if as_module:
            name = "Conv1d" if dims == 1 else "Conv2d"
            layer = made(getattr(lib.nn, name)(c, out, kernel, stride, padding, dilation,
                                               groups, bias, dtype=lib.float64))
            return layer(x)
        weight = _constant(lib, rng.uniform(-1, 1, (out, c // groups) + (kernel,) * dims))
        weight = weight * b.mean()
        bias_t = _constant(lib, rng.uniform(-1, 1, out)) if bias else None
        fn = lib.nn.functional.conv1d if dims == 1 else lib.nn.functional.conv2d
        return fn(x, weight, bias_t, stride, padding, dilation, groups)
    conv.__name__ = f"conv{dims}d"
    return conv


def max_pool2d(lib, a, b, opt, rng, made):
    kernel, stride, padding, dilation, ceil, batched, as_module = pick(
        opt, [2, 1, 3, (1, 2)], [None, 1, 2], [0, 1], [1, 2], [False, True], [True, False],
        [False, True])
    x = _planes(a, 2, True)
    x = x if batched else x[0]
    if as_module:
        return made(lib.nn.MaxPool2d(kernel, stride, padding, dilation, ceil_mode=ceil))(x)
    return lib.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=ceil)


def avg_pool2d(lib, a, b, opt, rng, made):
    kernel, stride, padding, ceil, count_pad, divisor, as_module = pick(
        opt, [2, 1, 3, (1, 2)], [None, 1, 2], [0, 1], [False, True], [True, False],
        [None, 3], [False, True])
    x = _planes(a, 2, True)
    if as_module:
        return made(lib.nn.AvgPool2d(kernel, stride, padding, ceil, count_pad, divisor))(x)
    return lib.nn.functional.avg_pool2d(x, kernel, stride, padding, ceil, count_pad, divisor)


def cnn(lib, a, b, opt, rng, made):
    """A small CNN: Conv2d, ReLU, MaxPool2d (or AvgPool2d), Flatten, Linear."""
    channels, kernel, padding, max_pool = pick(opt, [1, 2], [1, 2], [0, 1], [True, False])
    x = _planes(a, 2, False)
    h = made(lib.nn.Conv2d(1, channels, kernel, padding=padding, dtype=lib.float64))(x)
    h = made((lib.nn.MaxPool2d if max_pool else lib.nn.AvgPool2d)(1 if padding else 2,
                                                                    stride=1))(h.relu())
    h = made(lib.nn.Flatten())(h)
    return made(lib.nn.Linear(h.shape[-1], 2, dtype=lib.float64))(h)


# -- the newer nn.functional ops: padding, channel-wise dropout, glu, distances, ... -------


def pad(lib, a, b, opt, rng, made):
    """Padding of the last dim (or two): constant (cropping where negative), reflect,
    replicate; a layer too small for the amounts makes both libraries raise."""
    mode, amounts, as_module = pick(opt, ["constant", "reflect", "replicate"],
                                    [(1, 2), (0, 1, 1, 0), (-1, 1), (2, 0)], [False, True])
    x = _rows(a)
    if as_module and mode == "reflect":
        layer = (lib.nn.ReflectionPad1d if len(amounts) == 2 else lib.nn.ReflectionPad2d)
        return made(layer(amounts))(x)
    return lib.nn.functional.pad(x, amounts, mode)


def channel_dropout(lib, a, b, opt, rng, made):
    kind, p, training = pick(opt, ["Dropout1d", "Dropout2d", "AlphaDropout",
                                   "FeatureAlphaDropout"], [0.3, 0.5, 1.0], [True, False])
    x = _planes(a, 1 if kind == "Dropout1d" else 2, True)
    return made(getattr(lib.nn, kind)(p)).train(training)(x)


def glu_softmin(lib, a, b, opt, rng, made):
    glu, dim = pick(opt, [True, False], [-1, 0])
    if glu:
        return made(lib.nn.GLU(dim))(a)
    return made(lib.nn.Softmin(dim))(a)


def adaptive_pool(lib, a, b, opt, rng, made):
    size, two_dims = pick(opt, [1, 2, (2, None)], [True, False])
    if two_dims:
        return made(lib.nn.AdaptiveAvgPool2d(size))(_planes(a, 2, True))
    return lib.nn.functional.adaptive_avg_pool1d(_rows(a), size if size != (2, None) else 3)


def distance(lib, a, b, opt, rng, made):
    """A distance or similarity of two tensors of the program (or of one and a
    multiple of itself)."""
    kind, p = pick(opt, ["pairwise", "cosine", "normalize"], [2.0, 1.0, 3.0])
    other = b if tuple(b.shape) == tuple(a.shape) else a * 0.5 + 0.25
    if kind == "pairwise":
        return made(lib.nn.PairwiseDistance(p))(a, other)
    if kind == "cosine":
        return made(lib.nn.CosineSimilarity(-1))(a, other)
    return lib.nn.functional.normalize(a, p, -1)


def _signs(lib, rng, shape):
    return _constant(lib, np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0))


def margin_loss(lib, a, b, opt, rng, made):
    """The margin, embedding and likelihood losses against targets drawn with `rng` (or
    the program's second tensor as a second input)."""
    kind, reduction = pick(opt, ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
                                 "PoissonNLLLoss", "GaussianNLLLoss", "TripletMarginLoss",
                                 "CosineEmbeddingLoss"], REDUCTIONS)
    shape = tuple(a.shape)
    other = b if tuple(b.shape) == shape else a * 0.5 + 0.25
    loss = getattr(lib.nn, kind)(reduction=reduction)
    if kind == "MarginRankingLoss":
        return loss(a, other, _signs(lib, rng, shape))
    if kind in ("HingeEmbeddingLoss", "SoftMarginLoss"):
        return loss(a, _signs(lib, rng, shape))
    if kind == "PoissonNLLLoss":
        return loss(a, _constant(lib, rng.integers(0, 4, shape).astype(float)))
    if kind == "GaussianNLLLoss":
        return loss(a, other, _constant(lib, rng.uniform(0.1, 2.0, shape)))
    x = _rows(a)
    y = x * 0.5 + 0.25 if tuple(b.shape) != tuple(x.shape) else b
    if kind == "TripletMarginLoss":
        return loss(x, y, x * -1.0 + 0.5)
    return loss(x, y, _signs(lib, rng, tuple(x.shape)[:1]))


# (drawn with the convolution and pooling layers, by the programs of the newer ops)
NNFUNC_LAYERS = {f.__name__: f for f in (pad, channel_dropout, glu_softmin, adaptive_pool,
                                          distance, margin_loss)}


LAYERS = {f.__name__: f for f in (linear, dropout, batch_norm, layer_norm, embedding,
                                  leaky_relu, gelu, softmax, flatten, identity)}
# (a list of their own, drawn by the programs of the newer ops, so the programs drawn
# from LAYERS stay as they are)
CONV_LAYERS = {f.__name__: f for f in (_conv(1), _conv(2), max_pool2d, avg_pool2d, cnn)}
CONV_LAYERS.update(NNFUNC_LAYERS)


# -- losses ------------------------------------------------------------------------------
# Each is called as a function of `nn.functional` or as its `nn` module (same keywords).


def _loss(lib, functional: str, module: str, as_module: bool, x, target, **kw):
    if as_module:
        return getattr(lib.nn, module)(**kw)(x, target)
    return getattr(lib.nn.functional, functional)(x, target, **kw)


def _classes(a):
    """Logits as (batch, classes), or one sample's (classes,)."""
    return a if a.ndim in (1, 2) else a.reshape(1, -1)


def _class_weight(lib, rng, weighted: bool, n: int):
    return _constant(lib, rng.uniform(0.5, 2.0, n)) if weighted else None


def cross_entropy(lib, a, b, opt, rng, made):
    """Class indices (with ignore_index, which may be a class that occurs) or
    probabilities (the program's own softmax when the shapes match), weights and
    label smoothing."""
    probs, weighted, ignore, smoothing, reduction, as_module = pick(
        opt, [False, True], [False, True], [-100, 0], [0.0, 0.2], REDUCTIONS, [False, True])
    x = _classes(a)
    n = x.shape[-1]
    if not probs:
        target = lib.tensor(rng.integers(0, n, tuple(x.shape)[:-1]))
    elif tuple(b.shape) == tuple(x.shape):
        target = b.softmax(-1)
    else:
        target = _constant(lib, rng.dirichlet(np.ones(n), tuple(x.shape)[:-1]))
    return _loss(lib, "cross_entropy", "CrossEntropyLoss", as_module, x, target,
                 weight=_class_weight(lib, rng, weighted, n), ignore_index=ignore,
                 label_smoothing=smoothing, reduction=reduction)


def nll_loss(lib, a, b, opt, rng, made):
    log_probs, weighted, ignore, reduction, as_module = pick(
        opt, [True, False], [False, True], [-100, 0], REDUCTIONS, [False, True])
    x = _classes(a)
    x = x.log_softmax(-1) if log_probs else x
    target = lib.tensor(rng.integers(0, x.shape[-1], tuple(x.shape)[:-1]))
    return _loss(lib, "nll_loss", "NLLLoss", as_module, x, target,
                 weight=_class_weight(lib, rng, weighted, x.shape[-1]), ignore_index=ignore,
                 reduction=reduction)


def _probability_target(lib, a, b, rng):
    """The program's tensor through a sigmoid when its shape is the input's (then
    the target has a gradient too), else constant probabilities."""
    if tuple(b.shape) == tuple(a.shape):
        return b.sigmoid()
    return _constant(lib, rng.uniform(0.0, 1.0, tuple(a.shape)))


def binary_cross_entropy(lib, a, b, opt, rng, made):
    weighted, reduction, as_module = pick(opt, [False, True], REDUCTIONS, [False, True])
    weight = _constant(lib, rng.uniform(0.5, 2.0, tuple(a.shape)[-1:])) if weighted else None
    return _loss(lib, "binary_cross_entropy", "BCELoss", as_module, a.sigmoid(),
                 _probability_target(lib, a, b, rng), weight=weight, reduction=reduction)


def binary_cross_entropy_with_logits(lib, a, b, opt, rng, made):
    weighted, pos_weighted, reduction, as_module = pick(
        opt, [False, True], [True, False], REDUCTIONS, [False, True])
    last = tuple(a.shape)[-1:]
    weight = _constant(lib, rng.uniform(0.5, 2.0, last)) if weighted else None
    pos_weight = _constant(lib, rng.uniform(0.5, 3.0, last)) if pos_weighted else None
    return _loss(lib, "binary_cross_entropy_with_logits", "BCEWithLogitsLoss", as_module, a,
                 _probability_target(lib, a, b, rng), weight=weight, pos_weight=pos_weight,
                 reduction=reduction)


def _regression(functional: str, module: str, parameter: str | None, values: list):
    """A loss between two tensors of the program (a target of another shape
    broadcasts, with PyTorch's warning, or fails to)."""
    def loss(lib, a, b, opt, rng, made):
        value, reduction, as_module = pick(opt, values, REDUCTIONS, [False, True])
        kw = {parameter: value} if parameter else {}
        return _loss(lib, functional, module, as_module, a, b, reduction=reduction, **kw)
    loss.__name__ = functional
    return loss


LOSSES = {f.__name__: f for f in (
    cross_entropy, nll_loss, binary_cross_entropy, binary_cross_entropy_with_logits,
    _regression("l1_loss", "L1Loss", None, [None]),
    _regression("mse_loss", "MSELoss", None, [None]),
    _regression("smooth_l1_loss", "SmoothL1Loss", "beta", [1.0, 0.5, 0.0]),
    _regression("huber_loss", "HuberLoss", "delta", [1.0, 0.5]))}

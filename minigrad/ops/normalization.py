"""batch_norm and layer_norm: each one node (NativeBatchNormBackward0,
NativeLayerNormBackward0) with one formula for input, weight and bias together
(`input, weight, bias: native_batch_norm_backward(..., grad_input_mask)`), as
PyTorch's `derivatives.yaml` writes it for its fused kernels.

Both normalise `x` to `(x - mean) * rstd` (rstd = 1 / sqrt(var + eps), the variance
without Bessel's correction) and then scale and shift it by `weight` and `bias`.
batch_norm takes mean and variance per channel over the batch (in training) or from
its running statistics (in eval mode); layer_norm per sample, over the trailing
`normalized_shape` dims. Both save the input and the statistics they used
(`result1` the mean, `result2` the rstd), so backward need not recompute them.

A plain backward runs that formula on arrays: the backward op's array version
(`batch_norm_backward_arrays`, numpy) computes the gradients its mask asks for; a
`create_graph=True` one calls the backward op itself (`normalization_backward.py`),
which records a node of its own, so the gradients can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from .._dtype import float32
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .tangent_formulas import ZERO, dense


def _expand(v: np.ndarray | None, ndim: int) -> np.ndarray | None:
    """A per-channel vector shaped to broadcast over (N, C, ...)."""
    return None if v is None else v.reshape((1, -1) + (1,) * (ndim - 2))


# (the one op, in `normalization_backward.py`, that gives all three gradients)
_BN_BACKWARD = ("native_batch_norm_backward(grad, input, weight, running_mean, running_var, "
                "result1, result2, training, eps, grad_input_mask)")
_LN_BACKWARD = ("native_layer_norm_backward(grad, input, normalized_shape, result1, result2, "
                "weight, bias, grad_input_mask)")


class NativeBatchNormBackward0(ArrayFormulaNode):
    """batch_norm: in training, the gradient of x is
    (grad - mean(grad) - (x - mean) * rstd**2 * mean(grad * (x - mean))) * rstd * weight;
    in eval mode the statistics are constants, so it is grad * rstd * weight. weight
    gets sum(grad * (x - mean)) * rstd, bias sum(grad). Saves the INPUT, the weight,
    the running statistics and its mean and rstd (result1, result2)."""

    tangent = ("batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_t, running_mean, "
               "running_var, result1, result2, training, eps)")
    saves = {"eps": VALUE, "input": INPUT, "result1": OUTPUT, "result2": OUTPUT,
             "running_mean": INPUT, "running_var": INPUT, "training": VALUE, "weight": INPUT}
    # (the statistics, outputs 1 and 2, need no gradient: PyTorch's forward marks them
    # non-differentiable, so the formula reads them as plain tensors)
    non_differentiable = ("result1", "result2")
    formulas = (Formula("input, weight, bias", _BN_BACKWARD),)

    def _num_outputs(self) -> int:
        return 3


@on_arrays("native_batch_norm_backward")
def batch_norm_backward_arrays(grad: np.ndarray, x: np.ndarray, weight: np.ndarray | None,
                               running_mean: np.ndarray | None,
                               running_var: np.ndarray | None, save_mean: np.ndarray,
                               save_invstd: np.ndarray, training: bool, eps: float,
                               mask: tuple) -> tuple:
    """batch_norm's gradients of input, weight and bias (those `mask` asks for) as
    arrays: `native_batch_norm_backward` on arrays (the plain backward's), and the
    values of the op."""
    dims = (0,) + tuple(range(2, x.ndim))
    n = x.size // x.shape[1] if x.size else 0
    w = _expand(weight, x.ndim)
    if training:
        mean = _expand(save_mean, x.ndim)
        rstd = _expand(save_invstd, x.ndim)
    else:
        mean = _expand(running_mean, x.ndim)
        rstd = _expand(1 / np.sqrt(running_var + running_var.dtype.type(eps)), x.ndim)
    with np.errstate(all="ignore"):
        centred = x - mean
        total = grad.sum(axis=dims, keepdims=True)
        dotp = (grad * centred).sum(axis=dims, keepdims=True)
        gx = gw = gb = None
        if mask[0]:
            scale = rstd if w is None else rstd * w
            if training:
                k = dotp * rstd * rstd / n
                gx = (grad - total / n - centred * k) * scale
            else:
                gx = grad * scale
            gx = np.asarray(gx, grad.dtype)
        # (np.array copies: a gradient owning its memory, not a view of the keepdims
        # sum, is one a second stream is added into in place, bumping its version,
        # as PyTorch's)
        if mask[1]:
            gw = np.array((dotp * rstd).reshape(-1), grad.dtype)
        if mask[2]:
            gb = np.array(total.reshape(-1), grad.dtype)
    return gx, gw, gb


def _check_parameter_dtypes(x: Tensor, *params: Tensor | None) -> None:
    """PyTorch's dtype rules for a normalization's parameters. If the first one given
    has the input's dtype, every other must too. Otherwise PyTorch takes it for its
    "mixed type" kernel (a float16/bfloat16 input with float32 parameters), which needs
    float32 parameters and a half-precision input: for float32/float64 inputs that is
    always an error, one of two."""
    given = [p for p in params if p is not None]
    if not given:
        return
    if given[0].dtype is not x.dtype:
        if any(p.dtype is not float32 for p in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    for p in given:
        if p.dtype is not x.dtype:
            raise RuntimeError(f"expected scalar type {x.dtype.type_name} but found "
                               f"{p.dtype.type_name}")


def _batch_norm_of_nothing(input: Tensor, weight: Tensor | None,  # noqa: A002
                           bias: Tensor | None) -> Tensor:
    """batch_norm of an empty input, as PyTorch answers it before any other check:
    no statistics (the running ones stay as they are), and a result that still leads
    to the input and the parameters (a clone, times weight[0], plus bias[0]), so that
    backward gives them their (zero) gradients."""
    out = input.clone()
    if weight is not None:
        out = out * weight.select(0, 0)
    if bias is not None:
        out = out + bias.select(0, 0)
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of `input` by its mean and variance over the
    batch (and the length of a 3-D input) in training, or by the running statistics
    otherwise; in training the running statistics are updated in place (their
    versions do not change, as PyTorch's kernel writes them directly)."""
    x = input._data
    if training:
        size = x.shape[0] * int(np.prod(x.shape[2:])) if x.ndim else 1
        if size == 1:
            raise ValueError("Expected more than 1 value per channel when training, got "
                             f"input size {input.shape!r}")
    if x.size == 0:
        return _batch_norm_of_nothing(input, weight, bias)
    channels = x.shape[1] if x.ndim > 1 else 1
    for name, stat in (("running_mean", running_mean), ("running_var", running_var),
                       ("weight", weight), ("bias", bias)):
        if stat is not None and stat._data.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not "
                               f"{stat._data.size}")
    _check_parameter_dtypes(input, weight, bias, running_mean, running_var)
    dims = (0,) + tuple(range(2, x.ndim))
    dt = x.dtype
    empty = np.zeros((0,), dt)
    # (inf or nan in the input: nan statistics, silently, as in PyTorch)
    with np.errstate(all="ignore"):
        if training:
            wide = x.astype(np.float64)
            mean64 = wide.mean(axis=dims)
            var_sum = ((wide - _expand(mean64, x.ndim)) ** 2).sum(axis=dims)
            n = x.size // channels
            mean = mean64.astype(dt)
            rstd = (1 / np.sqrt(var_sum / n + eps)).astype(dt)
            if running_mean is not None:
                rm = running_mean._data
                rm[...] = momentum * mean64 + (1 - momentum) * rm
            if running_var is not None:
                rv = running_var._data
                rv[...] = momentum * (var_sum / (n - 1)) + (1 - momentum) * rv
            use_mean, use_rstd = mean, rstd
            result1, result2 = mean, rstd
        else:
            use_mean = running_mean._data
            use_rstd = (1 / np.sqrt(running_var._data.astype(np.float64) + eps)).astype(dt)
            result1 = result2 = empty
        alpha = use_rstd if weight is None else use_rstd * weight._data
        beta = -use_mean * alpha if bias is None else bias._data - use_mean * alpha
        out = Tensor._make(np.ascontiguousarray(x * _expand(alpha, x.ndim)
                                                + _expand(beta, x.ndim)).astype(dt, copy=False))
    node = record(NativeBatchNormBackward0, out, input, weight, bias)
    if node is not None:
        r1, r2 = Tensor._make(result1), Tensor._make(result2)
        s = node._saved
        s.update({"eps": float(eps), "input": SavedTensor(input), "training": training,
                  "result1": SavedTensor(r1, is_output=True),
                  "result2": SavedTensor(r2, is_output=True)})
        r1._output_nr, r2._output_nr = 1, 2
        s["result1"]._output_nr, s["result2"]._output_nr = 1, 2
        for name, t in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight)):
            s[name] = None if t is None else SavedTensor(t)
    return out


class NativeLayerNormBackward0(ArrayFormulaNode):
    """layer_norm over the trailing `normalized_shape` dims: for each sample,
    grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = grad * weight and
    xhat = (x - mean) * rstd; weight gets sum(grad * xhat), bias sum(grad), over the
    samples. Saves the INPUT, weight, bias and its mean and rstd."""

    tangent = ("layer_norm_jvp(input_p, input_t, weight_p, weight_t, bias_t, result1, "
               "result2, normalized_shape)")
    saves = {"bias": INPUT, "input": INPUT, "normalized_shape": VALUE, "result1": OUTPUT,
             "result2": OUTPUT, "weight": INPUT}
    non_differentiable = ("result1", "result2")  # (as batch_norm's)
    formulas = (Formula("input, weight, bias", _LN_BACKWARD),)

    def _num_outputs(self) -> int:
        return 3


@on_arrays("native_layer_norm_backward")
def layer_norm_backward_arrays(grad: np.ndarray, x: np.ndarray, normalized_shape: tuple,
                               mean: np.ndarray, rstd: np.ndarray, w: np.ndarray | None,
                               b: np.ndarray | None, mask: tuple) -> tuple:
    """layer_norm's gradients of input, weight and bias (those `mask` asks for, of
    those given) over the trailing `normalized_shape` dims, as arrays:
    `native_layer_norm_backward` on arrays (the plain backward's), and the values of
    the op."""
    mask = (mask[0], mask[1] and w is not None, mask[2] and b is not None)
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    with np.errstate(all="ignore"):
        xhat = (x - mean) * rstd
        gx = gw = gb = None
        if mask[0]:
            g = grad if w is None else grad * w
            n = int(np.prod([x.shape[a] for a in axes]))
            mg = g.sum(axis=axes, keepdims=True) / n
            mgx = (g * xhat).sum(axis=axes, keepdims=True) / n
            gx = np.asarray(rstd * (g - mg - xhat * mgx), grad.dtype)
        if mask[1]:
            gw = np.asarray((grad * xhat).sum(axis=lead), grad.dtype)
        if mask[2]:
            gb = np.asarray(grad.sum(axis=lead), grad.dtype)
    return gx, gw, gb


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample over its trailing `normalized_shape` dims, then scale by
    `weight` and shift by `bias` (both of that shape)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    x = input._data
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if x.shape[x.ndim - k:] != shape or k > x.ndim:
        expected = ", ".join(["*"] + [str(n) for n in shape])
        got = ", ".join(map(str, x.shape))
        raise RuntimeError(f"Given normalized_shape=[{', '.join(map(str, shape))}], expected "
                           f"input with shape [{expected}], but got input of size[{got}]")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.shape != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape [{', '.join(map(str, t._data.shape))}] "
                               f"and normalized_shape = [{', '.join(map(str, shape))}]")
    _check_parameter_dtypes(input, weight, bias)
    axes = tuple(range(x.ndim - k, x.ndim))
    dt = x.dtype
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):  # (inf or nan in a sample: nan, silently)
        if not np.prod(shape):  # (samples of no elements: PyTorch's mean 0, rstd nan)
            kept = x.shape[:x.ndim - k] + (1,) * k
            mean64, var = np.zeros(kept), np.full(kept, np.nan)
        else:
            mean64 = wide.mean(axis=axes, keepdims=True)
            var = ((wide - mean64) ** 2).mean(axis=axes, keepdims=True)
        if not np.isfinite(mean64).all():
            # PyTorch's running (Welford) mean turns an inf in a sample into nan
            # statistics for that sample (inf - inf on the next step)
            infinite = ~np.isfinite(wide).all(axis=axes, keepdims=True)
            mean64, var = np.where(infinite, np.nan, mean64), np.where(infinite, np.nan, var)
        mean, rstd = mean64.astype(dt), (1 / np.sqrt(var + eps)).astype(dt)
        out = (x - mean) * rstd
        if weight is not None:
            out = out * weight._data
        if bias is not None:
            out = out + bias._data
    out_t = Tensor._make(np.ascontiguousarray(out, dt))
    node = record(NativeLayerNormBackward0, out_t, input, weight, bias)
    if node is not None:
        r1, r2 = Tensor._make(mean), Tensor._make(rstd)
        s = node._saved
        s.update({"input": SavedTensor(input), "normalized_shape": shape,
                  "result1": SavedTensor(r1, is_output=True),
                  "result2": SavedTensor(r2, is_output=True)})
        s["result1"]._output_nr, s["result2"]._output_nr = 1, 2
        s["weight"] = None if weight is None else SavedTensor(weight)
        s["bias"] = None if bias is None else SavedTensor(bias)
    return out_t


# -- declarations: the nodes of nn.functional's normalizations (see `declaration.py`) ------



declare("batch_norm", nodes=(NativeBatchNormBackward0,))
declare("layer_norm", nodes=(NativeLayerNormBackward0,))


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


def _centred_tangent(input_p: Tensor, input_t: Tensor, mean_p: Tensor, invstd_p: Tensor,
                     dims: tuple, numel: int) -> Tensor:
    """The tangent of (input - mean) * invstd, the statistics those of `dims`."""
    input_t = dense(input_t, input_p)
    centred_t = input_t - input_t.mean(dims, True)
    invstd_t = -invstd_p.pow(3) * (centred_t * (input_p - mean_p)).sum(dims, True) / numel
    return centred_t * invstd_p + (input_p - mean_p) * invstd_t


@helper
def batch_norm_jvp(input_p: Tensor, input_t, weight_p, weight_t, bias_t, running_mean,
                   running_var, saved_mean: Tensor, saved_invstd: Tensor, train: bool,
                   eps: float) -> Tensor:
    """batch_norm's tangent (PyTorch's `batch_norm_jvp`): the statistics are those of
    every dim but the channels' (1) in training, constants in eval mode."""
    view = list(input_p.shape)
    dims, numel = [], 1
    for d in range(len(view)):
        if d != 1:
            numel *= view[d]
            view[d] = 1
            dims.append(d)
    if train:
        # (PyTorch's node passes no gradient to its saved statistics, outputs 1 and 2)
        mean_p, invstd_p = saved_mean.detach().view(*view), saved_invstd.detach().view(*view)
        result_t = _centred_tangent(input_p, input_t, mean_p, invstd_p, tuple(dims), numel)
    else:
        mean_p = running_mean.view(*view)
        invstd_p = 1 / (running_var.view(*view) + eps).sqrt()
        result_t = dense(input_t, input_p) * invstd_p
    return _affine(result_t, input_p, mean_p, invstd_p, weight_p, weight_t, bias_t, view)


def _affine(result_t: Tensor, input_p: Tensor, mean_p: Tensor, invstd_p: Tensor, weight_p,
            weight_t, bias_t, view) -> Tensor:
    """The tangent through `* weight + bias`, both viewed as `view`."""
    if weight_p is not None:
        result_t = result_t * weight_p.view(*view)
        if weight_t is not ZERO:
            result_t = result_t + weight_t.view(*view) * (input_p - mean_p) * invstd_p
    if bias_t is not ZERO:
        result_t = result_t + bias_t.view(*view)
    return result_t


@helper
def layer_norm_jvp(input_p: Tensor, input_t, weight_p, weight_t, bias_t,
                   saved_mean: Tensor, saved_invstd: Tensor, normalized_shape) -> Tensor:
    """layer_norm's tangent (PyTorch's `layer_norm_jvp`): the statistics are those of
    the trailing `normalized_shape` dims of each sample."""
    k, ndim = len(normalized_shape), input_p.dim()
    dims = tuple(range(ndim - k, ndim))
    numel = 1
    for d in dims:
        numel *= input_p.shape[d]
    # (PyTorch's node passes no gradient to its saved statistics, outputs 1 and 2)
    mean_p, invstd_p = saved_mean.detach(), saved_invstd.detach()
    result_t = _centred_tangent(input_p, input_t, mean_p, invstd_p, dims, numel)
    affine = [1] * (ndim - k) + list(normalized_shape)
    return _affine(result_t, input_p, mean_p, invstd_p, weight_p, weight_t, bias_t, affine)

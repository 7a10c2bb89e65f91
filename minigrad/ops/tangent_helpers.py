"""The helpers tangent formulas call: PyTorch's `*_jvp` functions (FunctionsManual.cpp)
and the like, in minigrad code, so that a tangent computed while grad mode records
has a graph of its own.

Each is registered with `formulas.helper`, in the one table backward formulas use too.
A helper receives `ZERO` for an input without a tangent.
"""

from __future__ import annotations

import numpy as np

from .._dtype import bool_, result_type
from ..grad_mode import STATE
from ..tensor import Tensor
from .activations import LeakyReluBackward1, embedding
from .formulas import BACKWARD_OPS, helper, named
from .loss import mse_loss_double_backward
from .statistics import ProdBackward0
from .tangent_formulas import ZERO, dense

# -- element-wise -------------------------------------------------------------------------


class _SavedOn:
    """What a node's numpy backward reads off the node (`saved(name)`, `_saved`), for
    running it on values a tangent formula has."""

    def __init__(self, arrays: dict, values: dict) -> None:
        self._arrays, self._saved = arrays, values

    def saved(self, name: str) -> np.ndarray:
        return self._arrays[name]


@helper
def share(wins: Tensor, self: Tensor, other: Tensor) -> Tensor:
    """maximum's and minimum's share of `self_t - other_t` in the tangent: 1 where
    self wins, 0.5 where it ties, else 0 (`where(self_p == other_p, 0.5, (self_p >
    other_p).to(result.scalar_type()))`, PyTorch's formula)."""
    return named("where")(self == other, 0.5, wins.to(result_type(self, other)))


@helper
def leaky_relu_result_backward(grad: Tensor, result: Tensor, negative_slope: float) -> Tensor:
    """`leaky_relu_backward(grad, result, negative_slope, True)` (leaky_relu_'s
    tangent), which PyTorch refuses for a negative slope, with the error of
    leaky_relu_'s own backward."""
    if negative_slope < 0:  # (the node's backward raises that error before reading)
        LeakyReluBackward1.backward(_SavedOn({}, {"negative_slope": negative_slope}), None)
    return BACKWARD_OPS["leaky_relu_backward"](grad, result, negative_slope, True)


# -- reductions ---------------------------------------------------------------------------


def sum_over(t: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """PyTorch's `t.sum(dim.value_or({}), keepdim)`: over `dims` (the wrapped dims the
    op saved, every dim when none were given)."""
    if t.dim() == 0 or not dims:
        return t.sum()
    return t.sum(tuple(dims), keepdim)


@helper
def evenly_read_jvp(fw_grad: Tensor, input: Tensor, value: Tensor) -> Tensor:  # noqa: A002
    """max()/min() of a whole tensor: the mean of the tangent over the elements equal
    to the extreme value."""
    mask = input == value
    count = mask.sum()
    return (mask * (fw_grad / count)).sum()


@helper
def gather_with_keepdimed_indices(input: Tensor, dims: tuple, indices: Tensor,  # noqa: A002
                                  keepdim: bool) -> Tensor:
    """max(dim)/min(dim): the tangent at the selected indices (PyTorch gathers them;
    minigrad indexes with the index grid a gather reads)."""
    if input.dim() == 0:
        return input.clone()
    d = dims[0]
    idx = indices._data if keepdim else np.expand_dims(indices._data, d)
    grid = list(np.ogrid[tuple(slice(0, n) for n in idx.shape)])
    grid[d] = idx
    out = input[tuple(named("tensor")(np.broadcast_to(g, idx.shape)) for g in grid)]
    return out if keepdim else out.squeeze(d)


@helper
def prod_jvp(self_t: Tensor, self_p: Tensor, result: Tensor, dims: tuple | None = None,
             keepdim: bool = False) -> Tensor:
    """prod's tangent: `(prod_backward(ones, self_p, result[, dim, keepdim]) *
    self_t).sum([dim, keepdim])`. prod_backward records only for factors none of
    which is zero (minigrad's recordable form); with a zero factor and nothing to
    record, prod's own backward kernel gives the same slope."""
    ones = named("ones")((), dtype=result.dtype).expand_as(result)
    dim = None if dims is None else dims[0]
    records = STATE.grad_enabled and (self_p.requires_grad or self_t.requires_grad)
    if records or not (self_p._data == 0).any():
        slope = BACKWARD_OPS["prod_backward"](ones, self_p.to(result.dtype), result,
                                              *(() if dim is None else (dim, keepdim)))
    else:
        shim = _SavedOn({"self": self_p._data, "result": result._data},
                        {"_dim": dim if self_p.dim() else None, "keepdim": keepdim})
        data = ProdBackward0.backward(shim, np.ones(result._data.shape, result._data.dtype))[0]
        slope = Tensor._make(np.ascontiguousarray(data))
    if dim is None:
        return (slope * self_t).sum()
    return (slope * self_t).sum(dim, keepdim) if self_p.dim() else (slope * self_t).sum()


@helper
def var_jvp(self_t: Tensor, self_p: Tensor, dim, correction, dims: tuple,
            keepdim: bool) -> Tensor:
    """var's tangent: var_backward of the tangent (its dims kept), summed over them."""
    slope = BACKWARD_OPS["var_backward"](self_t, self_p, dim, correction, True)
    return sum_over(slope, dims, keepdim)


@helper
def norm_jvp(self_p: Tensor, self_t: Tensor, ord, norm: Tensor, dims: tuple,  # noqa: A002
             keepdim: bool) -> Tensor:
    """vector_norm's tangent, PyTorch's `norm_jvp` for real tensors."""
    p = float(ord)
    if p == 0.0:
        return named("zeros_like")(norm)
    if p == 1.0:
        return sum_over(self_p.sgn() * self_t, dims, keepdim)
    if p == 2.0:
        out = sum_over(self_p * self_t, dims, keepdim) / norm
        return out.masked_fill_(norm == 0, 0)
    if p in (np.inf, -np.inf):
        if not keepdim and self_p.dim() != 0:
            norm = _unsqueeze_dims(norm, dims, self_p.dim())
        both_nan = (self_p != self_p) & (norm != norm)  # (nan: the norm of a nan is one)
        is_eq_max = ((self_p.abs() == norm) | both_nan).to(norm.dtype)
        count = is_eq_max.sum(tuple(dims), True) if self_p.dim() and dims else is_eq_max.sum()
        return sum_over(self_p.sgn() * self_t * is_eq_max / count, dims, keepdim)
    if p < 1.0:
        scaled = self_p.abs().pow(p - 1).masked_fill_(self_p == 0, 0)
        return sum_over(scaled * (self_p.sgn() * self_t), dims, keepdim) * norm.pow(1 - p)
    if p < 2.0:
        total = sum_over(self_p.abs().pow(p - 1) * (self_p.sgn() * self_t), dims, keepdim)
    else:
        total = sum_over(self_p.abs().pow(p - 2) * (self_p * self_t), dims, keepdim)
    return (total / norm.pow(p - 1)).masked_fill_(norm == 0, 0)


def _unsqueeze_dims(t: Tensor, dims: tuple, ndim: int) -> Tensor:
    for d in sorted(dims or range(ndim)):
        t = t.unsqueeze(d)
    return t


@helper
def logsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int, keepdim: bool) -> Tensor:
    """The tangent of logsumexp along `dim` (softmax's and log_softmax's formulas use
    it): the tangent averaged with the weights exp(x - max) / their sum. In place, as
    PyTorch's (so a backward through such a tangent finds exp's output modified, and
    refuses, as PyTorch's does)."""
    if self_p.dim() == 0:  # (one element, whose weight is 1)
        return logsumexp_jvp(self_p.reshape(1), self_t.reshape(1), 0, keepdim).reshape(())
    if self_p.numel() > 0:
        exp = (self_p - self_p.max(dim, keepdim=True).values).exp()
    else:
        exp = self_p.exp()
    sumexp_p = exp.sum(dim, keepdim)
    exp.mul_(self_t)
    return exp.sum(dim, keepdim).div_(sumexp_p)


# -- joining, indexing --------------------------------------------------------------------


@helper
def cat_jvp(tensors_t: list, tensors: list, dim: int) -> Tensor:
    """cat's tangent: the inputs' tangents joined (zeros for an input without one)."""
    return named("cat")([dense(t, p) for t, p in zip(tensors_t, tensors)], dim)


@helper
def stack_jvp(tensors_t: list, tensors: list, dim: int) -> Tensor:
    """stack's tangent: the inputs' tangents stacked (zeros for an input without one)."""
    return named("stack")([dense(t, p) for t, p in zip(tensors_t, tensors)], dim)


@helper
def index_put_jvp(self_t, self_p: Tensor, values_t, values_p: Tensor, where: tuple,
                  accumulate: bool) -> Tensor:
    """index_put's tangent: `self_t.index_put(indices, values_t, accumulate)` (zeros
    for a missing tangent), the indices rebuilt from the numpy index the op saved."""
    indices = tuple(None if isinstance(i, slice) else Tensor._make(np.asarray(i))
                    for i in where)
    return BACKWARD_OPS["index_put"](dense(self_t, self_p), indices,
                                     dense(values_t, values_p), accumulate)


@helper
def embedding_jvp(weight_t: Tensor, indices: Tensor, padding_idx: int) -> Tensor:
    """embedding's tangent (`auto_linear`): the looked-up rows of the weight's tangent."""
    return embedding(indices, weight_t, None if padding_idx < 0 else padding_idx)


# -- losses -------------------------------------------------------------------------------
# A loss's tangent is PyTorch's `apply_loss_reduction(<backward of the unreduced loss>
# (self_t, ...) + <the same for the target>(target_t, ...), reduction)`: each part is
# ZERO for an input without a tangent.


@helper
def apply_loss_reduction(t: Tensor, reduction: int) -> Tensor:
    """The unreduced loss's tangent reduced as the loss was (0 none, 1 mean, 2 sum)."""
    if reduction == 1:
        return t.mean()
    return t.sum() if reduction == 2 else t


@helper
def mse_part(grad, input: Tensor, target: Tensor, reduction: int = 0) -> Tensor:  # noqa: A002
    """`mse_loss_backward(grad, input, target, reduction)`: 2 (input - target) grad
    (/ numel for "mean")."""
    if grad is ZERO:
        return ZERO
    return BACKWARD_OPS["mse_loss_backward"](grad, input, target, reduction)


@helper
def mse_double_part(tangent, grad_output: Tensor, input: Tensor,  # noqa: A002
                    reduction: int) -> Tensor:
    """`mse_loss_double_backward(tangent * grad_output, input, reduction)` (the slope
    of mse_loss_backward in its input), ZERO for a missing tangent. (For "mean",
    PyTorch divides its efficient zero tensor in place, which it refuses.)"""
    if tangent is ZERO:
        if reduction == 1:
            raise RuntimeError("ZeroTensors are immutable. Please use the materialized zero "
                               "tensor obtained using .clone() if you want a mutable tensor.")
        return ZERO
    return mse_loss_double_backward(tangent * grad_output, input, reduction)


@helper
def smooth_l1_part(grad, input: Tensor, target: Tensor, beta: float) -> Tensor:  # noqa: A002
    """`smooth_l1_loss_backward(grad, input, target, None, beta)`: grad times the
    slope: -1 below -beta, 1 above beta, (input - target) / beta between."""
    if grad is ZERO:
        return ZERO
    where, x = named("where"), input - target
    return where(x <= -beta, -grad, where(x >= beta, grad, x * grad / beta))


@helper
def huber_part(grad, input: Tensor, target: Tensor, delta: float) -> Tensor:  # noqa: A002
    """`huber_loss_backward(grad, input, target, None, delta)`: grad times the slope:
    -delta below -delta, delta above it, input - target between."""
    if grad is ZERO:
        return ZERO
    where, x = named("where"), input - target
    return where(x <= -delta, -grad * delta, where(x >= delta, grad * delta, x * grad))


_EPSILON = float(np.float32(1e-12))  # (PyTorch's EPSILON is a C++ float)


def _weighted(t: Tensor, weight) -> Tensor:
    return t if weight is None else t * weight


@helper
def bce_part(grad, input: Tensor, target: Tensor, weight) -> Tensor:  # noqa: A002
    """`binary_cross_entropy_backward(grad, input, target, weight, None)`:
    grad (input - target) / max((1 - input) input, EPSILON), weighted."""
    if grad is ZERO:
        return ZERO
    return _weighted(grad * (input - target) / ((1 - input) * input).clamp(min=_EPSILON), weight)


@helper
def bce_target_part(grad, input: Tensor, weight) -> Tensor:  # noqa: A002
    """`binary_cross_entropy_target_backward(grad, input, ...)`: -logit(input) grad,
    weighted."""
    if grad is ZERO:
        return ZERO
    return _weighted(-(input / (1 - input)).log() * grad, weight)


def _log_sigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)) as PyTorch's kernel computes it: min(x, 0) - log1p(exp(-|x|))."""
    return x.clamp(max=0.0) - (-x.abs()).exp().log1p()


@helper
def bce_logits_part(grad, input: Tensor, target: Tensor, weight, pos_weight) -> Tensor:  # noqa: A002
    """`binary_cross_entropy_with_logits_backward(grad, ...)`: (sigmoid(input) -
    target) grad; with pos_weight pw, ((pw target + 1 - target) sigmoid(input) - pw
    target) grad; weighted."""
    if grad is ZERO:
        return ZERO
    if pos_weight is None:
        slope = input.sigmoid() - target
    else:
        t = pos_weight * target
        slope = (t + 1 - target) * input.sigmoid() - t
    return _weighted(slope * grad, weight)


@helper
def bce_logits_target_part(grad, input: Tensor, weight, pos_weight) -> Tensor:  # noqa: A002
    """`binary_cross_entropy_with_logits_target_backward(grad, ...)`: -input grad;
    with pos_weight, (log_sigmoid(-input) - pw log_sigmoid(input)) grad; weighted."""
    if grad is ZERO:
        return ZERO
    if pos_weight is None:
        return _weighted(-input * grad, weight)
    return _weighted((_log_sigmoid(-input) - pos_weight * _log_sigmoid(input)) * grad, weight)


# -- normalization ------------------------------------------------------------------------


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


# -- the gradients of softmax and log_softmax -----------------------------------------------


@helper
def softmax_backward_data_jvp(grad_output_t, output_t, grad_output: Tensor, output: Tensor,
                              dim: int) -> Tensor:
    """The tangent of `output * (grad_output - sum(grad_output * output, dim))`."""
    out = ZERO
    if grad_output_t is not ZERO:
        out = output * (grad_output_t - (grad_output_t * output).sum(dim, True))
    if output_t is not ZERO:
        out = out + (output_t * (grad_output - (grad_output * output).sum(dim, True))
                     - output * (grad_output * output_t).sum(dim, True))
    return out


@helper
def log_softmax_backward_data_jvp(grad_output_t, output_t, grad_output: Tensor,
                                  output: Tensor, dim: int) -> Tensor:
    """The tangent of `grad_output - exp(output) * sum(grad_output, dim)`."""
    exp = output.exp()
    out = ZERO
    if grad_output_t is not ZERO:
        out = grad_output_t - exp * grad_output_t.sum(dim, True)
    if output_t is not ZERO:
        out = out - exp * output_t * grad_output.sum(dim, True)
    return out


@helper
def cumprod_jvp(self_t: Tensor, self_p: Tensor, result: Tensor, dim: int) -> Tensor:
    """cumprod's tangent (PyTorch's cumprod_jvp): `cumsum(self_t / self_p) * result`
    where no zero came before; from the first zero on (where that formula divides by
    zero), the cumprod of the factors with the first zero's tangent in its place:
    for x = (a, 0, b, 0, c) and t = (t0, ..., t4), (., a*t1, a*b*t1, 0, 0)."""
    where = named("where")
    gradient = (self_t / self_p).cumsum(dim) * result
    if self_p.dim() == 0:
        return gradient.masked_fill_(self_p == 0, self_t)
    mask_zeros = self_p == 0
    mask_first_zero = mask_zeros & (mask_zeros.cumsum(dim) == 1)
    new_grad = BACKWARD_OPS["cumprod"](where(mask_first_zero, self_t, self_p), dim)
    mask_after_first_zero = mask_first_zero.cumsum(dim)
    return where(mask_after_first_zero.to(bool_), new_grad, gradient)

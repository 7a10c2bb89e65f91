"""The backward ops of `smooth_l1_loss`, `huber_loss` and `binary_cross_entropy`, the
helpers the formulas of all four losses of `loss.py` call, and the two element-wise
ops those helpers need (`logit`, `log_sigmoid`), so that a `create_graph=True`
backward through a loss records PyTorch's graph and can be differentiated again.

Each backward op computes with numpy and records its own node
(SmoothL1LossBackwardBackward0, ...), whose formulas are PyTorch's derivatives.yaml
entries for that op. The array versions (`@on_arrays`) beside the ops and helpers are
what a plain backward through a loss runs (its formulas compiled for arrays): they
take PyTorch's in-place steps, which the gradient's `_version` counts. The helpers
are PyTorch's "FunctionsManual" functions in minigrad code: the ops they call, in
C++'s order (the right operand of a binary operator first), are the nodes PyTorch's
graph has.
"""

from __future__ import annotations

import math

import numpy as np

from .._creation import full, ones_like
from ..arrays.dispatch import unary_into
from ..arrays.layout import empty_like
from ..arrays.scalars import as_float_data
from ..autograd.graph import INPUT, OUTPUT, VALUE, Node, SavedTensor, bump_version
from ..autograd.record import record
from ..grad_mode import no_grad
from ..kernels import elementwise as K
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, Scalar, helper, on_arrays
from .indexing import where
from .loss import REDUCTIONS, log_sigmoid_and_buffer
from .scalar_overloads import add_scalar, div_scalar, div_scalar_

MEAN = REDUCTIONS["mean"]
NONE = REDUCTIONS["none"]

# The eps PyTorch's double-backward helpers of binary_cross_entropy use (a C++ double).
BCE_EPS = 1e-12


def _minus(number: float, t: Tensor) -> Tensor:
    """C++'s `number - t` in a helper: the number wrapped into a 0-d tensor, then
    sub (SubBackward0, whose first input needs no gradient), not rsub."""
    return full((), number, dtype=t.dtype) - t


def _norm(x: np.ndarray, reduction: int):
    """The factor of a "mean" loss's gradient: 1 / numel (1 for the others)."""
    return x.dtype.type(1.0 / x.size) if reduction == MEAN and x.size else x.dtype.type(1)


def _pair_grad(slope: np.ndarray, grad_output: np.ndarray, x: np.ndarray,
               reduction: int) -> np.ndarray:
    """norm * grad_output * slope, a fresh array laid out as x (the gradient of a loss
    of x and a target for x, on arrays)."""
    with np.errstate(all="ignore"):
        data = slope * (grad_output * _norm(x, reduction))
    return _fresh_like(data, x)


def _fresh_like(data: np.ndarray, x: np.ndarray) -> np.ndarray:
    """`data`, a fresh result, as an array of x's shape and dtype laid out in C order:
    itself when it is one already (the usual case), else a copy. (Of 0-d arrays numpy
    makes a scalar, which no stream can be added into: made an array.)"""
    if (type(data) is np.ndarray and data.shape == x.shape and data.dtype == x.dtype
            and data.flags.c_contiguous):
        return data
    return np.array(np.broadcast_to(data, x.shape), x.dtype, order="C")


def _pair_backward(node_cls: type[Node], data: np.ndarray, grad_output: Tensor, self: Tensor,
                   target: Tensor, reduction: int, **values) -> Tensor:
    """The gradient `data` of a loss of self and target for self, recorded as
    `node_cls`, which saves the three tensors and `values`."""
    out = Tensor._make(data)
    node = record(node_cls, out, grad_output, self, target)
    if node is not None:
        node._saved.update({"grad_output": SavedTensor(grad_output), "reduction": reduction,
                            "self": SavedTensor(self), "target": SavedTensor(target), **values})
    return out


# -- smooth_l1_loss and huber_loss -----------------------------------------------------------


class SmoothL1LossBackwardBackward0(FormulaNode):
    """smooth_l1_loss_backward(grad_output, self, target, reduction, beta) = norm *
    grad_output * (z / beta inside (-beta, beta), sign(z) outside), z = self - target."""

    # (no tangent for HuberLossBackwardBackward0 below: PyTorch has none either)
    tangent = ("smooth_l1_loss_double_backward(dense(self_t, self_p) * grad_output_p, self_p, "
               "target_p, reduction, beta) - smooth_l1_loss_double_backward(dense(target_t, "
               "target_p) * grad_output_p, self_p, target_p, reduction, beta) + "
               "smooth_l1_loss_backward(dense(grad_output_t, grad_output_p), self_p, target_p, "
               "reduction, beta)")

    saves = {"beta": VALUE, "grad_output": INPUT, "reduction": VALUE, "self": INPUT,
             "target": INPUT}
    formulas = (
        Formula("grad_output", "smooth_l1_loss_backward(grad, self, target, reduction, beta)"),
        Formula("self", "smooth_l1_loss_double_backward(grad * grad_output, self, target, "
                        "reduction, beta)"),
        Formula("target", "-smooth_l1_loss_double_backward(grad * grad_output, self, target, "
                          "reduction, beta)"))


def smooth_l1_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int,
                            beta: float) -> Tensor:
    """The gradient of smooth_l1_loss for `self` (PyTorch's aten::smooth_l1_loss_backward;
    with self and target swapped, the target's)."""
    data = _smooth_l1_grad(grad_output._data, self._data, target._data, reduction, beta)
    return _pair_backward(SmoothL1LossBackwardBackward0, data, grad_output, self, target,
                          reduction, beta=float(beta))


def smooth_l1_slope(x: np.ndarray, t: np.ndarray, beta: float) -> np.ndarray:
    """smooth_l1_loss's slope in x: z / beta inside (-beta, beta), sign(z) outside."""
    with np.errstate(all="ignore"):  # (inf - inf is nan, quietly as in PyTorch)
        z, b = x - t, x.dtype.type(beta)
        return np.where(z < -b, -1, np.where(z > b, 1, z / b)).astype(x.dtype)


@on_arrays("smooth_l1_loss_backward")
def _smooth_l1_grad(grad_output: np.ndarray, self: np.ndarray, target: np.ndarray,
                    reduction: int, beta: float) -> np.ndarray:
    return _pair_grad(smooth_l1_slope(self, target, beta), grad_output, self, reduction)


@helper
def smooth_l1_loss_double_backward(grad: Tensor, input: Tensor, target: Tensor,  # noqa: A002
                                   reduction: int, beta: float) -> Tensor:
    """The slope of smooth_l1_loss_backward in self: grad / beta where |self - target| <
    beta (0 elsewhere), divided in place by numel for "mean"."""
    if beta == 0:
        return full(tuple(grad.shape), 0.0, dtype=grad.dtype)
    inside = ((input - target).abs() < beta).to(grad.dtype)
    grad_input = grad * inside / Scalar(beta)
    if reduction == MEAN:
        div_scalar_(grad_input, input.numel())
    return grad_input


class HuberLossBackwardBackward0(FormulaNode):
    """huber_loss_backward(grad_output, self, target, reduction, delta) = norm *
    grad_output * (z inside (-delta, delta), delta * sign(z) outside)."""

    saves = {"delta": VALUE, "grad_output": INPUT, "reduction": VALUE, "self": INPUT,
             "target": INPUT}
    formulas = (
        Formula("grad_output", "huber_loss_double_backward_grad_output(grad, grad_output, self, "
                               "target, reduction, delta)"),
        Formula("self", "huber_loss_double_backward(grad * grad_output, self, target, "
                        "reduction, delta)"),
        Formula("target", "-huber_loss_double_backward(grad * grad_output, self, target, "
                          "reduction, delta)"))


def huber_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int,
                        delta: float) -> Tensor:
    """The gradient of huber_loss for `self` (PyTorch's aten::huber_loss_backward)."""
    data = _huber_grad(grad_output._data, self._data, target._data, reduction, delta)
    return _pair_backward(HuberLossBackwardBackward0, data, grad_output, self, target,
                          reduction, delta=float(delta))


def huber_slope(x: np.ndarray, t: np.ndarray, delta: float) -> np.ndarray:
    """huber_loss's slope in x: z inside (-delta, delta), delta * sign(z) outside."""
    with np.errstate(all="ignore"):  # (inf - inf is nan, quietly as in PyTorch)
        z, d = x - t, x.dtype.type(delta)
        return np.where(z < -d, -d, np.where(z > d, d, z)).astype(x.dtype)


@on_arrays("huber_loss_backward")
def _huber_grad(grad_output: np.ndarray, self: np.ndarray, target: np.ndarray,
                reduction: int, delta: float) -> np.ndarray:
    return _pair_grad(huber_slope(self, target, delta), grad_output, self, reduction)


@helper
def huber_loss_double_backward(grad: Tensor, input: Tensor, target: Tensor,  # noqa: A002
                               reduction: int, delta: float) -> Tensor:
    """The slope of huber_loss_backward in self: grad where |self - target| < delta (0
    elsewhere), divided in place by numel for "mean"."""
    grad_input = grad * ((input - target).abs() < delta)
    if reduction == MEAN:
        div_scalar_(grad_input, input.numel())
    return grad_input


@helper
def huber_loss_double_backward_grad_output(grad: Tensor, grad_output: Tensor,
                                           input: Tensor, target: Tensor,  # noqa: A002
                                           reduction: int, delta: float) -> Tensor:
    """The gradient of huber_loss_backward for grad_output: huber_loss_backward of the
    incoming gradient, or, for a reduced loss (a 0-d grad_output), the sum of the
    incoming gradient times the slope."""
    if reduction == NONE:
        return huber_loss_backward(grad, input, target, reduction, delta)
    r = huber_loss_backward(ones_like(grad_output), input, target, reduction, delta)
    return (r * grad).sum()


# -- binary_cross_entropy --------------------------------------------------------------------


class BinaryCrossEntropyBackwardBackward0(FormulaNode):
    """binary_cross_entropy_backward(grad_output, self, target, weight, reduction) =
    norm * weight * grad_output * (self - target) / max((1 - self) self, 1e-12)."""

    tangent = ("binary_cross_entropy_double_backward(grad_output_p, dense(self_t, self_p), "
               "self_p, target_p, weight, reduction) + "
               "binary_cross_entropy_double_backward_target(dense(target_t, target_p), "
               "grad_output_p, self_p, target_p, weight, reduction) + "
               "binary_cross_entropy_double_backward_grad_output(dense(grad_output_t, "
               "grad_output_p), self_p, target_p, weight, reduction)")

    saves = {"grad_output": INPUT, "reduction": VALUE, "self": INPUT, "target": INPUT,
             "weight": INPUT}
    formulas = (
        Formula("grad_output", "binary_cross_entropy_double_backward_grad_output(grad, self, "
                               "target, weight, reduction)"),
        Formula("self", "binary_cross_entropy_double_backward(grad_output, grad, self, target, "
                        "weight, reduction)"),
        Formula("target", "binary_cross_entropy_double_backward_target(grad, grad_output, self, "
                          "target, weight, reduction)"))


def binary_cross_entropy_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                                  weight: Tensor | None, reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy for `self` (PyTorch's
    aten::binary_cross_entropy_backward): the slope times grad_output, then the weight,
    then 1 / numel for "mean", in PyTorch's order."""
    out = Tensor._make(_bce_grad(grad_output._data, self._data, target._data,
                                 None if weight is None else weight._data, reduction))
    node = record(BinaryCrossEntropyBackwardBackward0, out, grad_output, self, target)
    if node is not None:
        node._saved.update({"grad_output": SavedTensor(grad_output), "reduction": reduction,
                            "self": SavedTensor(self), "target": SavedTensor(target),
                            "weight": None if weight is None else SavedTensor(weight)})
    return out


def bce_slope(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """binary_cross_entropy's slope in p (unweighted): (p - t) / max((1 - p) p, 1e-12)."""
    eps = p.dtype.type(np.float32(1e-12))  # (PyTorch's EPSILON is a C++ float)
    return (p - t) / np.maximum((1 - p) * p, eps)


@on_arrays("binary_cross_entropy_backward")
def _bce_grad(grad_output: np.ndarray, self: np.ndarray, target: np.ndarray,
              weight: np.ndarray | None, reduction: int) -> np.ndarray:
    """The slope times grad_output, then the weight, then 1 / numel (PyTorch's kernel
    takes these steps inside the op: its result's `_version` stays 0)."""
    p = self
    with np.errstate(all="ignore"):
        data = bce_slope(p, target) * grad_output
        if weight is not None:
            data = data * weight
        if reduction == MEAN and p.size:
            data = data / p.dtype.type(p.size)
    return _fresh_like(data, p)


@helper
def binary_cross_entropy_target_backward(grad: Tensor, self: Tensor, target: Tensor,
                                         weight: Tensor | None, reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy for the target: -logit(self), then times
    grad, the weight and 1 / numel, each in place."""
    grad_target = logit(self).neg_()
    grad_target.mul_(grad)
    if weight is not None:
        grad_target.mul_(weight)
    if reduction == MEAN:
        div_scalar_(grad_target, target.numel())
    return grad_target


@on_arrays("binary_cross_entropy_target_backward")
def _bce_target_grad(grad: np.ndarray, self: np.ndarray, target: np.ndarray,
                     weight: np.ndarray | None, reduction: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = logit_data(self, None)
        np.negative(out, out=out)
        np.multiply(out, grad, out=out, casting="unsafe")
        return _weighted_and_averaged_(out, weight, reduction, 2)


def _weighted_and_averaged_(out: np.ndarray, weight: np.ndarray | None, reduction: int,
                            steps: int) -> np.ndarray:
    """The last steps of a gradient of binary cross-entropy, on arrays: times the weight,
    then divided by numel for "mean", each in place, as PyTorch's `mul_` and `div_`;
    `steps`: the in-place steps taken before. The array's version counts them all."""
    if weight is not None:
        np.multiply(out, weight, out=out, casting="unsafe")
        steps += 1
    if reduction == MEAN:
        np.divide(out, out.dtype.type(out.size), out=out, casting="unsafe")
        steps += 1
    if steps:
        bump_version(out, steps)
    return out


# The slope of binary_cross_entropy_backward in self, before grad, weight and mean
# (C++'s order of evaluation, as in a formula: see `formulas._AsInCpp`).
_BCE_SECOND = Formula("input", "(input * input - 2 * input * target + target) / "
                               "(inp_pl_eps.pow(2) * one_m_inp_pl_eps.pow(2))")
_BCE_GRAD_OUTPUT = Formula("input", "(input - target) / ((input + eps) * (one_m_input + eps))")


@helper
def binary_cross_entropy_double_backward(grad_output: Tensor, grad: Tensor,
                                         input: Tensor, target: Tensor,  # noqa: A002
                                         weight: Tensor | None, reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy_backward for self:
    (p**2 - 2 p t + t) / ((p + eps)**2 (1 - p + eps)**2) times grad * grad_output (in
    place), the weight (in place), and 1 / numel for "mean"."""
    inp_pl_eps = input + Scalar(BCE_EPS)
    one_m_inp_pl_eps = _minus(1, input) + Scalar(BCE_EPS)
    gi = _BCE_SECOND(grad, input=input, target=target, inp_pl_eps=inp_pl_eps,
                     one_m_inp_pl_eps=one_m_inp_pl_eps)
    gi.mul_(grad * grad_output)
    return _weighted_and_averaged(gi, weight, reduction)


def _weighted_and_averaged(g: Tensor, weight: Tensor | None, reduction: int) -> Tensor:
    """The last steps of the binary cross-entropy double backwards: times the weight
    (in place), then divided by numel for "mean" (out of place: DivBackward1)."""
    if weight is not None:
        g.mul_(weight)
    return div_scalar(g, g.numel()) if reduction == MEAN else g


@helper
def binary_cross_entropy_double_backward_grad_output(grad: Tensor, input: Tensor,  # noqa: A002
                                                     target: Tensor, weight: Tensor | None,
                                                     reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy_backward for grad_output: (p - t) / ((p +
    eps) (1 - p + eps)) times grad (in place), the weight (in place), and 1 / numel for
    "mean"."""
    ggo = _BCE_GRAD_OUTPUT(grad, input=input, target=target, eps=Scalar(BCE_EPS),
                           one_m_input=_minus(1, input))
    ggo.mul_(grad)
    return _weighted_and_averaged(ggo, weight, reduction)


@helper
def binary_cross_entropy_double_backward_target(grad: Tensor, grad_output: Tensor,
                                                self: Tensor, target: Tensor,
                                                weight: Tensor | None, reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy_backward for the target: -grad * grad_output
    (times the weight), divided by max((1 - p) p, eps), all in place."""
    res = -grad * grad_output
    if weight is not None:
        res.mul_(weight)
    denom = _minus(1, self).mul_(self)
    with no_grad():  # (PyTorch clamps without recording it)
        denom.clamp_(min=BCE_EPS)
    res.div_(denom)
    if reduction == MEAN:
        div_scalar_(res, target.numel())
    return res


# -- binary_cross_entropy_with_logits (composed of ops: no backward op of its own) ---------


@helper
def binary_cross_entropy_with_logits_backward(grad: Tensor, input: Tensor,  # noqa: A002
                                              target: Tensor, weight: Tensor | None,
                                              pos_weight: Tensor | None,
                                              reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy_with_logits for the logits, out of place
    (grad mode is on): (sigmoid(x) - t), or ((pw t + 1 - t) sigmoid(x) - pw t), times
    grad and the weight; divided in place by numel for "mean"."""
    if pos_weight is not None:
        t = pos_weight.mul(target)
        grad_input = add_scalar(t, 1).sub(target).mul(input.sigmoid()).sub(t)
    else:
        grad_input = input.sigmoid().sub(target)
    grad_input = grad_input.mul(grad)
    if weight is not None:
        grad_input = grad_input.mul(weight)
    if reduction == MEAN:
        div_scalar_(grad_input, input.numel())
    return grad_input


@helper
def binary_cross_entropy_with_logits_target_backward(grad_output: Tensor, self: Tensor,
                                                     target: Tensor, weight: Tensor | None,
                                                     pos_weight: Tensor | None,
                                                     reduction: int) -> Tensor:
    """The gradient of binary_cross_entropy_with_logits for the target: -x * grad, or
    (log_sigmoid(-x) - log_sigmoid(x) pw) * grad (in place); times the weight and 1 /
    numel, in place."""
    if pos_weight is not None:
        grad_target = log_sigmoid(-self).sub_(log_sigmoid(self).mul_(pos_weight))
        grad_target.mul_(grad_output)
    else:
        grad_target = -self * grad_output
    if weight is not None:
        grad_target.mul_(weight)
    if reduction == MEAN:
        div_scalar_(grad_target, target.numel())
    return grad_target


def sigmoid_data(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), a fresh array, with the sigmoid op's kernel for float64 and
    float32."""
    if x.dtype not in (np.float64, np.float32):
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-x))
    out = np.empty(x.shape, x.dtype)
    unary_into(K.sigmoid, np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
    return out


@on_arrays("binary_cross_entropy_with_logits_backward")
def _bce_logits_grad(grad: np.ndarray, input: np.ndarray, target: np.ndarray,  # noqa: A002
                     weight: np.ndarray | None, pos_weight: np.ndarray | None,
                     reduction: int) -> np.ndarray:
    """As PyTorch computes it with grad mode off: each step after the first in place
    (`sigmoid().sub_(target)`, or `(pw t).add(1).sub_(target).mul_(sigmoid).sub_(pw t)`),
    then `mul_(grad)`, the weight and the mean."""
    with np.errstate(all="ignore"):
        if pos_weight is None:
            out = sigmoid_data(input)
            np.subtract(out, target, out=out, casting="unsafe")
            steps = 1
        else:
            t = pos_weight * target
            out = np.asarray(t + 1)  # (of 0-d arrays numpy makes a scalar: no `out=`)
            np.subtract(out, target, out=out, casting="unsafe")
            np.multiply(out, sigmoid_data(input), out=out, casting="unsafe")
            np.subtract(out, t, out=out, casting="unsafe")
            steps = 3
        np.multiply(out, grad, out=out, casting="unsafe")
        return _weighted_and_averaged_(out, weight, reduction, steps + 1)


@on_arrays("binary_cross_entropy_with_logits_target_backward")
def _bce_logits_target_grad(grad_output: np.ndarray, self: np.ndarray, target: np.ndarray,
                            weight: np.ndarray | None, pos_weight: np.ndarray | None,
                            reduction: int) -> np.ndarray:
    """-x * grad_output (out of place), or, with pos_weight, `log_sigmoid(-x).sub_(
    log_sigmoid(x).mul_(pw)).mul_(grad_output)`; then the weight and the mean."""
    with np.errstate(all="ignore"):
        if pos_weight is None:
            out, steps = np.negative(self) * grad_output, 0
        else:
            out = log_sigmoid_and_buffer(-self)[0]
            below = log_sigmoid_and_buffer(self)[0]
            np.multiply(below, pos_weight, out=below, casting="unsafe")
            np.subtract(out, below, out=out, casting="unsafe")
            np.multiply(out, grad_output, out=out, casting="unsafe")
            steps = 2
        return _weighted_and_averaged_(np.asarray(out), weight, reduction, steps)


# -- logit and log_sigmoid, as the helpers above call them -----------------------------------


class LogitBackward0(ArrayFormulaNode):
    """logit(p) = log(p / (1 - p)): grad / (p (1 - p)) inside [0, 1], nan outside (0
    outside [eps, 1 - eps] when eps is given)."""

    tangent = "auto_element_wise"

    saves = {"eps": VALUE, "self": INPUT}
    formulas = (Formula("self", "infinitely_differentiable_logit_backward(grad, self, eps)"),)



@on_arrays("infinitely_differentiable_logit_backward")
def _logit_backward_on_arrays(grad: np.ndarray, p: np.ndarray, eps: float | None) -> np.ndarray:
    with np.errstate(all="ignore"):
        g = grad / (p * (1 - p))
        if eps is None:
            g = np.where((p < 0) | (p > 1), np.nan, g)
        else:
            g = np.where((p < eps) | (p > 1 - eps), 0, g)
    return np.asarray(g, grad.dtype)


def logit(self: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] first when eps is given (PyTorch's
    aten::logit, which binary_cross_entropy's target gradient calls); integers and
    bools in the default float dtype."""
    if eps is not None and not isinstance(eps, (int, float)):
        raise TypeError(f"logit(): argument 'eps' (position 2) must be float, not "
                        f"{type(eps).__name__}")
    p = self._data if self._data.dtype.kind == "f" else as_float_data(self)
    out = Tensor._make(logit_data(p, eps))
    node = record(LogitBackward0, out, self, like_output=True)
    if node is not None:
        node._saved.update({"eps": eps, "self": SavedTensor(self)})
    return out


def logit_data(p: np.ndarray, eps: float | None) -> np.ndarray:
    """log(p / (1 - p)) of a float array, p clamped to [eps, 1 - eps] first when eps is
    given: a fresh array of p's dtype."""
    dtype = p.dtype
    if eps is not None:
        p = np.clip(p, eps, 1 - eps)
    with np.errstate(all="ignore"):
        return np.array(np.log(p / (1 - p)), dtype, order="C")


@helper
def infinitely_differentiable_logit_backward(grad: Tensor, self: Tensor,
                                             eps: float | None) -> Tensor:
    """logit's gradient in differentiable ops: grad / (p (1 - p)) where p lies in [0, 1]
    ([eps, 1 - eps] when eps is given), else nan (0 with eps)."""
    if eps is not None:
        inside = (self >= eps) & (self <= 1.0 - eps)
        outside = full((), 0.0, dtype=self.dtype)
    else:
        inside = (self >= 0.0) & (self <= 1.0)
        outside = full((), math.nan, dtype=self.dtype)
    return where(inside, grad / (self * _minus(1.0, self)), outside)


class LogSigmoidBackward0(ArrayFormulaNode):
    """log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), whose forward keeps exp(-|x|) as
    `buffer`: its gradient is grad * (1 - sigmoid(x)), written with the buffer."""

    tangent = "log_sigmoid_backward(self_t, self_p, buffer)"

    saves = {"buffer": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "log_sigmoid_backward(grad, self, buffer)"),)



@on_arrays("log_sigmoid_backward")
def _log_sigmoid_grad(grad: np.ndarray, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """grad * (1 - sigmoid(x)) from z = exp(-|x|): z / (1 + z) for x >= 0, 1 / (1 + z)
    below (PyTorch's kernel: max_deriv - sign * z / (1 + z)), written into
    `empty_like(grad)` as PyTorch's kernel is (`sum()`'s gradient of a (1,) tensor
    keeps its 0 stride, so AccumulateGrad copies it: `.grad` at version 1)."""
    out = empty_like(grad)
    with np.errstate(all="ignore"):
        slope = np.where(x < 0, 1 - z / (1 + z), z / (1 + z))
        out[...] = grad * slope
    return out


def log_sigmoid(self: Tensor) -> Tensor:
    """log(sigmoid(x)), exact for large |x| (PyTorch's aten::log_sigmoid, which
    binary_cross_entropy_with_logits' target gradient calls with a pos_weight)."""
    x = self._data
    data, z = log_sigmoid_and_buffer(x)
    out = Tensor._make(np.array(data, x.dtype, order="C"))
    node = record(LogSigmoidBackward0, out, self, like_output=True)
    if node is not None:
        node._saved.update({"buffer": SavedTensor(Tensor._make(z)), "self": SavedTensor(self)})
    return out


class LogSigmoidBackwardBackward0(FormulaNode):
    """log_sigmoid_backward(grad_output, self, buffer) = grad_output * (1 -
    sigmoid(self))."""

    tangent = ("log_sigmoid_backward(dense(grad_output_t, grad_output_p), self_p, buffer) + "
               "log_sigmoid_double_backward(dense(self_t, self_p) * grad_output_p, self_p)")

    saves = {"buffer": INPUT, "grad_output": INPUT, "self": INPUT}
    formulas = (Formula("grad_output", "log_sigmoid_backward(grad, self, buffer)"),
                Formula("self", "log_sigmoid_double_backward(grad * grad_output, self)"))


def log_sigmoid_backward(grad_output: Tensor, self: Tensor, buffer: Tensor) -> Tensor:
    """The gradient of log_sigmoid (PyTorch's aten::log_sigmoid_backward)."""
    out = Tensor._make(_log_sigmoid_grad(grad_output._data, self._data, buffer._data))
    node = record(LogSigmoidBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"buffer": SavedTensor(buffer), "grad_output": SavedTensor(grad_output),
                            "self": SavedTensor(self)})
    return out


@helper
def log_sigmoid_double_backward(grad: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    """The slope of log_sigmoid_backward in self, applied to grad: grad (z - 1) z,
    z = sigmoid(self)."""
    z = input.sigmoid()
    return grad * (z - Scalar(1)) * z


# -- declarations: the backward ops the losses' formulas call (see `declaration.py`) --------

declare("smooth_l1_loss_backward", nodes=(SmoothL1LossBackwardBackward0,),
        aten=smooth_l1_loss_backward)
declare("huber_loss_backward", nodes=(HuberLossBackwardBackward0,), aten=huber_loss_backward)
declare("binary_cross_entropy_backward", nodes=(BinaryCrossEntropyBackwardBackward0,),
        aten=binary_cross_entropy_backward)
declare("logit", nodes=(LogitBackward0,), function=logit, method=True, aten=logit)
declare("log_sigmoid", nodes=(LogSigmoidBackward0,), aten=log_sigmoid)
declare("log_sigmoid_backward", nodes=(LogSigmoidBackwardBackward0,), aten=log_sigmoid_backward)

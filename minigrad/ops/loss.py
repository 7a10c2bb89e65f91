"""Loss functions of a prediction and a target of the same shape: `mse_loss` (the
loss of the course's training loops), `l1_loss`, `smooth_l1_loss`, `huber_loss`,
`binary_cross_entropy` and `binary_cross_entropy_with_logits`."""

from __future__ import annotations

import warnings

import numpy as np

from .._dtype import result_type
from ..arrays.broadcasting import broadcast_shape
from ..arrays.dispatch import binary
from ..arrays.layout import element_strides, with_strides
from ..arrays.summing import add_up
from ..autograd.graph import INPUT, VALUE, Node, SavedTensor
from ..autograd.record import record, refuse_grad_for
from ..kernels import elementwise as K
from ..tensor import Size, Tensor
from .arithmetic import sub
from .declaration import declare
from .expand import expand
from .formulas import (
    BACKWARD_OPS,
    ArrayFormulaNode,
    Formula,
    FormulaNode,
    Scalar,
    helper,
    named,
    on_arrays,
)
from .reductions import average, mean
from .reductions import sum as sum_
from .tangent_formulas import ZERO
from .unary import abs as abs_

# PyTorch stores the reduction as an enum number in `_saved_reduction`.
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}

# PyTorch's scalar type names, as its "not implemented for" messages print them.
TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


class MseLossBackward0(ArrayFormulaNode):
    """mean((input - target) ** 2): 2 * (input - target) * grad, divided by the number
    of elements for "mean"; the target gets the negative of that."""

    tangent = ("apply_loss_reduction(mse_part(self_t, self_p, target_p) + "
               "mse_part(target_t, target_p, self_p), reduction)")
    saves = {"self": INPUT, "target": INPUT, "reduction": VALUE}
    formulas = (Formula("self", "mse_loss_backward(grad, self, target, reduction)"),
                Formula("target", "mse_loss_backward(grad, target, self, reduction)"))



class MseLossBackwardBackward0(FormulaNode):
    """mse_loss_backward(grad_output, self, target, reduction) = norm * (self -
    target) * grad_output, norm = 2 (2 / numel for "mean")."""

    tangent = ("mse_double_part(self_t, grad_output_p, self_p, reduction) - mse_double_part("
               "target_t, grad_output_p, target_p, reduction) + mse_part(grad_output_t, self_p, "
               "target_p, reduction)")
    saves = {"grad_output": INPUT, "reduction": VALUE, "self": INPUT, "target": INPUT}
    formulas = (Formula("grad_output", "mse_loss_backward(grad, self, target, reduction)"),
                Formula("self", "mse_loss_double_backward(grad * grad_output, self, reduction)"),
                Formula("target", "-mse_loss_double_backward(grad * grad_output, target, "
                                  "reduction)"))


def _mse_grad(grad: np.ndarray, x: np.ndarray, target: np.ndarray,
              reduction: int) -> np.ndarray:
    """mse_loss's gradient for `x`, on arrays, in PyTorch's order of operations."""
    norm = 2.0 / x.size if reduction == REDUCTIONS["mean"] and x.size else 2.0
    with np.errstate(all="ignore"):  # (inf - inf is nan, quietly as in PyTorch)
        # norm * (x - target) * grad, each step into the one fresh array
        out = np.asarray(np.subtract(x, target), x.dtype, order="C")
        out *= x.dtype.type(norm)
        out *= grad
    return out


on_arrays("mse_loss_backward")(_mse_grad)


def mse_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                      reduction: int) -> Tensor:
    """The gradient of mse_loss for `self` (PyTorch's aten::mse_loss_backward; with
    self and target swapped, the target's)."""
    out = Tensor._make(_mse_grad(grad_output._data, self._data, target._data, reduction))
    node = record(MseLossBackwardBackward0, out, grad_output, self, target)
    if node is not None:
        node._saved.update({"grad_output": SavedTensor(grad_output), "reduction": reduction,
                            "self": SavedTensor(self), "target": SavedTensor(target)})
    return out




def legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction PyTorch's deprecated `size_average` / `reduce` arguments stand
    for, with its warning. (A reduction passed third, `mse_loss(a, b, "sum")`, lands in
    `size_average`: it is truthy, so it means "mean", as in PyTorch.)"""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    return reduction


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """Input and target of different shapes: PyTorch's warning, then both broadcast."""
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"Using a target size ({Size(target._data.shape)!r}) that is different to the "
            f"input size ({Size(input._data.shape)!r}). This will likely lead to incorrect "
            "results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,  # the line that called the loss
        )
        # Like PyTorch, broadcast both first; an operand that already has the broadcast
        # shape is used as it is, the other shows up in the graph as an ExpandBackward0.
        shape = broadcast_shape(input._data.shape, target._data.shape)
        if input._data.shape != shape:
            input = expand(input, shape)
        if target._data.shape != shape:
            target = expand(target, shape)
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """The mean (or sum, or none) of squared differences, as `F.mse_loss` (whose
    deprecated `size_average` and `reduce` still choose the reduction)."""
    if weight is not None:
        raise NotImplementedError("minigrad's mse_loss has no weight argument")
    input, target = _broadcast_pair(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    # PyTorch checks the reduction only after broadcasting, and the dtype after that.
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    dt = result_type(input, target)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{TYPE_NAMES[dt.name]}'")
    diff = binary(K.sub, input._data, target._data, dt.np)
    sq = binary(K.mul, diff, diff, dt.np)
    out = Tensor._make(_reduce(sq, reduction))
    node = record(MseLossBackward0, out, input, target)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), "target": SavedTensor(target),
                            "reduction": REDUCTIONS[reduction]})
    return out


# -- the other losses of a prediction and a target ---------------------------------------------


def _reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    """A loss per element, reduced as `reduction` says: PyTorch's `sum` or `mean` (added
    in its order, so the last bits agree; the mean of nothing is nan)."""
    if reduction == "none":
        return loss
    every_dim = tuple(range(loss.ndim))
    return add_up(loss, every_dim) if reduction == "sum" else average(loss, every_dim, False)


def reduction_of(size_average, reduce, reduction: str) -> str:
    """The reduction asked for (the deprecated `size_average` / `reduce` win, with
    PyTorch's warning), checked."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _record_pair(node_cls: type[Node], out: Tensor, input: Tensor,  # noqa: A002
                 target: Tensor, reduction: str, **values) -> None:
    node = record(node_cls, out, input, target)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), "target": SavedTensor(target),
                            "reduction": REDUCTIONS[reduction], **values})


def _float_pair(input: Tensor, target: Tensor, kernel: str):  # noqa: A002
    dt = result_type(input, target)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{TYPE_NAMES[dt.name]}'")
    return input._data.astype(dt.np, copy=False), target._data.astype(dt.np, copy=False)


class SmoothL1LossBackward0(ArrayFormulaNode):
    """smooth_l1_loss: z / beta inside (-beta, beta), sign(z) outside (z = x - t)."""

    tangent = ("apply_loss_reduction(smooth_l1_part(self_t, self_p, target_p, beta) + "
               "smooth_l1_part(target_t, target_p, self_p, beta), reduction)")
    saves = {"beta": VALUE, "reduction": VALUE, "self": INPUT, "target": INPUT}
    formulas = (Formula("self", "smooth_l1_loss_backward(grad, self, target, reduction, beta)"),
                Formula("target", "smooth_l1_loss_backward(grad, target, self, reduction, beta)"))


class HuberLossBackward0(ArrayFormulaNode):
    """huber_loss: z inside (-delta, delta), delta * sign(z) outside (z = x - t)."""

    tangent = ("apply_loss_reduction(huber_part(self_t, self_p, target_p, delta) + "
               "huber_part(target_t, target_p, self_p, delta), reduction)")
    saves = {"delta": VALUE, "reduction": VALUE, "self": INPUT, "target": INPUT}
    formulas = (Formula("self", "huber_loss_backward(grad, self, target, reduction, delta)"),
                Formula("target", "huber_loss_backward(grad, target, self, reduction, delta)"))


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
            reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The mean (or sum, or none) of absolute differences: PyTorch composes it of
    `sub`, `abs` and `mean`/`sum`, and so does minigrad (those are its nodes)."""
    input, target = _broadcast_pair(input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    diff = abs_(sub(input, target))
    return diff if reduction == "none" else sum_(diff) if reduction == "sum" else mean(diff)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 z**2 / beta where |z| < beta, |z| - 0.5 beta elsewhere (z = input - target):
    squared near zero, absolute far from it. beta = 0 is `l1_loss`."""
    input, target = _broadcast_pair(input, target)
    reduction = reduction_of(size_average, reduce, reduction)
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, t = _float_pair(input, target, "smooth_l1_cpu")
    b = x.dtype.type(beta)
    with np.errstate(all="ignore"):
        z = np.abs(x - t)
        loss = np.where(z < b, x.dtype.type(0.5) * z * z / b, z - x.dtype.type(0.5) * b)
    out = Tensor._make(_reduce(loss.astype(x.dtype), reduction))
    _record_pair(SmoothL1LossBackward0, out, input, target, reduction, beta=float(beta))
    return out


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """0.5 z**2 where |z| < delta, delta (|z| - 0.5 delta) elsewhere (z = input - target)."""
    if weight is not None:
        raise NotImplementedError("minigrad's huber_loss has no weight argument")
    input, target = _broadcast_pair(input, target)
    reduction = reduction_of(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, t = _float_pair(input, target, "huber_cpu")
    d = x.dtype.type(delta)
    with np.errstate(all="ignore"):
        z = np.abs(x - t)
        loss = np.where(z < d, x.dtype.type(0.5) * z * z, d * (z - x.dtype.type(0.5) * d))
    if not loss.size:  # (PyTorch's loss is `empty_like(input)`: of its strides, here)
        loss = with_strides(loss.shape, x.dtype, element_strides(input._data))
    out = Tensor._make(_reduce(loss.astype(x.dtype, copy=False), reduction))
    _record_pair(HuberLossBackward0, out, input, target, reduction, delta=float(delta))
    return out


# -- binary cross-entropy ------------------------------------------------------------------------


class BinaryCrossEntropyBackward0(ArrayFormulaNode):
    """binary_cross_entropy: w * (p - t) / max((1 - p) p, 1e-12) for p, and
    w * (log(1 - p) - log(p)) for the target."""

    tangent = ("apply_loss_reduction(bce_part(self_t, self_p, target_p, weight) + "
               "bce_target_part(target_t, self_p, weight), reduction)")
    saves = {"reduction": VALUE, "self": INPUT, "target": INPUT, "weight": INPUT}
    formulas = (
        Formula("self", "binary_cross_entropy_backward(grad, self, target, weight, reduction)"),
        Formula("target", "binary_cross_entropy_target_backward(grad, self, target, weight, "
                          "reduction)"))


class BinaryCrossEntropyWithLogitsBackward0(ArrayFormulaNode):
    """binary_cross_entropy_with_logits: w * (sigmoid(x) - t) for the logits (with
    pos_weight pw: w * ((pw t + 1 - t) sigmoid(x) - pw t)), w * -x for the target
    (w * (log_sigmoid(-x) - pw log_sigmoid(x)) with pos_weight)."""

    tangent = ("apply_loss_reduction(bce_logits_part(self_t, self_p, target_p, weight, "
               "pos_weight) + bce_logits_target_part(target_t, self_p, weight, pos_weight), "
               "reduction)")
    saves = {"pos_weight": INPUT, "reduction": VALUE, "self": INPUT, "target": INPUT,
             "weight": INPUT}
    formulas = (
        Formula("self", "binary_cross_entropy_with_logits_backward(grad, self, target, "
                        "weight, pos_weight, reduction)"),
        Formula("target", "binary_cross_entropy_with_logits_target_backward(grad, self, "
                          "target, weight, pos_weight, reduction)"))


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), exact for large |x|."""
    return log_sigmoid_and_buffer(x)[0]


def log_sigmoid_and_buffer(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log_sigmoid(x) and exp(-|x|), PyTorch's `buffer`: float64 and float32 with the
    `log_sigmoid` kernel, other types with numpy."""
    if x.dtype in (np.float64, np.float32):
        flat = np.ascontiguousarray(x).reshape(-1)
        out, buffer = np.empty(x.shape, x.dtype), np.empty(x.shape, x.dtype)
        K.log_sigmoid(flat, out.reshape(-1), buffer.reshape(-1))
        return out, buffer
    with np.errstate(all="ignore"):
        z = np.exp(-np.abs(x))
        return np.minimum(x, 0) - np.log1p(z), z


def _check_weight_shape(weight: Tensor, shape: tuple) -> None:
    """The weight must expand to the input's shape (PyTorch's expand error)."""
    ws = weight._data.shape
    fits = len(ws) <= len(shape) and all(
        w in (1, s) for w, s in zip(ws[::-1], shape[::-1]))
    if not fits:
        raise RuntimeError(
            f"Attempting to broadcast a dimension of length {weight.shape[-1]} at -1! "
            f"Mismatching argument at index 1 had {Size(weight._data.shape)!r}; but expected "
            f"shape should be broadcastable to [{', '.join(map(str, shape))}]")


def binary_cross_entropy(input: Tensor, target: Tensor,  # noqa: A002
                         weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """-w (t log(p) + (1 - t) log(1 - p)) for probabilities p, each log at least -100
    (so p = 0 or 1 gives a large loss, not inf)."""
    reduction = reduction_of(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape!r}) that is different to the "
                         f"input size ({input.shape!r}) is deprecated. Please ensure they have "
                         "the same size.")
    if weight is not None:  # (PyTorch expands it to the input's shape first)
        _check_weight_shape(weight, input._data.shape)
        weight = expand(weight, input._data.shape)
    refuse_grad_for("binary_cross_entropy", "weight", weight)
    for other in (target, weight):
        if other is not None and other.dtype is not input.dtype:
            raise RuntimeError(f"Found dtype {TYPE_NAMES[other.dtype.name]} but expected "
                               f"{TYPE_NAMES[input.dtype.name]}")
    p, t = input._data, target._data
    if p.dtype.kind != "f":
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for "
                                  f"'{TYPE_NAMES[input.dtype.name]}'")
    with np.errstate(all="ignore"):
        _check_probabilities(p, t)
        low = p.dtype.type(-100)
        loss = ((t - 1) * np.maximum(np.log1p(-p), low) - t * np.maximum(np.log(p), low))
        if weight is not None:
            loss = loss * weight._data
    out = Tensor._make(_reduce(np.asarray(loss, p.dtype), reduction))
    _record_pair(BinaryCrossEntropyBackward0, out, input, target, reduction,
                 weight=SavedTensor(weight) if weight is not None else None)
    return out


def _check_probabilities(p: np.ndarray, t: np.ndarray) -> None:
    """PyTorch's kernel checks element by element, the input before the target, that
    both lie in [0, 1] (nan does not): the first bad element names which one."""
    bad_p, bad_t = ~((p >= 0) & (p <= 1)), ~((t >= 0) & (t <= 1))
    bad = (bad_p | bad_t).reshape(-1)
    if bad.any():
        which = "input" if bad_p.reshape(-1)[bad.argmax()] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy_with_logits(
        input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
        size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
        pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy of sigmoid(input), computed from the logits directly
    (stable for large |input|); `pos_weight` weighs the positive term per class."""
    reduction = reduction_of(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape!r}) must be the same as input size "
                         f"({input.shape!r})")
    refuse_grad_for("binary_cross_entropy_with_logits", "weight", weight)
    refuse_grad_for("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    dt = result_type(input, target)
    if dt is not target.dtype:
        raise RuntimeError(f"result type {dt.type_name} can't be cast to the desired output "
                           f"type {target.dtype.type_name}")
    x, t = _float_pair(input, target, "binary_cross_entropy_with_logits")
    with np.errstate(all="ignore"):
        log_sig = _log_sigmoid(x)
        if pos_weight is not None:
            log_sig = log_sig * ((pos_weight._data - 1) * t + 1)
        loss = (1 - t) * x - log_sig
        if weight is not None:
            loss = loss * weight._data
    if not loss.size:  # (PyTorch's loss is C++'s `1 - target`, `empty_like(target)` filled)
        loss = with_strides(loss.shape, x.dtype, element_strides(target._data))
    out = Tensor._make(_reduce(np.asarray(loss, x.dtype), reduction))
    _record_pair(BinaryCrossEntropyWithLogitsBackward0, out, input, target, reduction,
                 weight=SavedTensor(weight) if weight is not None else None,
                 pos_weight=SavedTensor(pos_weight) if pos_weight is not None else None)
    return out


# -- declarations: the nodes of nn.functional's losses (see `declaration.py`) --------------



declare("mse_loss", nodes=(MseLossBackward0,))
declare("smooth_l1_loss", nodes=(SmoothL1LossBackward0,))
declare("huber_loss", nodes=(HuberLossBackward0,))
declare("binary_cross_entropy", nodes=(BinaryCrossEntropyBackward0,))
declare("binary_cross_entropy_with_logits", nodes=(BinaryCrossEntropyWithLogitsBackward0,))
declare("mse_loss_backward", nodes=(MseLossBackwardBackward0,), aten=mse_loss_backward)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def mse_loss_double_backward(grad: Tensor, input: Tensor, reduction: int) -> Tensor:  # noqa: A002
    """The slope of mse_loss_backward in self: 2 * grad, divided in place by the
    number of elements for "mean" (reduction 1)."""
    grad_input = Scalar(2) * grad
    if reduction == 1:
        BACKWARD_OPS["div_scalar_"](grad_input, input.numel())
    return grad_input


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


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


def _log_sigmoid_of(x: Tensor) -> Tensor:
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
    return _weighted((_log_sigmoid_of(-input) - pos_weight * _log_sigmoid_of(input)) * grad, weight)

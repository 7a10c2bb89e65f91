"""The classification losses: `nll_loss`, and `cross_entropy` built from it.

`nll_loss(logp, target)` picks, for each row, the log-probability of its target class
and averages the negatives. It is one node, NllLossBackward0, which saves the input
(only for its shape, as PyTorch does), the target, the weight and the total weight it
divided by. Over maps (N, C, H, W) it is nll_loss2d, NllLoss2DBackward0, the same at
every pixel; other shapes (N, C, d1, ...) are viewed as (N, C, 1, d1 * ...) for it, as
PyTorch's nll_loss_nd does. `cross_entropy` is not a node of its own: like PyTorch,
it is log_softmax followed by nll_loss, and with class probabilities or label
smoothing, a few more ordinary ops (mul, sum, neg, div), which is what its backward
graph shows.
"""

from __future__ import annotations

import math

import numpy as np

from .._args import type_name
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor, bump_version
from ..autograd.record import record, refuse_grad_for
from ..kernels import on_demand
from ..tensor import Tensor
from . import views
from .arithmetic import add, div, mul, neg
from .copies import contiguous
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, on_arrays
from .loss import REDUCTIONS, TYPE_NAMES, reduction_of
from .masking import masked_fill_
from .reductions import sum as sum_
from .scalar_overloads import add_scalar, div_scalar, mul_scalar
from .softmax import log_softmax
from .tangent_formulas import Tangent

losses = on_demand("losses")  # (loaded at the first nll_loss: see `on_demand`)


class NllLossBackward0(ArrayFormulaNode):
    """nll_loss: the gradient of row i is -weight[t_i] * grad at column t_i (divided by
    the total weight for "mean"), zero elsewhere and in ignored rows."""

    tangent = Tangent("nll_loss(self_t, target, weight, reduction, ignore_index)")
    saves = {"ignore_index": VALUE, "reduction": VALUE, "self": INPUT, "target": INPUT,
             "total_weight": INPUT, "weight": INPUT}
    # (total_weight is an output of PyTorch's nll_loss_forward: unpacked last)
    unpack_order = ("self", "target", "weight", "total_weight")
    formulas = (Formula("self", "nll_loss_backward(grad, self, target, weight, reduction, "
                                "ignore_index, total_weight)"),)



@on_arrays("nll_loss_backward")
def _nll_loss_backward_on_arrays(grad: np.ndarray, x: np.ndarray, target: np.ndarray,
                                 w: np.ndarray | None, reduction: int, ignore_index: int,
                                 total: np.ndarray) -> np.ndarray:
    return _nll_grad(grad, x, target, w, total, reduction, ignore_index)


def _nll_grad(grad: np.ndarray, x: np.ndarray, target: np.ndarray, w: np.ndarray | None,
              total: np.ndarray, reduction: int, ignore: int) -> np.ndarray:
    """nll_loss's gradient for its input: -weight[t_i] * grad at column t_i of row i
    (divided by the total weight for "mean"), zero elsewhere and in ignored rows."""
    target = target.reshape(-1)
    out = np.zeros(x.shape, grad.dtype)
    rows = out.reshape(-1, x.shape[-1])
    keep = target != ignore
    idx = np.nonzero(keep)[0]
    cls = target[keep]
    if reduction == REDUCTIONS["none"] and x.ndim == 2:
        g = -grad[keep] if w is None else -w[cls] * grad[keep]
    else:
        with np.errstate(invalid="ignore", divide="ignore"):  # (everything ignored: nan)
            g = grad if reduction != REDUCTIONS["mean"] else grad / total
        g = -g
        g = np.broadcast_to(g, idx.shape) if w is None else w[cls] * g
    rows[idx, cls] = g
    if x.size == 0:
        bump_version(out)  # (PyTorch zeroes an empty gradient in place)
    return out


class NllLoss2DBackward0(ArrayFormulaNode):
    """nll_loss2d (a batch of maps, N x C x H x W): nll_loss at every pixel; the
    gradient at (n, t, h, w) is -weight[t] * grad (divided by the total weight for
    "mean"), where t is that pixel's target, zero elsewhere and at ignored pixels."""

    tangent = Tangent("nll_loss2d(self_t, target, weight, reduction, ignore_index)")
    saves = NllLossBackward0.saves
    unpack_order = NllLossBackward0.unpack_order
    formulas = (Formula("self", "nll_loss2d_backward(grad, self, target, weight, reduction, "
                                "ignore_index, total_weight)"),)


@on_arrays("nll_loss2d_backward")
def _nll_loss2d_backward_on_arrays(grad: np.ndarray, x: np.ndarray, target: np.ndarray,
                                   w: np.ndarray | None, reduction: int, ignore_index: int,
                                   total: np.ndarray) -> np.ndarray:
    return _nll2d_grad(grad, x, target, w, total, reduction, ignore_index)


def _nll2d_grad(grad: np.ndarray, x: np.ndarray, target: np.ndarray, w: np.ndarray | None,
                total: np.ndarray, reduction: int, ignore: int) -> np.ndarray:
    """nll_loss2d's gradient: nll_loss's, with each pixel a row (the classes moved to
    the last dim, then back)."""
    n, c, h, wd = x.shape
    rows = np.broadcast_to(np.zeros((), x.dtype), (n * h * wd, c))  # (for its shape)
    if reduction == REDUCTIONS["none"]:
        grad = grad.reshape(-1)
    out = _nll_grad(grad, rows, target, w, total, reduction, ignore)
    return np.ascontiguousarray(out.reshape(n, h, wd, c).transpose(0, 3, 1, 2))


class NllLossBackwardBackward0(FormulaNode):
    """nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index,
    total_weight): linear in grad_output (its gradient is nll_loss of the incoming
    gradient), flat in self."""

    tangent = Tangent("nll_loss_backward(dense(grad_output_t, grad_output_p), self_p, target, "
                      "weight, reduction, ignore_index, _total_weight)")
    saves = {"ignore_index": VALUE, "reduction": VALUE, "target": INPUT, "weight": INPUT}
    formulas = (Formula("grad_output", "nll_loss(grad, target, weight, reduction, "
                                       "ignore_index)"),
                Formula("self", "zeros_like(grad)"))


def nll_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor, weight: Tensor | None,
                      reduction: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    """The gradient of nll_loss for its input (PyTorch's aten::nll_loss_backward)."""
    out = Tensor._make(_nll_grad(grad_output._data, self._data, target._data,
                                 None if weight is None else weight._data, total_weight._data,
                                 reduction, ignore_index))
    node = record(NllLossBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"ignore_index": u64(ignore_index), "reduction": reduction,
                            "target": SavedTensor(target),
                            "weight": None if weight is None else SavedTensor(weight),
                            "_total_weight": total_weight})  # (for the tangent)
    return out


class NllLoss2DBackwardBackward0(FormulaNode):
    """nll_loss2d_backward: linear in grad_output (its gradient is nll_loss2d of the
    incoming gradient), flat in self."""

    tangent = Tangent("nll_loss2d_backward(dense(grad_output_t, grad_output_p), self_p, "
                      "target, weight, reduction, ignore_index, _total_weight)")
    saves = NllLossBackwardBackward0.saves
    formulas = (Formula("grad_output", "nll_loss2d(grad, target, weight, reduction, "
                                       "ignore_index)"),
                Formula("self", "zeros_like(grad)"))


def nll_loss2d_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                        weight: Tensor | None, reduction: int, ignore_index: int,
                        total_weight: Tensor) -> Tensor:
    """The gradient of nll_loss2d for its input (PyTorch's aten::nll_loss2d_backward)."""
    out = Tensor._make(_nll2d_grad(grad_output._data, self._data, target._data,
                                   None if weight is None else weight._data, total_weight._data,
                                   reduction, ignore_index))
    node = record(NllLoss2DBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"ignore_index": u64(ignore_index), "reduction": reduction,
                            "target": SavedTensor(target),
                            "weight": None if weight is None else SavedTensor(weight),
                            "_total_weight": total_weight})  # (for the tangent)
    return out


def _nll_loss2d_of_enum(x: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                        ignore_index: int) -> Tensor:
    """nll_loss2d with the reduction as PyTorch's enum number."""
    name = next(k for k, v in REDUCTIONS.items() if v == reduction)
    return _nll2d(x, target, weight, name, ignore_index)


def _nll_loss_of_enum(x: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                      ignore_index: int) -> Tensor:
    """nll_loss with the reduction as PyTorch's enum number (as backward formulas
    call it)."""
    name = next(k for k, v in REDUCTIONS.items() if v == reduction)
    return _nll(x, target, weight, name, ignore_index)




def _check_nll(x: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """PyTorch's checks of nll_loss's arguments, in its order."""
    if x._data.ndim == 2 and target._data.ndim == 1 \
            and x._data.shape[0] == target._data.shape[0] and weight is None \
            and target._data.dtype == np.int64 and x._data.dtype.kind == "f":
        return  # (a batch of rows and a class index for each: nothing to refuse)
    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim != 1 and x.shape[0] != (target.shape[0] if target.ndim else 1):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 1}).")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    n_classes = x.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           "or no classes but got weight tensor of shape: "
                           f"[{', '.join(map(str, weight.shape))}]")
    if target.dtype.name != "int64":
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{TYPE_NAMES[target.dtype.name]}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"nll_loss_out_frame\" not implemented for '{TYPE_NAMES[x.dtype.name]}'")
    if weight is not None and weight.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {TYPE_NAMES[x.dtype.name]} but found "
                           f"{TYPE_NAMES[weight.dtype.name]}")


def _check_targets(targets: np.ndarray, n_classes: int, ignore_index: int) -> None:
    if targets.size and 0 <= targets.min() and targets.max() < n_classes:
        return  # (every target a class: the usual case, in two passes)
    bad = (targets != ignore_index) & ((targets < 0) | (targets >= n_classes))
    if bad.any():
        raise IndexError(f"Target {targets[np.argmax(bad)]} is out of bounds.")


def _nll(x: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
         ignore_index: int) -> Tensor:
    """nll_loss over any number of dims, as PyTorch's nll_loss_nd: 1-D or 2-D input
    is nll_loss's, 4-D (N, C, H, W) nll_loss2d's; other shapes (N, C, d1, ...) are
    viewed as (N, C, 1, d1 * ...) for nll_loss2d, its "none" result viewed back."""
    if x.ndim <= 2:
        return _nll_rows(x, target, weight, reduction, ignore_index)
    if x.shape[0] != (target.shape[0] if target.ndim else 1):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 1}).")
    if x.ndim == 4:
        return _nll2d(x, target, weight, reduction, ignore_index)
    n, c, out_size = x.shape[0], x.shape[1], (x.shape[0], *x.shape[2:])
    if tuple(target.shape[1:]) != tuple(x.shape[2:]):
        raise RuntimeError(f"Expected target size [{', '.join(map(str, out_size))}], got "
                           f"[{', '.join(map(str, target.shape))}]")
    x, target = contiguous(x), contiguous(target)
    x = views.view(x, (n, c, 1, -1) if x.numel() else (n, c, 0, 0))
    target = views.view(target, (n, 1, -1) if target.numel() else (n, 0, 0))
    out = _nll2d(x, target, weight, reduction, ignore_index)
    return views.view(out, out_size) if reduction == "none" else out


def _check_nll2d(x: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """PyTorch's checks of nll_loss2d's arguments, in its order."""
    if target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if x.ndim != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {x.ndim}")
    if target.dtype.name != "int64":
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{TYPE_NAMES[target.dtype.name]}")
    if weight is not None and weight.numel() != x.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (x.shape[0], *x.shape[2:]) != tuple(target.shape):
        raise RuntimeError(f"size mismatch (got input: [{', '.join(map(str, x.shape))}] , "
                           f"target: [{', '.join(map(str, target.shape))}]")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"nll_loss2d_forward_out_frame\" not implemented for '{TYPE_NAMES[x.dtype.name]}'")
    if weight is not None and weight.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {TYPE_NAMES[x.dtype.name]} but found "
                           f"{TYPE_NAMES[weight.dtype.name]}")


def _nll2d(x: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
           ignore_index: int) -> Tensor:
    """PyTorch's nll_loss2d: nll_loss with each pixel (n, h, w) a row, summed in the
    pixels' order; its "none" result is (N, H, W)."""
    refuse_grad_for("nll_loss2d_forward", "weight", weight)
    _check_nll2d(x, target, weight)
    n, c, h, w = x.shape
    rows = np.ascontiguousarray(np.moveaxis(x._data, 1, -1)).reshape(n * h * w, c)
    out_data, total = _nll_values(rows, target._data.reshape(-1), weight, reduction,
                                  ignore_index)
    return _record_nll(NllLoss2DBackward0, out_data.reshape((n, h, w)) if reduction == "none"
                       else out_data, total, x, target, weight, reduction, ignore_index)


def _nll_values(data: np.ndarray, targets: np.ndarray, weight: Tensor | None, reduction: str,
                ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """nll_loss of rows (batch, classes): the loss and the total weight."""
    _check_targets(targets, data.shape[-1], ignore_index)
    dt = data.dtype
    w = weight._data if weight is not None else np.ones(0, dt)
    if reduction == "none":
        keep = targets != ignore_index
        picked = np.zeros(targets.shape, dt)
        rows = np.nonzero(keep)[0]
        cls = targets[keep]
        picked[rows] = -data[rows, cls] * (w[cls] if weight is not None else dt.type(1))
        return picked, np.array(0, dt)
    if data.shape[0] == 0:  # (the mean of nothing is nan, as in PyTorch)
        return np.array(np.nan if reduction == "mean" else 0, dt), np.array(0, dt)
    loss, total_weight = losses.nll_sums(np.ascontiguousarray(data), targets, w,
                                         weight is not None, ignore_index)
    loss, total = np.array(loss, dt), np.array(total_weight, dt)
    if reduction != "mean":
        return loss, total
    # (every target ignored, or weighed 0: 0 / 0, nan, without numpy's warning)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.array(loss / total, dt), total


def _record_nll(node_cls: type, out_data: np.ndarray, total: np.ndarray, x: Tensor,
                target: Tensor, weight: Tensor | None, reduction: str,
                ignore_index: int) -> Tensor:
    out = Tensor._make(out_data)
    node = record(node_cls, out, x)
    if node is not None:
        node._saved.update({
            "ignore_index": u64(ignore_index), "_ignore_index": ignore_index,
            "reduction": REDUCTIONS[reduction], "self": SavedTensor(x),
            "target": SavedTensor(target),
            "weight": SavedTensor(weight) if weight is not None else None,
            "total_weight": SavedTensor(Tensor._make(total)),  # (an output: saved last)
        })
    return out


def _nll_rows(x: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
              ignore_index: int) -> Tensor:
    """PyTorch's nll_loss: 1-D input (one sample) or 2-D (batch, classes)."""
    refuse_grad_for("nll_loss_forward", "weight", weight)
    _check_nll(x, target, weight)
    data = x._data.reshape(-1, x.shape[-1]) if x.ndim == 1 else x._data
    # (one sample's "none" loss is a 0-dim tensor, its one value: a sum)
    summed = "sum" if reduction == "none" and x.ndim == 1 else reduction
    out_data, total = _nll_values(data, target._data.reshape(-1), weight, summed,
                                  ignore_index)
    return _record_nll(NllLossBackward0, out_data, total, x, target, weight, reduction,
                       ignore_index)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of the target classes: `-input[i, target[i]]`,
    weighted by `weight[target[i]]`, averaged over the total weight ("mean"), summed,
    or per row ("none"); rows whose target is `ignore_index` count for nothing. The
    classes are dim 1 (dim 0 of one sample): input (N, C, d1, ...) takes a target
    (N, d1, ...), one class per position."""
    reduction = reduction_of(size_average, reduce, reduction)
    _check_weight(weight, "nll_loss_nd")
    return _nll(input, target, weight, reduction, ignore_index)


def _check_weight(weight, fn: str) -> None:
    if weight is not None and not isinstance(weight, Tensor):
        raise TypeError(f"{fn}(): argument 'weight' (position 3) must be Tensor, "
                        f"not {type_name(weight)}")


def _weight_view(weight: Tensor, ndim: int) -> Tensor:
    """The class weights shaped to broadcast along the class dim (1) of the input."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[1] = weight.shape[0]
    return views.view(weight, tuple(shape))


def _with_probabilities(x: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                        label_smoothing: float) -> Tensor:
    """cross_entropy against class probabilities: -sum(target * log_softmax(x)), per
    row, summed, or averaged over the rows."""
    class_dim = 0 if x.ndim == 1 else 1
    n_classes = x.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"[{', '.join(map(str, weight.shape))}]")
    logp = log_softmax(x, class_dim, x.dtype)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        # (C++ divides in double: by no classes, inf, over a target of no elements)
        share = label_smoothing / n_classes if n_classes else math.inf
        target = add_scalar(mul_scalar(target, 1 - label_smoothing), share)
    product = mul(logp, target)
    if weight is not None:
        product = mul(product, _weight_view(weight, logp.ndim))
    if reduction == "none":
        return neg(sum_(product, class_dim))
    total = neg(sum_(product))
    if reduction == "sum":
        return total
    if x.numel() == 0:
        raise NotImplementedError("minigrad's cross_entropy takes no empty input")
    return div_scalar(total, x.numel() // n_classes)


def _check_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError("label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")


def _smoothed(x: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
              ignore_index: int, label_smoothing: float) -> Tensor:
    """cross_entropy with class indices and label smoothing: (1 - s) * nll_loss plus
    s / n_classes times the loss against a uniform target, as PyTorch composes it."""
    class_dim = 0 if x.ndim == 1 else 1
    logp = log_softmax(x, class_dim, x.dtype)
    nll = _nll(logp, target, weight, reduction, ignore_index)
    n_classes = logp.shape[class_dim]
    if weight is not None:
        smooth = neg(sum_(mul(logp, _weight_view(weight, logp.ndim)), class_dim))
    else:
        smooth = neg(sum_(logp, class_dim))
    ignored = Tensor._make(np.asarray(target._data == ignore_index))
    masked_fill_(smooth, ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = target._data[~ignored._data].reshape(-1)
            denominator = sum_(Tensor._make(weight._data[kept]))
        else:
            denominator = sum_(Tensor._make(~ignored._data))
        smooth = div(sum_(smooth), denominator)
    elif reduction == "sum":
        smooth = sum_(smooth)
    # (PyTorch's C++ evaluates the right-hand product first: it runs last in backward)
    smooth = mul_scalar(smooth, label_smoothing / n_classes)
    return add(mul_scalar(nll, 1 - label_smoothing), smooth)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the classes (dim 1, or 0 for one sample) followed by nll_loss.
    `target` holds class indices, or class probabilities (a float tensor of the input's
    shape); `label_smoothing` mixes a uniform distribution into the target."""
    reduction = reduction_of(size_average, reduce, reduction)
    _check_weight(weight, "cross_entropy_loss")
    if input.shape == target.shape:
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {TYPE_NAMES[target.dtype.name]}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _with_probabilities(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        return _smoothed(input, target, weight, reduction, ignore_index, label_smoothing)
    class_dim = 0 if input.ndim == 1 else 1
    return _nll(log_softmax(input, class_dim, input.dtype), target, weight, reduction,
                ignore_index)


# -- declarations: the nodes of nn.functional's cross-entropy (see `declaration.py`) -------



declare("nll_loss", nodes=(NllLossBackward0,), aten=_nll_loss_of_enum)
declare("nll_loss_backward", nodes=(NllLossBackwardBackward0,), aten=nll_loss_backward)
declare("nll_loss2d", nodes=(NllLoss2DBackward0,), aten=_nll_loss2d_of_enum)
declare("nll_loss2d_backward", nodes=(NllLoss2DBackwardBackward0,), aten=nll_loss2d_backward)

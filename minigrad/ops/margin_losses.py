"""soft_margin_loss: log(1 + exp(-y * x)) for labels y = +-1 (node
SoftMarginLossBackward0), the logistic loss of a two-class classifier's score x.

Its gradient, -y * z / (1 + z) with z = exp(-y * x) (divided by the number of
elements for "mean"), is PyTorch's op soft_margin_loss_backward (node
SoftMarginLossBackwardBackward0), whose own gradients are written with minigrad ops.
"""

from __future__ import annotations

import numpy as np

from .._creation import ones_like
from ..arrays.broadcasting import broadcast_shape, shape_mismatch
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .loss import TYPE_NAMES
from .reductions import add_up, average
from .tangent_formulas import Tangent

OP_FAMILY = "loss"


def _reduced(loss: np.ndarray, reduction: int) -> np.ndarray:
    every = tuple(range(loss.ndim))
    if reduction == 1:
        return average(loss, every, False)
    return add_up(loss, every) if reduction == 2 else loss


class SoftMarginLossBackward0(ArrayFormulaNode):
    """soft_margin_loss(x, y): PyTorch's soft_margin_loss_backward. Saves its INPUT
    and the target."""

    tangent = Tangent("apply_loss_reduction(soft_margin_loss_backward(self_t, self_p, target, "
                      "0), reduction)")
    saves = {"reduction": VALUE, "self": INPUT, "target": INPUT}
    formulas = (Formula("self", "soft_margin_loss_backward(grad, self, target, reduction)"),)


def _backward_array(grad: np.ndarray, x: np.ndarray, y: np.ndarray,
                    reduction: int) -> np.ndarray:
    """-norm * y * z / (1 + z) * grad, z = exp(-y * x), in PyTorch's steps."""
    kind = x.dtype.type
    norm = 1.0 / x.size if reduction == 1 and x.size else 1.0
    with np.errstate(all="ignore"):
        z = np.exp(-y * x)
        out = y * z * kind(-norm)
        out = out / (z + kind(1)) * grad
    return np.asarray(out, x.dtype)


on_arrays("soft_margin_loss_backward")(_backward_array)


def soft_margin_loss_forward(input: Tensor, target: Tensor, reduction: int) -> Tensor:  # noqa: A002
    """PyTorch's aten::soft_margin_loss (reduction 0 none, 1 mean, 2 sum)."""
    x, y = input._data, target._data
    full = broadcast_shape(x.shape, y.shape)
    if full != x.shape:  # (PyTorch multiplies into a tensor of the input's shape)
        raise shape_mismatch(x.shape, full)
    if x.dtype.kind != "f" and np.result_type(x, y) != x.dtype:
        raise RuntimeError(f"result type {TYPE_NAMES[np.result_type(x, y).name]} can't be "
                           f"cast to the desired output type {TYPE_NAMES[x.dtype.name]}")
    if target.requires_grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with "
                           "respect to argument 'target'. This input cannot have "
                           "requires_grad True.")
    with np.errstate(all="ignore"):
        loss = np.log1p(np.exp((-x * y).astype(x.dtype)))
    out = Tensor._make(np.asarray(_reduced(np.asarray(loss, x.dtype), reduction), x.dtype))
    node = record(SoftMarginLossBackward0, out, input)
    if node is not None:
        node._saved.update({"reduction": reduction, "self": SavedTensor(input),
                            "target": SavedTensor(target)})
    return out


class SoftMarginLossBackwardBackward0(FormulaNode):
    """soft_margin_loss_backward(grad_output, x, y): linear in grad_output. Saves
    grad_output, the INPUT and the target."""

    saves = {"grad_output": INPUT, "reduction": VALUE, "self": INPUT, "target": INPUT}
    formulas = (Formula("grad_output", "soft_margin_loss_double_backward_grad_output(grad, "
                                       "grad_output, self, target, reduction)"),
                Formula("self", "soft_margin_loss_double_backward(grad * grad_output, self, "
                                "target, reduction)"))


def soft_margin_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor,  # noqa: A002
                              reduction: int) -> Tensor:
    """soft_margin_loss's gradient of its input (PyTorch's aten op of that name)."""
    out = Tensor._make(_backward_array(grad_output._data, input._data, target._data,
                                       reduction))
    node = record(SoftMarginLossBackwardBackward0, out, grad_output, input)
    if node is not None:
        node._saved.update({"grad_output": SavedTensor(grad_output), "reduction": reduction,
                            "self": SavedTensor(input), "target": SavedTensor(target)})
    return out


@helper
def soft_margin_loss_double_backward(grad: Tensor, input: Tensor, target: Tensor,  # noqa: A002
                                     reduction: int) -> Tensor:
    """d/dx of soft_margin_loss_backward: y * y * z / (1 + z)**2 (/ numel for "mean")."""
    z = (input * -target).exp()
    zplus1 = z + 1
    res = target * target * z / (zplus1 * zplus1)
    if reduction == 1:
        res = res / input.numel()
    return res * grad


@helper
def soft_margin_loss_double_backward_grad_output(grad: Tensor, grad_output: Tensor,
                                                 input: Tensor, target: Tensor,  # noqa: A002
                                                 reduction: int) -> Tensor:
    """d/d(grad_output) of soft_margin_loss_backward, summed for a reduced loss."""
    if reduction == 0:
        return soft_margin_loss_backward(grad, input, target, reduction)
    r = soft_margin_loss_backward(ones_like(grad_output), input, target, reduction)
    return (r * grad).sum()


declare("soft_margin_loss", nodes=(SoftMarginLossBackward0,), aten=soft_margin_loss_forward)
declare("soft_margin_loss_backward", nodes=(SoftMarginLossBackwardBackward0,),
        aten=soft_margin_loss_backward)

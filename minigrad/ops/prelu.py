"""`prelu`: leaky_relu whose slope below 0 is a learned weight, one per channel.

`prelu(x, weight)` is x where x > 0, `weight * x` elsewhere. As PyTorch's, the weight
(one number, or one per channel: dim 1 of `x`) is viewed first to broadcast over `x`
(`(C,)` as `(1, C, 1, ...)`: a ViewBackward0), then `_prelu_kernel(x, weight)`
computes it, recorded as PreluKernelBackward0. Its backward is an op of its own,
`_prelu_kernel_backward`, giving both gradients at once (the weight's still of `x`'s
shape: the engine sums it to the weight's), which a `create_graph=True` backward
records as PreluKernelBackwardBackward0.
"""

from __future__ import annotations

import numpy as np

from ..arrays.layout import in_result_layout
from ..autograd.graph import INPUT, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, on_arrays
from .loss import TYPE_NAMES
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the activations.)
OP_FAMILY = "activations"


def _kernel(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return in_result_layout(np.where(x > 0, x, w * x).astype(x.dtype, copy=False), x, w)


@on_arrays("_prelu_kernel_backward")
def _kernel_backward_on_arrays(grad: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple:
    """Both gradients, each of the broadcast shape (PyTorch's kernel: `x > 0 ? grad :
    w * grad` and `x > 0 ? 0 : x * grad`)."""
    positive = x > 0
    dt = grad.dtype
    grad_x = np.where(positive, grad, w * grad).astype(dt, copy=False)
    grad_w = np.where(positive, dt.type(0), x * grad).astype(dt, copy=False)
    return (in_result_layout(grad_x, x, w, grad), in_result_layout(grad_w, x, w, grad))


class PreluKernelBackward0(ArrayFormulaNode):
    """_prelu_kernel(self, weight): both gradients from one backward op."""

    # (PyTorch's formula; `dense`: a missing tangent is zeros there, as where takes it)
    tangent = Tangent("where(self_p >= 0, dense(self_t, self_p), "
                      "weight_p * self_t + weight_t * self_p)")

    saves = {"self": INPUT, "weight": INPUT}
    formulas = (Formula("self, weight", "_prelu_kernel_backward(grad, self, weight)"),)


# PyTorch's formulas for the backward op, each for one input, reading the gradients of
# its two outputs (`grads`: None where an output got none).
_GRAD_OUTPUT = ("(where(self >= 0, grads[0], grads[0] * weight + grads[1] * self) "
                "if grads[1] is not None else where(self >= 0, grads[0], grads[0] * weight)) "
                "if grads[0] is not None "
                "else where(self >= 0, zeros((), dtype=grad_output.dtype), grads[1] * self)")
_SELF = ("where(self >= 0, zeros((), dtype=self.dtype), grad_output * grads[1]) "
         "if grads[1] is not None else zeros_like(self)")
_WEIGHT = ("where(self >= 0, zeros((), dtype=weight.dtype), grad_output * grads[0]) "
           "if grads[0] is not None else zeros_like(self)")


class PreluKernelBackwardBackward0(FormulaNode):
    """_prelu_kernel_backward(grad_output, self, weight): the gradients of prelu's
    input (output 0) and weight (output 1)."""

    saves = {"grad_output": INPUT, "self": INPUT, "weight": INPUT}
    formulas = (Formula("grad_output", _GRAD_OUTPUT), Formula("self", _SELF),
                Formula("weight", _WEIGHT))

    def _num_outputs(self) -> int:
        return 2


def _prelu_kernel(self: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x (PyTorch's aten::_prelu_kernel)."""
    out = Tensor._make(_kernel(self._data, weight._data))
    node = record(PreluKernelBackward0, out, self, weight)
    if node is not None:
        node._saved.update({"self": SavedTensor(self), "weight": SavedTensor(weight)})
    return out


def _prelu_kernel_backward(grad_output: Tensor, self: Tensor, weight: Tensor) -> tuple:
    """The gradients of `_prelu_kernel`'s input and weight, both of the broadcast
    shape (PyTorch's aten::_prelu_kernel_backward)."""
    arrays = _kernel_backward_on_arrays(grad_output._data, self._data, weight._data)
    outs = tuple(Tensor._make(a) for a in arrays)
    node = record(PreluKernelBackwardBackward0, None, grad_output, self, weight)
    if node is not None:
        for i, out in enumerate(outs):
            out._grad_fn, out._output_nr = node, i
        node._saved.update({"grad_output": SavedTensor(grad_output), "self": SavedTensor(self),
                            "weight": SavedTensor(weight)})
    return outs


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """max(0, x) + weight * min(0, x), `weight` one number or one per channel (dim 1
    of `input`), as `torch.nn.functional.prelu`."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{TYPE_NAMES[input.dtype.name]} and {TYPE_NAMES[weight.dtype.name]}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"prelu_cpu" not implemented for '
                                  f"'{TYPE_NAMES[input.dtype.name]}'")
    dims = input.ndim
    if weight.numel() != 1:
        if dims == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if dims > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {weight.numel()} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if dims != weight.ndim:
        shape = [1] * dims
        if dims > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return _prelu_kernel(input, weight)


declare("prelu", nodes=(PreluKernelBackward0,), function=prelu, method=True)
declare("_prelu_kernel_backward", nodes=(PreluKernelBackwardBackward0,),
        aten=_prelu_kernel_backward)

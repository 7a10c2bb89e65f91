"""The exponential linear units: elu, celu and selu, one op with three numbers.

elu(x, alpha, scale, input_scale) is `scale * x` above 0 and
`alpha * scale * (exp(input_scale * x) - 1)` below; celu is elu with input_scale
1 / alpha, selu elu with two fixed constants. The node saves the INPUT (EluBackward0,
CeluBackward0); the in-place forms have overwritten it and save their OUTPUT instead
(EluBackward1, CeluBackward1), from which the slope below 0 follows as well:
input_scale * (y + alpha * scale).
"""

from __future__ import annotations

import numpy as np

from ..arrays.layout import in_result_layout
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..tensor import Tensor
from .declaration import declare
from .formulas import Formula, FormulaNode, Scalar, helper
from .tangent_formulas import AUTO_ELEMENT_WISE

# selu's constants (Klambauer et al., 2017), as PyTorch writes them
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _number(x) -> float:
    return float(x.value if isinstance(x, Scalar) else x)


def _elu_values(x: np.ndarray, alpha, scale, input_scale) -> np.ndarray:
    if x.dtype.kind != "f":
        kind = "Bool" if x.dtype == np.bool_ else "Long"
        raise NotImplementedError(f"\"elu_cpu\" not implemented for '{kind}'")
    t = x.dtype.type
    negcoef, poscoef, negiptcoef = t(alpha) * t(scale), t(scale), t(input_scale)
    with np.errstate(all="ignore"):
        return np.asarray(np.where(x <= 0, np.expm1(x * negiptcoef) * negcoef, x * poscoef),
                          x.dtype)


def _elu_grad(grad: np.ndarray, alpha, scale, input_scale, is_result: bool,
              x: np.ndarray) -> np.ndarray:
    """elu's gradient from its input x, or from its output (`is_result`)."""
    t = grad.dtype.type
    negcoef, poscoef, negiptcoef = (t(_number(alpha)) * t(_number(scale)), t(_number(scale)),
                                    t(_number(input_scale)))
    with np.errstate(all="ignore"):
        below = (grad * negiptcoef * (x + negcoef) if is_result
                 else grad * negiptcoef * negcoef * np.exp(x * negiptcoef))
        values = np.asarray(np.where(x <= 0, below, grad * poscoef), grad.dtype)
    return in_result_layout(values, grad, x)  # (PyTorch's kernel: grad, then x)


# -- the nodes ------------------------------------------------------------------------------


class EluBackward0(FormulaNode):
    """elu(x, alpha, scale, input_scale) (and selu). Saves its INPUT and the numbers."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"alpha": VALUE, "input_scale": VALUE, "scale": VALUE, "self": INPUT}
    formulas = (Formula("self", "elu_backward(grad, alpha, scale, input_scale, False, self)"),)


class EluBackward1(FormulaNode):
    """elu_(x, ...) (and selu_), in place: reads its OUTPUT."""

    tangent = "elu_backward(self_t, alpha, scale, input_scale, True, result)"
    elementwise = True
    saves = {"alpha": VALUE, "input_scale": VALUE, "result": OUTPUT, "scale": VALUE}
    formulas = (Formula("self", "elu_backward(grad, alpha, scale, input_scale, True, result)"),)


class CeluBackward0(FormulaNode):
    """celu(x, alpha): elu with input_scale 1 / alpha. Saves its INPUT."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"alpha": VALUE, "self": INPUT}
    formulas = (Formula("self", "elu_backward(grad, alpha, 1, celu_input_scale(alpha), "
                                "False, self)"),)


class CeluBackward1(FormulaNode):
    """celu_(x, alpha), in place: reads its OUTPUT."""

    tangent = "elu_backward(self_t, alpha, 1, celu_input_scale(alpha), True, result)"
    elementwise = True
    saves = {"alpha": VALUE, "result": OUTPUT}
    formulas = (Formula("self", "elu_backward(grad, alpha, 1, celu_input_scale(alpha), "
                                "True, result)"),)


class EluBackwardBackward0(FormulaNode):
    """elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    linear in grad_output."""

    tangent = ("elu_backward(grad_output_t, alpha, scale, input_scale, is_result, "
               "self_or_result_p) + elu_double_backward(self_or_result_t, grad_output_p, "
               "alpha, scale, input_scale, is_result, self_or_result_p)")
    elementwise = True
    saves = {"alpha": VALUE, "grad_output": INPUT, "input_scale": VALUE, "is_result": VALUE,
             "scale": VALUE, "self_or_result": INPUT}
    formulas = (Formula("grad_output", "elu_backward(grad, alpha, scale, input_scale, "
                                       "is_result, self_or_result)"),
                Formula("self_or_result", "elu_double_backward(grad, grad_output, alpha, "
                                          "scale, input_scale, is_result, self_or_result)"))


def elu_backward(grad_output: Tensor, alpha, scale, input_scale, is_result: bool,
                 self_or_result: Tensor) -> Tensor:
    """The gradient of elu (PyTorch's aten::elu_backward)."""
    out = Tensor._make(_elu_grad(grad_output._data, alpha, scale, input_scale, is_result,
                                 self_or_result._data))
    node = record(EluBackwardBackward0, out, grad_output, self_or_result)
    if node is not None:
        node._saved.update({
            "alpha": alpha, "grad_output": SavedTensor(grad_output),
            "input_scale": input_scale, "is_result": is_result, "scale": scale,
            "self_or_result": SavedTensor(self_or_result)})
    return out


@helper
def celu_input_scale(alpha) -> float:
    """1 / alpha, alpha first rounded to a C float (PyTorch's `1.0 / alpha.toFloat()`)."""
    return 1.0 / float(np.float32(_number(alpha)))


@helper
def elu_double_backward(grad: Tensor, grad_output: Tensor, alpha, scale, input_scale,
                        is_result: bool, self_or_result: Tensor) -> Tensor:
    """elu_backward's gradient in its `self_or_result`: nonzero only below 0."""
    below = (self_or_result < 0).to(grad.dtype)
    if is_result:
        return grad * grad_output * Scalar(input_scale) * below
    inner = grad * grad_output * Scalar(input_scale)
    return elu_backward(inner, alpha, scale, input_scale, is_result, self_or_result) * below


# -- the forwards -----------------------------------------------------------------------------


def _elu_op(node_cls, input: Tensor, numbers: dict, saved: dict) -> Tensor:  # noqa: A002
    out = Tensor._make(in_result_layout(_elu_values(input._data, *numbers.values()),
                                        input._data))  # (by the input, as PyTorch's kernel)
    node = record_elementwise(node_cls, out, input)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), **saved})
    return out


def _elu_op_(node_cls, input: Tensor, numbers: dict, saved: dict) -> Tensor:  # noqa: A002
    values = _elu_values(input._data, *numbers.values())
    node = begin_inplace(node_cls, input)
    input._data[...] = values
    finish_inplace(input, node)
    if node is not None:
        node._saved.update({"result": SavedTensor(input, is_output=True), **saved})
    return input


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x above 0, alpha * (exp(x) - 1) below."""
    numbers = {"alpha": alpha, "scale": 1, "input_scale": 1}
    return (_elu_op_(EluBackward1, input, numbers, numbers) if inplace
            else _elu_op(EluBackward0, input, numbers, numbers))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """`elu` in place."""
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with selu's two constants: self-normalising."""
    numbers = {"alpha": SELU_ALPHA, "scale": SELU_SCALE, "input_scale": 1}
    return (_elu_op_(EluBackward1, input, numbers, numbers) if inplace
            else _elu_op(EluBackward0, input, numbers, numbers))


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """`selu` in place."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x above 0, alpha * (exp(x / alpha) - 1) below."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    # (1 / alpha in double here; the gradient's formula rounds alpha to a float first)
    numbers = {"alpha": alpha, "scale": 1, "input_scale": 1.0 / alpha}
    return (_elu_op_(CeluBackward1, input, numbers, {"alpha": alpha}) if inplace
            else _elu_op(CeluBackward0, input, numbers, {"alpha": alpha}))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """`celu` in place."""
    return celu(input, alpha, inplace=True)


declare("elu", nodes=(EluBackward0, EluBackward1))
declare("celu", nodes=(CeluBackward0, CeluBackward1))
declare("elu_backward", nodes=(EluBackwardBackward0,), aten=elu_backward)

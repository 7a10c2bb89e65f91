"""Smooth (or almost smooth) activations: silu, softplus, mish, hardsigmoid, hardswish.

Each derivative is a function of the input, so each node saves its INPUT. PyTorch
computes most of these gradients with a backward op of its own (`softplus_backward`,
`hardswish_backward`), recorded by a `create_graph=True` backward as a node of its own;
for silu and mish it switches instead: with grad mode on (a backward that records) it
writes the gradient in ordinary differentiable ops (`infinitely_differentiable_*`), so
their second derivatives come from sigmoid, tanh and mul; with it off, one kernel.
Here the formulas run on tensors for a plain backward too (`FormulaNode`): rare ops
need no fused kernel.
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros
from ..arrays.layout import in_result_layout
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from .declaration import declare
from .formulas import BACKWARD_OPS, Formula, FormulaNode, Scalar, helper, named
from .no_derivative import NoDerivative, name_op
from .tangent_formulas import AUTO_ELEMENT_WISE


def _refuse_integers(x: np.ndarray, name: str) -> None:
    if x.dtype.kind != "f":
        kind = "Bool" if x.dtype == np.bool_ else "Long"
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{kind}'")


def _quiet(fn):
    """`fn` on arrays without numpy's overflow warnings (PyTorch gives inf silently),
    its result laid out as PyTorch's kernel lays it out: by the arrays it is given, in
    order (`grad` before `x` in a gradient's kernel; numpy's `where` chooses its own)."""
    def run(*args):
        with np.errstate(all="ignore"):
            values = np.asarray(fn(*args))
        return in_result_layout(values, *(a for a in args if isinstance(a, np.ndarray)))
    return run


# -- the values, on arrays (each step rounded in the input's dtype, in PyTorch's order) --


@_quiet
def _silu(x):
    return x / (1 + np.exp(-x))


@_quiet
def _softplus(x, beta, threshold):
    t = x.dtype.type
    scaled = x * t(beta)
    return np.where(scaled > threshold, x, np.log1p(np.exp(scaled)) / t(beta))


@_quiet
def _mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


@_quiet
def _hardsigmoid(x):
    t = x.dtype.type
    return np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6)


@_quiet
def _hardswish(x):
    t = x.dtype.type
    return x * np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6)


@_quiet
def _softplus_grad(grad, x, beta, threshold):
    t = x.dtype.type
    scaled = x * t(beta)
    z = np.exp(scaled)
    return np.where(scaled > threshold, grad, grad * z / (z + t(1)))


@_quiet
def _silu_grad(grad, x):
    sigmoid = 1 / (1 + np.exp(-x))
    return grad * sigmoid * (1 + x * (1 - sigmoid))


# (PyTorch's kernel writes 1/6 as the float 1.0f / 6.0f, also for doubles)
_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


@_quiet
def _hardsigmoid_grad(grad, x):
    t = x.dtype.type
    return np.where((x > -3) & (x < 3), grad * t(_ONE_SIXTH), t(0))


@_quiet
def _hardswish_grad(grad, x):
    t = x.dtype.type
    return np.where(x <= -3, t(0), np.where(x < 3, grad * (x / t(3) + t(0.5)), grad))


# -- the nodes ------------------------------------------------------------------------------


class _SavesInput(FormulaNode):
    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"self": INPUT}


class SiluBackward0(_SavesInput):
    """silu(x) = x * sigmoid(x). Saves its INPUT."""

    formulas = (Formula("self", "silu_grad(grad, self)"),)


class MishBackward0(_SavesInput):
    """mish(x) = x * tanh(softplus(x)). Saves its INPUT."""

    formulas = (Formula("self", "mish_grad(grad, self)"),)


class HardsigmoidBackward0(_SavesInput):
    """hardsigmoid(x) = clamp(x + 3, 0, 6) / 6: grad / 6 where -3 < x < 3. Saves its
    INPUT."""

    formulas = (Formula("self", "hardsigmoid_backward(grad, self)"),)


class HardswishBackward0(_SavesInput):
    """hardswish(x) = x * hardsigmoid(x). Saves its INPUT."""

    formulas = (Formula("self", "hardswish_backward(grad, self)"),)


class SoftplusBackward0(FormulaNode):
    """softplus(x, beta, threshold) = log(1 + exp(beta x)) / beta (x itself where
    beta x > threshold). Saves its INPUT and both numbers."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"beta": VALUE, "self": INPUT, "threshold": VALUE}
    formulas = (Formula("self", "softplus_backward(grad, self, beta, threshold)"),)


class SoftplusBackwardBackward0(FormulaNode):
    """softplus_backward(grad_output, self, beta, threshold): linear in grad_output."""

    tangent = ("softplus_backward(grad_output_t, self_p, beta, threshold) + "
               "softplus_double_backward(self_t * grad_output_p, self_p, beta, threshold)")
    elementwise = True
    saves = {"beta": VALUE, "grad_output": INPUT, "self": INPUT, "threshold": VALUE}
    formulas = (Formula("grad_output", "softplus_backward(grad, self, beta, threshold)"),
                Formula("self", "softplus_double_backward(grad * grad_output, self, beta, "
                                "threshold)"))


class HardswishBackwardBackward0(FormulaNode):
    """hardswish_backward(grad_output, self): linear in grad_output; its slope in self
    is 1/3 between -3 and 3."""

    tangent = ("hardswish_backward(grad_output_t, self_p) + "
               "hardswish_slope_times(self_t * grad_output_p, self_p)")
    elementwise = True
    saves = {"grad_output": INPUT, "self": INPUT}
    formulas = (Formula("grad_output", "hardswish_backward(grad, self)"),
                Formula("self", "hardswish_slope_times(grad * grad_output, self)"))


# -- the backward ops -------------------------------------------------------------------------


def softplus_backward(grad_output: Tensor, self: Tensor, beta, threshold) -> Tensor:
    """The gradient of softplus (PyTorch's aten::softplus_backward)."""
    out = Tensor._make(_softplus_grad(grad_output._data, self._data, beta, threshold))
    node = record(SoftplusBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"beta": beta, "grad_output": SavedTensor(grad_output),
                            "self": SavedTensor(self), "threshold": threshold})
    return out


def hardswish_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """The gradient of hardswish (PyTorch's aten::hardswish_backward)."""
    out = Tensor._make(_hardswish_grad(grad_output._data, self._data))
    node = record(HardswishBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"grad_output": SavedTensor(grad_output), "self": SavedTensor(self)})
    return out


def hardsigmoid_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """The gradient of hardsigmoid (PyTorch's aten::hardsigmoid_backward, which has no
    derivative of its own)."""
    out = Tensor._make(_hardsigmoid_grad(grad_output._data, self._data))
    name_op(record(NoDerivative, out, grad_output, self), "hardsigmoid_backward")
    return out


# -- the helpers the formulas call (PyTorch's FunctionsManual) --------------------------------


@helper
def silu_grad(grad: Tensor, self: Tensor) -> Tensor:
    """silu's gradient: in differentiable ops when grad mode is on (PyTorch's
    infinitely_differentiable_silu_backward), else computed at once (silu_backward)."""
    if not is_grad_enabled():
        return Tensor._make(_silu_grad(grad._data, self._data))
    sigmoid = self.sigmoid()
    # (each product's right operand first, as PyTorch's C++ evaluates it)
    slope = Scalar(1.0) + self * (Scalar(1.0) - sigmoid)
    return grad * sigmoid * slope


@helper
def mish_grad(grad: Tensor, self: Tensor) -> Tensor:
    """mish's gradient, as `silu_grad` (PyTorch's infinitely_differentiable_mish_backward
    with grad mode on, mish_backward off)."""
    sigmoid = self.sigmoid()
    tanh_softplus = self.exp().log1p().tanh()
    # (each product's right operand first, as PyTorch's C++ evaluates it)
    squared = Scalar(1.0) - tanh_softplus * tanh_softplus
    slope = tanh_softplus + self * sigmoid * squared
    out = grad * slope
    if not is_grad_enabled():  # (mish_backward's one kernel lays it out by grad, then self)
        out._data = in_result_layout(out._data, grad._data, self._data)
    return out


@helper
def hardswish_slope_times(product: Tensor, self: Tensor) -> Tensor:
    """hardswish_backward's gradient in its input (PyTorch's formula for `self`):
    `product / 3` (product: grad * grad_output) where -3 < self < 3, else 0."""
    inside = (self > -3.0) & (self < 3.0)
    return named("where")(inside, product / Scalar(3.0), zeros((), dtype=self.dtype))


@helper
def softplus_double_backward(grad: Tensor, input: Tensor, beta, threshold) -> Tensor:  # noqa: A002
    """softplus_backward's gradient in its input: sigmoid'(beta x) * beta where
    beta x < threshold, times grad."""
    x = input * Scalar(beta)
    return (BACKWARD_OPS["sigmoid_backward"](grad, x.sigmoid())
            * (x < threshold).to(grad.dtype) * Scalar(beta))


# -- the forwards ---------------------------------------------------------------------------


def _activation(node_cls, values, input: Tensor, extra: dict | None = None) -> Tensor:  # noqa: A002
    out = Tensor._make(np.asarray(values, input._data.dtype))
    node = record_elementwise(node_cls, out, input)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), **(extra or {})})
    return out


def _in_place(node_cls, values, input: Tensor) -> Tensor:  # noqa: A002
    """Write `values` into `input`, recorded as `node_cls`, reading a copy of the input
    made before the write (PyTorch's recorded clone)."""
    node = begin_inplace(node_cls, input)
    original = input.clone() if node is not None else None
    input._data[...] = values
    finish_inplace(input, node)
    if node is not None:
        node._saved["self"] = SavedTensor(original)
    return input


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x) (also called swish)."""
    _refuse_integers(input._data, "silu")
    values = _silu(input._data)
    return _in_place(SiluBackward0, values, input) if inplace else _activation(
        SiluBackward0, values, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * tanh(softplus(x))."""
    _refuse_integers(input._data, "mish")
    values = _mish(input._data)
    return _in_place(MishBackward0, values, input) if inplace else _activation(
        MishBackward0, values, input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """clamp(x + 3, 0, 6) / 6: sigmoid made of three straight pieces."""
    _refuse_integers(input._data, "hardsigmoid")
    values = _hardsigmoid(input._data)
    return _in_place(HardsigmoidBackward0, values, input) if inplace else _activation(
        HardsigmoidBackward0, values, input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * hardsigmoid(x)."""
    _refuse_integers(input._data, "hardswish")
    values = _hardswish(input._data)
    return _in_place(HardswishBackward0, values, input) if inplace else _activation(
        HardswishBackward0, values, input)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta, a smooth relu (x itself where beta x > threshold)."""
    _refuse_integers(input._data, "softplus")
    return _activation(SoftplusBackward0, _softplus(input._data, beta, threshold), input,
                       {"beta": beta, "threshold": threshold})


declare("silu", nodes=(SiluBackward0,))
declare("mish", nodes=(MishBackward0,))
declare("hardsigmoid", nodes=(HardsigmoidBackward0,))
declare("hardswish", nodes=(HardswishBackward0,))
declare("softplus", nodes=(SoftplusBackward0,))
declare("softplus_backward", nodes=(SoftplusBackwardBackward0,), aten=softplus_backward)
declare("hardswish_backward", nodes=(HardswishBackwardBackward0,), aten=hardswish_backward)
declare("hardsigmoid_backward", nodes=(NoDerivative,), aten=hardsigmoid_backward)

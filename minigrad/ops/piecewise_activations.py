"""Activations made of straight pieces: threshold, hardtanh (and relu6), hardshrink,
softshrink; and two compositions of other ops, softsign and tanhshrink.

Each piecewise one has slope 1 on some pieces and 0 on the others, so its gradient
is `grad` where the input lies on a sloped piece and 0 elsewhere: the node saves its
INPUT (and the numbers that mark the pieces). PyTorch computes that gradient with a
backward op of its own (`hardtanh_backward`, ...), which a `create_graph=True` backward
records as a node of its own (HardtanhBackwardBackward0), whose gradient is that
backward op again for `grad_output` and zero for the input.
"""

from __future__ import annotations

import numpy as np

from ..arrays.layout import empty_like, fresh_result, in_result_layout
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, on_arrays
from .tangent_formulas import AUTO_ELEMENT_WISE

# -- where the gradient is blocked: 0 there, `grad` elsewhere (nan lets it through) --------


def _threshold_blocks(x: np.ndarray, threshold) -> np.ndarray:
    return x <= threshold


def _hardtanh_blocks(x: np.ndarray, min_val, max_val) -> np.ndarray:
    return (x <= min_val) | (x >= max_val)


def _shrink_blocks(x: np.ndarray, lambd) -> np.ndarray:
    return (x >= -lambd) & (x <= lambd)


def _blocked(grad: np.ndarray, x: np.ndarray, blocked: np.ndarray) -> np.ndarray:
    """`grad`, 0 where `blocked`: laid out as PyTorch's backward kernel lays it out, by
    its operands (grad, x) (numpy's `where` chooses its own layout)."""
    return in_result_layout(np.where(blocked, grad.dtype.type(0), grad), grad, x)


@on_arrays("hardtanh_backward")
def _hardtanh_backward_arrays(grad, x, min_val, max_val) -> np.ndarray:
    return _blocked(grad, x, _hardtanh_blocks(x, min_val, max_val))


@on_arrays("hardshrink_backward")
def _hardshrink_backward_arrays(grad, x, lambd) -> np.ndarray:
    return _blocked(grad, x, _shrink_blocks(x, lambd))


@on_arrays("softshrink_backward")
def _softshrink_backward_arrays(grad, x, lambd) -> np.ndarray:
    return _blocked(grad, x, _shrink_blocks(x, lambd))


@on_arrays("threshold_backward")
def _threshold_backward_arrays(grad, x, threshold) -> np.ndarray:
    # (laid out by x first, then grad: PyTorch's TensorIterator takes self before
    # grad_output, so a permuted input gets a permuted gradient)
    out = fresh_result(grad.shape, grad.dtype, x, grad)[0]
    np.copyto(out, grad)
    np.copyto(out, grad.dtype.type(0), where=_threshold_blocks(x, threshold))
    return out


# -- the nodes of the activations ---------------------------------------------------------


class ThresholdBackward0(ArrayFormulaNode):
    """threshold(x, threshold, value): grad where x > threshold. Saves its INPUT."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"self": INPUT, "threshold": VALUE}
    formulas = (Formula("self", "threshold_backward(grad, self, threshold)"),)


class ThresholdBackward1(ThresholdBackward0):
    """threshold_(x, ...), in place: as ThresholdBackward0, reading a copy of the input
    made before it was overwritten."""


class HardtanhBackward0(ArrayFormulaNode):
    """hardtanh(x, min_val, max_val): grad where min_val < x < max_val. Saves its
    INPUT and the bounds."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"max_val": VALUE, "min_val": VALUE, "self": INPUT}
    formulas = (Formula("self", "hardtanh_backward(grad, self, min_val, max_val)"),)


class HardshrinkBackward0(ArrayFormulaNode):
    """hardshrink(x, lambd): grad where |x| > lambd. Saves its INPUT."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"lambd": VALUE, "self": INPUT}
    formulas = (Formula("self", "hardshrink_backward(grad, self, lambd)"),)


class SoftshrinkBackward0(ArrayFormulaNode):
    """softshrink(x, lambd): grad where |x| > lambd. Saves its INPUT."""

    tangent = AUTO_ELEMENT_WISE
    elementwise = True
    saves = {"lambd": VALUE, "self": INPUT}
    formulas = (Formula("self", "softshrink_backward(grad, self, lambd)"),)


# -- their backward ops, each with its own node ---------------------------------------------


class HardtanhBackwardBackward0(FormulaNode):
    """hardtanh_backward(grad_output, self, min_val, max_val): linear in grad_output,
    flat in self."""

    tangent = "hardtanh_backward(dense(grad_output_t, grad_output_p), self_p, min_val, max_val)"
    elementwise = True
    saves = {"max_val": VALUE, "min_val": VALUE, "self": INPUT}
    formulas = (Formula("grad_output", "hardtanh_backward(grad, self, min_val, max_val)"),
                Formula("self", "zeros_like(grad)"))


class HardshrinkBackwardBackward0(FormulaNode):
    """hardshrink_backward(grad_out, self, lambd): linear in grad_out, flat in self."""

    tangent = "hardshrink_backward(dense(grad_out_t, grad_out_p), self_p, lambd)"
    elementwise = True
    saves = {"lambd": VALUE, "self": INPUT}
    formulas = (Formula("grad_out", "hardshrink_backward(grad, self, lambd)"),
                Formula("self", "zeros_like(grad)"))


class SoftshrinkBackwardBackward0(FormulaNode):
    """softshrink_backward(grad_output, self, lambd): linear in grad_output, flat in
    self."""

    tangent = "softshrink_backward(dense(grad_output_t, grad_output_p), self_p, lambd)"
    elementwise = True
    saves = {"lambd": VALUE, "self": INPUT}
    formulas = (Formula("grad_output", "softshrink_backward(grad, self, lambd)"),
                Formula("self", "zeros_like(grad)"))


def _backward_op(node_cls, blocks, grad_output: Tensor, self: Tensor, values: dict) -> Tensor:
    """grad_output, 0 where `blocks(self, *values)`, recorded as `node_cls`."""
    out = Tensor._make(_blocked(grad_output._data, self._data,
                                blocks(self._data, *values.values())))
    node = record(node_cls, out, grad_output, self)
    if node is not None:
        node._saved.update({"self": SavedTensor(self), **values})
    return out


def hardtanh_backward(grad_output: Tensor, self: Tensor, min_val, max_val) -> Tensor:
    """The gradient of hardtanh (PyTorch's aten::hardtanh_backward)."""
    return _backward_op(HardtanhBackwardBackward0, _hardtanh_blocks, grad_output, self,
                        {"min_val": min_val, "max_val": max_val})


def hardshrink_backward(grad_out: Tensor, self: Tensor, lambd) -> Tensor:
    """The gradient of hardshrink (PyTorch's aten::hardshrink_backward)."""
    return _backward_op(HardshrinkBackwardBackward0, _shrink_blocks, grad_out, self,
                        {"lambd": lambd})


def softshrink_backward(grad_output: Tensor, self: Tensor, lambd) -> Tensor:
    """The gradient of softshrink (PyTorch's aten::softshrink_backward)."""
    return _backward_op(SoftshrinkBackwardBackward0, _shrink_blocks, grad_output, self,
                        {"lambd": lambd})


# -- the forwards -------------------------------------------------------------------------


def _kind(data: np.ndarray) -> str:
    return "Bool" if data.dtype == np.bool_ else "Long"


def _recorded(node_cls, out_data: np.ndarray, input: Tensor, values: dict) -> Tensor:  # noqa: A002
    out = Tensor._make(np.asarray(out_data, input._data.dtype))
    node = record_elementwise(node_cls, out, input)
    if node is not None:
        node._saved.update({"self": SavedTensor(input), **values})
    return out


def _in_place(node_cls, values_data: np.ndarray, input: Tensor, values: dict) -> Tensor:  # noqa: A002
    """Write `values_data` into `input`, recorded as `node_cls`, which reads a copy of
    the input made before the write (PyTorch's recorded clone)."""
    node = begin_inplace(node_cls, input)
    original = input.clone() if node is not None else None
    input._data[...] = values_data
    finish_inplace(input, node)
    if node is not None:
        node._saved.update({"self": SavedTensor(original), **values})
    return input


def _threshold_values(x: np.ndarray, threshold, value) -> np.ndarray:
    if x.dtype == np.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    return np.where(_threshold_blocks(x, threshold), x.dtype.type(value), x)


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """`value` where x <= threshold, x elsewhere."""
    if inplace:
        return threshold_(input, threshold, value)
    # (laid out by the input, as PyTorch's kernel: numpy's where chooses its own layout)
    values = in_result_layout(_threshold_values(input._data, threshold, value), input._data)
    return _recorded(ThresholdBackward0, values, input, {"threshold": threshold})


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """`threshold` in place."""
    return _in_place(ThresholdBackward1, _threshold_values(input._data, threshold, value),
                     input, {"threshold": threshold})


def _hardtanh_values(x: np.ndarray, min_val, max_val) -> np.ndarray:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if x.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if x.dtype.kind != "f":
        return np.clip(x, min_val, max_val).astype(x.dtype)
    t = x.dtype.type
    with np.errstate(invalid="ignore"):  # (nan stays nan, as clamp keeps it)
        return np.minimum(np.maximum(x, t(min_val)), t(max_val))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]."""
    if inplace:
        return hardtanh_(input, min_val, max_val)
    # (PyTorch writes into `empty_like(input)`: an input of no elements keeps its strides)
    out = empty_like(input._data)
    out[...] = _hardtanh_values(input._data, min_val, max_val)
    return _recorded(HardtanhBackward0, out, input, {"min_val": min_val, "max_val": max_val})


def hardtanh_(input: Tensor, min_val: float = -1, max_val: float = 1) -> Tensor:  # noqa: A002
    """`hardtanh` in place (its node, HardtanhBackward0, reads a copy of the input)."""
    return _in_place(HardtanhBackward0, _hardtanh_values(input._data, min_val, max_val),
                     input, {"min_val": min_val, "max_val": max_val})


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6): hardtanh(x, 0, 6), as PyTorch computes and records it."""
    return hardtanh_(input, 0, 6) if inplace else hardtanh(input, 0, 6)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """0 where |x| <= lambd, x elsewhere."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"hardshrink_cpu\" not implemented for '{_kind(x)}'")
    values = in_result_layout(np.where(_shrink_blocks(x, lambd), x.dtype.type(0), x), x)
    return _recorded(HardshrinkBackward0, values, input, {"lambd": lambd})


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x - lambd above lambd, x + lambd below -lambd, 0 between: x moved lambd towards 0."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"softshrink_check\" not implemented for '{_kind(x)}'")
    if not lambd >= 0:
        largest = "3.40282e+38" if x.dtype == np.float32 else "1.79769e+308"
        name = "Float" if x.dtype == np.float32 else "Double"
        raise RuntimeError(f"lambda must be in range [0, {largest}] for input dtype {name}, "
                           f"but found {lambd:g}")
    t = x.dtype.type
    with np.errstate(invalid="ignore"):
        values = np.where(x > lambd, x - t(lambd), np.where(x < -lambd, x + t(lambd), x * t(0)))
    return _recorded(SoftshrinkBackward0, in_result_layout(values, x), input, {"lambd": lambd})


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|), as PyTorch writes it: `input / (input.abs() + 1)` (DivBackward0)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """x - tanh(x), as PyTorch writes it (SubBackward0)."""
    return input - input.tanh()


declare("threshold", nodes=(ThresholdBackward0, ThresholdBackward1))
declare("hardtanh", nodes=(HardtanhBackward0,))
declare("hardshrink", nodes=(HardshrinkBackward0,))
declare("softshrink", nodes=(SoftshrinkBackward0,))
declare("hardtanh_backward", nodes=(HardtanhBackwardBackward0,), aten=hardtanh_backward)
declare("hardshrink_backward", nodes=(HardshrinkBackwardBackward0,), aten=hardshrink_backward)
declare("softshrink_backward", nodes=(SoftshrinkBackwardBackward0,),
        aten=softshrink_backward)

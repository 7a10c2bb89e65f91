"""`rrelu`: leaky_relu whose slope below 0 is random in training.

In training, each element x <= 0 is multiplied by its own slope drawn from
U[lower, upper) (kept as `noise`, 1 where x > 0; drawn in row-major order, one double
each, from the generator, as PyTorch's kernel draws them); in evaluation the slope is
(lower + upper) / 2, and `noise` is left as made (uninitialised memory, as
PyTorch's). The output is row-major whatever the input's layout. As PyTorch's, the op
is `rrelu_with_noise` (RreluWithNoiseBackward0), whose backward is the op
`rrelu_with_noise_backward`: `grad * noise` in training, leaky_relu's gradient
otherwise.
"""

from __future__ import annotations

import numpy as np

from .. import _generator
from ..arrays.layout import in_result_layout
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..kernels import random as _k
from ..tensor import Tensor
from .activations import _where_positive
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, on_arrays
from .loss import TYPE_NAMES
from .tangent_formulas import AUTO_ELEMENT_WISE

# (The op table, `widgets.op_table` and docs/ops.md, lists it with the activations.)
OP_FAMILY = "activations"

_FORMULA = "rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False)"


@on_arrays("rrelu_with_noise_backward")
def _rrelu_backward_on_arrays(grad: np.ndarray, x: np.ndarray, noise: np.ndarray,
                              lower: float, upper: float, training: bool,
                              self_is_result: bool) -> np.ndarray:
    if training:  # (`noise * grad_output`: laid out by the noise first)
        return in_result_layout((noise * grad).astype(grad.dtype, copy=False), noise, grad)
    return _where_positive(x, grad, (lower + upper) / 2)


class RreluWithNoiseBackward0(ArrayFormulaNode):
    """rrelu_with_noise(self, noise, lower, upper, training)."""

    tangent = AUTO_ELEMENT_WISE
    saves = {"lower": VALUE, "noise": INPUT, "self": INPUT, "training": VALUE,
             "upper": VALUE}
    formulas = (Formula("self", _FORMULA),)


class RreluWithNoiseBackwardBackward0(FormulaNode):
    """rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training):
    linear in grad_output, flat in self."""

    saves = {"lower": VALUE, "noise": INPUT, "self": INPUT, "training": VALUE,
             "upper": VALUE}
    formulas = (Formula("grad_output", _FORMULA), Formula("self", "zeros_like(grad)"))


def _save(node, self: Tensor, noise: Tensor, lower: float, upper: float,
          training: bool) -> None:
    node._saved.update({"lower": lower, "noise": SavedTensor(noise), "self": SavedTensor(self),
                        "training": training, "upper": upper})


def rrelu_with_noise_backward(grad_output: Tensor, self: Tensor, noise: Tensor,
                              lower: float, upper: float, training: bool,
                              self_is_result: bool) -> Tensor:
    """The gradient of rrelu (PyTorch's aten::rrelu_with_noise_backward)."""
    out = Tensor._make(_rrelu_backward_on_arrays(grad_output._data, self._data, noise._data,
                                                 lower, upper, training, self_is_result))
    node = record(RreluWithNoiseBackwardBackward0, out, grad_output, self)
    if node is not None:
        _save(node, self, noise, lower, upper, training)
    return out


def _noisy(x: np.ndarray, lower: float, upper: float, generator) -> tuple:
    """The training forward: (output, noise), one slope drawn per element <= 0, in
    row-major order, as a double from U[lower, upper) (bounds in x's dtype first)."""
    dt = x.dtype.type
    flat = np.ascontiguousarray(x).reshape(-1)
    low = flat <= 0
    draws = np.empty(int(low.sum()), np.float64)
    gen = _generator.resolve(generator)
    _k.uniform_f64(gen._mt, draws, float(dt(lower)), float(dt(upper)), False)  # (no FMA there)
    noise = np.ones(flat.size, x.dtype)
    noise[low] = draws.astype(x.dtype)
    with np.errstate(all="ignore"):
        out = np.where(low, flat * noise, flat)
    return out.reshape(x.shape), noise.reshape(x.shape)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, generator=None) -> Tensor:
    """x where x > 0, else x times a slope: drawn from U[lower, upper) per element in
    training, (lower + upper) / 2 otherwise (`torch.rrelu`)."""
    x = input._data
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if x.dtype.kind != "f":  # (training or not: the kernel of evaluation's leaky_relu)
        raise NotImplementedError(f'"leaky_relu_cpu" not implemented for '
                                  f"'{TYPE_NAMES[input.dtype.name]}'")
    if training:
        data, noise_data = _noisy(x, lower, upper, generator)
    else:
        slope = (float(lower) + float(upper)) / 2
        with np.errstate(all="ignore"):
            data = np.where(x > 0, x, x * x.dtype.type(slope))
        noise_data = np.empty(x.shape, x.dtype)  # (left as made, as PyTorch's)
    out = Tensor._make(np.array(data, x.dtype, order="C"))  # (row-major, as PyTorch's)
    noise = Tensor._make(noise_data)
    node = record(RreluWithNoiseBackward0, out, input)
    if node is not None:
        _save(node, input, noise, lower, upper, training)
    return out


def rrelu_functional(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
                     training: bool = False, inplace: bool = False) -> Tensor:
    """`nn.functional.rrelu`: `rrelu` (in place: not in minigrad)."""
    if inplace:
        raise NotImplementedError("minigrad has no in-place rrelu (rrelu_ and "
                                  "F.rrelu(inplace=True)); use inplace=False")
    return rrelu(input, lower, upper, training)


declare("rrelu", nodes=(RreluWithNoiseBackward0,), function=rrelu)
declare("rrelu_with_noise_backward", nodes=(RreluWithNoiseBackwardBackward0,),
        aten=rrelu_with_noise_backward)

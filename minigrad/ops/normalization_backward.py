"""The backward ops of batch_norm and layer_norm, for `create_graph=True`.

A `create_graph=True` backward through NativeBatchNormBackward0 (NativeLayerNormBackward0)
calls one op, `native_batch_norm_backward` (`native_layer_norm_backward`), which
computes the gradients of input, weight and bias at once, with numpy, and records one
node for all three: NativeBatchNormBackwardBackward0 (NativeLayerNormBackwardBackward0),
whose outputs are those gradients, numbered 0, 1, 2. Its own formulas are PyTorch's
`batchnorm_double_backward` and `layer_norm_double_backward`, written below in minigrad
code step by step in the order PyTorch's C++ takes them (in `a * b` the right operand
first; the in-place steps `div_`, `sub_`, `add_`, `mul_` as in-place ops), so a third
backward records PyTorch's graph node for node.

The saved mean and rstd (`result1`, `result2` of the forward) never require grad, so
their own formulas are PyTorch's "not implemented" and never run.

Neither op has a tangent formula: with a tangent on an input, each runs its
decomposition into smaller ops instead, which carry the tangents
(`normalization_decomposed.py`), as PyTorch does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NoReturn

import numpy as np

from .._creation import ones
from ..autograd.graph import INPUT, SavedTensor
from ..autograd.record import record
from ..autograd.tangents import BY_DECOMPOSITION
from ..tensor import Tensor
from .declaration import declare
from .formulas import Formula, FormulaNode, helper
from .normalization import VALUE, batch_norm_backward_arrays, layer_norm_backward_arrays
from .normalization_decomposed import (
    batch_norm_backward_decomposed,
    give_tangents,
    has_tangents,
    layer_norm_backward_decomposed,
)
from .scalar_overloads import add_scalar, div_scalar, div_scalar_, mul_scalar, mul_scalar_

OP_FAMILY = "normalization"

_BN_DOUBLE = ("batchnorm_double_backward(input, weight, grads[0], grads[1], grads[2], "
              "grad_out, running_mean, running_var, train, eps, save_mean, save_invstd, "
              "grad_input_mask)")
_LN_DOUBLE = ("layer_norm_double_backward(input, weight, grads[0], grads[1], grads[2], "
              "grad_out, mean, rstd, normalized_shape, grad_input_mask)")


class NativeBatchNormBackwardBackward0(FormulaNode):
    """native_batch_norm_backward: the gradients of batch_norm's input, weight and
    bias (outputs 0, 1, 2) from grad_out. Their gradients go to grad_out, input and
    weight (`batchnorm_double_backward`). Saves its tensor inputs and eps, train."""

    tangent = BY_DECOMPOSITION  # (see `normalization_decomposed.py`)
    saves = {"eps": VALUE, "grad_out": INPUT, "input": INPUT, "running_mean": INPUT,
             "running_var": INPUT, "save_invstd": INPUT, "save_mean": INPUT, "train": VALUE,
             "weight": INPUT}
    # (its inputs, in the order of next_functions: the first formula names three of
    # them in the order of the gradients it gives)
    inputs = ("grad_out", "input", "weight", "save_mean", "save_invstd")
    formulas = (Formula("input, weight, grad_out", _BN_DOUBLE),
                Formula("save_mean", "not_implemented('native_batch_norm_backward save_mean')"),
                Formula("save_invstd",
                        "not_implemented('native_batch_norm_backward save_invstd')"))

    def _num_outputs(self) -> int:
        return 3


class NativeLayerNormBackwardBackward0(FormulaNode):
    """native_layer_norm_backward: the gradients of layer_norm's input, weight and
    bias (outputs 0, 1, 2) from grad_out. Their gradients go to grad_out, input and
    weight (`layer_norm_double_backward`); bias, which none of them reads, gets none.
    Saves its tensor inputs but bias, and normalized_shape."""

    tangent = BY_DECOMPOSITION  # (see `normalization_decomposed.py`)
    saves = {"grad_out": INPUT, "input": INPUT, "mean": INPUT, "normalized_shape": VALUE,
             "rstd": INPUT, "weight": INPUT}
    inputs = ("grad_out", "input", "mean", "rstd", "weight", "bias")  # (as batch_norm's)
    formulas = (Formula("input, weight, grad_out", _LN_DOUBLE),
                Formula("mean", "not_implemented('native_layer_norm_backward mean')"),
                Formula("rstd", "not_implemented('native_layer_norm_backward rstd')"),
                Formula("bias", "None"))

    def _num_outputs(self) -> int:
        return 3


def _array(t: Tensor | None) -> np.ndarray | None:
    return None if t is None else t._data


def _outputs(node_cls, arrays: tuple, inputs: tuple) -> tuple[Tensor | None, ...]:
    """The three gradients as tensors, one node for all of them (outputs 0, 1, 2;
    a gradient the mask did not ask for is None)."""
    outs = tuple(None if a is None else Tensor._make(np.ascontiguousarray(a)) for a in arrays)
    node = record(node_cls, None, *inputs)
    if node is not None:
        for i, out in enumerate(outs):
            if out is not None:
                out._grad_fn, out._output_nr = node, i
    return outs, node


def _values(decomposed: tuple) -> tuple:
    return tuple(None if t is None else t._data for t in decomposed)


def native_batch_norm_backward(grad_out: Tensor, input: Tensor, weight: Tensor | None,  # noqa: A002
                               running_mean: Tensor | None, running_var: Tensor | None,
                               save_mean: Tensor, save_invstd: Tensor, train: bool,
                               eps: float, output_mask: tuple) -> tuple:
    """batch_norm's gradients of input, weight and bias, those `output_mask` asks
    for (PyTorch's aten::native_batch_norm_backward). With a tangent on an input,
    values and tangents come from the op's decomposition (`normalization_decomposed.py`)."""
    inputs = (grad_out, input, weight, save_mean, save_invstd)
    decomposed = None
    if has_tangents(inputs + (running_mean, running_var)):
        decomposed = batch_norm_backward_decomposed(
            grad_out, input, weight, running_mean, running_var, save_invstd, train, eps,
            output_mask)
        arrays = _values(decomposed)
    else:
        arrays = batch_norm_backward_arrays(
            grad_out._data, input._data, _array(weight), _array(running_mean),
            _array(running_var), save_mean._data, save_invstd._data, train, eps, output_mask)
    outs, node = _outputs(NativeBatchNormBackwardBackward0, arrays, inputs)
    if decomposed is not None:
        give_tangents(outs, decomposed)
    if node is not None:
        # (in the order PyTorch's generated code saves them: by name)
        s = node._saved
        s["eps"] = eps
        for name, t in (("grad_out", grad_out), ("input", input),
                        ("running_mean", running_mean), ("running_var", running_var),
                        ("save_invstd", save_invstd), ("save_mean", save_mean),
                        ("weight", weight)):
            s[name] = None if t is None else SavedTensor(t)
        s["train"] = train
    return outs


def native_layer_norm_backward(grad_out: Tensor, input: Tensor, normalized_shape: tuple,  # noqa: A002
                               mean: Tensor, rstd: Tensor, weight: Tensor | None,
                               bias: Tensor | None, output_mask: tuple) -> tuple:
    """layer_norm's gradients of input, weight and bias, those `output_mask` asks
    for (PyTorch's aten::native_layer_norm_backward). With a tangent on an input,
    values and tangents come from the op's decomposition (`normalization_decomposed.py`)."""
    mask = (output_mask[0], output_mask[1] and weight is not None,
            output_mask[2] and bias is not None)
    inputs = (grad_out, input, mean, rstd, weight, bias)
    decomposed = None
    if has_tangents(inputs):
        decomposed = layer_norm_backward_decomposed(grad_out, input, tuple(normalized_shape),
                                                    mean, rstd, weight, mask)
        arrays = _values(decomposed)
    else:
        arrays = layer_norm_backward_arrays(grad_out._data, input._data,
                                            tuple(normalized_shape), mean._data, rstd._data,
                                            _array(weight), _array(bias), mask)
    outs, node = _outputs(NativeLayerNormBackwardBackward0, arrays, inputs)
    if decomposed is not None:
        give_tangents(outs, decomposed)
    if node is not None:
        s = node._saved
        for name, t in (("grad_out", grad_out), ("input", input), ("mean", mean)):
            s[name] = SavedTensor(t)
        s["normalized_shape"] = tuple(normalized_shape)
        s["rstd"] = SavedTensor(rstd)
        s["weight"] = None if weight is None else SavedTensor(weight)
    return outs


# -- PyTorch's double backward formulas, in minigrad code ------------------------------------


@helper
def not_implemented(name: str) -> NoReturn:
    """PyTorch's formula for an input whose derivative it does not give."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def _sum_exclude_dim1(t: Tensor, keepdim: bool = True) -> Tensor:
    """The sum over every dim but the channels' (dim 1), one dim after another."""
    r = t.sum(0, keepdim)
    for dim in range(r.dim() - 1, 1 if keepdim else 0, -1):
        r = r.sum(dim, keepdim)
    return r


def _unsqueeze_dim1(src: Tensor, target: Tensor) -> Tensor:
    """A per-channel vector shaped as a sum over every other dim with keepdim."""
    while src.dim() < target.dim() - 1:
        src = src.unsqueeze(1)
    if src.dim() == target.dim() - 1:
        src = src.unsqueeze(0)
    return src


def _expand_as_dim1(src: Tensor, target: Tensor) -> Tensor:
    """A per-channel vector expanded to `target`'s shape along dim 1."""
    while src.dim() < target.dim() - 1:
        src = src.unsqueeze(1)
    return src.expand_as(target)


def _add_(t: Tensor, other: Tensor | None) -> Tensor:
    """`t.add_(other)` as the C++ formula runs it: without a weight, the bias's
    gradient has no expanded form (an undefined tensor), and adding it is PyTorch's
    error."""
    if other is None:
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in "
                           "C++) for argument #1 'other'")
    return t.add_(other)


class _Statistics:
    """What both double backward formulas share: the centred input, the powers of
    rstd, and the first backward's gradient of the input (`first_backward`)."""

    def __init__(self, input_sub_mu: Tensor, rstd: Tensor, n: int, reduce) -> None:
        self.input_sub_mu = input_sub_mu
        self.rstd = rstd
        self.rstd2 = rstd.pow(2)
        self.rstd3 = rstd.pow(3)
        self.input_mu_rstd3 = input_sub_mu * self.rstd3
        self.n = n
        self.reduce = reduce  # (a sum over the normalised dims, keeping them)

    def first_backward(self, g: Tensor, gamma: Tensor) -> Tensor:
        """The gradient of the input for the output's gradient `g` and scale `gamma`:
        gamma * rstd / n * (n * g - sum(g) - (x - mean) * rstd**2 * sum(g * (x - mean)))."""
        h0 = div_scalar_(gamma * self.rstd, self.n)
        h1 = mul_scalar(g, self.n).sub_(self.reduce(g))
        dot = self.reduce(g * self.input_sub_mu)  # (C++: the right operand first)
        h1 = h1.sub_(self.input_sub_mu.mul(self.rstd2) * dot)
        return h0 * h1

    def input_term(self, g_out: Tensor, gg_in: Tensor, gg_sum: Tensor, gg_mu_sum: Tensor,
                   g_sum: Tensor, g_mu_sum: Tensor, product: Callable[[], Tensor]) -> Tensor:
        """The part of the input's gradient that comes from gg_in, the gradient of
        the first backward's input gradient, given the output's gradient g_out (the
        sums: of gg_in, gg_in * (x - mean), g_out, g_out * (x - mean); `product`
        makes g_out * gg_in, operands in the order the formula has them, when the
        formula does: after the first step of `all_sub`)."""
        n = self.n
        mu_rstd3 = self.input_mu_rstd3
        all_sub = div_scalar_(gg_sum * g_sum, n)
        all_sub = all_sub.sub_(self.reduce(product()))
        all_sub = all_sub.add_(mul_scalar_(self.rstd2 * g_mu_sum * gg_mu_sum, 3.0 / n))
        t0 = div_scalar_(mu_rstd3 * all_sub, n)
        right = div_scalar(g_sum, n) - g_out
        t1 = div_scalar_(gg_mu_sum * self.rstd3, n) * right
        right = div_scalar(gg_sum, n) - gg_in
        t2 = div_scalar_(g_mu_sum * self.rstd3, n) * right
        return t0.add_(t1).add_(t2)


@helper
def batchnorm_double_backward(input: Tensor, gamma: Tensor | None, ggI: Tensor | None,  # noqa: A002, N803
                              ggG: Tensor | None, ggB: Tensor | None, gO: Tensor,  # noqa: N803
                              running_mean: Tensor | None, running_var: Tensor | None,
                              training: bool, eps: float, save_mean: Tensor,
                              save_invstd: Tensor, output_mask: tuple) -> tuple:
    """The gradients of native_batch_norm_backward's outputs (ggI, ggG, ggB: those of
    the input, weight and bias gradients) carried to input, weight and grad_out, as
    PyTorch's `batchnorm_double_backward` computes them: all it can, whatever
    `output_mask` says (PyTorch only asserts with it), so the nodes are numbered alike."""
    affine = gamma is not None
    ggG_expanded = ggB_expanded = None  # noqa: N806
    if affine:
        gamma_expanded = _expand_as_dim1(gamma, input)
        if ggG is not None:
            ggG_expanded = _expand_as_dim1(ggG, input)  # noqa: N806
        if ggB is not None:
            ggB_expanded = _expand_as_dim1(ggB, input)  # noqa: N806
    else:
        gamma_expanded = ones((), dtype=input.dtype)
    m = math.prod(input.shape[:1] + input.shape[2:])
    mu = _unsqueeze_dim1(save_mean if training else running_mean, input)
    input_sub_mu = input - mu
    rstd = _unsqueeze_dim1(save_invstd if training else add_scalar(running_var, eps).pow(-0.5),
                           input)
    st = _Statistics(input_sub_mu, rstd, m, _sum_exclude_dim1)
    g_mu_sum = _sum_exclude_dim1(gO * input_sub_mu)
    g_sum = _sum_exclude_dim1(gO)

    gI = None  # noqa: N806
    if ggI is not None and training:
        gg_sum = _sum_exclude_dim1(ggI)
        gg_mu_sum = _sum_exclude_dim1(ggI * input_sub_mu)
        inner = st.input_term(gO, ggI, gg_sum, gg_mu_sum, g_sum, g_mu_sum, lambda: gO * ggI)
        gI = gamma_expanded * inner  # noqa: N806

    if affine and ggG is not None:
        if training:
            t0 = gO * rstd
            t1 = div_scalar_(rstd * g_sum, -m)
            t2 = div_scalar_(st.input_mu_rstd3 * _sum_exclude_dim1(gO * input_sub_mu), -m)
            term = ggG_expanded * t0.add_(t1).add_(t2)
        else:
            term = ggG_expanded * rstd * gO
        gI = term if gI is None else gI.add_(term)  # noqa: N806

    gG = None  # noqa: N806
    if affine and ggI is not None:
        if training:
            # (the first backward without its gamma, for each channel)
            gG = ggI * st.first_backward(gO, ones((), dtype=rstd.dtype))  # noqa: N806
            gG = _sum_exclude_dim1(gG, False)  # noqa: N806
        else:
            gG = _sum_exclude_dim1(ggI * gO * rstd, False)  # noqa: N806

    ggO = None  # noqa: N806
    if ggI is not None:
        if training:
            ggO = st.first_backward(ggI, gamma_expanded)  # noqa: N806
        else:
            ggO = ggI * rstd * gamma_expanded  # noqa: N806
    if ggG is not None:
        term = ggG_expanded * input_sub_mu * rstd
        ggO = term if ggO is None else ggO.add_(term)  # noqa: N806
    if ggB is not None:
        ggO = ggB_expanded if ggO is None else _add_(ggO, ggB_expanded)  # noqa: N806
    return gI, gG, ggO


def _sum_dim1(t: Tensor) -> Tensor:
    return t.sum(1, True)


@helper
def layer_norm_double_backward(input_t: Tensor, gamma: Tensor | None, ggI: Tensor | None,  # noqa: N803
                               ggG: Tensor | None, ggB: Tensor | None, gO_t: Tensor,  # noqa: N803
                               save_mean_t: Tensor, save_invstd_t: Tensor,
                               normalized_shape: tuple, output_mask: tuple) -> tuple:
    """The gradients of native_layer_norm_backward's outputs (ggI, ggG, ggB) carried
    to input, weight and grad_out, as PyTorch's `layer_norm_double_backward`
    computes them, on the input seen as (samples, normalised elements) (all it can,
    whatever `output_mask` says, as `batchnorm_double_backward`)."""
    axis = input_t.dim() - len(normalized_shape)
    m = math.prod(input_t.shape[:axis])
    n = math.prod(input_t.shape[axis:])
    input = input_t.reshape(m, n)  # noqa: A001
    gO = gO_t.reshape(m, n)  # noqa: N806
    save_mean = save_mean_t.reshape(m, 1)
    save_invstd = save_invstd_t.reshape(m, 1)

    affine = gamma is not None
    ggG_expanded = ggB_expanded = None  # noqa: N806
    if affine:
        gamma_expanded = gamma.reshape(1, n)
        if ggG is not None:
            ggG_expanded = ggG.reshape(1, n)  # noqa: N806
        if ggB is not None:
            ggB_expanded = ggB.reshape(1, n)  # noqa: N806
    else:
        gamma_expanded = ones((1,), dtype=input.dtype)
    ggI_expanded = None if ggI is None else ggI.reshape(m, n)  # noqa: N806

    input_sub_mu = input - save_mean
    st = _Statistics(input_sub_mu, save_invstd, n, _sum_dim1)
    rstd = save_invstd

    gI = None  # noqa: N806
    if ggI is not None:
        gxhat = gO * gamma_expanded
        gxhat_mu_sum = (gxhat * input_sub_mu).sum(1, True)
        gxhat_sum = gxhat.sum(1, True)
        gg_sum = ggI_expanded.sum(1, True)
        gg_mu_sum = (ggI_expanded * input_sub_mu).sum(1, True)
        gI = st.input_term(gxhat, ggI_expanded, gg_sum, gg_mu_sum, gxhat_sum,  # noqa: N806
                           gxhat_mu_sum, lambda: ggI_expanded * gxhat)

    if affine and ggG is not None:
        t0 = gO * ggG_expanded * rstd
        t1 = div_scalar_(rstd * (gO * ggG_expanded).sum(1, True), -n)
        t2 = div_scalar_(st.input_mu_rstd3 * (gO * ggG_expanded * input_sub_mu).sum(1, True),
                         -n)
        term = t0.add_(t1).add_(t2)
        gI = term if gI is None else gI.add_(term)  # noqa: N806
    if gI is not None:
        gI = gI.reshape_as(input_t)  # noqa: N806

    gG = None  # noqa: N806
    if affine and ggI is not None:
        gG = st.first_backward(ggI_expanded, ones((), dtype=rstd.dtype))  # noqa: N806
        gG = (gO * gG).sum(0).reshape_as(gamma)  # noqa: N806

    ggO = None  # noqa: N806
    if ggI is not None:
        ggO = st.first_backward(ggI_expanded, gamma_expanded)  # noqa: N806
    if ggG is not None:
        term = ggG_expanded * input_sub_mu * rstd
        ggO = term if ggO is None else ggO.add_(term)  # noqa: N806
    if ggB is not None:
        ggO = ggB_expanded if ggO is None else _add_(ggO, ggB_expanded)  # noqa: N806
    if ggO is not None:
        ggO = ggO.expand(m, n).reshape_as(input_t)  # noqa: N806
    return gI, gG, ggO


# -- declarations: ops only backward formulas call (see `declaration.py`) ---------------------

declare("native_batch_norm_backward", nodes=(NativeBatchNormBackwardBackward0,),
        aten=native_batch_norm_backward)
declare("native_layer_norm_backward", nodes=(NativeLayerNormBackwardBackward0,),
        aten=native_layer_norm_backward)

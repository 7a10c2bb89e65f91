"""leaky_relu (and its in-place form), gelu, and embedding: the remaining layers'
ops.

* `leaky_relu` saves its input; `leaky_relu_` has overwritten it, so it saves its
  OUTPUT instead (LeakyReluBackward1), which is why PyTorch refuses it with a negative
  slope: the sign of the output no longer tells which side of zero the input was.
* `gelu` saves its input (GeluBackward0) and the approximation it used.
* `embedding` saves the indices: the gradient of each looked-up row is added back
  into that row of a zero matrix (EmbeddingBackward0).
"""

from __future__ import annotations

import math

import numpy as np

from .._args import type_name
from .._creation import full
from ..arrays.layout import in_result_layout
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..kernels import elementwise as K
from ..tensor import Tensor
from .declaration import declare
from .formulas import (
    BACKWARD_OPS,
    ArrayFormulaNode,
    Formula,
    FormulaNode,
    Scalar,
    helper,
    on_arrays,
)


def _where_positive(x: np.ndarray, grad: np.ndarray, slope: float) -> np.ndarray:
    """`grad` where x > 0, `slope * grad` elsewhere, laid out as PyTorch's kernel lays
    it out: by x, then grad."""
    with np.errstate(all="ignore"):
        values = np.where(x > 0, grad, grad * grad.dtype.type(slope))
    return in_result_layout(values, x, grad)


class LeakyReluBackward0(ArrayFormulaNode):
    """leaky_relu(x, slope): grad where x > 0, slope * grad elsewhere. Saves its INPUT."""

    tangent = "auto_element_wise"
    saves = {"negative_slope": VALUE, "self": INPUT}
    formulas = (Formula("self", "leaky_relu_backward(grad, self, negative_slope, False)"),)



class LeakyReluBackward1(ArrayFormulaNode):
    """leaky_relu_(x, slope), in place: as LeakyReluBackward0, read from the OUTPUT
    (positive exactly where the input was, for a slope that is not negative)."""

    tangent = "leaky_relu_result_backward(self_t, result, negative_slope)"
    saves = {"negative_slope": VALUE, "result": OUTPUT}
    formulas = (Formula("self", "leaky_relu_backward(grad, result, negative_slope, True)"),)



def _refuse_negative_slope_in_place(negative_slope: float, self_is_result: bool) -> None:
    """PyTorch's error: an in-place leaky_relu_'s output is no longer positive exactly
    where its input was once the slope is negative, so its gradient cannot be read
    from it (in either kind of backward)."""
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope "
            "which is not supported. This is caused by calling in-place forward function "
            "with a negative slope, please call out-of-place version instead. File an "
            "issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope")


@on_arrays("leaky_relu_backward")
def _leaky_relu_backward_on_arrays(grad: np.ndarray, x: np.ndarray, negative_slope: float,
                                   self_is_result: bool) -> np.ndarray:
    _refuse_negative_slope_in_place(negative_slope, self_is_result)
    return _where_positive(x, grad, negative_slope)


class LeakyReluBackwardBackward0(FormulaNode):
    """leaky_relu_backward(grad_output, self, slope): grad_output where self > 0,
    slope * grad_output elsewhere; flat in self."""

    tangent = "leaky_relu_backward(dense(grad_output_t, grad_output), self, negative_slope, False)"
    saves = {"negative_slope": VALUE, "self": INPUT}
    formulas = (Formula("grad_output", "leaky_relu_backward(grad, self, negative_slope, "
                                       "False)"),
                Formula("self", "zeros_like(grad)"))
    elementwise = True


def leaky_relu_backward(grad_output: Tensor, self: Tensor, negative_slope: float,
                        self_is_result: bool) -> Tensor:
    """The gradient of leaky_relu (PyTorch's aten::leaky_relu_backward; `self` is the
    output when `self_is_result`, which is positive where the input was)."""
    _refuse_negative_slope_in_place(negative_slope, self_is_result)
    data = _where_positive(self._data, grad_output._data, negative_slope)
    out = Tensor._make(data.astype(grad_output._data.dtype, copy=False))
    node = record(LeakyReluBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"negative_slope": negative_slope, "self": SavedTensor(self)})
    return out


def _leaky(x: np.ndarray, slope: float) -> np.ndarray:
    if x.dtype.kind != "f":
        raise NotImplementedError("\"leaky_relu_cpu\" not implemented for "
                                  f"'{'Long' if x.dtype.kind == 'i' else 'Bool'}'")
    with np.errstate(all="ignore"):
        return np.where(x > 0, x, x * x.dtype.type(slope))


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """x where x > 0, negative_slope * x elsewhere."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    # (laid out as PyTorch's kernel lays it out, by the input: numpy's where chooses)
    out = Tensor._make(in_result_layout(np.asarray(_leaky(input._data, negative_slope)),
                                        input._data))
    node = record(LeakyReluBackward0, out, input)
    if node is not None:
        node._saved.update({"negative_slope": negative_slope, "self": SavedTensor(input)})
    return out


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """leaky_relu in place (its backward then needs a slope that is not negative)."""
    values = _leaky(input._data, negative_slope)
    node = begin_inplace(LeakyReluBackward1, input)
    input._data[...] = values
    finish_inplace(input, node)
    if node is not None:
        node._saved.update({"negative_slope": negative_slope,
                            "result": SavedTensor(input, is_output=True)})
    return input


# -- gelu -------------------------------------------------------------------------------------

_SQRT1_2 = 1 / math.sqrt(2)
_TANH_BETA = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5  # sqrt(2 / pi)
_KAPPA = 0.044715
_PDF_BETA = (2 / math.sqrt(math.pi)) * _SQRT1_2 * 0.5  # 1 / sqrt(2 pi)


@on_arrays("gelu_backward")
def _gelu_grad(grad: np.ndarray, x: np.ndarray, approximate: str) -> np.ndarray:
    """grad * gelu'(x), in the arrays' dtype (PyTorch's GeluBackward kernel)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            inner = t(_TANH_BETA) * (x + t(_KAPPA) * (x * x * x))
            tanh_inner = np.tanh(inner)
            left_derivative = t(0.5) * (t(1) + tanh_inner)
            right_derivative = (t(0.5) * x * (t(1) - tanh_inner * tanh_inner)
                                * t(_TANH_BETA) * (t(1) + t(3 * _KAPPA) * x * x))
            out = grad * (left_derivative + right_derivative)
        else:
            cdf = t(0.5) * (t(1) + K.erf(x * t(_SQRT1_2)))
            pdf = t(_PDF_BETA) * np.exp(x * x * t(-0.5))
            out = grad * (cdf + x * pdf)
    return in_result_layout(np.asarray(out, grad.dtype), grad, x)  # (PyTorch's kernel's)


class GeluBackward0(ArrayFormulaNode):
    """gelu(x): grad * (Phi(x) + x * phi(x)) (Phi, phi: the normal cdf and pdf), or the
    derivative of the tanh approximation. Saves its INPUT."""

    tangent = "auto_element_wise"
    saves = {"approximate": VALUE, "self": INPUT}
    formulas = (Formula("self", "gelu_backward(grad, self, approximate)"),)



class GeluBackwardBackward0(FormulaNode):
    """gelu_backward(grad_output, self, approximate) = grad_output * gelu'(self): linear
    in grad_output; its slope in self is gelu''. Saves both tensors."""

    tangent = ("gelu_backward(dense(grad_output_t, grad_output_p), self_p, approximate) + "
               "gelu_double_backward(dense(self_t, self_p), grad_output_p, self_p, approximate)")

    saves = {"approximate": VALUE, "grad_output": INPUT, "self": INPUT}
    formulas = (Formula("grad_output", "gelu_backward(grad, self, approximate)"),
                Formula("self", "gelu_double_backward(grad, grad_output, self, approximate)"))


def gelu_backward(grad_output: Tensor, self: Tensor, approximate: str = "none") -> Tensor:
    """The gradient of gelu (PyTorch's aten::gelu_backward; GeluBackwardBackward0)."""
    out = Tensor._make(_gelu_grad(grad_output._data, self._data, approximate))
    node = record(GeluBackwardBackward0, out, grad_output, self)
    if node is not None:
        node._saved.update({"approximate": approximate, "grad_output": SavedTensor(grad_output),
                            "self": SavedTensor(self)})
    return out


def _scalar_minus(number: float, t: Tensor) -> Tensor:
    """C++'s `number - t`: a tensor filled with the number, `t` subtracted in place
    (SubBackward0, not rsub)."""
    return full(tuple(t.shape), number, dtype=t.dtype).sub_(t)


def _scalar_over(number: float, t: Tensor) -> Tensor:
    """C++'s `number / t`: a tensor filled with the number, divided in place by `t`."""
    return full(tuple(t.shape), number, dtype=t.dtype).div_(t)


# (C's M_2_SQRTPI * M_SQRT1_2 * 0.5, one ulp from the forward's _PDF_BETA: a Scalar the
# double backward's graph shows)
_PDF_BETA_C = 1.12837916709551257390 * 0.707106781186547524401 * 0.5


def gelu_double_backward(ggI: Tensor, gO: Tensor, input: Tensor,  # noqa: A002, N803
                         approximate: str) -> Tensor:
    """gelu_backward's gradient in its input: ggI * gO * gelu''(input) (PyTorch's
    gelu_double_backward). Numbers are C++ Scalars (MulBackward1), and each binary op
    evaluates its right operand first, as C++ does, so the nodes are numbered as
    PyTorch's."""
    if approximate == "tanh":
        beta, kappa = Scalar(_TANH_BETA), _KAPPA
        inner = (input + input.pow(3) * Scalar(kappa)) * beta
        tanh_inner = inner.tanh()
        sech_inner = _scalar_over(1, inner.cosh())
        f = input * Scalar(0.5)
        g = _scalar_minus(1, tanh_inner * tanh_inner)
        h = (input * Scalar(3 * kappa) * input + Scalar(1)) * beta
        f_prime_gh = g * Scalar(0.5) * h
        slope = -sech_inner * tanh_inner
        g_prime = sech_inner * Scalar(2) * slope * h
        g_prime_fh = f * h * g_prime
        h_prime = input * Scalar(6 * kappa) * beta
        h_prime_fg = f * g * h_prime
        total = f_prime_gh * Scalar(2) + g_prime_fh + h_prime_fg
        return ggI * gO * total
    input_sq = input * input
    pdf = (input_sq * Scalar(-0.5)).exp() * Scalar(_PDF_BETA_C)
    right = input_sq * pdf
    d_input = pdf * Scalar(2) - right
    return ggI * gO * d_input


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x), Phi the standard normal cdf; `approximate="tanh"` uses
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type_name(approximate)}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = input._data
    if x.dtype.kind != "f":
        kind = "Long" if x.dtype.kind == "i" else "Bool"
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{kind}'")
    t = x.dtype.type
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            out = t(0.5) * x * (t(1) + np.tanh(t(_TANH_BETA) * (x + t(_KAPPA) * (x * x * x))))
        else:
            out = x * t(0.5) * (t(1) + K.erf(x * t(_SQRT1_2)))
    result = Tensor._make(in_result_layout(np.asarray(out, x.dtype), x))  # (by the input)
    node = record(GeluBackward0, result, input)
    if node is not None:
        node._saved.update({"approximate": approximate, "self": SavedTensor(input)})
    return result


# -- embedding --------------------------------------------------------------------------------


class EmbeddingBackward0(ArrayFormulaNode):
    """embedding(indices, weight): row i of the weight's gradient is the sum of the
    gradients of every place that looked row i up (none for `padding_idx`). Saves
    the indices."""

    tangent = "embedding_jvp(weight_t, indices, padding_idx)"
    saves = {"indices": INPUT, "padding_idx": VALUE, "scale_grad_by_freq": VALUE,
             "sparse": VALUE, "weight_sym_argsize_0": VALUE}
    formulas = (Formula("weight", "embedding_backward(grad, indices, weight_sym_argsize_0, "
                                  "padding_idx, scale_grad_by_freq, sparse)"),)



@on_arrays("embedding_backward")
def _embedding_backward_on_arrays(grad: np.ndarray, indices: np.ndarray, num_weights: int,
                                  padding_idx: int, scale_grad_by_freq: bool,
                                  sparse: bool) -> np.ndarray:
    return _embedding_grad(grad, indices, num_weights, None if padding_idx < 0 else padding_idx)


def _embedding_grad(grad: np.ndarray, indices: np.ndarray, num_weights: int,
                    padding: int | None) -> np.ndarray:
    """Each looked-up row's gradient added into row `index` of zeros (except the
    padding row's)."""
    idx = indices.reshape(-1)
    rows = grad.reshape(idx.size, -1)
    out = np.zeros((num_weights, rows.shape[1]), grad.dtype)
    keep = idx != padding if padding is not None else slice(None)
    np.add.at(out, idx[keep], rows[keep])
    return out


class EmbeddingDenseBackwardBackward0(FormulaNode):
    """embedding_dense_backward(grad_output, indices, num_weights, padding_idx, ...):
    linear in grad_output, whose gradient gathers the looked-up rows again."""

    tangent = ("embedding_dense_backward(grad_output_t, indices, result.shape[0], padding_idx, "
               "False)")

    saves = {"indices": INPUT, "padding_idx": VALUE}
    formulas = (Formula("grad_output", "embedding_dense_double_backward(grad, indices, "
                                       "padding_idx)"),)


def embedding_dense_backward(grad_output: Tensor, indices: Tensor, num_weights: int,
                             padding_idx: int, scale_grad_by_freq: bool) -> Tensor:
    """The gradient of embedding for its weight (PyTorch's
    aten::embedding_dense_backward; padding_idx -1: none)."""
    out = Tensor._make(_embedding_grad(grad_output._data, indices._data, num_weights,
                                       None if padding_idx < 0 else padding_idx))
    node = record(EmbeddingDenseBackwardBackward0, out, grad_output)
    if node is not None:
        node._saved.update({"indices": SavedTensor(indices), "padding_idx": u64(padding_idx)})
    return out


def padding_index(padding_idx: int | None, num_embeddings: int) -> int | None:
    """`padding_idx` checked against the table's size, a negative one counted from
    the end (as F.embedding and nn.Embedding both do)."""
    if padding_idx is None:
        return None
    if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm=None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """The rows of `weight` named by the integer tensor `input`: shape
    input.shape + (embedding_dim,)."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("minigrad's embedding takes no max_norm, "
                                  "scale_grad_by_freq or sparse")
    if padding_idx is not None:  # (Python's checks of padding_idx come first)
        padding_idx = padding_index(padding_idx, weight.size(0))
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input._data.dtype != np.int64:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"minigrad.{input.dtype.tensor_type} instead (while checking "
                           "arguments for embedding)")
    num = weight._data.shape[0]
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    out = Tensor._make(np.ascontiguousarray(weight._data[idx]))
    node = record(EmbeddingBackward0, out, weight)
    if node is not None:
        node._saved.update({"indices": SavedTensor(input),
                            "padding_idx": u64(-1 if padding_idx is None else padding_idx),
                            "scale_grad_by_freq": False, "sparse": False,
                            "weight_sym_argsize_0": num, "_padding": padding_idx})
    return out


# -- declarations: the nodes of nn.functional's activations (see `declaration.py`) ---------



declare("leaky_relu", nodes=(LeakyReluBackward0, LeakyReluBackward1))
declare("gelu", nodes=(GeluBackward0,))
declare("gelu_backward", nodes=(GeluBackwardBackward0,), aten=gelu_backward)
declare("gelu_double_backward", aten=gelu_double_backward)
declare("embedding", nodes=(EmbeddingBackward0,))
declare("leaky_relu_backward", nodes=(LeakyReluBackwardBackward0,), aten=leaky_relu_backward)
declare("embedding_dense_backward", nodes=(EmbeddingDenseBackwardBackward0,),
        aten=embedding_dense_backward)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def embedding_backward(grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int,
                       scale_grad_by_freq: bool, sparse: bool) -> Tensor:
    """The gradient of embedding for its weight: the dense one (minigrad has no
    sparse gradients)."""
    return BACKWARD_OPS["embedding_dense_backward"](grad, indices, num_weights, padding_idx,
                                                    scale_grad_by_freq)


@helper
def embedding_dense_double_backward(grad: Tensor, indices: Tensor, padding_idx: int) -> Tensor:
    """The gradient of embedding_dense_backward: the looked-up rows of `grad` (zero
    for the padding index), shaped like the embedding's output."""
    gg_weight = BACKWARD_OPS["index_select"](grad, 0, indices.reshape(-1))
    if padding_idx >= 0:
        gg_weight.masked_fill_((indices == padding_idx).reshape(-1, 1), 0)
    return gg_weight.view(*indices.shape, -1)


# -- the helpers this family's tangent formulas call (PyTorch's `*_jvp`) -----------------


@helper
def leaky_relu_result_backward(grad: Tensor, result: Tensor, negative_slope: float) -> Tensor:
    """`leaky_relu_backward(grad, result, negative_slope, True)` (leaky_relu_'s
    tangent), which PyTorch refuses for a negative slope, with the error of
    leaky_relu_'s own backward."""
    if negative_slope < 0:  # (the node's backward raises that error before reading)
        _leaky_relu_backward_on_arrays(None, None, negative_slope, True)
    return BACKWARD_OPS["leaky_relu_backward"](grad, result, negative_slope, True)


@helper
def embedding_jvp(weight_t: Tensor, indices: Tensor, padding_idx: int) -> Tensor:
    """embedding's tangent (`auto_linear`): the looked-up rows of the weight's tangent."""
    return embedding(indices, weight_t, None if padding_idx < 0 else padding_idx)

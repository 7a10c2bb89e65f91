"""Distances and similarities between vectors: pairwise_distance, cosine_similarity,
normalize, and the triplet margin loss built on them.

PyTorch composes each of other ops, so their graphs are those ops' nodes:
* pairwise_distance(x1, x2) is `at::norm(x1 - x2 + eps, p, last dim)`: C++'s `norm`
  with a number p and dims, whose node is NormBackward1 (Python's `Tensor.norm` goes
  to `linalg.vector_norm`, LinalgVectorNormBackward0); the same gradient, written
  once (`linalg_vector_norm_backward`);
* cosine_similarity divides each vector by its 2-norm first (each norm cloned and
  clamped to at least eps without a gradient), then sums the products;
* normalize divides by `norm.clamp_min(eps)` expanded to the input's shape.
"""

from __future__ import annotations

import numpy as np

from .._dtype import result_type
from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..grad_mode import no_grad
from ..tensor import Tensor
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, named, on_arrays
from .pointwise import clamp_min, clamp_min_
from .reductions import _dims, _saved_dim
from .scalar_overloads import add_scalar
from .statistics import _norm_data, vector_norm
from .tangent_formulas import Tangent

OP_FAMILY = "statistics"


class NormBackward1(ArrayFormulaNode):
    """norm(x, p, dim, keepdim) as C++ calls it (`at::norm`): a vector norm's
    gradient. Saves its INPUT and its OUTPUT."""

    tangent = Tangent("norm_jvp(self_p, self_t, p, result, _dims, keepdim)")
    saves = {"dim": VALUE, "keepdim": VALUE, "p": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "norm_backward(grad, self, p, result, dim, keepdim)"),)


@helper
def norm_backward(grad: Tensor, self: Tensor, p, result: Tensor, dim=None,  # noqa: A002
                  keepdim: bool = False):
    """norm's gradient: a vector norm's (PyTorch's norm_backward), over `dim` (None: all
    of `self`, as dist's)."""
    return named("linalg_vector_norm_backward")(grad, self, p, result, dim, keepdim)


@on_arrays("norm_backward")
def _norm_backward(grad: np.ndarray, x: np.ndarray, p, result: np.ndarray, dim=None,
                   keepdim: bool = False) -> np.ndarray:
    with no_grad():  # (the same formula, on tensors that record nothing)
        out = norm_backward(Tensor._make(grad), Tensor._make(x), p, Tensor._make(result),
                            dim, keepdim)
    return out._data


def norm_p(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """C++'s `at::norm(x, p, dim, keepdim)`: the p-norm over `dim` (NormBackward1)."""
    dims = _dims(dim, x.ndim)
    out = Tensor._make(_norm_data(x._data, float(p), dims, keepdim))
    node = record(NormBackward1, out, x)
    if node is not None:
        node._saved.update({"dim": _saved_dim((dim,)), "keepdim": keepdim, "p": p,
                            "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(x), "_dims": dims})
    return out


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 (+ eps) over the last dim."""
    innermost = max(x1.ndim, x2.ndim) - 1
    return norm_p(add_scalar(x1 - x2, eps), p, innermost, keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along `dim` (each norm at least eps)."""
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{common.type_name}")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(common)
    if not x2.dtype.is_floating_point:
        x2 = x2.to(common)
    if x1.shape != x2.shape:  # (PyTorch's expand_outplace)
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        # (a function's arguments, evaluated by C++ from the last: x2 first)
        x2 = x2.expand(*shape)
        x1 = x1.expand(*shape)
    x1_norm = vector_norm(x1, 2, dim, True).clone()
    x2_norm = vector_norm(x2, 2, dim, True).clone()
    with no_grad():
        clamp_min_(x1_norm, eps)
        clamp_min_(x2_norm, eps)
    # (C++ evaluates an operator's right operand first)
    second = x2 / x2_norm
    return ((x1 / x1_norm) * second).sum(dim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out=None) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    if out is not None:
        raise NotImplementedError("minigrad's normalize takes no out= tensor")
    denom = clamp_min(input.norm(p, dim, keepdim=True), eps).expand_as(input)
    return input / denom


declare("norm_p", nodes=(NormBackward1,), aten=norm_p)
declare("pairwise_distance", function=pairwise_distance)
declare("cosine_similarity", function=cosine_similarity)

"""gather, scatter, scatter_add, masked_select, masked_scatter and index_add: the ops
that PyTorch's backward formulas of picking ops call, and their own nodes.

A picking op's gradient puts the gradient back where the values were picked from:
max(dim)'s is `zeros.scatter_(dim, indices, grad)`, index_select's
`zeros.index_add(dim, index, grad)`, masked_select's `zeros.masked_scatter_(mask,
grad)`. With `create_graph=True` those calls are recorded (ScatterBackward0,
IndexAddBackward0, MaskedScatterBackward0), and their own gradients pick again:
scatter's source gets `grad.gather(dim, index)` (GatherBackward0), whose gradient
adds back with scatter_add (ScatterAddBackward0); masked_scatter's source gets
`grad.masked_select(mask)`; index_add's source `grad.index_select(dim, index)`. So
each pair closes on itself, and any order of derivative is recorded.

These are the forms backward formulas call (PyTorch's `torch.ops.aten`): they take only
what the formulas pass them. The public forms, which check their arguments as
PyTorch's do, are in `picking.py`.
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros, zeros_like
from ..arrays.broadcasting import broadcast_shape
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from .arithmetic import maybe_multiply
from .declaration import declare
from .formulas import Formula, FormulaNode
from .indexing import index_select
from .tangent_formulas import Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the indexing ops.)
OP_FAMILY = "indexing"


def _places(index: np.ndarray, dim: int) -> tuple:
    """The numpy index of the elements `index` names along `dim`: for element i of
    `index`, i itself in every other dim and index[i] in `dim` (a 0-d index: one
    element of a 0-d tensor)."""
    if index.ndim == 0:
        return ()
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _block(a: np.ndarray, shape: tuple) -> np.ndarray:
    """The leading block of `a` of `shape` (scatter reads as much of its source as
    the index has)."""
    return a[tuple(slice(0, n) for n in shape)] if a.ndim else a


def _saved_dim_index(node, dim: int, index: Tensor) -> None:
    node._saved.update({"dim": u64(dim), "index": SavedTensor(index)})


# -- gather and scatter ------------------------------------------------------------------


class GatherBackward0(FormulaNode):
    """gather(self, dim, index): each picked element's gradient is added back at the
    place it was picked from (scatter_add into zeros)."""

    tangent = Tangent("gather(self_t, dim, index)", linear=True)

    saves = {"dim": VALUE, "index": INPUT, "self": INPUT, "sparse_grad": VALUE}
    formulas = (Formula("self", "gather_backward(grad, self, dim, index, sparse_grad)"),)


def gather(self: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    """out[i][j] = self[index[i][j]][j] for dim 0 (PyTorch's aten::gather)."""
    d = _wrap_dim(dim, self._data.ndim)
    out = Tensor._make(np.array(self._data[_places(index._data, d)], order="C"))
    node = record(GatherBackward0, out, self)
    if node is not None:
        _saved_dim_index(node, dim, index)
        node._saved.update({"self": SavedTensor(self), "sparse_grad": sparse_grad})
    return out


class ScatterBackward0(FormulaNode):
    """scatter(self, dim, index, src): self's gradient is zero where src was written;
    src's is the gradient picked at the places it went to (gather)."""

    tangent = "scatter(dense(self_t, self_p), dim, index, dense(src_t, src_p))"

    saves = {"dim": VALUE, "index": INPUT}
    formulas = (Formula("self", "scatter(grad, dim, index, 0)"),
                Formula("src", "gather(grad, dim, index)"))


class ScatterBackward1(FormulaNode):
    """scatter(self, dim, index, value): the gradient is zero where the value was
    written."""

    tangent = Tangent("scatter(self_t, dim, index, 0)", linear=True)

    saves = {"dim": VALUE, "index": INPUT}
    formulas = (Formula("self", "scatter(grad, dim, index, 0)"),)


def _scatter_into(data: np.ndarray, dim: int, index: Tensor, src) -> None:
    d = _wrap_dim(dim, data.ndim)
    where = _places(index._data, d)
    if isinstance(src, Tensor):
        data[where] = _block(src._data, index._data.shape)
    else:
        data[where] = src


def scatter(self: Tensor, dim: int, index: Tensor, src) -> Tensor:
    """`self` with src (a tensor, or a number) written at the places `index` names
    along `dim` (PyTorch's aten::scatter)."""
    data = np.array(self._data, order="C")
    _scatter_into(data, dim, index, src)
    out = Tensor._make(data)
    tensor_src = isinstance(src, Tensor)
    node = record(ScatterBackward0 if tensor_src else ScatterBackward1, out, self,
                  *((src,) if tensor_src else ()))
    if node is not None:
        _saved_dim_index(node, dim, index)
    return out


def scatter_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """scatter in place (value_selecting_reduction_backward writes into its zeros)."""
    node = begin_inplace(ScatterBackward0, self, src)
    _scatter_into(self._data, dim, index, src)
    finish_inplace(self, node)
    if node is not None:
        _saved_dim_index(node, dim, index)
    return self


class ScatterAddBackward0(FormulaNode):
    """scatter_add(self, dim, index, src): self's gradient passes as it is; src's is
    the gradient picked at the places it was added to (gather)."""

    tangent = "scatter_add_(dense(self_t, self_p).clone(), dim, index, dense(src_t, src_p))"

    saves = {"dim": VALUE, "index": INPUT}
    formulas = (Formula("self", "grad"), Formula("src", "gather(grad, dim, index)"))


def _scatter_add_into(data: np.ndarray, dim: int, index: Tensor, src: Tensor) -> None:
    d = _wrap_dim(dim, data.ndim)
    if data.ndim == 0 and index._data.ndim:  # (a 0-d tensor read as a 1-element vector)
        data, src = data.reshape(1), src.reshape(-1) if src._data.ndim == 0 else src
    np.add.at(data, _places(index._data, d), _block(src._data, index._data.shape))


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """src added in place at the places `index` names along `dim` (a place named
    twice gets both; PyTorch's aten::scatter_add_)."""
    node = begin_inplace(ScatterAddBackward0, self, src)
    _scatter_add_into(self._data, dim, index, src)
    finish_inplace(self, node)
    if node is not None:
        _saved_dim_index(node, dim, index)
    return self


def gather_backward(grad: Tensor, self: Tensor, dim: int, index: Tensor,
                    sparse_grad: bool) -> Tensor:
    """The gradient of gather: `grad` added into zeros shaped like self at the places
    it was picked from (PyTorch's gather_backward)."""
    return scatter_add_(zeros(tuple(self.shape), dtype=grad.dtype), dim, index, grad)


def value_selecting_reduction_backward(grad: Tensor, dim: int, indices: Tensor,
                                       sizes: tuple, keepdim: bool) -> Tensor:
    """The gradient of max(dim)/min(dim): `grad` written at the selected places of
    zeros of the input's sizes, in place (scatter_)."""
    if not keepdim and sizes:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    grad_in = zeros(sizes, dtype=grad.dtype)
    grad_in._version_counter.value += 1  # (PyTorch's zeros are filled with zero_)
    return scatter_(grad_in, dim, indices, grad)


# -- masked_select and masked_scatter --------------------------------------------------


class MaskedSelectBackward0(FormulaNode):
    """masked_select(self, mask): the picked elements' gradients go back to their
    places, in zeros of the broadcast shape (masked_scatter)."""

    tangent = Tangent("masked_select(self_t, mask)", linear=True)

    saves = {"mask": INPUT, "self": INPUT}
    formulas = (Formula("self", "masked_select_backward(grad, self, mask)"),)


def masked_select(self: Tensor, mask: Tensor) -> Tensor:
    """The elements of `self` where `mask` holds (both broadcast), as a 1-D tensor
    (PyTorch's aten::masked_select)."""
    shape = broadcast_shape(self._data.shape, mask._data.shape)
    data = np.broadcast_to(self._data, shape)[np.broadcast_to(mask._data, shape)]
    out = Tensor._make(np.array(data, order="C"))
    node = record(MaskedSelectBackward0, out, self)
    if node is not None:
        node._saved.update({"mask": SavedTensor(mask), "self": SavedTensor(self)})
    return out


class MaskedScatterBackward0(FormulaNode):
    """masked_scatter(self, mask, source): self's gradient is zero where source was
    written; source's is the gradient at those places, in order, then zeros for the
    source elements left unused."""

    tangent = ("masked_scatter_(dense(self_t, self_p).clone(), mask, "
               "dense(source_t, source_p))")

    saves = {"mask": INPUT, "source_sym_sizes": VALUE}
    formulas = (Formula("self", "grad.masked_fill(mask, 0)"),
                Formula("source", "masked_scatter_backward(grad, mask, source_sym_sizes)"))


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """The first elements of `source`, in order, written where `mask` holds, in place
    (PyTorch's aten::masked_scatter_)."""
    node = begin_inplace(MaskedScatterBackward0, self, source)
    where = np.broadcast_to(mask._data, self._data.shape)
    self._data[where] = source._data.reshape(-1)[:int(where.sum())]
    finish_inplace(self, node)
    if node is not None:
        node._saved.update({"mask": SavedTensor(mask),
                            "source_sym_sizes": source._data.shape})
    return self


def masked_select_backward(grad: Tensor, input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """The gradient of masked_select: `grad` written back where the mask holds, into
    zeros of the broadcast shape, laid out as the input expanded to it (PyTorch's
    `zeros_like(input.expand(shape))`)."""
    shape = broadcast_shape(tuple(input.shape), tuple(mask.shape))
    return masked_scatter_(zeros_like(input.expand(shape), dtype=grad.dtype), mask, grad)


class MaskedScatterBackwardBackward0(FormulaNode):
    """masked_scatter_backward(grad_output, mask, sizes): linear in grad_output, whose
    gradient goes back where the mask holds (masked_scatter_ into zeros)."""

    tangent = Tangent("masked_scatter_backward(grad_output_t, mask, grad_output_t.shape)",
                      linear=True)

    saves = {"mask": INPUT}
    # (grad_output's sizes, for the zeros: PyTorch keeps them without a `_saved_` name)
    unshown = ("grad_output_sizes",)
    formulas = (Formula("grad_output", "masked_scatter_(zeros(grad_output_sizes, "
                                       "dtype=grad.dtype), mask, grad)"),)


def masked_scatter_backward(grad: Tensor, mask: Tensor, sizes: tuple) -> Tensor:
    """The gradient of masked_scatter's source: `grad` where the mask holds, in
    order, then zeros for the source elements past them, shaped as the source
    (PyTorch's aten::masked_scatter_backward)."""
    where = np.broadcast_to(mask._data, grad._data.shape)
    data = np.zeros(int(np.prod(sizes, dtype=np.int64)), grad._data.dtype)
    picked = grad._data[where]
    data[:picked.size] = picked
    out = Tensor._make(data.reshape(sizes))
    node = record(MaskedScatterBackwardBackward0, out, grad)
    if node is not None:
        node._saved.update({"mask": SavedTensor(mask),
                            "_grad_output_sizes": grad._data.shape})
    return out


def masked_fill_backward(grad: Tensor, mask: Tensor) -> Tensor:
    """The gradient of masked_fill's 0-dim tensor value: the sum of the gradient
    where the mask holds."""
    return masked_select(grad, mask).sum()


# -- index_add ---------------------------------------------------------------------------


class IndexAddBackward0(FormulaNode):
    """index_add(self, dim, index, source, alpha): self's gradient passes as it is;
    source's is alpha times the gradient's slices at `index` (index_select)."""

    tangent = ("index_add(dense(self_t, self_p), dim, index, "
               "dense(maybe_multiply(source_t, alpha), source_p))")

    saves = {"alpha": VALUE, "dim": VALUE, "index": INPUT, "source": INPUT,
             "source_dim": VALUE}
    scalars = ("alpha",)
    formulas = (Formula("self", "grad"),
                Formula("source", "index_add_source_backward(grad, dim, index, source, "
                                  "source_dim, alpha)"))


def _index_add_into(data: np.ndarray, dim: int, index: Tensor, source: Tensor, alpha) -> None:
    src = source._data if alpha == 1 else source._data * data.dtype.type(alpha)
    if data.ndim == 0:
        data[()] += src.sum() if index._data.size else 0
    else:
        where = (slice(None),) * _wrap_dim(dim, data.ndim) + (index._data.reshape(-1),)
        np.add.at(data, where, src)


def _save_index_add(node, dim: int, index: Tensor, source: Tensor, alpha) -> None:
    node._saved.update({"alpha": alpha, "dim": u64(dim), "index": SavedTensor(index),
                        "source": SavedTensor(source), "source_dim": source._data.ndim})


def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha=1) -> Tensor:
    """`self` with alpha * source's slices added at `index` along `dim` (an index
    named twice gets both; PyTorch's aten::index_add)."""
    data = np.array(self._data, order="C")
    _index_add_into(data, dim, index, source, alpha)
    out = Tensor._make(data)
    node = record(IndexAddBackward0, out, self, source)
    if node is not None:
        _save_index_add(node, dim, index, source, alpha)
    return out


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha=1) -> Tensor:
    """index_add in place (PyTorch's aten::index_add_)."""
    node = begin_inplace(IndexAddBackward0, self, source)
    _index_add_into(self._data, dim, index, source, alpha)
    finish_inplace(self, node)
    if node is not None:
        _save_index_add(node, dim, index, source, alpha)
    return self


def index_add_source_backward(grad: Tensor, dim: int, index: Tensor, source: Tensor,
                              source_dim: int, alpha) -> Tensor:
    """index_add's gradient for its source: the gradient's slices at `index`,
    expanded as the source (a 0-dim source: the one slice), times alpha."""
    if source_dim > 0:
        picked = index_select(grad, dim, index).expand_as(source)
    else:
        picked = index_select(grad, dim, index.squeeze(0))
    return maybe_multiply(picked, alpha)


def index_select_backward(grad: Tensor, sizes: tuple, dim: int, index: Tensor) -> Tensor:
    """The gradient of index_select: each slice's gradient added back at its index,
    into zeros of the input's sizes (index_add)."""
    return index_add_(zeros(sizes, dtype=grad.dtype), dim, index, grad)


# (gather, scatter, masked_select and index_add are declared with their public forms,
# in `picking.py`)
declare("scatter_", aten=scatter_)
declare("scatter_add_", aten=scatter_add_)
declare("masked_scatter_", aten=masked_scatter_)
declare("index_add_", aten=index_add_)
# (the helpers PyTorch's formulas call, by their names there)
declare("gather_backward", aten=gather_backward)
declare("value_selecting_reduction_backward", aten=value_selecting_reduction_backward)
declare("masked_select_backward", aten=masked_select_backward)
declare("masked_scatter_backward", nodes=(MaskedScatterBackwardBackward0,),
        aten=masked_scatter_backward)
declare("masked_fill_backward", aten=masked_fill_backward)
declare("index_add_source_backward", aten=index_add_source_backward)
declare("index_select_backward", aten=index_select_backward)

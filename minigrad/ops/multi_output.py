"""Multi-output views: `unbind`, `split` and `chunk` cut one tensor into several
views of it, which share ONE backward node and are told apart by their output
numbers, `(UnbindBackward0, 0)`, `(UnbindBackward0, 1)`, ... Its backward puts each
piece's gradient back in its place (zeros where a piece got none). Changing such a
view in place is refused: the node could not tell which piece changed.
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros
from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..autograd.tangents import DUAL, same_views
from ..tensor import MULTI_OUTPUT_NODE, Tensor, _wrap_dim, make_view
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, helper, named, on_arrays
from .tangent_formulas import SAME_VIEW

OP_FAMILY = "views"


class UnbindBackward0(ArrayFormulaNode):
    """unbind(dim): stack the outputs' gradients back (zeros for unused outputs)."""

    # (every output is a view of the input: its tangent is the same view of the
    # input's, the first's made here, the others' when first read)
    tangent = SAME_VIEW
    saves = {"dim": VALUE}
    formulas = (Formula("self", "unbind_backward(grads, dim)"),)

    def _num_outputs(self) -> int:
        return self._input_meta[0][0][self._saved["_dim"]]


class SplitBackward0(ArrayFormulaNode):
    """split/chunk: concatenate the pieces' gradients (zeros for unused pieces)."""

    tangent = SAME_VIEW  # (as unbind's)
    saves = {"dim": VALUE, "self_sym_sizes": VALUE, "split_size": VALUE}
    formulas = (Formula("self", "split_backward(grads, split_size, dim, self_sym_sizes)"),)

    def _num_outputs(self) -> int:
        return len(self._saved["_pieces"])


class SplitWithSizesBackward0(SplitBackward0):
    __doc__ = SplitBackward0.__doc__
    saves = {"dim": VALUE, "self_sym_sizes": VALUE, "split_sizes": VALUE}
    formulas = (Formula("self", "split_with_sizes_backward(grads, split_sizes, dim, "
                                "self_sym_sizes)"),)


def _multi_output(x: Tensor, node_cls, pieces: list, **saved) -> tuple:
    """Views that share ONE node, with output indices 0, 1, 2, ... (in-place on
    them is forbidden: their node could not tell which piece changed)."""
    outs = tuple(make_view(x, x._data[where], MULTI_OUTPUT_NODE) for where in pieces)
    node = record(node_cls, outs[0] if outs else Tensor._make(np.zeros(0)), x)
    if DUAL.active:
        same_views(x, outs[1:])
    if node is not None:
        node._saved.update(saved)
        node._saved["_pieces"] = pieces
        node._input_meta = ((x._data.shape, x._data.dtype),)
        for i, out in enumerate(outs):
            out._grad_fn = node
            out._output_nr = i
    return outs


def unbind(x: Tensor, dim: int = 0) -> tuple:
    """Split into the slices along `dim`, each a view; one node for all of them."""
    if x._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, x._data.ndim)
    pieces = [(slice(None),) * d + (i, Ellipsis) for i in range(x._data.shape[d])]
    return _multi_output(x, UnbindBackward0, pieces, dim=u64(dim), _dim=d)


def split(x: Tensor, split_size, dim: int = 0) -> tuple:
    """Pieces of `split_size` along `dim` (the last may be smaller), or of the
    given sizes when `split_size` is a list."""
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(split_size, (list, tuple)):
        sizes = list(split_size)
        if any(size < 0 for size in sizes):
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes=[{', '.join(map(str, sizes))}]")
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {d}), but got split_sizes=[{', '.join(map(str, sizes))}]"
            )
        cls, saved = SplitWithSizesBackward0, {"split_sizes": tuple(sizes)}
    else:
        if split_size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [min(split_size, n - s) for s in range(0, n, split_size)] if n else [0]
        cls, saved = SplitBackward0, {"split_size": split_size}
    pieces, start = [], 0
    for size in sizes:
        pieces.append((slice(None),) * d + (slice(start, start + size),))
        start += size
    return _multi_output(x, cls, pieces, dim=u64(dim), self_sym_sizes=x._data.shape,
                         _dim=d, **saved)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """`chunks` nearly equal pieces (PyTorch computes it as a split)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = x._data.shape[_wrap_dim(dim, x._data.ndim)]
    return split(x, max(-(-n // chunks), 1), dim)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------


declare("unbind", nodes=(UnbindBackward0,), function=unbind, method=True)
declare("split", nodes=(SplitBackward0, SplitWithSizesBackward0), function=split, method=True)
declare("chunk", function=chunk, method=True)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def split_with_sizes_backward(grads: list, split_sizes: tuple, dim: int,
                              sizes: tuple) -> Tensor:
    """The gradient of split: the pieces' gradients joined again (`cat`), zeros for a
    piece that got none."""
    dim %= len(sizes)
    dtype = next(g.dtype for g in grads if g is not None)
    pieces = []
    for g, length in zip(grads, split_sizes):
        if g is None:
            g = zeros(sizes[:dim] + (length,) + sizes[dim + 1:], dtype=dtype)
        pieces.append(g)
    return named("cat")(pieces, dim)


@helper
def split_backward(grads: list, split_size: int, dim: int, sizes: tuple) -> Tensor:
    """The gradient of split into pieces of `split_size` (the last may be smaller)."""
    n = sizes[dim % len(sizes)]
    lengths = tuple(min(split_size, n - s) for s in range(0, n, split_size)) if n else (0,)
    return split_with_sizes_backward(grads, lengths, dim, sizes)


@helper
def unbind_backward(grads: list, dim: int) -> Tensor:
    """The gradient of unbind: the slices' gradients stacked again, zeros (expanded
    from one) for a slice that got none."""
    like = next(g for g in grads if g is not None)
    zero = zeros((), dtype=like.dtype).expand(like.shape)
    return named("stack")([zero if g is None else g for g in grads], dim)


# -- the helpers' array versions, for the plain backwards -----------------------------------


@on_arrays("split_with_sizes_backward")
def _split_with_sizes_backward_on_arrays(grads: list, split_sizes: tuple, dim: int,
                                         sizes: tuple) -> np.ndarray:
    dim %= len(sizes)
    out = np.zeros(sizes, np.result_type(*(g for g in grads if g is not None)))
    start = 0
    for g, length in zip(grads, split_sizes):
        if g is not None:
            out[(slice(None),) * dim + (slice(start, start + length),)] = g
        start += length
    return out


@on_arrays("split_backward")
def _split_backward_on_arrays(grads: list, split_size: int, dim: int,
                              sizes: tuple) -> np.ndarray:
    n = sizes[dim % len(sizes)]
    lengths = tuple(min(split_size, n - s) for s in range(0, n, split_size)) if n else (0,)
    return _split_with_sizes_backward_on_arrays(grads, lengths, dim, sizes)


@on_arrays("unbind_backward")
def _unbind_backward_on_arrays(grads: list, dim: int) -> np.ndarray:
    like = next(g for g in grads if g is not None)
    dim %= like.ndim + 1
    out = np.zeros(like.shape[:dim] + (len(grads),) + like.shape[dim:],
                   np.result_type(*(g for g in grads if g is not None)))
    for i, g in enumerate(grads):
        if g is not None:
            out[(slice(None),) * dim + (i,)] = g
    return out

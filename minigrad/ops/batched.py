"""Batched matrix products: `bmm`, and `matmul` of operands with 3 or more dims.

PyTorch's `matmul` is not an op with a node of its own: it is made of other ops, and
the graph shows them. For a batch of matrices times one matrix (or vector) it folds
the batch into the rows of one matrix and calls `mm` (`mv`); otherwise it expands
both batches to their broadcast shape, reshapes each into a 3-D stack and calls
`bmm`. Either way the product gets its final shape from `_unsafe_view`, a reshape
whose result is no view (UnsafeViewBackward0). minigrad composes the same ops in the
same order, so its graph is PyTorch's node for node.
"""

from __future__ import annotations

import numpy as np

from ..arrays.broadcasting import broadcast_shape
from ..arrays.quiet import quietly
from ..autograd.graph import INPUT, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from . import linalg, views
from .copies import contiguous
from .declaration import declare
from .expand import expand
from .formulas import ArrayFormulaNode, Formula, on_arrays
from .linalg import _folds, _refuse_batched
from .public_forms import reflected
from .tangent_formulas import Tangent


class BmmBackward0(ArrayFormulaNode):
    """A @ B for stacks of matrices: grad @ B^T for A, A^T @ grad for B, matrix by
    matrix. Each operand is saved only if the other one needs a gradient."""

    tangent = Tangent("bmm(self_t, mat2_p) + bmm(self_p, mat2_t)")

    saves = {"mat2": INPUT, "self": INPUT}
    formulas = (Formula("self", "grad.bmm(mat2.transpose(1, 2))"),
                Formula("mat2", "self.transpose(1, 2).bmm(grad)"))
    exact = True  # (both stacks have one dtype, which `bmm` checks)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """The matrix products of two stacks of matrices, (b, n, m) @ (b, m, p) -> (b, n, p)."""
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.type_name} but found "
                           f"{mat2.dtype.type_name}")
    if a.dtype == np.bool_:
        raise RuntimeError('"bmm" not implemented for \'Bool\'')
    out = Tensor._make(_bmm_on_arrays(a, b))
    node = record(BmmBackward0, out, input, mat2)
    if node is not None:
        if node.needs_grad(1):
            node._saved["self"] = SavedTensor(input)
        if node.needs_grad(0):
            node._saved["mat2"] = SavedTensor(mat2)
    return out


@on_arrays("bmm", method=True)
def _bmm_on_arrays(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The stacked products, C-contiguous as PyTorch's bmm makes them; inf * 0 inside
    a product is nan, silently, as in PyTorch."""
    return np.ascontiguousarray(quietly(np.matmul, a, b))


def unsafe_view(x: Tensor, shape: tuple) -> Tensor:
    """PyTorch's `_unsafe_view`: `x` (a fresh result nobody else holds) with another
    shape, as a tensor of its own, not a view (UnsafeViewBackward0)."""
    out = Tensor._make(x._data.reshape(shape))
    node = record(views.UnsafeViewBackward0, out, x)
    if node is not None:
        node._saved["self_sym_sizes"] = x._data.shape
    return out


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """`a @ b` as PyTorch's `matmul` computes it: `dot`, `mv`, `mm` for 1-D and 2-D
    operands; with a batch, folded into `mm`/`mv` or broadcast into `bmm`."""
    if not isinstance(b, Tensor):
        raise TypeError("matmul(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(b).__name__}")
    da, db = a._data.ndim, b._data.ndim
    if da == 2 and db == 2:  # (the usual case, asked first)
        return linalg.mm(a, b)
    if (da <= 2 and db <= 2) or da == 0 or db == 0:
        return linalg.matmul(a, b)
    if da == 3 and db == 3 and a._data.shape[0] != b._data.shape[0]:
        # A stack of one matrix that requires grad is squeezed to that matrix first
        # (so the product folds into mm, and its gradient is no stack of copies).
        if a._data.shape[0] == 1 and a.requires_grad:
            return matmul(views.squeeze(a, 0), b)
        if b._data.shape[0] == 1 and b.requires_grad:
            return matmul(a, views.squeeze(b, 0))
    _refuse_batched(a, b)  # (PyTorch's error for shapes that do not fit; mm's or
    # bmm's, below, for dtypes)
    if _folds(a, b):
        return _folded(a, b)
    return _broadcast(a, b)


def _folded(a: Tensor, b: Tensor) -> Tensor:
    """The batch of the larger operand folded into the rows of one matrix: one `mm`
    (or `mv`). If the batch is on the right, `a @ b` is computed as `(b^T @ a^T)^T`."""
    transpose = b._data.ndim > a._data.ndim
    if transpose:
        t1 = views.transpose(b, -2, -1)
        t2 = views.t(a) if a._data.ndim == 2 else a
    else:
        t1, t2 = a, b
    sizes = t1._data.shape
    out_shape = list(sizes[:-1])
    rows = int(np.prod(out_shape))
    if t2._data.ndim == 2:
        out_shape.append(t2._data.shape[1])
    folded = views.reshape(t1, rows, sizes[-1])
    if t2._data.ndim == 2:
        out = unsafe_view(linalg.mm(folded, t2), tuple(out_shape))
        return contiguous(views.transpose(out, -2, -1)) if transpose else out
    return unsafe_view(linalg.mv(folded, t2), tuple(out_shape))


def _broadcast(a: Tensor, b: Tensor) -> Tensor:
    """Both operands expanded to the broadcast batch, reshaped into stacks of
    matrices, multiplied by `bmm`, and the product viewed with the batch's shape."""
    sa, sb = a._data.shape, b._data.shape
    n = sa[-2] if len(sa) > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if len(sb) > 1 else sb[0]
    p = sb[-1] if len(sb) > 1 else 1
    batch = list(broadcast_shape(sa[:-2], sb[:-2]))
    count = int(np.prod(batch))
    a3 = views.reshape(expand(a, *batch, n, m1), count, n, m1)
    vector_rhs = len(sb) == 1
    b_src = views.unsqueeze(b, -1) if vector_rhs else b
    b3 = views.reshape(expand(b_src, *batch, m2, p), count, m2, p)
    out_shape = batch + ([n] if len(sa) > 1 else []) + ([p] if len(sb) > 1 else [])
    product = bmm(a3, b3)
    if vector_rhs:
        product = views.squeeze(product, -1)
    return unsafe_view(product, tuple(out_shape))


def matmul_operator(a: Tensor, b) -> Tensor:
    """`a @ b` (`Tensor.__matmul__`): NotImplemented for a `b` that is not a tensor
    (`t @ 2` is Python's TypeError). Two matrices, the product of every layer, go
    straight to `mm`."""
    if not isinstance(b, Tensor):
        return NotImplemented
    if a._data.ndim == 2 and b._data.ndim == 2:
        return linalg.mm(a, b)
    return matmul(a, b)


def matmul_function(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """`input @ other` (the function form: a non-tensor `other` is its 2nd argument)."""
    if not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return matmul(input, other)


matmul_function.__name__ = matmul_function.__qualname__ = "matmul"  # (`minigrad.matmul`)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("bmm", nodes=(BmmBackward0,), function=bmm, method=True)
# (matmul records the node of the product it comes down to: MmBackward0, BmmBackward0, ...)
declare("matmul", function=matmul_function, method=matmul,
        attributes={"__matmul__": matmul_operator, "__rmatmul__": reflected(matmul)})

"""`linalg.matrix_norm`: norms of the matrices in two dims of a tensor; and `norm` /
`linalg.norm`, which take a vector or a matrix norm by their arguments.

PyTorch has no node of its own for them: it composes them from other ops, and so
does minigrad, op for op, so the graph is PyTorch's:
* "fro": the 2-norm of the entries (`vector_norm` over both dims);
* 1 / -1: the largest / smallest column sum of |A| (`vector_norm(A, 1)` over the
  rows, then `amax` / `amin` over the columns); inf / -inf: the same for the rows
  (the two dims swapped).
* "nuc": the sum of the singular values; 2 / -2: the largest / smallest of them
  (`linalg.svdvals` of the input with the two dims moved to the end, then `sum` /
  `amax` / `amin` over its last dim; with keepdim, `unsqueeze` and the inverse
  `permute` put the two dims back).
"""

from __future__ import annotations

import math

from .._args import is_int, is_number, type_name
from .._creation import zeros
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .extremes import amax, amin
from .statistics import LinalgVectorNormBackward0, vector_norm
from .svd import svdvals

_SVD_ORDERS = ("nuc", 2, -2)


def _order_text(ord) -> str:  # noqa: A002 - PyTorch's name
    """The order as PyTorch's message prints it (a Scalar: 3, 2.5, inf)."""
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def _checked_dims(A: Tensor, dim, dtype) -> tuple[int, int]:  # noqa: N803 - PyTorch's name
    """PyTorch's `_linalg_matrix_norm_checks`: a floating matrix (or batch of them),
    two different dims, a dtype that does not narrow. The two dims, wrapped."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor "
                           f"as input. Got {A.dtype.type_name}")
    dims = (dim,) if is_int(dim) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    d0, d1 = (_wrap_dim(d, A._data.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None and dtype is not A.dtype and (
            dtype.itemsize < A.dtype.itemsize or not dtype.is_floating_point):
        raise RuntimeError(
            f"linalg.matrix_norm: the dtype of the input ({A.dtype.type_name}) should be "
            f"convertible without narrowing to the specified dtype ({dtype.type_name})")
    return d0, d1


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,  # noqa: A002,N803
                dtype=None) -> Tensor:
    """The norm of the matrices in dims `dim` of `A`: "fro" (the 2-norm of the entries),
    1 / -1 (the largest / smallest column sum of |A|), inf / -inf (the same for the
    rows), "nuc" (the sum of the singular values), 2 / -2 (the largest / smallest)."""
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif not is_number(ord):
        raise TypeError(f"linalg_matrix_norm(): argument 'ord' must be Number, not "
                        f"{type_name(ord)}")
    elif abs(float(ord)) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_order_text(ord)} not supported.")
    d0, d1 = _checked_dims(A, dim, dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in _SVD_ORDERS:
        return _singular_value_norm(A, ord, d0, d1, keepdim, dtype)
    extreme = amax if float(ord) > 0 else amin
    if math.isinf(float(ord)):  # (the inf-norm is the 1-norm of the transpose)
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:  # (the first reduction removes a dim before d1)
        d1 -= 1
    sums = vector_norm(A, 1.0, (d0,), keepdim, dtype=dtype)
    if extreme is amax and sums._data.shape[d1] == 0:  # (the largest of no sums: PyTorch
        shape = list(sums._data.shape)                 # gives zeros, outside the graph)
        shape[d1:d1 + 1] = [1] if keepdim else []
        return zeros(shape, dtype=sums.dtype)
    return extreme(sums, d1, keepdim)


def _singular_value_norm(A: Tensor, ord, d0: int, d1: int, keepdim: bool,  # noqa: A002,N803
                         dtype) -> Tensor:
    """"nuc", 2 or -2, as PyTorch composes them: the singular values of the matrices
    in dims (d0, d1), moved to the end, then their sum, largest or smallest (with
    keepdim, one size-1 dim kept, a second added, both put back in place)."""
    ndim = A._data.ndim
    order = [d for d in range(ndim) if d not in (d0, d1)] + [d0, d1]
    values = svdvals((A if dtype is None else A.to(dtype)).permute(order))
    if ord == "nuc":
        result = values.sum(-1, keepdim)
    elif ord > 0 and values._data.shape[-1] == 0:  # (the largest of none: zeros, as
        shape = values._data.shape[:-1] + ((1,) if keepdim else ())  # PyTorch's, no graph)
        result = zeros(shape, dtype=values.dtype)
    else:
        result = (amax if ord > 0 else amin)(values, -1, keepdim)
    if keepdim:
        result = result.unsqueeze(-1).permute([order.index(d) for d in range(ndim)])
    return result


# -- the norms that choose between a vector and a matrix norm -----------------------------


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False,  # noqa: A002
         out=None, dtype=None) -> Tensor:
    """`torch.norm` / `Tensor.norm`: a vector norm of the entries over `dim` ("fro",
    the default, is the 2-norm); another string ("nuc") a matrix norm
    (`linalg.matrix_norm`) over `dim` (every dim by default)."""
    if out is not None:
        raise NotImplementedError("minigrad's norm takes no out= tensor")
    dims = [dim] if is_int(dim) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or is_int(dim) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        if dims is None:
            dims = list(range(input._data.ndim))
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def linalg_norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *,  # noqa: A002,N803
                dtype=None) -> Tensor:
    """`linalg.norm`: with `ord=None` the 2-norm of all entries (or along `dim`); a
    matrix norm (`linalg.matrix_norm`) for a string `ord`, or a number over two dims
    (a 2-D input without `dim`, or a 2-long `dim`); else a vector norm."""
    if dim is not None and is_int(dim):
        dim = (dim,)
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or "
                               f"2. Got [{', '.join(str(d) for d in dim)}]")
    elif ord is not None and A._data.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A._data.ndim}D.")
    if isinstance(ord, str):
        return matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is not None and (len(dim) == 2 if dim is not None else A._data.ndim == 2):
        return matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


declare("norm", nodes=(LinalgVectorNormBackward0,), function=norm, method=True)

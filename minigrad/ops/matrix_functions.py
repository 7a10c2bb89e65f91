"""Linear algebra built from other ops: `linalg.vecdot`, `linalg.multi_dot`,
`linalg.matrix_power`, `linalg.vander`, `linalg.diagonal`, and `cross`.

Most of these are not ops of their own in PyTorch: they are made of `mul` and `sum`,
`mm`, `matmul`, `cumprod` and `cat`, and the graph shows those ops. minigrad composes
the same ops in the same order, so its graph is PyTorch's node for node. `cross` is an
op with a node of its own (LinalgCrossBackward0).
"""

from __future__ import annotations

import numpy as np

from .._creation import eye, ones
from .._warn import Once, warn_user
from ..arrays.broadcasting import broadcast_shape
from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from . import batched, linalg, views
from .copies import clone, copy_
from .cumprod import cumprod
from .declaration import declare
from .einsum import diagonal as _diagonal
from .expand import expand
from .formulas import ArrayFormulaNode, Formula, helper, on_arrays
from .joining import cat
from .reductions import sum as _sum
from .tangent_formulas import ZERO, Tangent

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the linear algebra.)
OP_FAMILY = "linalg"


def _float_only(x: Tensor, fn: str) -> None:
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {x.dtype.type_name}")


# -- vecdot -----------------------------------------------------------------------------------


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot products of the vectors along `dim` of `x` and `y` (broadcast): PyTorch's
    `(x * y).sum(dim)` for real tensors (SumBackward1 over MulBackward0)."""
    _float_only(x, "linalg.vecdot")
    if x.dtype is not y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{x.dtype.type_name} and y of type {y.dtype.type_name} instead")
    if x._data.ndim == 1 and y._data.ndim == 1:
        return vdot(x, y)  # (PyTorch's shortcut for two vectors)
    return _sum(x * y, dim)


class VdotBackward0(ArrayFormulaNode):
    """u . v with u conjugated, for real tensors the dot product: grad * v for u,
    grad * u for v."""

    tangent = Tangent("dot(self_t, other_p) + dot(self_p, other_t)")
    saves = {"other": INPUT, "self": INPUT}
    formulas = (Formula("self", "grad.mul(other)"), Formula("other", "grad.mul(self)"))


def vdot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """The dot product of two vectors, the first conjugated (for real ones, `dot`)."""
    u, v = input._data, other._data
    if u.ndim != 1 or v.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {u.ndim}D and {v.ndim}D tensors")
    if u.dtype != v.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype.type_name} and {other.dtype.type_name}")
    if u.dtype == np.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    if u.shape != v.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{u.shape[0]}] and src [{v.shape[0]}] "
            f"to have the same number of elements, but got {u.shape[0]} and {v.shape[0]} "
            "elements respectively")
    with np.errstate(all="ignore"):
        out = Tensor._make(np.asarray(np.dot(u, v), u.dtype))
    node = record(VdotBackward0, out, input, other)
    if node is not None:
        if node.needs_grad(1):
            node._saved["self"] = SavedTensor(input)
        if node.needs_grad(0):
            node._saved["other"] = SavedTensor(other)
    return out


@on_arrays("mul", method=True)
def _mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(np.multiply(a, b), np.result_type(a, b))


# -- outer ------------------------------------------------------------------------------------


def outer(input: Tensor, vec2: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """The outer product of two vectors: PyTorch's `input.reshape(n, 1) * vec2`
    (MulBackward0 over a ViewBackward0)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    return views.reshape(input, input._data.shape[0], 1) * vec2


# -- multi_dot --------------------------------------------------------------------------------


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first may be a row vector, the last a
    column vector), multiplied in the order that costs the fewest multiplications:
    PyTorch's chain of `mm`s, viewed to the result's shape at the end."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0]._data.ndim, tensors[-1]._data.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    dtype = tensors[0].dtype
    for i, t in enumerate(tensors[1:-1], 1):
        if t._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t._data.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{_C_NAMES.get(dtype.name, dtype.name)} and tensor {i} "
                f"{_C_NAMES.get(t.dtype.name, t.dtype.name)}")
    matrices = list(tensors)
    if first == 1:
        matrices[0] = views.unsqueeze(matrices[0], 0)
    if last == 1:
        matrices[-1] = views.unsqueeze(matrices[-1], -1)
    for i in range(n - 1):
        a, b = matrices[i]._data.shape, matrices[i + 1]._data.shape
        if a[1] != b[0]:
            shapes = tensors[i]._data.shape, tensors[i + 1]._data.shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(shapes[0])} and {list(shapes[1])} cannot be multiplied")
    out_shape = ([matrices[0]._data.shape[0]] if first == 2 else []) + (
        [matrices[-1]._data.shape[1]] if last == 2 else [])
    if n == 2:
        product = linalg.mm(*matrices)
    elif n == 3:
        a, b = matrices[0]._data.shape
        c, d = matrices[2]._data.shape
        # (a x b)(b x c)(c x d): which pair to multiply first
        if a * c * (b + d) > b * d * (a + c):
            product = linalg.mm(matrices[0], linalg.mm(matrices[1], matrices[2]))
        else:
            product = linalg.mm(linalg.mm(matrices[0], matrices[1]), matrices[2])
    else:
        order = _chain_order(matrices)
        product = _multiply(matrices, order, 0, n - 1)
    return views.view(product, tuple(out_shape))


_C_NAMES = {"float64": "double", "float32": "float", "int64": "long int", "bool": "bool"}


def _chain_order(matrices: list) -> list:
    """The textbook matrix-chain dynamic programme (Cormen et al.): `order[i][j]` is
    where the product of matrices i..j is best split (the first best, on a tie)."""
    n = len(matrices)
    p = [m._data.shape[0] for m in matrices] + [matrices[-1]._data.shape[1]]
    cost = [[0] * n for _ in range(n)]
    order = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], order[i][j] = q, k
    return order


def _multiply(matrices: list, order: list, i: int, j: int) -> Tensor:
    if i == j:
        return matrices[i]
    k = order[i][j]
    return linalg.mm(_multiply(matrices, order, i, k), _multiply(matrices, order, k + 1, j))


# -- matrix_power -----------------------------------------------------------------------------


def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803 - PyTorch's name
    """A multiplied by itself n times (n < 0: the inverse's power), as PyTorch computes
    it: a copy for n = 0 and 1, then `matmul`s by the binary digits of n."""
    shape = A._data.shape
    if len(shape) < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {shape[-2]} by {shape[-1]} matrices")
    if n == 0:
        identity = eye(shape[-1], dtype=A.dtype)
        return copy_(clone(A, row_major=True), expand(identity, *shape))
    if n == 1:
        return clone(A, row_major=True)
    if n < 0:
        from .solvers import inv  # (the solvers stand beside this module)
        A, n = inv(A), -n
        if n == 1:
            return A
    if n == 2:
        return batched.matmul(A, A)
    if n == 3:
        return batched.matmul(batched.matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else batched.matmul(z, z)
        if bit:
            result = z if result is None else batched.matmul(result, z)
    return result


# -- vander -----------------------------------------------------------------------------------


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of `x`: columns x**0, x**1, ..., x**(N-1), built as
    PyTorch builds it (a column of ones, then the cumprod of x repeated N-1 times)."""
    if x.dtype.name == "bool":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    x_ = views.unsqueeze(x, -1) if x._data.ndim == 0 else x
    shape = list(x_._data.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = cumprod(expand(views.unsqueeze(x_, -1), *shape, n - 1), -1)
    first = ones(*shape, 1, dtype=x.dtype)
    return cat([first, powers], -1)


# -- diagonal ---------------------------------------------------------------------------------


def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1  # noqa: N803
                    ) -> Tensor:
    """`diagonal` with the last two dims as the default matrix dims (a view)."""
    return _diagonal(A, offset, dim1, dim2)


linalg_diagonal.__name__ = linalg_diagonal.__qualname__ = "diagonal"


# -- cross ------------------------------------------------------------------------------------


class LinalgCrossBackward0(ArrayFormulaNode):
    """The cross product of 3-vectors along `dim`: d(a x b) = da x b + a x db, so
    a's gradient is b x grad and b's is grad x a."""

    tangent = Tangent("linalg_cross(self_t, other_p, dim) + linalg_cross(self_p, other_t, dim)")
    saves = {"dim": VALUE, "other": INPUT, "self": INPUT}
    formulas = (Formula("self", "linalg_cross(other, grad, dim)"),
                Formula("other", "linalg_cross(grad, self, dim)"))


def _cross_data(a: np.ndarray, b: np.ndarray, d: int) -> np.ndarray:
    """a x b along axis `d` (a and b broadcast), component by component."""
    a, b = np.moveaxis(a, d, -1), np.moveaxis(b, d, -1)
    with np.errstate(all="ignore"):
        out = np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                        a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                        a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], -1)
    return np.ascontiguousarray(np.moveaxis(out, -1, d))


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002
    """The cross product of the 3-vectors along `dim` of `input` and `other`
    (broadcast)."""
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    broadcast_shape(a.shape, b.shape)  # (PyTorch's error if they do not broadcast)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.type_name} but found "
                           f"{other.dtype.type_name}")
    if a.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    out = Tensor._make(np.asarray(_cross_data(a, b, d), a.dtype))
    node = record(LinalgCrossBackward0, out, input, other)
    if node is not None:
        node._saved["dim"] = u64(dim)
        if node.needs_grad(1):
            node._saved["self"] = SavedTensor(input)
        if node.needs_grad(0):
            node._saved["other"] = SavedTensor(other)
    return out


_DEFAULT_DIM = Once()  # (PyTorch warns once per process)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """`linalg.cross`, but without `dim` along the first dim of size 3 of `input`
    (deprecated in PyTorch, which warns once)."""
    if dim is None:
        if _DEFAULT_DIM.due():
            warn_user(
                "Using minigrad.cross without specifying the dim arg is deprecated.\n"
                "Please either pass the dim explicitly or simply use minigrad.linalg.cross.\n"
                "The default value of dim will change to agree with that of linalg.cross in "
                "a future release.")
        sizes = input._data.shape
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return linalg_cross(input, other, dim=dim)


def _cross_of(a, b, dim: int):
    """The cross product in a formula (`linalg_cross(other, grad, dim)`): ZERO if a
    factor is."""
    if a is ZERO or b is ZERO:
        return ZERO
    return linalg_cross(a, b, dim=dim)


_cross_of.__name__ = "linalg_cross"
helper(_cross_of)


@on_arrays("linalg_cross")
def _linalg_cross(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    return np.asarray(_cross_data(a, b, dim % max(a.ndim, b.ndim)), a.dtype)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("outer", function=outer, method=True, aliases=("ger",))  # (records MulBackward0)
declare("vdot", nodes=(VdotBackward0,), function=vdot, method=True)
declare("cross", nodes=(LinalgCrossBackward0,), function=cross, method=True)

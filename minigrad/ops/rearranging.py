"""broadcast_to, broadcast_tensors, broadcast_shapes, movedim, ravel, unflatten,
meshgrid, cartesian_prod and combinations: PyTorch's compositions of views.

Each is another view op under a new name, and PyTorch records that op: broadcast_to
and broadcast_tensors are `expand` (a tensor already of the shape comes back as
itself), movedim is `permute`, ravel `contiguous().view(-1)`, unflatten `view`,
meshgrid a `view` then an `expand` of each input. cartesian_prod and combinations
stack grids from meshgrid (flattened, or masked to the index combinations wanted).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._args import int_list_arg, is_int
from ..arrays.broadcasting import broadcast_shape
from ..tensor import Size, Tensor, _wrap_dim
from .declaration import declare
from .joining import _tensor_list, stack
from .scatter import masked_select
from .views import alias

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the views.)
OP_FAMILY = "views"


# -- broadcasting ------------------------------------------------------------------------


def broadcast_to(x: Tensor, size) -> Tensor:
    """`x` seen with shape `size` (PyTorch's `expand`: a view repeating size-1 dims)."""
    return x.expand(size)


def broadcast_to_method(x: Tensor, *size) -> Tensor:
    """`x.broadcast_to(2, 3)` or `x.broadcast_to((2, 3))`."""
    return x.expand(*size)


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (one already of that
    shape comes back as itself)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    tensors = _tensor_list("broadcast_tensors", tensors)
    shape: tuple = tensors[0]._data.shape if tensors else ()
    for t in tensors[1:]:
        shape = broadcast_shape(shape, t._data.shape)
    return tuple(t if t._data.shape == shape else t.expand(shape) for t in tensors)


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of the given shapes broadcast to, computed from the shapes
    alone (each an int or a sequence of ints)."""
    ndim = max([1 if is_int(s) else len(s) for s in shapes
                if is_int(s) or isinstance(s, (tuple, list))], default=0)
    result = [1] * ndim
    for shape in shapes:
        if is_int(shape):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               "of ints, got ", shape)
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension "
                                   f"({shape[i]}): ({shape[i]})")
            if shape[i] == 1 or shape[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")
            result[i] = shape[i]
    return Size(result)


# -- movedim, ravel, unflatten -------------------------------------------------------------


def _int_list_text(dims: tuple) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


def movedim(x: Tensor, source, destination) -> Tensor:
    """`x` with the dims `source` moved to the places `destination`, the others kept in
    their order (a `permute`)."""
    src = int_list_arg((source,), "movedim", "source")
    dst = int_list_arg((destination,), "movedim", "destination")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({_int_list_text(src)} dims) should contain the same number of dims "
                           f"as destination ({_int_list_text(dst)} dims)")
    ndim = x._data.ndim
    norm_src = [_wrap_dim(d, ndim) for d in src]
    norm_dst = [_wrap_dim(d, ndim) for d in dst]
    if len(set(norm_src)) != len(norm_src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_int_list_text(src)})")
    if len(set(norm_dst)) != len(norm_dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_int_list_text(dst)})")
    if ndim == 0:
        return alias(x)
    order = [-1] * ndim
    for s, d in zip(norm_src, norm_dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in norm_src)
    order = [o if o != -1 else next(rest) for o in order]
    return x.permute(order)


def ravel(x: Tensor) -> Tensor:
    """The elements as a 1-D tensor: a view when `x` is contiguous, else a view of a
    contiguous copy (`contiguous().view(-1)`)."""
    return x.contiguous().view(-1)


def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    """Dim `dim` split into several of `sizes` (one may be -1: inferred), a view."""
    sizes = int_list_arg((sizes,), "unflatten", "sizes")
    d = _wrap_dim(dim, x._data.ndim)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = x._data.shape[d] if x._data.ndim else 1
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    bad = (sizes.count(-1) > 1 or any(s < -1 for s in sizes)
           or (-1 in sizes and (known == 0 or n % known))
           or (-1 not in sizes and known != n))
    if bad:
        raise RuntimeError(f"unflatten: Provided sizes {_int_list_text(sizes)} don't multiply up "
                           f"to the size of dim {dim} ({n}) in the input tensor")
    inferred = tuple(n // known if s == -1 else s for s in sizes)
    shape = x._data.shape[:d] + inferred + x._data.shape[d + 1:]
    return x.view(shape)


# -- meshgrid, cartesian_prod, combinations -------------------------------------------------


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Grids of the 1-D (or 0-d) tensors, each repeating one of them along its own dim
    ("ij", and "xy" with the first two dims swapped): a view and an expand of each."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    return _meshgrid(_tensor_list("meshgrid", tensors), indexing)


def _meshgrid(tensors: list, indexing: str) -> tuple:
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a.dtype is not b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    if swap:
        tensors = [tensors[1], tensors[0], *tensors[2:]]
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    shape = tuple(t._data.size for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(t.view(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _sizes_text(t: Tensor) -> str:
    return _int_list_text(t._data.shape)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element from each 1-D tensor, as rows (one tensor:
    itself)."""
    tensors = _tensor_list("cartesian_prod", tensors)
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes_text(t)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in _meshgrid(tensors, "ij")], 1)


def combinations(x: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every combination of `r` elements of the 1-D tensor `x`, in order (without
    repeats, or with them), as rows: meshgrid's grids masked to increasing indices."""
    if x._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes_text(x)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(np.zeros((0,), x._data.dtype))
    index = np.indices((x._data.size,) * r, sparse=False)
    mask = np.ones(index.shape[1:], bool)
    for a, b in zip(index, index[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    mask = Tensor._make(mask)
    return stack([masked_select(g, mask) for g in _meshgrid([x] * r, "ij")], 1)


declare("broadcast_to", function=broadcast_to, method=broadcast_to_method)
declare("broadcast_tensors", function=broadcast_tensors)
declare("broadcast_shapes", function=broadcast_shapes)
declare("movedim", function=movedim, method=True, aliases=("moveaxis",))
declare("ravel", function=ravel, method=True)
declare("unflatten", function=unflatten, method=True)
declare("meshgrid", function=meshgrid)
declare("cartesian_prod", function=cartesian_prod)
declare("combinations", function=combinations)

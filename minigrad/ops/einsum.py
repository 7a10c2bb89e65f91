"""einsum, for one- and two-operand equations ("ij,jk->ik", "bij,bjk->bik", "i,i->",
"ij->ji", "ii->i", "...ij,...jk->...ik", ...), and `diagonal`, which a repeated label
in one operand ("ii") takes.

PyTorch's einsum has no node of its own: it lines each operand's dims up in one
order (output labels first, then the summed ones; an ellipsis stands for as many
dims as the operand has beyond its labels), with a `permute` and an `unsqueeze` for
each label the operand lacks, sums the dims only one operand has, then multiplies
the pair with one `bmm` (`sumproduct_pair`) or `mul` when nothing is left to sum.
minigrad calls the same ops in the same order, so the graph is PyTorch's node for
node.
"""

from __future__ import annotations

import numpy as np

from .._args import type_name
from ..arrays.scalars import u64
from ..autograd.graph import VALUE
from ..autograd.record import record
from ..tensor import Tensor, _wrap_dim
from . import batched, views
from .arithmetic import mul
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, on_arrays
from .reductions import sum as _sum
from .tangent_formulas import SAME_VIEW, Tangent

# -- diagonal ---------------------------------------------------------------------------------


class DiagonalBackward0(ArrayFormulaNode):
    """diagonal(x, offset, dim1, dim2): the gradient is written onto the diagonal of
    a tensor of zeros."""

    tangent = SAME_VIEW

    saves = {"dim1": VALUE, "dim2": VALUE, "offset": VALUE, "self_sym_sizes": VALUE}
    formulas = (Formula("self", "diagonal_backward(grad, self_sym_sizes, offset, dim1, "
                                "dim2)"),)



@on_arrays("diagonal_backward")
def _diagonal_backward_on_arrays(grad: np.ndarray, sizes: tuple, offset: int, dim1: int,
                                 dim2: int) -> np.ndarray:
    out = np.zeros(sizes, grad.dtype)
    _diagonal_data(out, offset, dim1 % len(sizes), dim2 % len(sizes))[...] = grad
    return out


def _diagonal_data(a: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A writable view of the diagonal of `a` in dims d1 and d2, as a last dim."""
    n1, n2 = a.shape[d1], a.shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    keep = [k for k in range(a.ndim) if k not in (d1, d2)]
    shape = tuple(a.shape[k] for k in keep) + (length,)
    strides = tuple(a.strides[k] for k in keep) + (a.strides[d1] + a.strides[d2],)
    # (`a` from the diagonal's first element on: slicing keeps any layout a view,
    # where flattening a transposed `a` would copy it)
    start = a
    if length:
        first = {d2: offset} if offset >= 0 else {d1: -offset}
        start = a[tuple(slice(first.get(k, 0), None) for k in range(a.ndim))]
    return np.lib.stride_tricks.as_strided(start, shape, strides)


class DiagonalBackwardBackward0(FormulaNode):
    """diagonal_backward(grad, sizes, offset, dim1, dim2): zeros of the input's sizes
    with `grad` on that diagonal; its own gradient is the diagonal again."""

    tangent = Tangent("diagonal_backward(grad_output_t, result.shape, offset, dim1, dim2)",
                      linear=True)

    saves = {"dim1": VALUE, "dim2": VALUE, "offset": VALUE}
    formulas = (Formula("grad_output", "grad.diagonal(offset, dim1, dim2)"),)


def diagonal_backward(grad: Tensor, sizes: tuple, offset: int, dim1: int, dim2: int) -> Tensor:
    """The gradient of `diagonal` (PyTorch's aten::diagonal_backward)."""
    data = np.zeros(sizes, grad._data.dtype)
    _diagonal_data(data, offset, _wrap_dim(dim1, len(sizes)),
                   _wrap_dim(dim2, len(sizes)))[...] = grad._data
    out = Tensor._make(data)
    node = record(DiagonalBackwardBackward0, out, grad)
    if node is not None:
        node._saved.update(dim1=u64(dim1), dim2=u64(dim2), offset=u64(offset))
    return out




def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal (shifted by `offset`) of the matrices in dims `dim1` and `dim2`,
    as a view whose last dim runs along it."""
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    data = _diagonal_data(input._data, offset, d1, d2)
    return views._view_of(input, data, DiagonalBackward0, dim1=u64(dim1), dim2=u64(dim2),
                          offset=u64(offset), self_sym_sizes=input._data.shape,
                          _offset=offset, _dims=(d1, d2))


# -- einsum -----------------------------------------------------------------------------------


_ELLIPSIS = "..."


def _label_order(ch: str) -> int:
    """PyTorch numbers labels A-Z, then a-z."""
    return ord(ch) - ord("A") if ch.isupper() else 26 + ord(ch) - ord("a")


def _parse(equation: str, operands: list) -> tuple[list[list[str]], list[str] | None]:
    """Each operand's labels and the output's (None without "->"), an ellipsis as one
    `_ELLIPSIS` label; PyTorch's checks and messages (indices count the spaces)."""
    lhs, arrow, rhs = equation.partition("->")
    inputs: list[list[str]] = [[]]
    i = 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            op = len(inputs) - 1
            if _ELLIPSIS in inputs[-1]:
                raise RuntimeError(f"einsum(): found '.' for operand {op} for which an "
                                   "ellipsis was already found")
            if lhs[i:i + 3] != _ELLIPSIS:
                raise RuntimeError(f"einsum(): found '.' for operand {op} that is not part "
                                   "of any ellipsis")
            inputs[-1].append(_ELLIPSIS)
            i += 2
        elif ch == ",":
            if len(inputs) == len(operands):
                raise RuntimeError("einsum(): fewer operands were provided than specified "
                                   "in the equation")
            inputs.append([])
        elif ch != " ":
            if not (ch.isascii() and ch.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            inputs[-1].append(ch)
        i += 1
    if len(inputs) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    for k, (labels, t) in enumerate(zip(inputs, operands)):
        n, ndim = len(labels) - (_ELLIPSIS in labels), t._data.ndim
        if n > ndim if _ELLIPSIS in labels else n != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                + ("is more than" if _ELLIPSIS in labels else "does not match")
                + f" the number of dimensions ({ndim}) for operand {k}"
                + ("" if _ELLIPSIS in labels else " and no ellipsis was given"))
    if not arrow:
        return inputs, None
    counts = {ch: sum(labels.count(ch) for labels in inputs) for ch in set(lhs)}
    out: list[str] = []
    i = 0
    while i < len(rhs):
        ch = rhs[i]
        if ch == ".":
            if _ELLIPSIS in out:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) "
                                   "was already found")
            if rhs[i:i + 3] != _ELLIPSIS:
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            out.append(_ELLIPSIS)
            i += 2
        elif ch != " ":
            if not (ch.isascii() and ch.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                   "must be in [a-zA-Z]")
            if ch in out:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once "
                                   "in the output")
            if not counts.get(ch):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the "
                                   "equation for any input operand")
            out.append(ch)
        i += 1
    return inputs, out


def _positions(inputs: list[list[str]], out: list[str] | None,
               ell_dims: int) -> tuple[dict[str, int], int, int, int]:
    """Where each label goes in the lined-up operands (the output's dims first, then
    the summed ones, both in PyTorch's order), where the ellipsis dims start, the
    number of output dims and of all dims."""
    counts: dict[str, int] = {}
    for labels in inputs:
        for ch in labels:
            if ch != _ELLIPSIS:
                counts[ch] = counts.get(ch, 0) + 1
    labels_in_order = sorted(counts, key=_label_order)
    place: dict[str, int] = {}
    at = ell_at = 0
    ell_in_out = out is None or _ELLIPSIS in out
    if out is None:  # implicit: the ellipsis dims, then each label used once
        at = ell_dims
        for ch in labels_in_order:
            if counts[ch] == 1:
                place[ch] = at
                at += 1
    else:
        for ch in out:
            if ch == _ELLIPSIS:
                ell_at = at
                at += ell_dims
            else:
                place[ch] = at
                at += 1
    n_out = at
    if not ell_in_out:  # ellipsis dims the output lacks are summed
        ell_at = at
        at += ell_dims
    for ch in labels_in_order:
        if ch not in place:
            place[ch] = at
            at += 1
    return place, ell_at, n_out, at


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """PyTorch's `sumproduct_pair` (keeping the summed dims, as 1s): the dims both
    have (lro), only the left has (lo), only the right has (ro) and the summed ones
    are each flattened into one, so that one `bmm` computes the whole contraction;
    `mul` when nothing is summed."""
    if not sum_dims:
        return mul(left, right)
    kept = [i for i in range(left._data.ndim) if i not in sum_dims]
    lo = [i for i in kept if left._data.shape[i] != 1 and right._data.shape[i] == 1]
    ro = [i for i in kept if left._data.shape[i] == 1 and right._data.shape[i] != 1]
    if lo and ro and ro[-1] < lo[0]:  # (PyTorch swaps the two: its bmm then writes the
        left, right = right, left     # output's dims in order)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left._data.ndim):
        sl, sr = left._data.shape[i] != 1, right._data.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left._data.shape[i]
            elif sl:
                left = _sum(left, i, True)
            elif sr:
                right = _sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left._data.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._data.shape[i]
        else:
            ro.append(i)
            ro_size *= right._data.shape[i]
    out_size = ([left._data.shape[d] for d in lro] + [left._data.shape[d] for d in lo]
                + [1] * len(sum_dims) + [right._data.shape[d] for d in ro])
    lperm = lro + lo + sum_dims + ro
    rperm = lro + sum_dims + ro + lo
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    left = views.reshape(views.permute(left, lperm), lro_size, lo_size, sum_size)
    right = views.reshape(views.permute(right, rperm), lro_size, sum_size, ro_size)
    result = batched.bmm(left, right)
    return views.permute(views.view(result, out_size), operm)


def _line_up(inputs: list[list[str]], operands: list, place: dict[str, int], ell_at: int,
             ell_dims: int, n_dims: int) -> tuple[list[Tensor], list[int]]:
    """Each operand with one dim per position, in order: a repeated label takes the
    diagonal, a missing one an `unsqueeze`, then one `permute`; and how many operands
    have each dim with a size other than 1 (PyTorch's `dim_counts`)."""
    sizes: dict[str, int] = {}
    ell_sizes = [1] * ell_dims
    dim_counts = [0] * n_dims
    lined = []
    for i, (labels, t) in enumerate(zip(inputs, operands)):
        permutation = [-1] * n_dims
        dim = 0
        for ch in labels:
            if ch == _ELLIPSIS:
                covered = t._data.ndim - (len(labels) - 1)
                for j in range(ell_dims - covered, ell_dims):
                    n = t._data.shape[dim]
                    if n != 1:
                        if ell_sizes[j] not in (1, n):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand "
                                f"{i}has size {n} which does not broadcast with previously "
                                f"seen ellipsis with size {ell_sizes[j]} for the respective "
                                "dimension")
                        ell_sizes[j] = n
                        dim_counts[ell_at + j] += 1
                    permutation[ell_at + j] = dim
                    dim += 1
            elif permutation[place[ch]] == -1:
                n = t._data.shape[dim]
                if n != 1:
                    if sizes.get(ch, 1) not in (1, n):
                        raise RuntimeError(
                            f"einsum(): subscript {ch} has size {n} for operand {i} which "
                            f"does not broadcast with previously seen size {sizes[ch]}")
                    sizes[ch] = n
                    dim_counts[place[ch]] += 1
                permutation[place[ch]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, moved to where the label first was
                prev = permutation[place[ch]]
                n, before = t._data.shape[dim], t._data.shape[prev]
                if n != before:
                    raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {i} "
                                       f"but the sizes don't match, {n} != {before}")
                t = diagonal(t, 0, prev, dim)
                moved = list(range(t._data.ndim - 1))
                moved.insert(prev, t._data.ndim - 1)
                t = views.permute(t, moved)  # (`movedim(-1, prev)`)
        for k, index in enumerate(permutation):
            if index == -1:
                t = views.unsqueeze(t, dim)
                permutation[k] = dim
                dim += 1
        lined.append(views.permute(t, permutation))
    return lined, dim_counts


def einsum(equation: str, *operands) -> Tensor:
    """Sums of products named by index labels: `einsum("ij,jk->ik", a, b)` is `a @ b`,
    `einsum("ii->i", a)` the diagonal, `einsum("...ij->...ji", a)` the transpose of
    the last two dims. One or two operands; more are refused with NotImplementedError."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type_name(equation)}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    operands = list(operands)
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type_name(t)}")
    inputs, out = _parse(equation, operands)
    if len(operands) > 2:
        raise NotImplementedError("minigrad's einsum takes one or two operands")
    ell_dims = max((t._data.ndim - len(labels) + 1 for labels, t in zip(inputs, operands)
                    if _ELLIPSIS in labels), default=0)
    place, ell_at, n_out, n_dims = _positions(inputs, out, ell_dims)
    lined, dim_counts = _line_up(inputs, operands, place, ell_at, ell_dims, n_dims)
    if len(lined) == 1:
        if n_dims > n_out:
            return _sum(lined[0], list(range(n_out, n_dims)))
        return lined[0]
    left, right = lined
    # (PyTorch's order: a dim only one operand has is summed first, all at once; the
    # dims both have are contracted by the product)
    sum_dims, left_only, right_only = [], [], []
    for d in range(n_out, n_dims):
        if left._data.shape[d] != 1 and right._data.shape[d] != 1:
            sum_dims.append(d)
        elif dim_counts[d] == 1:
            (left_only if left._data.shape[d] != 1 else right_only).append(d)
    if left_only:
        left = _sum(left, left_only, True)
    if right_only:
        right = _sum(right, right_only, True)
    result = _sumproduct_pair(left, right, sum_dims)
    if n_dims > n_out:
        return views.view(result, result._data.shape[:n_out])
    return result


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("diagonal", nodes=(DiagonalBackward0,), function=diagonal, method=True)
declare("einsum", function=einsum)
declare("diagonal_backward", nodes=(DiagonalBackwardBackward0,), aten=diagonal_backward)

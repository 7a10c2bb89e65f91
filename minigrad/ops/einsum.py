"""einsum, for the one- and two-operand equations tutorials write ("ij,jk->ik",
"bij,bjk->bik", "i,i->", "ij->ji", "ii->i", ...), and `diagonal`, which a repeated
label in one operand ("ii") takes.

PyTorch's einsum has no node of its own: it lines each operand's dims up in one
order (output labels first, then the summed ones), with a `permute` and an
`unsqueeze` for each label the operand lacks, then multiplies pairs of operands
with one `bmm` (`sumproduct_pair`) or `mul` when nothing is summed. minigrad calls
the same ops in the same order, so the graph is PyTorch's node for node.
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


def _parse(equation: str, operands: list) -> tuple[list[str], str]:
    """The labels of each operand and of the output ("->" optional: then every label
    used once, in alphabetical order)."""
    if "." in equation:
        raise NotImplementedError("minigrad's einsum does not take '...' (ellipsis) yet")
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        which = "more" if len(operands) > len(inputs) else "fewer"
        raise RuntimeError(f"einsum(): {which} operands were provided than specified in the "
                           "equation")
    for labels in inputs + [out]:
        for ch in labels:
            if not ch.isalpha() or not ch.isascii():
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{equation.index(ch)} in the equation string, subscripts "
                                   "must be in [a-zA-Z]")
    for i, (labels, t) in enumerate(zip(inputs, operands)):
        if len(labels) != t._data.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(labels)}) does not "
                f"match the number of dimensions ({t._data.ndim}) for operand {i} and no "
                "ellipsis was given")
    if not arrow:
        counts = {ch: lhs.count(ch) for ch in set(lhs.replace(",", ""))}
        out = "".join(sorted((ch for ch, k in counts.items() if k == 1), key=_label_order))
    return inputs, out


def _label_order(ch: str) -> int:
    """PyTorch numbers labels A-Z, then a-z."""
    return ord(ch) - ord("A") if ch.isupper() else 26 + ord(ch) - ord("a")


def _lined_up(t: Tensor, labels: str, order: dict[str, int]) -> Tensor:
    """The operand with one dim per label of `order`, in that order: a repeated label
    takes the diagonal, a missing one an `unsqueeze`, then one `permute`."""
    permutation = [-1] * len(order)
    dim = 0
    for ch in labels:
        at = order[ch]
        if permutation[at] == -1:
            permutation[at] = dim
            dim += 1
        else:  # a repeated label: its diagonal, moved to where the label first was
            prev = permutation[at]
            t = diagonal(t, 0, prev, dim)
            moved = list(range(t._data.ndim - 1))
            moved.insert(prev, t._data.ndim - 1)
            t = views.permute(t, moved)  # (`movedim(-1, prev)`)
    for i, index in enumerate(permutation):
        if index == -1:
            t = views.unsqueeze(t, t._data.ndim)
            permutation[i] = dim
            dim += 1
    return views.permute(t, permutation)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """PyTorch's `sumproduct_pair` (keeping the summed dims, as 1s): the dims both
    have (lro), only the left has (lo), only the right has (ro) and the summed ones
    are each flattened into one, so that one `bmm` computes the whole contraction."""
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


def einsum(equation: str, *operands) -> Tensor:
    """Sums of products named by index labels: `einsum("ij,jk->ik", a, b)` is `a @ b`,
    `einsum("ii->i", a)` the diagonal, `einsum("ij->ji", a)` the transpose. One or two
    operands; anything else is refused with NotImplementedError."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type_name(equation)}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = list(operands)
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type_name(t)}")
    inputs, out = _parse(equation, operands)
    if not 1 <= len(operands) <= 2:
        raise NotImplementedError("minigrad's einsum takes one or two operands")
    summed = sorted({ch for labels in inputs for ch in labels} - set(out), key=_label_order)
    order = {ch: i for i, ch in enumerate(list(out) + summed)}
    seen: dict[str, int] = {}
    for i, (labels, t) in enumerate(zip(inputs, operands)):
        sizes: dict[str, int] = {}
        for ch, n in zip(labels, t._data.shape):
            if sizes.setdefault(ch, n) != n:
                raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {i} but "
                                   f"the sizes don't match, {n} != {sizes[ch]}")
        for ch, n in sizes.items():  # (a size of 1 broadcasts)
            before = seen.setdefault(ch, n)
            if n != before and 1 not in (n, before):
                raise RuntimeError(f"einsum(): subscript {ch} has size {n} for operand {i} "
                                   f"which does not broadcast with previously seen size {before}")
            seen[ch] = max(n, before)
    lined = [_lined_up(t, labels, order) for labels, t in zip(inputs, operands)]
    n_out = len(out)
    if len(lined) == 1:
        result = lined[0]
        if summed:
            result = _sum(result, list(range(n_out, len(order))))
        return result
    left, right = lined
    if not summed:
        return mul(left, right)
    result = _sumproduct_pair(left, right, list(range(n_out, len(order))))
    return views.view(result, result._data.shape[:n_out])


# -- declarations: each op's public names (see `declaration.py`) ----------------------------



declare("diagonal", nodes=(DiagonalBackward0,), function=diagonal, method=True)
declare("einsum", function=einsum)
declare("diagonal_backward", nodes=(DiagonalBackwardBackward0,), aten=diagonal_backward)

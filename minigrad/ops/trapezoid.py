"""trapezoid (trapz) and cumulative_trapezoid: the trapezoid rule along a dim, the
integral of samples `y` spaced `dx` apart (or at the points `x`).

PyTorch writes them with other ops, so they have no node of their own; minigrad runs
the same ops in the same order (C++ evaluates `a - b`'s right operand first), so the
graph is PyTorch's: `(y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx` (MulBackward1 over
SubBackward0), and with `x`, `((x[1:] - x[:-1]) * (y[:-1] + y[1:])).sum(dim) / 2`.
"""

from __future__ import annotations

from .._creation import zeros
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import BACKWARD_OPS
from .views import slice_dim


def _pairs(t: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """`t[:-1]` and `t[1:]` along `dim` (C++'s `slice(dim, 0, -1)`, `slice(dim, 1)`)."""
    right = slice_dim(t, dim, 1, None, None)
    left = slice_dim(t, dim, 0, -1, None)
    return left, right


def _spacing(y: Tensor, x: Tensor, dim: int) -> Tensor:
    """x's differences along `dim`, laid out to broadcast against y's."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        x = x.view(sizes)
    elif x.dim() < y.dim():
        x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    left, right = _pairs(x, dim)
    return right - left


def _rule(name: str, y: Tensor, x: Tensor | None, dx, dim: int, cumulative: bool) -> Tensor:
    d = _wrap_dim(dim, y.dim())
    if y.shape[d] == 0 and not cumulative:  # (no samples: 0, as numpy)
        return zeros(tuple(n for i, n in enumerate(y.shape) if i != d), dtype=y.dtype)
    if y.dtype.name == "bool" or (x is not None and x.dtype.name == "bool"):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    mul_scalar, div_scalar = BACKWARD_OPS["mul_scalar"], BACKWARD_OPS["div_scalar"]
    if x is None:
        step = 1 if dx is None else dx
        if cumulative:
            left, right = _pairs(y, d)
            return mul_scalar(left + right, step / 2.0).cumsum(d)
        ends = y.select(d, -1)
        ends = y.select(d, 0) + ends
        halves = mul_scalar(ends, 0.5)
        return mul_scalar(y.sum(d) - halves, step)
    spacing = _spacing(y, x, d)
    left, right = _pairs(y, d)
    terms = spacing * (left + right)
    return div_scalar(terms.cumsum(d) if cumulative else terms.sum(d), 2.0)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoid rule along `dim`: samples `y` at the points `x`, or `dx` apart."""
    return _rule("trapezoid", y, x, dx, dim, False)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None,
                         dim: int = -1) -> Tensor:
    """The running trapezoid rule along `dim` (one value fewer than `y` has)."""
    return _rule("cumulative_trapezoid", y, x, dx, dim, True)


declare("trapezoid", function=trapezoid, aliases=("trapz",))
declare("cumulative_trapezoid", function=cumulative_trapezoid)

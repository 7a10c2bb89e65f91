"""trapezoid (trapz) and cumulative_trapezoid: the trapezoid rule along a dim, the
integral of samples `y` spaced `dx` apart (or at the points `x`).

PyTorch writes them with other ops, so they have no node of their own; minigrad runs
the same ops in the same order (C++ evaluates `a - b`'s right operand first), so the
graph is PyTorch's: `(y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx` (MulBackward1 over
SubBackward0), and with `x`, `((y[:-1] + y[1:]) * (x[1:] - x[:-1])).sum(dim) / 2`.
"""

from __future__ import annotations

from .._args import combination_error, is_int
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


def _refuse_0d(x: Tensor | None, dim: int, cumulative: bool) -> None:
    """PyTorch's errors for 0-d samples: it asks their size along `dim` (wrapped first
    where `x` is given) or slices them, and a 0-d tensor has neither."""
    if x is not None:
        dim = _wrap_dim(dim, 0)
    if cumulative and (x is None or x.dim() != 1):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def _rule(name: str, y: Tensor, x: Tensor | None, dx, dim: int, cumulative: bool) -> Tensor:
    if y.dim() == 0:
        _refuse_0d(x, dim, cumulative)
    d = _wrap_dim(dim, y.dim())
    if y.shape[d] == 0 and not cumulative:  # (no samples: 0, as numpy)
        out = zeros(tuple(n for i, n in enumerate(y.shape) if i != d), dtype=y.dtype)
        out._version_counter.value += 1  # (PyTorch's zeros are filled with zero_)
        return out
    if y.dtype.name == "bool" or (x is not None and x.dtype.name == "bool"):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    mul_scalar, div_scalar = BACKWARD_OPS["mul_scalar"], BACKWARD_OPS["div_scalar"]
    if x is None:
        # (PyTorch's dx is a C++ double, and its dim is passed on as given, -1 too)
        step = 1 if dx is None else dx
        if cumulative:
            left, right = _pairs(y, dim)
            return mul_scalar(left + right, step / 2.0).cumsum(dim)
        ends = y.select(dim, -1)
        ends = y.select(dim, 0) + ends
        halves = mul_scalar(ends, 0.5)
        return mul_scalar(y.sum(dim) - halves, float(step))
    spacing = _spacing(y, x, d)
    left, right = _pairs(y, d)
    terms = (left + right) * spacing
    return div_scalar(terms.cumsum(d) if cumulative else terms.sum(d), 2.0)


# PyTorch's signatures, in the order its argument errors list them.
_TAKES_X = "Tensor y, Tensor x, *, int dim = -1"
_SIGNATURES = {"trapezoid": [_TAKES_X, "Tensor y, *, Number dx = 1, int dim = -1"],
               "trapz": ["Tensor y, *, float dx = 1, int dim = -1", _TAKES_X],
               "cumulative_trapezoid": [_TAKES_X, "Tensor y, *, Number dx = 1, int dim = -1"]}


def _arguments(name: str, y: Tensor, args: tuple, kwargs: dict) -> tuple:
    """(x, dx, dim) from `name(y, *args, **kwargs)` as PyTorch reads them: y and
    either x (by position or keyword) or the keyword dx, and the keyword dim; any
    other call is PyTorch's "invalid combination of arguments"."""
    x = args[0] if args else kwargs.get("x")
    dx, dim = kwargs.get("dx"), kwargs.get("dim", -1)
    if (len(args) > 1 or set(kwargs) - {"x", "dx", "dim"} or (args and "x" in kwargs)
            or not (x is None or isinstance(x, Tensor)) or (x is not None and dx is not None)
            or not is_int(dim)
            or not (dx is None or isinstance(dx, (int, float)) and not isinstance(dx, bool))):
        raise combination_error(name, (y, *args), kwargs, _SIGNATURES[name], tail=False)
    return x, dx, dim


def trapezoid(y: Tensor, *args, **kwargs) -> Tensor:
    """`trapezoid(y, x=None, *, dx=None, dim=-1)`: the trapezoid rule along `dim`:
    samples `y` at the points `x`, or `dx` apart."""
    return _rule("trapezoid", y, *_arguments("trapezoid", y, args, kwargs), False)


def trapz(y: Tensor, *args, **kwargs) -> Tensor:
    """`trapz(y, x=None, *, dx=None, dim=-1)`: trapezoid's older name."""
    return _rule("trapezoid", y, *_arguments("trapz", y, args, kwargs), False)


def cumulative_trapezoid(y: Tensor, *args, **kwargs) -> Tensor:
    """`cumulative_trapezoid(y, x=None, *, dx=None, dim=-1)`: the running trapezoid
    rule along `dim` (one value fewer than `y` has)."""
    name = "cumulative_trapezoid"
    return _rule(name, y, *_arguments(name, y, args, kwargs), True)


# (trapz an alias with a function of its own: PyTorch's errors name it, with its signatures)
declare("trapezoid", function=trapezoid, aliases=("trapz",)).functions["trapz"] = trapz
declare("cumulative_trapezoid", function=cumulative_trapezoid)

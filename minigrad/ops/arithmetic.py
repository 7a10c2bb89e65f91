"""+ - * / ** and negation: forward, backward, and what each saves.

The rule of thumb the in-place lesson is built on shows up plainly here:
* `a + b`, `a - b`: the derivative is a constant, so nothing is saved.
* `a * b`: the gradient for `a` needs `b` and vice versa, so each is saved only if
  the *other* input needs a gradient.
* `x ** p`: the derivative `p * x**(p-1)` needs the input `x`.

Broadcasting is undone by the engine (it sums a gradient down to its input's
shape), so the formulas below are written for equal shapes.

These functions are also the operators' methods (`Tensor.__add__` is `add`): given an
operand they cannot take (a string, a list, None) they return NotImplemented, as
Python asks of an operator, so Python tries the other operand and then raises its
own TypeError. Called by name (`t.add("a")`), the method each declaration at the
bottom of this module makes (`public_forms.as_method`) raises PyTorch's TypeError.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import zeros_like
from .._dtype import _BY_NUMPY
from ..arrays.broadcasting import broadcast_shape, check_inplace_shape
from ..arrays.dispatch import binary, scalar_op
from ..arrays.layout import step_layout
from ..arrays.scalars import scalar_of
from ..autograd.graph import INPUT, VALUE, Node, SavedNumber, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..kernels import elementwise as K
from ..tensor import Tensor, as_tensor_arg, operand
from . import short_lane
from .declaration import binary_op, declare, functions_declared_in, unary_op
from .formulas import (
    ARRAY_ARITHMETIC,
    ArrayFormulaNode,
    Formula,
    Scalar,
    efficient_zero_result,
    helper,
    on_arrays,
)
from .public_forms import as_method, not_with_ndarray, number_first
from .tangent_formulas import AUTO_ELEMENT_WISE, Tangent


def _alike(a: Tensor, b: Tensor) -> bool:
    """Two tensors of one shape and dtype: an element-wise result is just like them.
    (With a Python number instead of `b`, a float tensor's result is like it too:
    only a float tensor can need a gradient.)"""
    return a._data.shape == b._data.shape and a._data.dtype is b._data.dtype


def _check_out_dtype(t: Tensor, dt) -> None:
    """In-place ops keep the tensor's dtype: a result of the same category is cast
    into it (float32 += float64 stays float32), a higher one is refused (int += float)."""
    if dt is not t.dtype and _dtype.category(dt) > _dtype.category(t.dtype):
        raise RuntimeError(
            f"result type {dt.type_name} can't be cast to the desired output type "
            f"{t.dtype.type_name}"
        )


def _write_inplace(t: Tensor, result: np.ndarray) -> None:
    t._data[...] = result


# -- addition and subtraction --------------------------------------------------------


def _times_number(grad: np.ndarray, factor) -> np.ndarray:
    """grad * factor in grad's dtype."""
    return scalar_op(K.mul_scalar, grad, factor, _BY_NUMPY[grad.dtype])


class AddBackward0(ArrayFormulaNode):
    """a + alpha * b: the gradient flows through unchanged (times alpha for b)."""

    tangent = Tangent("self_t + maybe_multiply(other_t, alpha)")

    saves = {"alpha": VALUE}
    saved_defaults = {"alpha": 1}
    scalars = ("alpha",)
    formulas = (Formula("self", "grad"), Formula("other", "maybe_multiply(grad, alpha)"))
    elementwise = True


class SubBackward0(ArrayFormulaNode):
    """a - alpha * b: +grad for a, -alpha * grad for b."""

    tangent = Tangent("self_t - maybe_multiply(other_t, alpha)")

    saves = {"alpha": VALUE}
    saved_defaults = {"alpha": 1}
    scalars = ("alpha",)
    formulas = (Formula("self", "grad"), Formula("other", "maybe_multiply(-grad, alpha)"))
    elementwise = True


class RsubBackward0(ArrayFormulaNode):
    """other - alpha * self, both tensors (`x.__rsub__(y)`): -alpha * grad for self,
    grad for other. (PyTorch's `rsub` keeps its operands in its own order: self
    first in `next_functions`, where `y - x` would put y first.)"""

    tangent = Tangent("other_t - maybe_multiply(self_t, alpha)")

    saves = {"alpha": VALUE}
    saved_defaults = {"alpha": 1}
    scalars = ("alpha",)
    formulas = (Formula("self", "maybe_multiply(-grad, alpha)"), Formula("other", "grad"))
    elementwise = True


class RsubBackward1(ArrayFormulaNode):
    """number - alpha * x (Python number on the left): -alpha * grad."""

    tangent = AUTO_ELEMENT_WISE

    saves = {"alpha": VALUE}
    saved_defaults = {"alpha": 1}
    scalars = ("alpha",)
    formulas = (Formula("self", "maybe_multiply(-grad, alpha)"),)


def _save_alpha_of(node: Node | None, alpha) -> None:
    """Saving a plain `alpha=1` is left out, so adding needs no saved values to check
    or release; `_saved_alpha` reads the class's default, 1, as PyTorch shows it."""
    if node is not None and (alpha != 1 or type(alpha) is not int):
        node._saved["alpha"] = alpha


def _add_data(a: Tensor, b, alpha, dt) -> np.ndarray:
    if isinstance(b, Tensor):
        if alpha == 1:
            return binary(K.add, a._data, b._data, dt.np)
        return binary(lambda x, y, out: K.add_scaled(x, y, scalar_of(alpha, dt), out),
                      a._data, b._data, dt.np)
    return scalar_op(K.add_scalar, a._data, b * alpha, dt)


def _check_alpha(alpha, dt) -> None:
    """PyTorch's limits on `alpha` (checked only when alpha is not a plain 1)."""
    if isinstance(alpha, (bool, np.bool_)) and dt is not _dtype.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not dt.is_floating_point and isinstance(alpha, (float, np.floating)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )


def _kept_dtype(self: Tensor, other):
    """The result's dtype in the usual cases, where nothing needs promoting: a float
    tensor with a Python float (`y * 0.5`) or with a tensor of its own dtype
    (`y * z`). None otherwise: `_dtype.result_type` works it out."""
    d = self._data.dtype
    dt = _FLOAT_BY_NUMPY.get(d)
    if dt is not None and ((type(other) is float and not self._wrapped_number)
                           or (type(other) is Tensor and other._data.dtype is d)):
        return dt
    return None


# The floating-point dtypes by numpy dtype (`_kept_dtype` looks its tensor's up once).
_FLOAT_BY_NUMPY = {d: dt for d, dt in _BY_NUMPY.items() if d.kind == "f"}


def add(self: Tensor, other, alpha=1) -> Tensor:
    """self + alpha * other."""
    if alpha.__class__ is int and alpha == 1:
        out = short_lane.run(AddBackward0, K.add_scalar, self, other)
        if out is not None:  # (`y + 0.5` on a short vector: see `short_lane.py`)
            return out
    dt = _kept_dtype(self, other)
    if dt is None:
        other = operand(other)
        if other is NotImplemented:  # (the method raises; an operator asks Python)
            return other
        dt = _dtype.result_type(self, other)
    if alpha != 1 or type(alpha) is not int:  # rare: a scaled sum (or a refused alpha)
        _check_alpha(alpha, dt)
        out = Tensor._make(_add_data(self, other, alpha, dt))
        _save_alpha_of(record(AddBackward0, out, self, other), alpha)
        return out
    if isinstance(other, Tensor):
        out = Tensor._make(binary(K.add, self._data, other._data, dt.np))
        record(AddBackward0, out, self, other, like_output=_alike(self, other))
    else:
        out = Tensor._make(scalar_op(K.add_scalar, self._data, other, dt))
        record_elementwise(AddBackward0, out, self, other)
    return out


_NP_BOOL = np.dtype(np.bool_)


def _is_bool(x) -> bool:
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._data.dtype is _NP_BOOL)


def _refuse_bool_sub(self, other) -> None:
    """PyTorch refuses `-` whenever an operand is bool (a Python True counts)."""
    if _is_bool(self) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(self) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def sub(self: Tensor, other, alpha=1) -> Tensor:
    """self - alpha * other."""
    if alpha.__class__ is int and alpha == 1 and other.__class__ is float:
        out = short_lane.run(SubBackward0, K.add_scalar, self, -other)
        if out is not None:  # (`y - 0.5` on a short vector: see `short_lane.py`)
            return out
    dt = _kept_dtype(self, other)
    if dt is None:
        other = operand(other)
        if other is NotImplemented:  # (the method raises; an operator asks Python)
            return other
        if (self._data.dtype is _NP_BOOL or other.__class__ is bool
                or (isinstance(other, Tensor) and other._data.dtype is _NP_BOOL)):
            _refuse_bool_sub(self, other)
        dt = _dtype.result_type(self, other)
    if alpha != 1 or type(alpha) is not int:  # rare: a scaled difference (or a refused alpha)
        _check_alpha(alpha, dt)
        out = Tensor._make(_add_data(self, other, -alpha, dt))
        _save_alpha_of(record(SubBackward0, out, self, other), alpha)
        return out
    if isinstance(other, Tensor):
        out = Tensor._make(binary(K.sub, self._data, other._data, dt.np))
        record(SubBackward0, out, self, other, like_output=_alike(self, other))
    else:
        out = Tensor._make(scalar_op(K.add_scalar, self._data, -other, dt))
        record_elementwise(SubBackward0, out, self, other)
    return out


def rsub(self: Tensor, other, alpha=1) -> Tensor:
    """other - alpha * self, for a Python number `other` (`2 - x`)."""
    other = operand(other)
    if other is NotImplemented:
        return other
    if isinstance(other, Tensor):
        return _rsub_tensors(self, other, alpha)
    _refuse_bool_sub(other, self)
    dt = _dtype.result_type(self, other)
    data = scalar_op(K.rsub_scalar, self._data * alpha if alpha != 1 else self._data, other, dt,
                      reverse=True)
    out = Tensor._make(data)
    node = record(RsubBackward1, out, self)
    _save_alpha_of(node, alpha)
    return out


def _rsub_tensors(self: Tensor, other: Tensor, alpha) -> Tensor:
    """other - alpha * self for two tensors: `sub`'s arithmetic, recorded as PyTorch's
    `rsub` (RsubBackward0, self its first input)."""
    if self._data.dtype is _NP_BOOL or other._data.dtype is _NP_BOOL:
        _refuse_bool_sub(other, self)
    dt = _dtype.result_type(other, self)
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(alpha, dt)
        data = _add_data(other, self, -alpha, dt)
    else:
        data = binary(K.sub, other._data, self._data, dt.np)
    out = Tensor._make(data)
    _save_alpha_of(record(RsubBackward0, out, self, other), alpha)
    return out


# -- multiplication and division -----------------------------------------------------


def _on_views(compute, kernel, a: np.ndarray, b, dt, divide: bool) -> np.ndarray:
    """`compute(kernel, a, b, dt)` where an operand is a view, which may be PyTorch's
    efficient zero tensor (sgn's gradient, in a `create_graph=True` backward): then
    what PyTorch's mul (div, with `divide`) gives it (`efficient_zero_result`)."""
    out = efficient_zero_result(a, b, dt.np if isinstance(dt, _dtype.dtype) else dt,
                                divide=divide)
    return compute(kernel, a, b, dt) if out is None else out


class MulBackward0(ArrayFormulaNode):
    """a * b: grad * b for a, grad * a for b. Each input is saved only if the
    *other* one needs a gradient, so `10 * x` saves nothing of x."""

    tangent = Tangent("other_t * self_p + self_t * other_p")

    saves = {"self": INPUT, "other": INPUT}
    formulas = (Formula("self", "grad * other"), Formula("other", "grad * self"))
    elementwise = True


def _save_mul_operands(node, self, other, original_self=None):
    # An input needs a gradient when its edge leads somewhere (`node.needs_grad(i)`).
    # (`other` first: PyTorch saves, and so packs, a node's inputs in name order)
    (self_fn, _), (other_fn, _) = node.next_functions
    if self_fn is not None:
        node._saved["other"] = (
            SavedTensor(other) if isinstance(other, Tensor) else SavedNumber(other)
        )
    if other_fn is not None:
        node._saved["self"] = SavedTensor(original_self if original_self is not None else self)


def mul(self: Tensor, other) -> Tensor:
    """Element-wise self * other."""
    out = short_lane.run(MulBackward0, K.mul_scalar, self, other)
    if out is not None:  # (`y * 0.5` on a short vector: see `short_lane.py`)
        out._grad_fn._saved["other"] = SavedNumber(other)
        return out
    dt = _kept_dtype(self, other)
    if dt is None:
        other = operand(other)
        if other is NotImplemented:  # (the method raises; an operator asks Python)
            return other
        dt = _dtype.result_type(self, other)
    a = self._data
    if isinstance(other, Tensor):
        b = other._data
        out = Tensor._make(binary(K.mul, a, b, dt.np) if a.base is None and b.base is None
                           else _on_views(binary, K.mul, a, b, dt.np, False))
        node = record(MulBackward0, out, self, other, like_output=_alike(self, other))
    else:
        out = Tensor._make(scalar_op(K.mul_scalar, a, other, dt) if a.base is None
                           else _on_views(scalar_op, K.mul_scalar, a, other, dt, False))
        node = record_elementwise(MulBackward0, out, self, other)
    if node is not None:
        _save_mul_operands(node, self, other)
    return out


class DivBackward0(ArrayFormulaNode):
    """a / b: grad / b for a, -grad * a / b**2 for b. `b` is always needed; `a`
    only for b's gradient."""

    tangent = Tangent("(self_t - other_t * result) / other_p")

    saves = {"self": INPUT, "other": INPUT}
    formulas = (Formula("self", "grad / other"),
                Formula("other", "-grad * ((self / other) / other)"))


def div(self: Tensor, other, *, rounding_mode: str | None = None) -> Tensor:
    """Element-wise true division (integers divide into the default float dtype), or
    with `rounding_mode` "trunc" / "floor" rounded division in the operands' dtype."""
    if rounding_mode is not None:
        return _div_rounded(self, as_tensor_arg(other, "div"), rounding_mode)
    other = operand(other)
    if other is NotImplemented:
        return other
    dt = _dtype.result_type(self, other)
    if not dt.is_floating_point:
        dt = _dtype.float32
    a = self._data
    if isinstance(other, Tensor):
        b = other._data
        data = binary(K.div, a, b, dt.np) if a.base is None and b.base is None \
            else _on_views(binary, K.div, a, b, dt.np, True)
    else:
        data = scalar_op(K.div_scalar, a, other, dt) if a.base is None \
            else _on_views(scalar_op, K.div_scalar, a, other, dt, True)
    out = Tensor._make(data)
    node = record(DivBackward0, out, self, other)
    if node is not None:
        _save_div(node, self, other, self)
    return out


class DivBackward2(ArrayFormulaNode):
    """Rounded division: a step function, so both gradients are zero."""

    tangent = Tangent("zeros_like(result)", inputs=("self", "other"))

    saves = {"self": INPUT, "other": INPUT, "rounding_mode": VALUE}
    # (`self_dtype`: PyTorch keeps self's dtype apart from self, which is saved only
    # when other needs a gradient)
    unshown = ("self_dtype",)
    # (zeros that record nothing: a rounded quotient has no slope to differentiate)
    formulas = (Formula("self", "div_tensor_self_backward(grad, other, self_dtype, "
                                "rounding_mode)"),
                Formula("other", "div_tensor_other_backward(grad, self, other, "
                                 "rounding_mode)"))


def _div_rounded(self: Tensor, other, mode: str) -> Tensor:
    if mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{mode}'")
    dt = _dtype.result_type(self, other)
    a = self._data.astype(dt.np, copy=False)
    b = other._data.astype(dt.np, copy=False) if isinstance(other, Tensor) else dt.np.type(other)
    if isinstance(other, Tensor):
        broadcast_shape(a.shape, b.shape)
    if dt.is_floating_point:
        with np.errstate(all="ignore"):  # x / 0 is inf or nan, silently
            # numpy's floor_divide rounds as PyTorch does (from fmod, exact near integers)
            data = np.trunc(a / b) if mode == "trunc" else np.floor_divide(a, b)
    else:
        if np.any(b == 0):
            raise RuntimeError("ZeroDivisionError")
        data = np.floor_divide(a, b)
        if mode == "trunc":  # round toward zero where the quotient is negative and inexact
            data = data + ((data * b != a) & ((a < 0) != (b < 0)))
    out = Tensor._make(np.asarray(data, dt.np))
    node = record(DivBackward2, out, self, other)
    if node is not None:
        _save_mul_operands(node, self, other)  # each saved if the other needs a gradient
        node._saved.update({"rounding_mode": mode, "_self_dtype": self.dtype})
    return out


def positive(self: Tensor) -> Tensor:
    """`+x`: x itself (refused for bool, as PyTorch does)."""
    if self._data.dtype == _NP_BOOL:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def rdiv(self: Tensor, other) -> Tensor:
    """other / self (`number / t`, `t.__rtruediv__(u)`): PyTorch computes it as
    (1 / self) * other, a tensor `other` too."""
    other = operand(other)
    if other is NotImplemented:
        return other
    return mul(self.reciprocal(), other)


# -- in-place variants -------------------------------------------------------------------


def _inplace(node_cls, forward, self: Tensor, other, save, number_other: bool = False) -> Tensor:
    """Shared shape of `add_`, `mul_`, `pow_`, ...: check, compute, write back, record.

    `forward(self, other)` computes the new values out of place; `save(node)` keeps
    what backward needs (the operands; `original` is a copy of self from before).
    With `number_other` (pow_'s number exponent) the node has self as its one input.
    """
    other = operand(other)
    if other is NotImplemented:
        return other
    dt = _dtype.result_type(self, other)
    _check_out_dtype(self, dt)
    if isinstance(other, Tensor):
        check_inplace_shape(self._data.shape, other._data.shape)
    inputs = (self,) if number_other else (self, other)
    node = begin_inplace(node_cls, *inputs)
    # The values from before the write, recorded as PyTorch records its `self.clone()`
    # (the saved tensor's grad_fn is a CloneBackward0).
    original = self.clone() if node is not None and save.needs_original(node) else None
    # (computed from detached operands: the out-of-place op records no node of its own)
    result = forward(self, other.detach() if isinstance(other, Tensor) and other.requires_grad
                     else other)
    _write_inplace(self, result._data)
    if node is not None:
        # Operands are saved before the version bump, as PyTorch saves them: an
        # operand sharing self's counter (`u.mul_(u.detach())`) is then stale.
        save(node, self, other, original)
    finish_inplace(self, node)
    return self


class _Save:
    """What an in-place arithmetic node keeps; `needs_original` says whether the
    values from before the write must be copied first (mul_ needs them for the
    other input's gradient; add_ never does)."""

    def __init__(self, fn, needs_original=lambda node: False):
        self._fn = fn
        self.needs_original = needs_original

    def __call__(self, node, self_t, other, original):
        self._fn(node, self_t, other, original)


def _save_alpha(alpha):
    def save(node, self_t, other, original):
        _save_alpha_of(node, alpha)

    return _Save(save)


_SAVE_MUL = _Save(
    lambda node, s, o, orig: _save_mul_operands(node, s, o, original_self=orig),
    needs_original=lambda node: node.needs_grad(1),
)


def _save_div(node, s, o, orig):
    node._saved["other"] = SavedTensor(o) if isinstance(o, Tensor) else SavedNumber(o)
    if node.needs_grad(1):
        node._saved["self"] = SavedTensor(orig)


_SAVE_DIV = _Save(_save_div, needs_original=lambda node: node.needs_grad(1))


def add_(self: Tensor, other, alpha=1) -> Tensor:
    return _inplace(AddBackward0, lambda s, o: add(s.detach(), o, alpha), self, other,
                    _save_alpha(alpha))


def sub_(self: Tensor, other, alpha=1) -> Tensor:
    return _inplace(SubBackward0, lambda s, o: sub(s.detach(), o, alpha), self, other,
                    _save_alpha(alpha))


def mul_(self: Tensor, other) -> Tensor:
    return _inplace(MulBackward0, lambda s, o: mul(s.detach(), o), self, other, _SAVE_MUL)


def div_(self: Tensor, other) -> Tensor:
    if not self.dtype.is_floating_point:
        raise RuntimeError("result type Float can't be cast to the desired output type "
                           f"{self.dtype.type_name}")
    return _inplace(DivBackward0, lambda s, o: div(s.detach(), o), self, other, _SAVE_DIV)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------


declare("add", nodes=(AddBackward0,), function=number_first(add), method=as_method(add),
        inplace=as_method(add_),
        attributes={"__add__": add, "__radd__": not_with_ndarray(add), "__iadd__": add_})

# (The aliases are overloaded in PyTorch: a bad operand lists their signatures.)
declare("sub", nodes=(SubBackward0, RsubBackward0, RsubBackward1), function=number_first(sub),
        method=as_method(sub), inplace=as_method(sub_),
        aliases=("subtract",), inplace_aliases=False,
        alias_methods={"subtract": as_method(sub, "subtract", [
            "Tensor other, *, Number alpha = 1", "Number other, Number alpha = 1"])},
        attributes={"__sub__": sub, "__rsub__": not_with_ndarray(rsub), "__isub__": sub_})

declare("mul", nodes=(MulBackward0,), function=number_first(mul), method=as_method(mul),
        inplace=as_method(mul_), aliases=("multiply",), inplace_aliases=False,
        alias_methods={"multiply": as_method(mul, "multiply", ["Tensor other",
                                                               "Number other"])},
        attributes={"__mul__": mul, "__rmul__": not_with_ndarray(mul), "__imul__": mul_})

declare("div", nodes=(DivBackward0, DivBackward2), function=number_first(div),
        method=as_method(div), inplace=as_method(div_),
        aliases=("divide", "true_divide"), inplace_aliases=False,
        alias_methods={
            "divide": as_method(div, "divide", [
                "Tensor other", "Tensor other, *, str rounding_mode", "Number other",
                "Number other, *, str rounding_mode"]),
            "true_divide": as_method(div, "true_divide", ["Tensor other", "Number other"])},
        attributes={"__truediv__": div, "__rtruediv__": rdiv, "__itruediv__": div_})

declare("positive", method=positive, attributes={"__pos__": positive})


def _float_result(input: Tensor, other: Tensor):  # noqa: A002 - PyTorch's name
    """The dtype of a floating-point op of two tensors: integers become float32."""
    dt = _dtype.result_type(input, other)
    return dt if dt.is_floating_point else _dtype.float32


unary_op("neg", node="NegBackward0", kernel=K.neg, aliases=("negative",), operator="__neg__",
         formula="-grad", fused=K.neg, keeps_integers=True,
         bool_error=(RuntimeError, "Negation, the `-` operator, on a bool tensor is not "
                     "supported. If you are trying to invert a mask, use the `~` or "
                     "`logical_not()` operator instead."),
         doc="-x. Its derivative is -1 whatever x is, so it saves nothing.")

unary_op("reciprocal", node="ReciprocalBackward0", kernel=K.reciprocal,
         formula="-grad * (result * result)", fused=K.reciprocal_backward,
         doc="1 / x. Its derivative -1 / x**2 is -(1 / x)**2, so it saves its output.")

def atan2_backward(grad: Tensor, self: Tensor, other: Tensor, output_mask: tuple) -> tuple:
    """The gradients of atan2(self, other) (PyTorch's atan2_backward): grad * other and
    grad * -self times 1 / (self**2 + other**2), the reciprocal masked to 0 (out of
    place: MaskedFillBackward0) where the denominator is 0."""
    # (C++ evaluates `self * self + other * other` right operand first)
    other_sq = other * other
    denom = self * self + other_sq
    recip = denom.reciprocal().masked_fill(denom == 0, 0)
    return (grad * other * recip if output_mask[0] else None,
            grad * -self * recip if output_mask[1] else None)


def _atan2_recording(node: Node, grads: list, wanted: list | None = None) -> list:
    """Atan2Backward0's formulas share one reciprocal, as PyTorch's one call of
    atan2_backward does: both gradients come from a single call."""
    mask = wanted if wanted is not None else [node.needs_grad(0), node.needs_grad(1)]
    saved = {name: node._saved[name].unpacked(node) for name in type(node).saves}
    return list(atan2_backward(grads[0], saved["self"], saved["other"], mask))


_ATAN2 = binary_op(
    "atan2", node="Atan2Backward0", kernel=K.atan2,
    # (1 / (self**2 + other**2), but 0 at the origin, where PyTorch masks it.)
    formulas={"self": "atan2_backward(grad, self, other, (True, False))[0]",
              "other": "atan2_backward(grad, self, other, (False, True))[1]"},
    fused={"self": K.atan2_backward_self, "other": K.atan2_backward_other},
    promote=_float_result, compute=binary,
    tangent="(-self_p * other_t + other_p * self_t) / (self_p.pow(2) + other_p.pow(2))",
    doc="The angle of the point (other, input), in (-pi, pi]. Both gradients "
        "need both inputs, so it saves both; at the origin both are 0.")
_ATAN2.node.apply_recording = _atan2_recording


def _atan2_layout(grad: np.ndarray, self: np.ndarray, other: np.ndarray, i: int) -> np.ndarray:
    """How `atan2_backward`'s steps lay out input i's gradient: `grad * other` (or
    `grad * -self`), times the reciprocal of `self * self + other * other`. (Outside
    a recorded backward PyTorch masks the reciprocal in place, keeping its layout;
    the recorded one's out-of-place masked_fill copies it row-major.)"""
    recip = step_layout(step_layout(step_layout(self, self), step_layout(other, other)))
    first = step_layout(grad, other) if i == 0 else step_layout(grad, step_layout(self))
    return step_layout(first, recip)


_ATAN2.node.layout = staticmethod(_atan2_layout)
declare("atan2_backward", aten=atan2_backward)


# The functions built from this module's declarations, under their public names.
globals().update(functions_declared_in(__name__))


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def maybe_multiply(t: Tensor, s) -> Tensor:
    """`t * s`, or `t` itself when the Scalar `s` is 1 (add's and sub's alpha)."""
    return t if s == 1 else t * Scalar(s)


@on_arrays("maybe_multiply")
def _maybe_multiply_on_arrays(a: np.ndarray, s) -> np.ndarray:
    return a if s == 1 else ARRAY_ARITHMETIC["Mult"](a, s)


@helper
def div_tensor_self_backward(grad: Tensor, other, self_dtype, rounding_mode) -> Tensor:
    """The gradient of `self / other` for self: zeros for a rounded quotient."""
    if rounding_mode is not None:
        return zeros_like(grad, dtype=self_dtype)
    return grad / other


@helper
def div_tensor_other_backward(grad: Tensor, self: Tensor, other: Tensor,
                              rounding_mode) -> Tensor:
    """The gradient of `self / other` for other: zeros for a rounded quotient."""
    if rounding_mode is not None:
        return zeros_like(grad, dtype=other.dtype)
    return -grad * ((self / other) / other)


@on_arrays("div_tensor_self_backward")
def _div_tensor_self_backward_on_arrays(grad, other, self_dtype, rounding_mode):
    if rounding_mode is not None:
        return np.zeros_like(grad, dtype=self_dtype.np)
    return ARRAY_ARITHMETIC["Div"](grad, other)


@on_arrays("div_tensor_other_backward")
def _div_tensor_other_backward_on_arrays(grad, self, other, rounding_mode):
    if rounding_mode is not None:
        return np.zeros_like(grad, dtype=np.asarray(other).dtype)
    divide = ARRAY_ARITHMETIC["Div"]
    return ARRAY_ARITHMETIC["Mult"](-grad, divide(divide(self, other), other))

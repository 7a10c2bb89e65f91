"""Element-wise ops of two or three inputs beyond + - * / and **: remainders, signs,
nan-aware maxima, hypot, logaddexp, xlogy, lerp, addcmul, addcdiv, ...

Each op is a function that promotes and broadcasts its inputs as PyTorch does,
computes its values with numpy, and records a node whose `formulas` are PyTorch's
(`derivatives.yaml`), written with minigrad's own ops. The nodes are `FormulaNode`s:
their plain backward runs the same formulas on tensors, recording nothing (these ops
are rare in a program, and the arithmetic of their formulas is beyond what
`compile_on_arrays` turns into array code), and a `create_graph=True` backward runs
them recording a graph. What a node saves follows from the names its formulas read;
like PyTorch's generated code, an op saves a tensor only when the formula of an input
that needs a gradient reads it.

Many of these ops have two overloads, as in PyTorch: a tensor `other` (`RemainderBackward1`)
and a Python number (`RemainderBackward0`), whose nodes differ.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._args import combination_error
from .._creation import zeros
from .._warn import warn_user
from ..arrays.broadcasting import broadcast_shape, check_inplace_shape
from ..arrays.layout import WRAPPED_NUMBER, empty_like, reorders, result_empty, result_order
from ..autograd.graph import INPUT, OUTPUT, VALUE, Node, SavedTensor
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record
from ..tensor import Tensor, operand
from .arithmetic import rdiv as _rdiv
from .arithmetic import rsub as _rsub
from .declaration import declare
from .formulas import Formula, FormulaNode, Scalar, helper, named, names_read
from .no_derivative import NoDerivative, name_op
from .public_forms import not_with_ndarray
from .tangent_formulas import dense

# What PyTorch lists when a call fits none of an op's overloads (the function's forms;
# the method's are the same without the input).
_TENSOR_OR_NUMBER = ["Tensor input, Tensor other, *, Tensor out = None",
                     "Tensor input, Number other, *, Tensor out = None"]
_METHOD_TENSOR_OR_NUMBER = ["Tensor other", "Number other"]


def _node(name: str, formulas: dict[str, str], saves: dict, *, tangent=None,
          scalars: tuple[str, ...] = (), unshown: tuple[str, ...] = (),
          doc: str = "") -> type[Node]:
    """A node class named as PyTorch names it, with its formulas (one per input, in the
    order of its inputs), what it may save and what it keeps without showing it
    (`unshown`: `other_info`, the shape and dtype of `other`)."""
    return type(name, (FormulaNode,), {
        "__module__": __name__, "__qualname__": name, "__doc__": doc,
        "formulas": tuple(Formula(i, text) for i, text in formulas.items()),
        "saves": saves, "scalars": scalars, "unshown": unshown, "tangent": tangent})


def _save(node: Node | None, values: dict) -> None:
    """Save on `node` the values its class saves: a number always (a tangent formula
    may read it), a tensor only when the formula of an input that needs a gradient
    reads it (PyTorch's generated code guards each save so). In name order, as
    PyTorch saves (and packs) them."""
    if node is None:
        return
    cls = type(node)
    read = names_read(node)
    if "other_info" in getattr(cls, "unshown", ()):
        other = values["other"]
        node._saved["_other_info"] = (tuple(other.shape), other.dtype)
    if "op" in getattr(cls, "unshown", ()):  # (NoDerivative's: the op it names)
        name_op(node, values["op"])
    for name in sorted(cls.saves):
        value = values[name]
        if isinstance(value, Tensor):
            if name in read:
                node._saved[name] = SavedTensor(value, is_output=cls.saves[name] is OUTPUT)
        else:
            node._saved[name] = value


def _data(x, dt: _dtype.dtype):
    """A tensor's values (or a number) in dtype `dt`, for numpy to compute with."""
    if isinstance(x, Tensor):
        return x._data.astype(dt.np, copy=False)
    return dt.np.type(x)


def _shape_of(*values) -> tuple:
    """The broadcast shape of the tensors among `values` (PyTorch's error if none)."""
    shape: tuple = ()
    for v in values:
        if isinstance(v, Tensor):
            shape = broadcast_shape(shape, v._data.shape)
    return shape


def _result(values, dt: _dtype.dtype, shape: tuple, *operands) -> Tensor:
    """A new tensor of `values` in dtype `dt` and shape `shape` (owning its memory),
    laid out as PyTorch lays out an element-wise result of `operands` (the tensors
    among them, in PyTorch's order: `x.t()` first gives a transposed result)."""
    out = _fresh(shape, dt.np, [t._data for t in operands if isinstance(t, Tensor)])
    out[...] = values
    return Tensor._make(out)


def _fresh(shape: tuple, dtype, arrays) -> np.ndarray:
    """An empty array laid out as PyTorch lays out an element-wise result of `arrays`."""
    order = None
    if 0 not in shape and reorders(shape, arrays):
        order = result_order(shape, *arrays)
    return np.empty(shape, dtype) if order is None else result_empty(shape, dtype, arrays, order)


def _float_type(*operands) -> _dtype.dtype:
    """The dtype of an op computed in floating point: integers and bools become the
    default float dtype."""
    dt = _dtype.result_type(*operands)
    return dt if dt.is_floating_point else _dtype.get_default_dtype()


def _must_be_tensor(fn: str, value, arg: str, position: int) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _inplace_result(fn_out, self: Tensor, others: tuple, node_cls, values: dict) -> Tensor:
    """Write an op's result into `self` (`x.remainder_(y)`): its dtype must be
    self's, its shape self's; the node is recorded (and the values saved) as
    PyTorch records an in-place op, with the input's values from before the write."""
    out = fn_out
    if _dtype.category(out.dtype) > _dtype.category(self.dtype):
        raise RuntimeError(f"result type {out.dtype.type_name} can't be cast to the desired "
                           f"output type {self.dtype.type_name}")
    tensors = [o for o in others if isinstance(o, Tensor)]
    for o in tensors:
        check_inplace_shape(self._data.shape, o._data.shape)
    node = begin_inplace(node_cls, self, *others) if node_cls is not None else None
    if node_cls is None:
        begin_inplace(_NoGradient, self, *tensors)
    reads_self = node is not None and "self" in names_read(node)
    original = self.clone() if reads_self else None
    self._data[...] = out._data
    if node is not None:
        _save(node, {**values, "self": original if original is not None else self,
                     "result": self})
    finish_inplace(self, node)
    return self


class _NoGradient(Node):
    """(the in-place checks of an op that records no node)"""


# -- remainder and fmod: what is left after a division ------------------------------------


def _remainder_values(a, b, dt: _dtype.dtype):
    """Python's `%` (the sign of the divisor), as PyTorch computes it: C's fmod, moved
    by one divisor where it is nonzero and its sign differs from the divisor's."""
    if not dt.is_floating_point:
        _refuse_zero_division(b)
        return np.remainder(a, b)
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _fmod_values(a, b, dt: _dtype.dtype):
    """C's fmod (the sign of the dividend); an integer division by zero is an error."""
    if not dt.is_floating_point:
        _refuse_zero_division(b)
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


def _refuse_zero_division(b) -> None:
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


RemainderBackward0 = _node(
    "RemainderBackward0", {"self": "grad"}, {}, tangent="auto_element_wise",
    doc="remainder(x, number): x - number * floor(x / number) has slope 1 in x.")
RemainderBackward1 = _node(
    "RemainderBackward1",
    {"self": "grad", "other": "-grad * self.div(other, rounding_mode='floor')"},
    {"self": INPUT, "other": INPUT},
    tangent="self_t - other_t * self_p.div(other_p, rounding_mode='floor')",
    doc="remainder(x, y) = x - y * floor(x / y): slope 1 in x, -floor(x / y) in y.")
FmodBackward0 = _node(
    "FmodBackward0", {"self": "grad"}, {}, tangent="auto_element_wise",
    doc="fmod(x, number): x - number * trunc(x / number) has slope 1 in x.")
FmodBackward1 = _node(
    "FmodBackward1",
    {"self": "grad", "other": "-grad * self.div(other, rounding_mode='trunc')"},
    {"self": INPUT, "other": INPUT},
    tangent="self_t - other_t * self_p.div(other_p, rounding_mode='trunc')",
    doc="fmod(x, y) = x - y * trunc(x / y): slope 1 in x, -trunc(x / y) in y.")


def _divide_like(name: str, values, number_node, tensor_node, heads: list[str]):
    """remainder and fmod: a tensor `other` or a number, the result in the operands'
    promoted dtype."""
    def op(self: Tensor, other) -> Tensor:
        other = operand(other)
        if other is NotImplemented:
            return other
        if isinstance(other, bool) and self.dtype is _dtype.bool_ or (
                isinstance(other, Tensor) and _dtype.result_type(self, other) is _dtype.bool_):
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
        dt = _dtype.result_type(self, other)
        shape = _shape_of(self, other)
        out = _result(values(_data(self, dt), _data(other, dt), dt), dt, shape, self, other)
        if isinstance(other, Tensor):
            _save(record(tensor_node, out, self, other), {"self": self, "other": other})
        else:
            record(number_node, out, self)
        return out

    def op_(self: Tensor, other) -> Tensor:
        checked = operand(other)
        if checked is NotImplemented:
            raise combination_error(name + "_", (other,), {}, _METHOD_TENSOR_OR_NUMBER,
                                    tail=False)
        result = op(self.detach(), checked.detach() if isinstance(checked, Tensor) else checked)
        node_cls = tensor_node if isinstance(checked, Tensor) else number_node
        others = (checked,) if isinstance(checked, Tensor) else ()
        return _inplace_result(result, self, others, node_cls, {"other": checked})

    def method(self: Tensor, other) -> Tensor:
        result = op(self, other)
        if result is NotImplemented:
            raise combination_error(name, (other,), {}, _METHOD_TENSOR_OR_NUMBER, tail=False)
        return result

    op.__name__ = op.__qualname__ = method.__name__ = method.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    return op, op_, method


remainder_op, remainder_, remainder_method = _divide_like(
    "remainder", _remainder_values, RemainderBackward0, RemainderBackward1,
    [_TENSOR_OR_NUMBER[0], "Number self, Tensor other", _TENSOR_OR_NUMBER[1]])
fmod_op, fmod_, fmod_method = _divide_like("fmod", _fmod_values, FmodBackward0,
                                           FmodBackward1, _TENSOR_OR_NUMBER)


def remainder(input, other) -> Tensor:  # noqa: A002 - PyTorch's names
    """The remainder of input / other with the divisor's sign (Python's `%`); either
    may be a number (`minigrad.remainder(5, t)`)."""
    if isinstance(input, Tensor):
        result = remainder_op(input, other)
    elif isinstance(other, Tensor) and isinstance(input, (int, float)):
        result = remainder_op(_wrapped(input), other)
    else:
        result = NotImplemented
    if result is NotImplemented:
        raise combination_error("remainder", (input, other), {}, [
            _TENSOR_OR_NUMBER[0], "Number self, Tensor other", _TENSOR_OR_NUMBER[1]],
            tail=False)
    return result


def fmod(input, other) -> Tensor:  # noqa: A002 - PyTorch's names
    """The remainder of input / other with the dividend's sign (C's fmod)."""
    result = fmod_op(input, other) if isinstance(input, Tensor) else NotImplemented
    if result is NotImplemented:
        raise combination_error("fmod", (input, other), {}, _TENSOR_OR_NUMBER, tail=False)
    return result


def _wrapped(number) -> Tensor:
    """A Python number as the first operand (`5 % t`): a 0-d tensor that promotes as
    the number does."""
    t = Tensor._make(np.array(number, _dtype.of_number(number).np))
    t._wrapped_number = True
    return t


def rmod(self: Tensor, other) -> Tensor:
    """`number % t`: remainder(number, t)."""
    other = operand(other)
    if other is NotImplemented:
        return other
    return remainder_op(other if isinstance(other, Tensor) else _wrapped(other), self)


# -- floor_divide: `//` --------------------------------------------------------------------


def _floor_divide_values(a, b, dt: _dtype.dtype):
    if not dt.is_floating_point:
        _refuse_zero_division(b)
    with np.errstate(all="ignore"):  # x / 0 is inf or nan, silently
        # (numpy's floor_divide rounds as PyTorch's: from fmod, exact near integers)
        return np.floor_divide(a, b)


def floor_divide_op(self: Tensor, other) -> Tensor:
    """self // other: the quotient rounded down, in the operands' promoted dtype."""
    other = operand(other)
    if other is NotImplemented:
        return other
    dt = _dtype.result_type(self, other)
    if dt is _dtype.bool_:
        raise RuntimeError("\"div_floor_cpu\" not implemented for 'Bool'")
    out = _result(_floor_divide_values(_data(self, dt), _data(other, dt), dt), dt,
                  _shape_of(self, other), self, other)
    name_op(record(NoDerivative, out, self, other), "floor_divide")
    return out


def floor_divide(input, other) -> Tensor:  # noqa: A002 - PyTorch's names
    """input // other (either may be a number)."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor) and isinstance(
            input, (int, float)):
        input = _wrapped(input)  # noqa: A001
    result = floor_divide_op(input, other) if isinstance(input, Tensor) else NotImplemented
    if result is NotImplemented:
        raise combination_error("floor_divide", (input, other), {},
                                [_TENSOR_OR_NUMBER[0], "Tensor input, Number other"],
                                tail=False)
    return result


def floor_divide_method(self: Tensor, other) -> Tensor:
    result = floor_divide_op(self, other)
    if result is NotImplemented:
        raise combination_error("floor_divide", (other,), {}, _METHOD_TENSOR_OR_NUMBER,
                                tail=False)
    return result


def floor_divide_(self: Tensor, other) -> Tensor:
    checked = operand(other)
    if checked is NotImplemented:
        raise combination_error("floor_divide_", (other,), {}, _METHOD_TENSOR_OR_NUMBER,
                                tail=False)
    result = floor_divide_op(self.detach(), checked.detach() if isinstance(checked, Tensor)
                             else checked)
    others = (checked,) if isinstance(checked, Tensor) else ()
    return _inplace_result(result, self, others, NoDerivative, {"op": "floor_divide_"})


def rfloordiv(self: Tensor, other) -> Tensor:
    """`number // t`."""
    other = operand(other)
    if other is NotImplemented:
        return other
    return floor_divide_op(other if isinstance(other, Tensor) else _wrapped(other), self)


# -- clamp with tensor bounds, clamp_min, clamp_max -----------------------------------------


ClampBackward0 = _node(
    "ClampBackward0",
    {"self": "clamp_backward(grad, self, min, max)",
     "min": "clamp_backward_min_max(grad, self, min, max, (True, False))[0]",
     "max": "clamp_backward_min_max(grad, self, min, max, (False, True))[1]"},
    {"self": INPUT, "min": INPUT, "max": INPUT},
    tangent="clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t)",
    doc="clamp(x, min, max) with tensor bounds: the gradient goes to x where it was "
        "within them, else to the bound that was taken.")
ClampMinBackward0 = _node(
    "ClampMinBackward0", {"self": "where(self >= min, grad, zeros((), dtype=grad.dtype))"},
    {"self": INPUT, "min": VALUE}, tangent="auto_element_wise",
    doc="clamp_min(x, number): the gradient passes where x was at least the bound.")
ClampMinBackward1 = _node(
    "ClampMinBackward1",
    {"self": "where(self >= min, grad, zeros((), dtype=grad.dtype))",
     "min": "where(self < min, grad, zeros((), dtype=grad.dtype))"},
    {"self": INPUT, "min": INPUT}, tangent="where(self_p >= min_p, self_t, min_t)",
    doc="clamp_min(x, y): the gradient goes to whichever of x and y was taken.")
ClampMaxBackward0 = _node(
    "ClampMaxBackward0", {"self": "where(self <= max, grad, zeros((), dtype=grad.dtype))"},
    {"self": INPUT, "max": VALUE}, tangent="auto_element_wise",
    doc="clamp_max(x, number): the gradient passes where x was at most the bound.")
ClampMaxBackward1 = _node(
    "ClampMaxBackward1",
    {"self": "where(self <= max, grad, zeros((), dtype=grad.dtype))",
     "max": "where(self > max, grad, zeros((), dtype=grad.dtype))"},
    {"self": INPUT, "max": INPUT}, tangent="where(self_p <= max_p, self_t, max_t)",
    doc="clamp_max(x, y): the gradient goes to whichever of x and y was taken.")

_CLAMP_HEADS = ["Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None",
                "Tensor input, Number min = None, Number max = None, *, Tensor out = None"]


def _clamp_values(x, lo, hi):
    """min(max(x, lo), hi), a nan anywhere giving nan (as PyTorch's kernel)."""
    if lo is not None:
        x = np.maximum(x, lo)
    return x if hi is None else np.minimum(x, hi)


def clamp_tensors(self: Tensor, min, max) -> Tensor:  # noqa: A002 - PyTorch's names
    """clamp(x, min, max) with tensor bounds (either may be None), broadcast together."""
    if not all(b is None or isinstance(b, Tensor) for b in (min, max)):
        raise combination_error("clamp", (self, min, max), {}, _CLAMP_HEADS, tail=False)
    bounds = [b for b in (min, max) if b is not None]
    dt = _dtype.result_type(self, *bounds)
    shape = _shape_of(self, *bounds)
    values = _clamp_values(_data(self, dt), *(None if b is None else _data(b, dt)
                                              for b in (min, max)))
    out = _result(values, dt, shape, self, min, max)
    _save(record(ClampBackward0, out, self, min, max), {"self": self, "min": min, "max": max})
    return out


def clamp_tensors_(self: Tensor, min, max) -> Tensor:  # noqa: A002 - PyTorch's names
    """`clamp_tensors` in place."""
    plain = [None if b is None else b.detach() for b in (min, max)]
    result = clamp_tensors(self.detach(), *plain)
    return _inplace_result(result, self, (min, max), ClampBackward0, {"min": min, "max": max})


def _one_bound(name: str, number_node, tensor_node, values):
    """clamp_min or clamp_max: a tensor bound or a number."""
    heads = [f"Tensor input, Tensor {name[6:]}, *, Tensor out = None",
             f"Tensor input, Number {name[6:]}, *, Tensor out = None"]
    method_heads = [f"Tensor {name[6:]}", f"Number {name[6:]}"]
    bound_name = name[6:]

    def op(self: Tensor, bound) -> Tensor:
        checked = operand(bound)
        if checked is NotImplemented:
            return NotImplemented
        dt = _dtype.result_type(self, checked)
        out = _result(values(_data(self, dt), _data(checked, dt)), dt,
                      _shape_of(self, checked), self, checked)
        if isinstance(checked, Tensor):
            _save(record(tensor_node, out, self, checked), {"self": self, bound_name: checked})
        else:
            _save(record(number_node, out, self), {"self": self, bound_name: checked})
        return out

    def function(input, bound) -> Tensor:  # noqa: A002 - PyTorch's name
        result = op(input, bound) if isinstance(input, Tensor) else NotImplemented
        if result is NotImplemented:
            raise combination_error(name, (input, bound), {}, heads, tail=False)
        return result

    def method(self: Tensor, bound) -> Tensor:
        result = op(self, bound)
        if result is NotImplemented:
            raise combination_error(name, (bound,), {}, method_heads, tail=False)
        return result

    def op_(self: Tensor, bound) -> Tensor:
        checked = operand(bound)
        if checked is NotImplemented:
            raise combination_error(name + "_", (bound,), {}, method_heads, tail=False)
        result = op(self.detach(), checked.detach() if isinstance(checked, Tensor) else checked)
        tensor = isinstance(checked, Tensor)
        return _inplace_result(result, self, (checked,) if tensor else (),
                               tensor_node if tensor else number_node, {bound_name: checked})

    for fn, public in ((function, name), (method, name), (op_, name + "_")):
        fn.__name__ = fn.__qualname__ = public
    function.__doc__ = method.__doc__ = (
        f"Each element {'at least' if name == 'clamp_min' else 'at most'} the bound "
        "(a tensor, broadcast, or a number).")
    return function, method, op_


clamp_min, clamp_min_method, clamp_min_ = _one_bound(
    "clamp_min", ClampMinBackward0, ClampMinBackward1, np.maximum)
clamp_max, clamp_max_method, clamp_max_ = _one_bound(
    "clamp_max", ClampMaxBackward0, ClampMaxBackward1, np.minimum)


# -- ops of two tensors ---------------------------------------------------------------------
# Each takes two tensors (a number for `other` is PyTorch's TypeError), promotes them,
# and computes its values with numpy; `rule(dt)` turns the promoted dtype into the
# result's, or refuses it as PyTorch's kernels do.


def _same(name: str):
    """The promoted dtype itself."""
    return lambda dt: dt


def _floating(name: str):
    """Integers and bools computed in the default float dtype."""
    return lambda dt: dt if dt.is_floating_point else _dtype.get_default_dtype()


def _floats_only(name: str):
    """A kernel PyTorch has for floating-point dtypes only."""
    def rule(dt):
        if not dt.is_floating_point:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{dt.type_name}\'')
        return dt
    return rule


def _integers_only(name: str):
    """A kernel PyTorch has for integer dtypes only (bool included, for shifts: no)."""
    def rule(dt):
        if dt is not _dtype.int64:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{dt.type_name}\'')
        return dt
    return rule


def _tensors_op(name: str, values, rule, node=None, *, other: str = "other",
                kernel: str | None = None, check=None, result_dtype=None, laid_out_by=None):
    """An element-wise op of two tensors: the function, the method and the in-place
    form. `values(a, b)` computes on numpy arrays of the computing dtype; `node` is
    recorded when an input needs a gradient (saving what its formulas read), `check`
    sees both tensors first (heaviside's dtype rule); `result_dtype` gives a result of
    another dtype than the computing one (bool for the logical ops); `laid_out_by(a,
    b, shape, dtype)`: the fresh result array, laid out as PyTorch's op, made of
    others, lays it out (ldexp's)."""
    rule = rule(kernel or name)

    def op(input: Tensor, other_: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
        _must_be_tensor(name, input, "input", 1)
        _must_be_tensor(name, other_, other, 2)
        return _compute(input, other_)

    def method(self: Tensor, other_: Tensor) -> Tensor:
        _must_be_tensor(name, other_, other, 1)
        return _compute(self, other_)

    def _compute(a: Tensor, b: Tensor) -> Tensor:
        if check is not None:
            check(a, b)
        dt = rule(_dtype.result_type(a, b))
        shape = _shape_of(a, b)
        with np.errstate(all="ignore"):
            computed = values(_data(a, dt), _data(b, dt))
        if laid_out_by is None:
            out = _result(computed, result_dtype or dt, shape, a, b)
        else:
            out_data = laid_out_by(a._data, b._data, shape, (result_dtype or dt).np)
            out_data[...] = computed
            out = Tensor._make(out_data)
        if node is not None:
            _save(record(node, out, a, b), {"self": a, "other": b, "result": out, "op": name})
        return out

    def op_(self: Tensor, other_: Tensor) -> Tensor:
        _must_be_tensor(name + "_", other_, other, 1)
        result = _compute(self.detach(), other_.detach())
        return _inplace_result(result, self, (other_,), node, {"other": other_, "op": name + "_"})

    op.__name__ = op.__qualname__ = method.__name__ = method.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    return op, method, op_


def _declare_tensors_op(name: str, values, rule, node=None, doc: str = "",
                        inplace: bool = True, function_inplace: bool = False,
                        **kwargs) -> tuple:
    """Declare `_tensors_op`'s forms; `inplace`: whether PyTorch has `Tensor.name_`
    (fmax has none), `function_inplace`: `minigrad.name_` too (gcd_, ldexp_)."""
    op, method, op_ = _tensors_op(name, values, rule, node, **kwargs)
    op.__doc__ = method.__doc__ = doc
    declare(name, nodes=(node,) if node is not None else (), function=op, method=method,
            inplace=op_ if inplace else None, function_inplace=function_inplace, doc=doc)
    return op, method, op_


# fmax, fmin: a nan loses (where maximum and minimum let it win)
FmaxBackward0 = _node(
    "FmaxBackward0",
    {"self": "grad.masked_fill(logical_not(logical_or(self >= other, other != other)), 0)",
     "other": "grad.masked_fill(logical_or(self >= other, other != other), 0)"},
    {"self": INPUT, "other": INPUT},
    tangent="other_t + logical_or(self_p > other_p, other_p != other_p) * (self_t - other_t)",
    doc="fmax(x, y): the gradient goes to the larger (to x on a tie, or where y is nan).")
FminBackward0 = _node(
    "FminBackward0",
    {"self": "grad.masked_fill(logical_not(logical_or(self <= other, other != other)), 0)",
     "other": "grad.masked_fill(logical_or(self <= other, other != other), 0)"},
    {"self": INPUT, "other": INPUT},
    tangent="other_t + logical_or(self_p <= other_p, other_p != other_p) * (self_t - other_t)",
    doc="fmin(x, y): the gradient goes to the smaller (to x on a tie, or where y is nan).")
_declare_tensors_op("fmax", np.fmax, _same, FmaxBackward0, inplace=False,
                    doc="The larger of two tensors, element by element; a nan loses.")
_declare_tensors_op("fmin", np.fmin, _same, FminBackward0, inplace=False,
                    doc="The smaller of two tensors, element by element; a nan loses.")

HypotBackward0 = _node(
    "HypotBackward0", {"self": "grad * self / result", "other": "grad * other / result"},
    {"self": INPUT, "other": INPUT, "result": OUTPUT},
    tangent="self_t * self_p / result + other_t * other_p / result",
    doc="hypot(x, y) = sqrt(x**2 + y**2): slopes x / result and y / result.")
_declare_tensors_op("hypot", np.hypot, _floats_only, HypotBackward0,
                    doc="sqrt(input**2 + other**2), without overflow in the squares.")

LogaddexpBackward0 = _node(
    "LogaddexpBackward0",
    {"self": "grad / (1 + exp(other - self))", "other": "grad / (1 + exp(self - other))"},
    {"self": INPUT, "other": INPUT},
    tangent="self_t / (1 + exp(other_p - self_p)) + other_t / (1 + exp(self_p - other_p))",
    doc="log(exp(x) + exp(y)): the slopes are the softmax of (x, y).")
Logaddexp2Backward0 = _node(
    "Logaddexp2Backward0",
    {"self": "grad / (1 + pow(2, other - self))", "other": "grad / (1 + pow(2, self - other))"},
    {"self": INPUT, "other": INPUT},
    tangent="self_t / (1 + pow(2, other_p - self_p)) + other_t / (1 + pow(2, self_p - other_p))",
    doc="log2(2**x + 2**y): the slopes are the base-2 softmax of (x, y).")


def _logaddexp_values(a, b):
    """max + log1p(exp(-|a - b|)), and a itself where both are the same infinity."""
    big = np.maximum(a, b)
    same_inf = np.isinf(a) & (a == b)
    return np.where(same_inf, a, big + np.log1p(np.exp(-np.abs(a - b))))


def _logaddexp2_values(a, b):
    """max + log2(1 + 2**-|a - b|), and a itself where both are the same infinity."""
    big = np.maximum(a, b)
    same_inf = np.isinf(a) & (a == b)
    inv_log_2 = big.dtype.type(1.0 / math.log(2.0))  # (a product, as PyTorch's kernel)
    return np.where(same_inf, a, big + np.log1p(np.exp2(-np.abs(a - b))) * inv_log_2)


_declare_tensors_op("logaddexp", _logaddexp_values, _floats_only, LogaddexpBackward0,
                    inplace=False,
                    doc="log(exp(input) + exp(other)), without overflow.")
_declare_tensors_op("logaddexp2", _logaddexp2_values, _floats_only, Logaddexp2Backward0,
                    inplace=False,
                    doc="log2(2**input + 2**other), without overflow.")

NextafterBackward0 = _node(
    "NextafterBackward0",
    {"self": "where(self != other, grad, zeros((), dtype=grad.dtype))",
     "other": "zeros_written(other_info)"},
    {"self": INPUT, "other": INPUT}, unshown=("other_info",),
    tangent="where(self_p != other_p, dense(self_t, self_p), zeros((), dtype=self_p.dtype))",
    doc="nextafter(x, y): x moved by one float towards y; slope 1 in x (0 where x == y).")
_declare_tensors_op("nextafter", np.nextafter, _floats_only, NextafterBackward0,
                    doc="The next float after input in the direction of other.")

LdexpBackward0 = _node(
    "LdexpBackward0",
    {"self": "grad * pow(2, other)", "other": "grad * result * 0.6931471805599453"},
    {"other": INPUT, "result": OUTPUT},
    tangent="self_t * pow(2, other_p) + other_t * result * 0.6931471805599453",
    doc="ldexp(x, n) = x * 2**n: slope 2**n in x, result * ln 2 in n.")


def _ldexp_values(a, b):
    """input * 2**other, as PyTorch computes it (a power of two, then a product)."""
    return a * np.power(a.dtype.type(2), b)


def _ldexp_layout(x: np.ndarray, n: np.ndarray, shape: tuple, dtype) -> np.ndarray:
    """ldexp's fresh result, laid out as PyTorch's ldexp lays it out. A float input with
    an integer exponent goes to its own kernel, into `empty_like(input)` (resized, and
    then laid out by both, where the exponent broadcasts it). Otherwise it is
    `input * 2**other`: for an integer or float32 input, the power is `pow(2.0, other)`,
    which is row-major whatever other's layout; for float64 `full((), 2.0).pow(other)`,
    laid out as `other`."""
    if n.dtype.kind in "biu" and x.dtype.kind == "f":
        return empty_like(x, dtype) if shape == x.shape else _fresh(shape, dtype, (x, n))
    if x.dtype.kind != "f" or x.dtype == np.float32:
        power = np.empty(n.shape, np.bool_)
    else:
        power = _fresh(n.shape, np.bool_, (n, WRAPPED_NUMBER))
    return _fresh(shape, dtype, (x, power))


def _ldexp_check(a: Tensor, b: Tensor) -> None:
    """ldexp's own kernel (a float input, an integer or bool exponent) writes into
    `empty_like(input)`, resized with PyTorch's deprecation warning where the exponent
    broadcasts it; the kernel takes no bool exponent."""
    if not (a.dtype.is_floating_point and b._data.dtype.kind in "biu"):
        return
    shape = _shape_of(a, b)
    if shape != a._data.shape and a._data.size:
        warn_user(f"An output with one or more elements was resized since it had shape "
                  f"{list(a._data.shape)}, which does not match the required output shape "
                  f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                  "release outputs will not be resized unless they have zero elements. You "
                  "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                  "elements with t.resize_(0).")
    if b.dtype is _dtype.bool_:
        raise NotImplementedError('"ldexp_cpu_exp" not implemented for \'Bool\'')


_declare_tensors_op("ldexp", _ldexp_values, _floating, LdexpBackward0, function_inplace=True,
                    check=_ldexp_check, laid_out_by=_ldexp_layout, doc="input * 2**other.")


# heaviside: a step, with `values` where the input is 0; PyTorch has no derivative


def _same_dtypes(a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")


def _heaviside_values(a, b):
    return np.where(a == 0, b, a > 0)


_declare_tensors_op("heaviside", _heaviside_values, _same, NoDerivative,
                    other="values", check=_same_dtypes,
                    doc="The step function: 0 below 0, 1 above, `values` at 0.")

# the logical ops: whether elements are nonzero, combined; a bool result
for _name, _values in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                       ("logical_xor", np.logical_xor)):
    _declare_tensors_op(_name, _values, _same, result_dtype=_dtype.bool_,
                        doc=f"{_name[8:]} of whether the elements are nonzero: a bool tensor.")



def logical_not(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """Whether each element is zero: a bool tensor."""
    _must_be_tensor("logical_not", input, "input", 1)
    return Tensor._make(np.logical_not(input._data))


def logical_not_(self: Tensor) -> Tensor:
    """`logical_not` in place (the tensor keeps its dtype: 0 or 1)."""
    return _inplace_result(logical_not(self.detach()), self, (), None, {})


declare("logical_not", function=logical_not, method=True, inplace=logical_not_)

# gcd, lcm: integers only
_declare_tensors_op("gcd", np.gcd, _integers_only, function_inplace=True,
                    doc="The greatest common divisor, element by element (non-negative).")
_declare_tensors_op("lcm", np.lcm, _integers_only, function_inplace=True,
                    doc="The least common multiple, element by element (non-negative).")


# -- ops of a tensor and a tensor or a number ----------------------------------------------


def _tensor_or_number_op(name: str, values, rule, number_node, tensor_node, *,
                         number_first_node=None, heads: list[str] = _TENSOR_OR_NUMBER):
    """An element-wise op of a tensor and a tensor or a number (PyTorch's `.Tensor` and
    `.Scalar` overloads, whose nodes differ); with `number_first_node`, a number first
    too (`xlogy(2, t)`, PyTorch's `Scalar_Self` overload, recorded with the tensor as
    its one input). `values(a, b)` computes on numpy values of the computing dtype
    `rule(promoted dtype)`. Returns the function, the method and the in-place form."""
    rule = rule(name)
    method_heads = [h.split(", ")[1] for h in (heads[0], heads[-1])]

    def compute(a, b) -> Tensor:
        dt = rule(_dtype.result_type(a, b))
        with np.errstate(all="ignore"):
            out = _result(values(_data(a, dt), _data(b, dt)), dt, _shape_of(a, b), a, b)
        values_ = {"self": a, "other": b, "result": out}
        if not isinstance(a, Tensor):  # (a number first)
            if number_first_node is not None:
                _save(record(number_first_node, out, b), values_)
        elif isinstance(b, Tensor):
            if tensor_node is not None:
                _save(record(tensor_node, out, a, b), values_)
        elif number_node is not None:
            _save(record(number_node, out, a), values_)
        return out

    def function(input, other) -> Tensor:  # noqa: A002 - PyTorch's names
        a, b = operand(input), operand(other)
        fits = isinstance(a, Tensor) and b is not NotImplemented or (
            number_first_node is not None and isinstance(b, Tensor)
            and isinstance(a, (int, float)))
        if not fits:
            raise combination_error(name, (input, other), {}, heads, tail=False)
        return compute(a, b)

    def method(self: Tensor, other) -> Tensor:
        b = operand(other)
        if b is NotImplemented:
            raise combination_error(name, (other,), {}, method_heads, tail=False)
        return compute(self, b)

    def op_(self: Tensor, other) -> Tensor:
        b = operand(other)
        if b is NotImplemented:
            raise combination_error(name + "_", (other,), {}, method_heads, tail=False)
        result = compute(self.detach(), b.detach() if isinstance(b, Tensor) else b)
        tensor = isinstance(b, Tensor)
        return _inplace_result(result, self, (b,) if tensor else (),
                               tensor_node if tensor else number_node, {"other": b})

    for fn, public in ((function, name), (method, name), (op_, name + "_")):
        fn.__name__ = fn.__qualname__ = public
    return function, method, op_


CopysignBackward0 = _node(
    "CopysignBackward0",
    {"self": "copysign_tensor_self_backward(grad, self, result)",
     "other": "zeros_written(other_info)"},
    {"self": INPUT, "result": OUTPUT}, unshown=("other_info",),
    tangent="copysign_tensor_self_backward(dense(self_t, self_p), self_p, result)",
    doc="copysign(x, y): |x| with y's sign: slope +-1 in x (0 at x = 0), 0 in y.")
CopysignBackward1 = _node(
    "CopysignBackward1", {"self": "copysign_tensor_self_backward(grad, self, result)"},
    {"self": INPUT, "result": OUTPUT}, tangent="auto_element_wise",
    doc="copysign(x, number): |x| with the number's sign: slope +-1 (0 at x = 0).")
copysign, copysign_method, copysign_ = _tensor_or_number_op(
    "copysign", np.copysign, _floating, CopysignBackward1, CopysignBackward0)


def _xlogy_values(x, y):
    """x * log(y), 0 where x is 0, nan where y is (PyTorch's kernel)."""
    return np.where(np.isnan(y), y, np.where(x == 0, x.dtype.type(0), x * np.log(y)))


XlogyBackward0 = _node(
    "XlogyBackward0",
    {"self": "xlogy(grad, other).masked_fill(logical_and(self == 0., other <= 0.), 0.)",
     "other": "grad * self / other"},
    {"self": INPUT, "other": INPUT},
    tangent="xlogy(dense(self_t, self_p), other_p).masked_fill(logical_and(self_p == 0., "
            "other_p <= 0.), 0.) + other_t * self_p / other_p",
    doc="xlogy(x, y) = x * log(y): slope log(y) in x (0 where x = 0 and y <= 0), x / y "
        "in y.")
XlogyBackward1 = _node(
    "XlogyBackward1", {"other": "grad * self / other"}, {"self": VALUE, "other": INPUT},
    tangent="auto_element_wise", scalars=("self",),
    doc="xlogy(number, y): slope number / y.")
XlogyBackward2 = _node(
    "XlogyBackward2", {"self": "xlogy_scalar_other_backward(grad, self, other)"},
    {"self": INPUT, "other": VALUE}, tangent="auto_element_wise",
    doc="xlogy(x, number): slope log(number) (0 where x = 0 and the number <= 0).")
xlogy, xlogy_method, xlogy_ = _tensor_or_number_op(
    "xlogy", _xlogy_values, _floating, XlogyBackward2, XlogyBackward0,
    number_first_node=XlogyBackward1,
    heads=[_TENSOR_OR_NUMBER[0], "Number self, Tensor other, *, Tensor out = None",
           _TENSOR_OR_NUMBER[1]])


def _shift_values(left: bool):
    """`<<` or `>>` as PyTorch shifts an int64: a count below 0 or of 64 and more
    shifts every bit out (0, or the sign for `>>`)."""
    def shift(a, b):
        out_of_range = (b < 0) | (b >= 64)
        count = np.where(out_of_range, 0, b)
        if left:  # (on the bits as unsigned: no overflow)
            shifted = (a.astype(np.uint64) << count.astype(np.uint64)).astype(np.int64)
            return np.where(out_of_range, 0, shifted)
        return np.where(out_of_range, a >> 63, a >> count)
    return shift


_BITWISE_HEADS = [_TENSOR_OR_NUMBER[0], "Number self, Tensor other", _TENSOR_OR_NUMBER[1]]
bitwise_left_shift, bitwise_left_shift_method, bitwise_left_shift_ = _tensor_or_number_op(
    "bitwise_left_shift", _shift_values(True), lambda n: _integers_only("lshift"), None, None,
    number_first_node=None, heads=_BITWISE_HEADS)
bitwise_right_shift, bitwise_right_shift_method, bitwise_right_shift_ = _tensor_or_number_op(
    "bitwise_right_shift", _shift_values(False), lambda n: _integers_only("rshift"), None,
    None, heads=_BITWISE_HEADS)


def _shift_operator(op, reflected: bool = False):
    """`t << x` (or, `reflected`, `x << t`): NotImplemented for what it cannot take."""
    def operator(self: Tensor, other):
        b = operand(other)
        if b is NotImplemented:
            return b
        if reflected:
            return op(b if isinstance(b, Tensor) else _wrapped(b), self)
        return op(self, b)
    return operator


def _number_first_shift(op):
    """The function form of a shift: a number first is PyTorch's `Number self`."""
    def fn(input, other):  # noqa: A002 - PyTorch's names
        if isinstance(input, (int, float)) and isinstance(other, Tensor):
            return op(_wrapped(input), other)
        return op(input, other)
    fn.__name__ = fn.__qualname__ = op.__name__
    return fn


def rsub(input, other, alpha=1) -> Tensor:  # noqa: A002 - PyTorch's names
    """other - alpha * input (PyTorch's reversed subtraction)."""
    result = _rsub(input, other, alpha) if isinstance(input, Tensor) else NotImplemented
    if result is NotImplemented:
        raise combination_error("rsub", (input, other), {"alpha": alpha} if alpha != 1 else {},
                                ["Tensor input, Tensor other, *, Number alpha = 1",
                                 "Tensor input, Number other, Number alpha = 1"], tail=False)
    return result


# -- float_power: pow in double -----------------------------------------------------------


def float_power(input, exponent) -> Tensor:  # noqa: A002 - PyTorch's names
    """input ** exponent computed in float64 (either may be a number): the tensors are
    converted first (recorded, ToCopyBackward0), then `pow`."""
    a, b = operand(input), operand(exponent)
    if not (isinstance(a, Tensor) and b is not NotImplemented
            or isinstance(b, Tensor) and isinstance(a, (int, float))):
        raise combination_error("float_power", (input, exponent), {}, [
            "Tensor input, Tensor exponent, *, Tensor out = None",
            "Number self, Tensor exponent, *, Tensor out = None",
            "Tensor input, Number exponent, *, Tensor out = None"], tail=False)
    a = a.to(_dtype.float64) if isinstance(a, Tensor) else float(a)
    b = b.to(_dtype.float64) if isinstance(b, Tensor) else float(b)
    return named("pow")(a, b)


def float_power_method(self: Tensor, exponent) -> Tensor:
    if operand(exponent) is NotImplemented:
        raise combination_error("float_power", (exponent,), {},
                                ["Tensor exponent", "Number exponent"], tail=False)
    return float_power(self, exponent)


def float_power_(self: Tensor, exponent) -> Tensor:
    """`float_power` in place: the tensor must be float64 already."""
    b = operand(exponent)
    if b is NotImplemented:
        raise combination_error("float_power_", (exponent,), {},
                                ["Tensor exponent", "Number exponent"], tail=False)
    if self.dtype is not _dtype.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.type_name} "
                           "but the operation's result requires dtype Double")
    return self.pow_(b.to(_dtype.float64) if isinstance(b, Tensor) else float(b))


# -- lerp, addcmul, addcdiv: three inputs -------------------------------------------------


LerpBackward0 = _node(
    "LerpBackward0", {"self": "grad * (1 - weight)", "end": "grad * weight"},
    {"weight": VALUE}, scalars=("weight",),
    tangent="lerp(dense(self_t, self_p), dense(end_t, end_p), weight)",
    doc="lerp(x, end, w) = x + w * (end - x): slope 1 - w in x, w in end.")
LerpBackward1 = _node(
    "LerpBackward1",
    {"self": "grad * rsub(weight, 1)", "end": "grad * weight", "weight": "grad * (end - self)"},
    {"self": INPUT, "end": INPUT, "weight": INPUT},
    tangent="lerp(dense(self_t, self_p), dense(end_t, end_p), weight_p) + "
            "weight_t * (end_p - self_p)",
    doc="lerp(x, end, w) with a tensor weight: slopes 1 - w, w and end - x.")


def _lerp_values(a, b, w):
    """a + w * (b - a) for small weights, b - (b - a) * (1 - w) for the others (exact
    at both ends), as PyTorch's kernel."""
    diff = b - a
    return np.where(np.abs(w) < 0.5, a + w * diff, b - diff * (w.dtype.type(1) - w))


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:  # noqa: A002 - PyTorch's names
    """input + weight * (end - input): weight a tensor (broadcast) or a number."""
    weight = weight.value if isinstance(weight, Scalar) else weight
    _must_be_tensor("lerp", input, "input", 1)
    _must_be_tensor("lerp", end, "end", 2)
    if operand(weight) is NotImplemented:
        raise combination_error("lerp", (input, end, weight), {}, [
            "Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
            "Tensor input, Tensor end, Number weight, *, Tensor out = None"], tail=False)
    dt = input.dtype
    for what, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not dt:
            raise RuntimeError(f"expected dtype {dt.c_name} for `{what}` but got dtype "
                               f"{t.dtype.c_name}")
    if not dt.is_floating_point:
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt.type_name}\'')
    shape = _shape_of(input, end, weight)
    with np.errstate(all="ignore"):  # (inf - inf is nan, silently)
        values = _lerp_values(_data(input, dt), _data(end, dt), _data(weight, dt))
    out = _result(values, dt, shape, input, end, weight)
    if isinstance(weight, Tensor):
        _save(record(LerpBackward1, out, input, end, weight),
              {"self": input, "end": end, "weight": weight})
    else:
        _save(record(LerpBackward0, out, input, end), {"weight": weight})
    return out


def lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    """`lerp` in place."""
    result = lerp(self.detach(), end.detach() if isinstance(end, Tensor) else end,
                  weight.detach() if isinstance(weight, Tensor) else weight)
    tensor = isinstance(weight, Tensor)
    return _inplace_result(result, self, (end, weight) if tensor else (end,),
                           LerpBackward1 if tensor else LerpBackward0,
                           {"end": end, "weight": weight})


AddcmulBackward0 = _node(
    "AddcmulBackward0",
    {"self": "grad", "tensor1": "grad * (tensor2 * value)", "tensor2": "grad * (tensor1 * value)"},
    {"tensor1": INPUT, "tensor2": INPUT, "value": VALUE}, scalars=("value",),
    tangent="self_t + maybe_multiply(tensor1_t * tensor2_p, value) + "
            "maybe_multiply(tensor2_t * tensor1_p, value)",
    doc="input + value * tensor1 * tensor2: slopes 1, value * tensor2, value * tensor1.")
AddcdivBackward0 = _node(
    "AddcdivBackward0",
    {"self": "grad", "tensor1": "grad * (value / tensor2)",
     "tensor2": "-grad * (value * tensor1 / (tensor2 * tensor2))"},
    {"tensor1": INPUT, "tensor2": INPUT, "value": VALUE}, scalars=("value",),
    tangent="self_t + maybe_multiply(tensor1_t / tensor2_p, value) - "
            "maybe_multiply(tensor2_t * (tensor1_p / tensor2_p) / tensor2_p, value)",
    doc="input + value * tensor1 / tensor2: slopes 1, value / tensor2, "
        "-value * tensor1 / tensor2**2.")


def _addc(name: str, node, combine):
    """addcmul or addcdiv: input + value * (tensor1 op tensor2)."""
    def op(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:  # noqa: A002
        for i, (what, t) in enumerate((("input", input), ("tensor1", tensor1),
                                       ("tensor2", tensor2))):
            _must_be_tensor(name, t, what, i + 1)
        dt = _dtype.result_type(input, tensor1, tensor2)
        if name == "addcdiv" and not dt.is_floating_point:
            raise RuntimeError(_ADDCDIV_INTEGERS)
        shape = _shape_of(input, tensor1, tensor2)
        scaled = dt.np.type(value) * _data(tensor1, dt)
        with np.errstate(all="ignore"):
            out = _result(_data(input, dt) + combine(scaled, _data(tensor2, dt)), dt, shape,
                          input, tensor1, tensor2)
        _save(record(node, out, input, tensor1, tensor2),
              {"tensor1": tensor1, "tensor2": tensor2, "value": value})
        return out

    def op_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        result = op(self.detach(), tensor1.detach(), tensor2.detach(), value=value)
        return _inplace_result(result, self, (tensor1, tensor2), node,
                               {"tensor1": tensor1, "tensor2": tensor2, "value": value})

    op.__name__ = op.__qualname__ = name
    op_.__name__ = op_.__qualname__ = name + "_"
    return op, op_


_ADDCDIV_INTEGERS = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * minigrad.trunc(tensor1 / tensor2)).to(input.dtype) "
    "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The "
    "future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")
addcmul, addcmul_ = _addc("addcmul", AddcmulBackward0, np.multiply)
addcdiv, addcdiv_ = _addc("addcdiv", AddcdivBackward0, np.divide)
addcmul.__doc__ = "input + value * tensor1 * tensor2, element by element (broadcast)."
addcdiv.__doc__ = "input + value * tensor1 / tensor2, element by element (broadcast)."


# -- isclose --------------------------------------------------------------------------------


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    """Whether |input - other| <= atol + rtol * |other|, element by element (equal
    infinities too; nans only with `equal_nan`): a bool tensor."""
    _must_be_tensor("isclose", input, "input", 1)
    _must_be_tensor("isclose", other, "other", 2)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.type_name} did not match {other.dtype.type_name}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = input._data, other._data
    shape = _shape_of(input, other)
    close = a == b
    # (PyTorch ors each further test into its result in place: its `_version` counts them)
    writes = 0
    if equal_nan and input.dtype.is_floating_point:
        close, writes = close | (np.isnan(a) & np.isnan(b)), writes + 1
    if rtol != 0 or atol != 0:
        dt = input.dtype if input.dtype.is_floating_point else _dtype.get_default_dtype()
        a, b = a.astype(dt.np), b.astype(dt.np)  # (the tolerances in the tensors' dtype)
        with np.errstate(all="ignore"):
            allowed = dt.np.type(atol) + np.abs(dt.np.type(rtol) * b)
            actual = np.abs(a - b)
            close, writes = close | (np.isfinite(actual) & (actual <= allowed)), writes + 1
    out = _result(close, _dtype.bool_, shape, input, other)
    out._version_counter.value += writes
    return out


# -- declarations --------------------------------------------------------------------------

declare("remainder", nodes=(RemainderBackward0, RemainderBackward1), function=remainder,
        method=remainder_method, inplace=remainder_,
        attributes={"__mod__": remainder_op, "__rmod__": not_with_ndarray(rmod),
                    "__imod__": remainder_})
declare("fmod", nodes=(FmodBackward0, FmodBackward1), function=fmod, method=fmod_method,
        inplace=fmod_)
declare("floor_divide", nodes=(NoDerivative,), function=floor_divide,
        method=floor_divide_method, inplace=floor_divide_,
        attributes={"__floordiv__": floor_divide_op,
                    "__rfloordiv__": not_with_ndarray(rfloordiv),
                    "__ifloordiv__": floor_divide_})
declare("clamp_min", nodes=(ClampMinBackward0, ClampMinBackward1), function=clamp_min,
        method=clamp_min_method, inplace=clamp_min_, function_inplace=True)
declare("clamp_max", nodes=(ClampMaxBackward0, ClampMaxBackward1), function=clamp_max,
        method=clamp_max_method, inplace=clamp_max_, function_inplace=True)


# -- the helpers this family's formulas call (PyTorch's FunctionsManual) --------------


@helper
def clamp_backward_min_max(grad: Tensor, self: Tensor, min, max,  # noqa: A002
                           grad_input_mask: tuple) -> tuple:
    """The gradients of clamp's tensor bounds: min's where x was below it (and below
    max), max's where x was above it or the bounds crossed (then the result is max)."""
    where, zero = named("where"), zeros((), dtype=grad.dtype)
    grad_min = grad_max = None
    if max is not None and min is not None:
        if grad_input_mask[0]:
            grad_min = where((self < min) & (min < max), grad, zero)
        if grad_input_mask[1]:
            grad_max = where((self > max) | (max < min), grad, zero)
    elif min is not None and grad_input_mask[0]:
        grad_min = where(self < min, grad, zero)
    elif max is not None and grad_input_mask[1]:
        grad_max = where(self > max, grad, zero)
    return grad_min, grad_max


@helper
def clamp_jvp(self_p: Tensor, self_t, min_p, min_t, max_p, max_t):  # noqa: A002
    """The tangent of clamp with tensor bounds: the tangent of whichever input was taken."""
    where = named("where")
    self_t = dense(self_t, self_p)
    if min_p is not None and max_p is not None:
        min_t, max_t = dense(min_t, min_p), dense(max_t, max_p)
        return where(min_p > max_p, max_t,
                     where(self_p < min_p, min_t, where(self_p > max_p, max_t, self_t)))
    if min_p is not None:
        return where(self_p > min_p, self_t, dense(min_t, min_p))
    if max_p is not None:
        return where(self_p < max_p, self_t, dense(max_t, max_p))
    return self_t
declare("copysign", nodes=(CopysignBackward0, CopysignBackward1), function=copysign,
        method=copysign_method, inplace=copysign_)
declare("xlogy", nodes=(XlogyBackward0, XlogyBackward1, XlogyBackward2), function=xlogy,
        method=xlogy_method, inplace=xlogy_, function_inplace=True)
declare("bitwise_left_shift", function=_number_first_shift(bitwise_left_shift),
        method=bitwise_left_shift_method, inplace=bitwise_left_shift_,
        attributes={"__lshift__": _shift_operator(bitwise_left_shift_method),
                    "__rlshift__": not_with_ndarray(_shift_operator(bitwise_left_shift_method,
                                                                    reflected=True)),
                    "__ilshift__": bitwise_left_shift_})
declare("bitwise_right_shift", function=_number_first_shift(bitwise_right_shift),
        method=bitwise_right_shift_method, inplace=bitwise_right_shift_,
        attributes={"__rshift__": _shift_operator(bitwise_right_shift_method),
                    "__rrshift__": not_with_ndarray(_shift_operator(bitwise_right_shift_method,
                                                                    reflected=True)),
                    "__irshift__": bitwise_right_shift_})
declare("rsub", function=rsub, doc="other - alpha * input.")
# (`Tensor.__rdiv__`, Python 2's name of `__rtruediv__`, which PyTorch keeps)
declare("__rdiv__", attributes={"__rdiv__": _rdiv}, doc="number / t, as `__rtruediv__`.")
declare("float_power", function=float_power, method=float_power_method, inplace=float_power_)
declare("lerp", nodes=(LerpBackward0, LerpBackward1), function=lerp, method=True,
        inplace=lerp_)
declare("addcmul", nodes=(AddcmulBackward0,), function=addcmul, method=True, inplace=addcmul_)
declare("addcdiv", nodes=(AddcdivBackward0,), function=addcdiv, method=True, inplace=addcdiv_)
declare("isclose", function=isclose, method=True)


@helper
def zeros_written(info: tuple) -> Tensor:
    """Zeros of a shape and dtype, made as PyTorch's generated code makes the zero
    gradient of `zeros_like(other)`: an empty tensor, then written (its `_version` 1)."""
    shape, dtype = info
    return zeros(shape, dtype=dtype).zero_()


@helper
def copysign_tensor_self_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """The gradient of copysign for its input: result / self (+-1), 0 where self is 0."""
    ratio = result / self
    return grad * ratio.masked_fill_(self == 0, 0)  # (in place: ratio keeps its layout)


@helper
def xlogy_scalar_other_backward(grad: Tensor, self: Tensor, other) -> Tensor:
    """The gradient of xlogy(x, number) for x: log(number), masked to 0 where x is 0
    unless the number is positive."""
    slope = named("xlogy")(grad, other)
    return slope if other > 0 else slope.masked_fill(self == 0.0, 0.0)

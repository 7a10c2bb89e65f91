"""Backward formulas as minigrad code, and how a node runs them to record a graph.

PyTorch writes each op's gradient in `derivatives.yaml` as C++ that calls ordinary
differentiable ops, so that a `create_graph=True` backward records a graph of its
own, which can be differentiated again. minigrad's formulas are the same thing in
minigrad code: a `Formula` is a string such as `"grad * result"`, and
`apply_recording` runs a node's formulas on tensors, with grad mode on, when the
engine carries tensors. A plain backward (numpy arrays, nothing recorded) runs, for
an `ArrayFormulaNode` (nearly every op), the same formulas compiled once into a
plain function on arrays (`compile_on_arrays`), whose helpers may call a fused
kernel (`@on_arrays`); a declared element-wise op runs its fused kernel; the few
nodes not converted yet (see docs/architecture.md) run a hand-written backward.

Three details make the recorded graph PyTorch's, node for node:

* A number in a formula is a C++ `at::Scalar`. In PyTorch's formulas `result + 1`
  calls the Scalar overload of add and records AddBackward1, where Python's `x + 1`
  records AddBackward0 (Python wraps the number into a tensor first). So the numbers
  written in a formula, and the values a node saved as Scalars (`Node.scalars`:
  pow's exponent, add's alpha), are `Scalar`s here.
* The helpers PyTorch's formulas call (its "FunctionsManual": `pow_backward`,
  `maybe_multiply`, ...) are written in minigrad code beside their op, in its family's
  module, and registered with `@helper` in one table (`HELPERS`) that backward and
  tangent formulas share; the ops that only backward formulas call (`tanh_backward`,
  which has a node of its own, TanhBackwardBackward0) are registered in `BACKWARD_OPS`
  by their declarations. A formula reaches no further than these tables (`names()`):
  the ops sit below minigrad's namespace and never look it up.
* In `a * b`, PyTorch's build evaluates `b` first (C++ leaves the order of an
  operator's operands open, and its compiler takes the right one first), so the
  nodes `b` records are numbered before those of `a`; the numbers decide which
  nodes a later backward runs first. A formula's operators here do the same.
"""

from __future__ import annotations

import ast
import keyword
import operator
import re
from collections.abc import Callable

import numpy as np

from .. import _creation, _dtype
from .._dtype import _BY_NUMPY
from .._registry import attach
from ..arrays.broadcasting import spread
from ..arrays.dispatch import binary, scalar_op, short_vector_and_number, unary
from ..arrays.layout import (
    WRAPPED_NUMBER,
    element_strides,
    empty_like,
    in_result_layout,
    restrided,
    view_strides,
    with_strides,
)
from ..arrays.scalars import signed_dims
from ..autograd.forward_ad import Identity
from ..autograd.graph import (
    INPUT,
    OUTPUT,
    VALUE,
    Node,
    SavedNumber,
    SavedTensor,
    bump_version,
    efficient_zeros,
    is_efficient_zeros,
    version_of,
)
from ..kernels import elementwise as K
from ..tensor import Tensor

# The names a declared op's formula may use for its tensors, and what saving each one
# keeps (see `ops/declaration.py`).
ROLES = {"self": INPUT, "other": INPUT, "result": OUTPUT}

# Ops that backward formulas call but minigrad's namespace does not have (PyTorch
# keeps them under torch.ops.aten): the Scalar overloads and the backward ops.
BACKWARD_OPS: dict[str, Callable] = {}


class Scalar:
    """A number in a formula, as C++'s `at::Scalar`: arithmetic of a tensor with a
    Scalar records PyTorch's Scalar overloads (`t + s` AddBackward1, `t - s`
    SubBackward1, `t * s` and `s * t` MulBackward1, `t / s` DivBackward1), and
    arithmetic of two Scalars gives a Scalar."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value.value if isinstance(value, Scalar) else value

    def __repr__(self) -> str:
        return f"Scalar({self.value!r})"

    def __eq__(self, other) -> bool:
        return self.value == _value(other)

    __hash__ = None  # (compared by value, like the number it holds)

    def __float__(self) -> float:
        return float(self.value)

    def __neg__(self) -> Scalar:
        return Scalar(-self.value)

    def __add__(self, other):
        if isinstance(other, Tensor):
            return BACKWARD_OPS["add_scalar"](other, self.value)
        return Scalar(self.value + _value(other))

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, Tensor):
            return BACKWARD_OPS["mul_scalar"](other, self.value)
        return Scalar(self.value * _value(other))

    __rmul__ = __mul__

    def __sub__(self, other):
        if isinstance(other, Tensor):  # (C++: a tensor like `other`, filled with the
            return _creation.full_like(other, self.value).sub_(other)  # Scalar, `sub_`)
        return Scalar(self.value - _value(other))

    def __rsub__(self, other):  # other - self
        if isinstance(other, Tensor):
            return BACKWARD_OPS["sub_scalar"](other, self.value)
        return Scalar(_value(other) - self.value)

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            # (C++'s Scalar / Tensor is the reciprocal times the Scalar)
            return BACKWARD_OPS["mul_scalar"](other.reciprocal(), self.value)
        return Scalar(self.value / _value(other))

    def __rtruediv__(self, other):  # other / self
        if isinstance(other, Tensor):
            return BACKWARD_OPS["div_scalar"](other, self.value)
        return Scalar(_value(other) / self.value)

    def __rpow__(self, other):  # other ** self
        if isinstance(other, Tensor):
            return other.pow(self.value)
        return Scalar(_value(other) ** self.value)


def _value(x):
    return x.value if isinstance(x, Scalar) else x


class _AsInCpp(ast.NodeTransformer):
    """Evaluate a formula as PyTorch's C++ does: every number that is an operand of
    arithmetic (`result + 1`, `-2 * output`) becomes a `Scalar(...)` (numbers passed
    to a function stay numbers), and `a op b` becomes `_RIGHT_FIRST[op](b, a)`, which
    evaluates `b` before `a` and then computes `a op b`."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right = _as_scalar(node.left), _as_scalar(node.right)
        op = ast.Subscript(ast.Name("_RIGHT_FIRST", ast.Load()),
                           ast.Constant(type(node.op).__name__), ast.Load())
        return ast.Call(op, [right, left], [])


_RIGHT_FIRST = {
    "Add": lambda b, a: a + b, "Sub": lambda b, a: a - b, "Mult": lambda b, a: a * b,
    "Div": lambda b, a: a / b, "Pow": lambda b, a: a ** b,
}


def _as_scalar(operand: ast.expr) -> ast.expr:
    number = operand
    if isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.USub):
        number = operand.operand
    if isinstance(number, ast.Constant) and type(number.value) in (int, float):
        return ast.Call(ast.Name("Scalar", ast.Load()), [operand], [])
    return operand


# A name a formula reads: an identifier not after a dot (`result.exp()` reads
# `result`, not `exp`) nor before a single `=` (`sum(dim, keepdim=True)` does not
# read `keepdim`), outside the formula's strings (`approximate="tanh"`).
_IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z_]\w*\b(?!\s*=(?!=))")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")


def names_in(text: str) -> frozenset:
    """The names formula `text` reads, as parsing it would find them (`None`, `True`
    are not names). A scan, not a parse, for the same reason formulas are compiled
    late."""
    return frozenset(name for name in _IDENTIFIER.findall(_STRING.sub("", text))
                     if not keyword.iskeyword(name))


class Formula:
    """The gradient of one input, written as a minigrad expression of `grad` (the
    gradient of the output) and of the names the node saved (`self`, `other`,
    `result`, or a value such as `exponent`).

    As in PyTorch's `derivatives.yaml`, one formula may give several inputs their
    gradients at once (`Formula("input, weight, bias", "convolution_backward(...,
    grad_input_mask)")`): it reads `grad_input_mask`, which of them are wanted, and
    gives a tuple, one gradient (or None) per input named. A formula for a list of
    tensors (`LIST_INPUT`, cat's `tensors`) gives a list, one gradient per tensor."""

    __slots__ = ("input", "inputs", "text", "names", "uses", "_code")

    def __init__(self, input: str, text: str) -> None:  # noqa: A002 - PyTorch's name
        self.input = input
        # (the inputs it gives gradients to: one, or several as "input, weight, bias")
        self.inputs = tuple(name.strip() for name in input.split(","))
        self.text = text
        self.names = names_in(text)
        # (the op's tensors it reads, in the order self, other, result)
        self.uses = tuple(name for name in ROLES if name in self.names)
        # Parsed and compiled when first run: most formulas never run in a program,
        # and the few hundred of them would add tens of milliseconds to `import minigrad`.
        self._code = None

    def compile(self):
        """The formula parsed, evaluated as C++ does (see `_AsInCpp`), and compiled
        (once)."""
        code = self._code
        if code is None:
            tree = ast.fix_missing_locations(_AsInCpp().visit(ast.parse(self.text, mode="eval")))
            code = self._code = compile(tree, f"<gradient of {self.input}: {self.text}>",
                                        "eval")
        return code

    def __call__(self, grad: Tensor, /, **saved) -> Tensor:
        """Evaluate the formula on tensors (`self=x, result=y`)."""
        return eval(self._code or self.compile(), names(), {"grad": grad, **saved})  # noqa: S307

    def __repr__(self) -> str:
        return f"{self.input}: {self.text}"


# -- the names a formula can call -------------------------------------------------------

# The helpers PyTorch's formulas call (its FunctionsManual: `pow_backward`,
# `sum_backward`, `prod_jvp`, ...), for backward and tangent formulas alike, written in
# minigrad code beside their op in its family's module and registered there with
# `@helper`.
HELPERS: dict[str, Callable] = {}

# The public functions of every declared op (`where`, `cat`, `mm`, ...), filled by
# `ops/declaration.py` as each op is declared: the namespace as a learner's code sees it.
OPS: dict[str, Callable] = {}

# The factories formulas call (`zeros`, `zeros_like`, ...): they stand below the ops.
_FACTORIES = {name: fn for name, fn in vars(_creation).items()
              if callable(fn) and not name.startswith("_")
              and getattr(fn, "__module__", None) == _creation.__name__}

_NAMES: dict | None = None


def helper(fn: Callable) -> Callable:
    """Make `fn` callable by its name from every backward and tangent formula.

    PyTorch's formulas call helpers from its FunctionsManual (`pow_backward`,
    `sum_backward`, `prod_jvp`); minigrad's are written in minigrad code, in the module
    of the op they serve, each under this decorator. A name is registered once."""
    global _NAMES
    name = fn.__name__
    if name in HELPERS or name in BACKWARD_OPS:
        raise ValueError(f"a formula helper named {name!r} is registered already")
    HELPERS[name] = fn
    _NAMES = None
    return fn


def register_ops(functions: dict[str, Callable], aten: dict[str, Callable]) -> None:
    """Make declared ops callable from formulas: `functions` by their public names,
    `aten` as the ops only formulas call (`BACKWARD_OPS`). `ops/declaration.py` calls
    this for each declaration."""
    global _NAMES
    OPS.update(functions)
    BACKWARD_OPS.update(aten)
    _NAMES = None


def names() -> dict:
    """Every name a formula can call: the factories, the declared ops, the backward
    ops, the helpers (and the two names a formula compiled as C++ is evaluated with)."""
    global _NAMES
    if _NAMES is None:
        _NAMES = {**_FACTORIES, **OPS, **BACKWARD_OPS, **HELPERS,
                  "Scalar": Scalar, "_RIGHT_FIRST": _RIGHT_FIRST}
    return _NAMES


def named(name: str) -> Callable:
    """The op or helper a formula would call as `name`, for a helper that needs an op
    of a family it cannot import (`named("where")`)."""
    return names()[name]


# -- running a node's formulas ------------------------------------------------------------


def apply_recording(node: Node, grads: list, wanted: list | None = None) -> list:
    """Run `node`'s backward formulas on the tensors `grads` (`Node.apply_recording`).

    Each formula sees `grad` and the node's saved values (see `formula_values`). With
    grad mode on (a `create_graph=True` backward) the ops the formulas call record a
    graph; with it off (`FormulaNode.backward`) they just compute. `wanted[i]`:
    whether input i's gradient is wanted at all (by default, every input that needs
    one). A formula for several inputs runs once if any of them is wanted, told
    which by `grad_input_mask`; an input not wanted gets None whatever it gave."""
    cls = type(node)
    saved = formula_values(node, grads)
    grad = grads[0]
    at = slots(cls, len(node.next_functions))
    if wanted is None:
        wanted = [node.needs_grad(i) for i in range(len(node.next_functions))]
    one_each = all(type(p) is int for p in at)  # (formula i gives input i's gradient)
    out: list = [None] * (len(cls.formulas) if one_each else len(node.next_functions))
    # In the order PyTorch's generated code computes them, by input name (`other`
    # before `self`): the nodes they record are numbered in that order, and the
    # numbers decide which of them a later backward runs first.
    for places, formula in sorted(zip(at, cls.formulas), key=lambda f: f[1].input):
        if type(places) is int:  # (a formula for one input)
            if wanted[places]:
                out[places] = formula(grad, **saved)
            continue
        mask = tuple(bool(wanted[i]) for i in places)
        if any(mask):
            given = formula(grad, **saved) if formula.inputs == (LIST_INPUT,) else \
                formula(grad, grad_input_mask=mask, **saved)
            for i, g, w in zip(places, given, mask):
                out[i] = g if w else None
    return out


# The name PyTorch gives a list of tensors an op takes (cat's and stack's `tensors`):
# an input of that name stands for every tensor of the list, each an input of the
# node, and its formula gives a list of their gradients.
LIST_INPUT = "tensors"


def input_names(cls: type[Node]) -> tuple[str, ...]:
    """The names of a node class's inputs, in the order of `next_functions`: as its
    formulas name them, or `cls.inputs` where a formula for several names them in
    another order (`input, weight, grad_out: batchnorm_double_backward(...)` of a node
    whose inputs are grad_out, input, weight, ...)."""
    order = getattr(cls, "inputs", None)
    return order if order is not None else tuple(n for f in cls.formulas for n in f.inputs)


def slots(cls: type[Node], count: int) -> list:
    """Where each of `cls`'s formulas puts its gradients among the node's `count`
    inputs: the position of its one input (an int), or a tuple of positions, one per
    input it names (a list input: every position from its own to the end, as the
    list is an op's last differentiable input: cat's, stack's)."""
    if all(len(f.inputs) == 1 for f in cls.formulas) and \
            LIST_INPUT not in (f.input for f in cls.formulas):
        return list(range(len(cls.formulas)))  # (the common case: formula i, input i)
    order = input_names(cls)
    places = []
    for f in cls.formulas:
        if f.inputs == (LIST_INPUT,):
            places.append(tuple(range(order.index(LIST_INPUT), count)))
        elif len(f.inputs) == 1:
            places.append(order.index(f.input))
        else:
            places.append(tuple(order.index(n) for n in f.inputs))
    return places


def names_read(node: Node) -> set[str]:
    """The names read by the formulas that will run for `node`: those giving a
    gradient to an input that needs one (a formula for several inputs, or for a list,
    runs if any of them does). What an op saves is derived from it: a tensor only when
    such a formula reads it, as PyTorch's generated code guards each save."""
    cls = type(node)
    read: set[str] = set()
    for places, formula in zip(slots(cls, len(node.next_functions)), cls.formulas):
        if any(node.needs_grad(i) for i in ((places,) if type(places) is int else places)):
            read |= formula.names
    return read


def formula_values(node: Node, grads: list) -> dict:
    """What `node`'s formulas read besides `grad`, or PyTorch's NotImplementedError
    for a node that has no formulas recording its graph. A saved tensor comes
    unpacked (an output gets the node back as its `grad_fn`, so the new graph leads
    through the old one), a saved Python number as that number, and the values
    PyTorch keeps as Scalars as `Scalar`s; `grads` holds every output's gradient."""
    cls = type(node)
    if not cls.formulas or not cls.recordable:
        raise NotImplementedError(
            f"minigrad cannot differentiate through the backward of {node.name()} yet "
            f"(create_graph=True): it has no backward formula written as minigrad code "
            f"that records PyTorch's graph"
        )
    saved = {}
    for name in cls.saves:
        value = node._saved.get(name, cls.saved_defaults.get(name))
        if isinstance(value, SavedNumber):
            value = value.number(node)
        elif isinstance(value, SavedTensor):
            value = value.unpacked(node)  # (a hooked one was unpacked just before)
        elif name in cls.scalars:
            value = Scalar(value)
        elif type(value) is tuple and any(isinstance(v, SavedTensor) for v in value):
            value = tuple(None if v is None else v.unpacked(node) for v in value)  # (indices)
        else:
            value = signed_dims(value)
        saved[name] = value
    # Saved outputs PyTorch's forward marks non-differentiable (batch_norm's and
    # layer_norm's statistics) are read as plain tensors, not as outputs of the node.
    for name in getattr(cls, "non_differentiable", ()):
        saved[name] = saved[name].detach()
    # What the node keeps for its formulas without showing it (`unshown`, kept as
    # `_<name>`), and every output's gradient (`grads`) for a multi-output node.
    for name in getattr(cls, "unshown", ()):
        saved[name] = node._saved["_" + name]
    count = node._num_outputs()  # (`grads` ends at the last output that got a gradient)
    saved["grads"] = grads if count is None or len(grads) >= count else \
        [*grads, *([None] * (count - len(grads)))]
    return saved


attach(Node, "apply_recording", apply_recording)

# unpack_dual's primal (`autograd/forward_ad.py`, which stands below the ops) passes its
# gradient on unchanged: PyTorch's `_fw_primal` formula, `self: grad`, records nothing.
attach(Identity, "formulas", (Formula("self", "grad"),))


class FormulaNode(Node):
    """A node whose plain backward runs its formulas too (on tensors, recording
    nothing: the engine runs a plain backward with grad mode off), for the ops that
    only backward formulas make (TanhBackwardBackward0, ...): rare enough to need no
    fused kernel, and so computed in exactly PyTorch's order of operations."""

    def backward(self, *grads):
        tensors = [None if g is None else Tensor._make(g) for g in grads]
        return tuple(None if g is None else _with_version(g)
                     for g in self.apply_recording(tensors))


def _with_version(t: Tensor) -> np.ndarray:
    """A gradient's array, remembering the in-place steps its tensor took (a formula's
    `div_`), which PyTorch's gradient tensor shows in its `_version`."""
    if t._version and not version_of(t._data):
        bump_version(t._data, t._version)
    return t._data


class SavedOn:
    """What a node's numpy backward reads off the node (`saved(name)`, `_saved`), for
    running it on values a tangent formula has."""

    def __init__(self, arrays: dict, values: dict) -> None:
        self._arrays, self._saved = arrays, values

    def saved(self, name: str) -> np.ndarray:
        return self._arrays[name]


# -- formulas run on arrays: the plain backward of a node that has no other ---------------

# The array versions of what formulas call, for a plain backward (numpy arrays in,
# numpy arrays out, no tensor made, nothing recorded): a tensor method by its name
# (`grad.t()`), and a helper by its name (`unsqueeze_to`), registered with
# `@on_arrays`, each computing what the tensor op computes, laid out as it lays it out.
ARRAY_METHODS: dict[str, Callable] = {}
ARRAY_HELPERS: dict[str, Callable] = {}


def on_arrays(name: str, *, method: bool = False) -> Callable:
    """Register the function below as the array version of helper `name` (or, with
    `method`, of the tensor method `name`): what a formula compiled for arrays calls."""
    def register(fn: Callable) -> Callable:
        (ARRAY_METHODS if method else ARRAY_HELPERS)[name] = fn
        return fn
    return register


class NotOnArrays(ValueError):
    """A formula uses something that has no array version (`compile_on_arrays`)."""


class _OnArrays(ast.NodeTransformer):
    """A formula as a call of array functions: `grad.t()` becomes `_M_t(grad)` (the
    array version of method `t`), `unsqueeze_to(grad, sizes)`
    `_H_unsqueeze_to(grad, sizes)`, `grad * other` `_A_Mult(grad, other)`
    (PyTorch's arithmetic and type promotion on arrays, see
    `ARRAY_ARITHMETIC`), and each value the node saved the expression `values[name]`
    reads it with. Calls, arithmetic, `a if c else b`, names and constants: nothing
    else a formula writes has an array version."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def visit_Call(self, node: ast.Call) -> ast.expr:
        args = [self.visit(a) for a in node.args]
        keywords = [ast.keyword(k.arg, self.visit(k.value)) for k in node.keywords]
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ARRAY_METHODS:
            table, name, args = "_M", func.attr, [self.visit(func.value), *args]
        elif isinstance(func, ast.Name) and func.id in ARRAY_HELPERS:
            table, name = "_H", func.id
        else:
            raise NotOnArrays(ast.unparse(func))
        return ast.Call(_entry(table, name), args, keywords)

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        op = type(node.op).__name__
        if op not in ARRAY_ARITHMETIC:
            raise NotOnArrays(op)
        return ast.Call(_entry("_A", op), [self.visit(node.left), self.visit(node.right)], [])

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        if len(node.ops) != 1 or type(node.ops[0]).__name__ not in ARRAY_ARITHMETIC:
            raise NotOnArrays("a chained comparison")
        return ast.Call(_entry("_A", type(node.ops[0]).__name__),
                        [self.visit(node.left), self.visit(node.comparators[0])], [])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        if not isinstance(node.op, ast.USub):
            raise NotOnArrays(type(node.op).__name__)
        return ast.Call(_entry("_A", "USub"), [self.visit(node.operand)], [])

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if node.attr != "dtype":  # (`self.dtype`: an array's dtype is its own)
            raise NotOnArrays(ast.unparse(node))
        return ast.Attribute(self.visit(node.value), "dtype", ast.Load())

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        return ast.IfExp(self.visit(node.test), self.visit(node.body), self.visit(node.orelse))

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in ("grad", "grads", "None", "True", "False"):
            return node
        if node.id not in self.values:
            raise NotOnArrays(f"{node.id} is not a value the node saved")
        return ast.parse(self.values[node.id], mode="eval").body

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        return node

    def visit_Tuple(self, node: ast.Tuple) -> ast.expr:
        return ast.Tuple([self.visit(e) for e in node.elts], ast.Load())

    def generic_visit(self, node: ast.AST) -> ast.AST:
        raise NotOnArrays(type(node).__name__)


def _entry(table: str, name: str) -> ast.expr:
    """The function a compiled formula calls, as a name of its scope (`_A_Mult` is
    `ARRAY_ARITHMETIC["Mult"]`): looked up once, when the formula is compiled."""
    return ast.Name(f"{table}_{name}", ast.Load())


def _operand(saved, node: Node):
    """A saved tensor's data, version-checked; a saved Python number as that number
    (`x * 2.0` saved 2.0: the gradient is `grad * 2.0`, no 0-d array made)."""
    if type(saved) is SavedNumber:
        return saved.number(node)
    return None if saved is None else saved.array(node)  # (None: an optional tensor)


def _saved_value(value, node: Node):
    """A saved value as a formula reads it (`formula_values`): a dim signed (quick for
    a plain int), a tuple of index tensors (`x[i, :, j]`) as their data."""
    if type(value) is int:
        return value - 2**64 if value >= 2**63 else value
    if type(value) is tuple:
        for v in value:  # (quick for sizes and strides: ints that need no signing)
            if type(v) is not int or v >= 2**63:
                break
        else:
            return value
        if any(isinstance(v, SavedTensor) for v in value):
            return tuple(None if v is None else v.array(node) for v in value)
        return signed_dims(value)
    if isinstance(value, SavedTensor):
        return _operand(value, node)
    return value


def _read(cls: type[Node], name: str) -> str:
    """The expression a compiled formula reads saved value `name` of a `cls` node with."""
    if cls.saves[name] != VALUE:  # (`_operand`, written out: the commonest read)
        # (a saved number nobody has looked at, not yet released, is as it was saved:
        # `SavedNumber.number`'s check, written out for the commonest read of all)
        return (f"(v._value if type(v := s[{name!r}]) is _SavedNumber and v._tensor is None "
                f"and not v.is_released else _operand(v, node))")
    read = f"s.get({name!r}, _D[{name!r}])" if name in cls.saved_defaults else f"s[{name!r}]"
    # (`_saved_value`, written out for a plain int: add's alpha, a dim)
    return f"(v if type(v := {read}) is int and v < 2**63 else _saved_value(v, node))"


def _on_arrays(formula: Formula, values: dict[str, str], **more: str) -> str:
    """Formula `formula` as an expression of array functions (see `_OnArrays`)."""
    return ast.unparse(_OnArrays({**values, **more}).visit(
        ast.parse(formula.text, mode="eval").body))


def _several_on_arrays(j: int, formula: Formula, places, values: dict[str, str],
                       order: tuple[str, ...]) -> str:
    """The lines of a compiled plain backward that run formula `j` of its node and
    put what it gives into `out`: for one input, if it is wanted; for several, once
    if any is wanted, `grad_input_mask` saying which (`m<j>`); for a list, once if any
    of its tensors is wanted."""
    if type(places) is int:
        return (f"    if e[{places}][0] is not None:\n"
                f"        out[{places}] = {_on_arrays(formula, values)}\n")
    if formula.inputs == (LIST_INPUT,):
        start = order.index(LIST_INPUT)
        return (f"    if any(f[0] is not None for f in e[{start}:]):\n"
                f"        for i, g in enumerate({_on_arrays(formula, values)}, {start}):\n"
                f"            out[i] = g if e[i][0] is not None else None\n")
    mask = f"m{j}"
    lines = (f"    {mask} = ({''.join(f'e[{p}][0] is not None, ' for p in places)})\n"
             f"    if True in {mask}:\n"
             f"        r = {_on_arrays(formula, values, grad_input_mask=mask)}\n")
    return lines + "".join(f"        out[{p}] = r[{k}] if {mask}[{k}] else None\n"
                           for k, p in enumerate(places))


def compile_on_arrays(cls: type[Node]) -> Callable:
    """The plain backward of node class `cls`: its formulas compiled into one Python
    function on arrays, `backward(node, *grads)`, which computes each input's gradient
    that is wanted and reads the node's saved values as `apply_recording` reads them
    (a saved tensor's data version-checked, a dim signed). `NotOnArrays` if a formula
    calls anything without an array version."""
    values = {name: _read(cls, name) for name in cls.saves}
    for name in getattr(cls, "unshown", ()):
        values[name] = f"s[{'_' + name!r}]"
    if "grads" in {n for f in cls.formulas for n in f.names}:  # (every output's gradient)
        head = ("def backward(node, *grads):\n"
                "    grads = [*grads, *([None] * (node._num_outputs() - len(grads)))]\n"
                "    grad = grads[0]\n")
    else:
        head = "def backward(node, grad, *_):\n"
    head += "    s, e = node._saved, node.next_functions\n"
    at = slots(cls, 0)  # (a list input's places are counted when the node runs)
    if all(type(p) is int for p in at):  # (formula i gives input i's gradient)
        parts = []
        for i, formula in enumerate(cls.formulas):
            parts.append(f"({_on_arrays(formula, values)}) if e[{i}][0] is not None else None")
        source = f"{head}    return ({', '.join(parts)},)\n"
    else:
        source = head + "    out = [None] * len(e)\n" + "".join(
            _several_on_arrays(j, formula, places, values, input_names(cls))
            for j, (places, formula) in enumerate(zip(at, cls.formulas))) + \
            "    return tuple(out)\n"
    scope = {f"{prefix}_{name}": fn for prefix, table in (
                 ("_M", ARRAY_METHODS), ("_H", ARRAY_HELPERS), ("_A", ARRAY_ARITHMETIC))
             for name, fn in table.items()}
    scope.update(_saved_value=_saved_value, _operand=_operand, _SavedNumber=SavedNumber,
                 _D=cls.saved_defaults)
    exec(compile(source, f"<plain backward of {cls.__name__}>", "exec"), scope)  # noqa: S102
    return scope["backward"]


# -- arithmetic on arrays, as PyTorch computes it on tensors -------------------------------

# bool < integer < floating point, by numpy's dtype kind.
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}


def _rank(x) -> tuple:
    """An operand's (category, priority, numpy dtype): a dimensioned array outranks a
    0-d one, which outranks a Python number (`_dtype.result_type`'s rule)."""
    if isinstance(x, np.ndarray):
        return _CATEGORY[x.dtype.kind], 2 if x.ndim else 1, x.dtype
    if isinstance(x, (bool, np.bool_)):
        return 0, 0, np.dtype(np.bool_)
    if isinstance(x, (int, np.integer)):
        return 1, 0, np.dtype(np.int64)
    return 2, 0, _dtype.get_default_dtype().np


def _promoted(a, b) -> np.dtype:
    """The dtype PyTorch computes `a op b` in, for arrays and Python numbers."""
    ca, pa, da = _rank(a)
    cb, pb, db = _rank(b)
    if ca != cb:
        return da if ca > cb else db
    if pa != pb:
        return da if pa > pb else db
    return np.promote_types(da, db)


# The memory of each dtype's efficient zero (`is_efficient_zeros`, written out where
# `_arithmetic` checks an operand: one lookup, no call).
_ZERO_BASES = {dt: efficient_zeros((), dt).base
               for dt in map(np.dtype, (np.float32, np.float64, np.int64, np.bool_))}


def efficient_zero_result(a, b, dt: np.dtype, *, divide: bool) -> np.ndarray | None:
    """What PyTorch's mul (div, with `divide`) gives where an operand is its efficient
    zero tensor (`efficient_zeros`, sgn's gradient), computing nothing: a product with
    one is an efficient zero, and so is one divided by anything (so `0 * inf` and
    `0 / 0` are 0 there: sgn's zero gradient through `x * inf` or `grad / x`); anything
    divided by one is +inf everywhere (`0 / 0` and `-1 / 0` too). In dtype `dt`, of
    the operands' broadcast shape; None where neither operand is an efficient zero.
    The one rule for arrays (a formula's `*` and `/`, `_arithmetic`) and tensors
    (`mul`, `div`, and their Scalar forms: a `create_graph=True` backward)."""
    a_zero = type(a) is np.ndarray and is_efficient_zeros(a)
    if not a_zero and not (type(b) is np.ndarray and is_efficient_zeros(b)):
        return None
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    if divide and not a_zero:
        return np.full(shape, np.inf, dt)
    return efficient_zeros(shape, dt)


def _arithmetic(kernel, scalar_kernel, on_number_array, on_numbers, *,
                negate_scalar: bool = False, to_float: bool = False,
                zeros: bool = False) -> Callable:
    """`a op b` on arrays and Python numbers, as PyTorch computes it on tensors: in the
    dtype its type promotion gives (`_promoted`; with `to_float`, true division, an
    integer one is the default float), two arrays by the element-wise `kernel`, an
    array and a number (or a 0-d array beside a dimensioned one) by `scalar_kernel`
    (with the number negated for `a - s`, which is `a + -s` exactly). With `zeros`
    (mul and div), an operand that is an efficient zero gives what PyTorch's kernels
    give it (`efficient_zero_result`). (An efficient zero is a view: an operand with
    no `base` is checked no further.)"""
    def compute(a, b):
        if type(b) is float:
            if type(a) is np.ndarray and a.dtype.kind == "f":  # (the common `grad * 0.5`)
                if zeros and (base := a.base) is not None and base is _ZERO_BASES.get(a.dtype):
                    return efficient_zeros(a.shape, a.dtype)
                s = -b if negate_scalar else b
                out = short_vector_and_number(scalar_kernel, a, s)  # (on a short vector)
                return scalar_op(scalar_kernel, a, s, _BY_NUMPY[a.dtype]) if out is None else out
        elif type(a) is np.ndarray and type(b) is np.ndarray:
            if a.dtype is b.dtype and a.ndim and b.ndim:  # (the common `grad * other`)
                if not (zeros and ((base := a.base) is not None
                                   and base is _ZERO_BASES.get(a.dtype)
                                   or (base := b.base) is not None
                                   and base is _ZERO_BASES.get(b.dtype))):
                    return binary(kernel, a, b, a.dtype)
        if not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
            return on_numbers(a, b)
        dt = _promoted(a, b)
        if to_float and dt.kind != "f":
            dt = _dtype.get_default_dtype().np
        if zeros and (out := efficient_zero_result(a, b, dt, divide=to_float)) is not None:
            return out
        a_array, b_array = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
        if a_array and b_array:
            if b.ndim == 0 and a.ndim:
                b, b_array = b.item(), False
            elif a.ndim == 0 and b.ndim:
                if to_float:  # (a 0-d tensor over a tensor divides element by element;
                    return binary(kernel, a, b, dt)  # only a number takes the reciprocal)
                a, a_array = a.item(), False
            else:
                return binary(kernel, a, b, dt)
        if a_array:
            return scalar_op(scalar_kernel, a, -b if negate_scalar else b, _BY_NUMPY[dt])
        return on_number_array(a, b, _BY_NUMPY[dt])
    return compute


def _reciprocal(a: np.ndarray, dt) -> np.ndarray:
    with np.errstate(all="ignore"):  # (1 / 0 is inf, silently, as PyTorch gives it)
        return np.divide(1, a.astype(dt.np, copy=False))


def _laid_out(ufunc) -> Callable:
    """A numpy comparison on arrays (or an array and a number), its result laid out as
    PyTorch lays out an element-wise result of the operands (numpy's own layout
    differs: `where(self == other, ...)` takes the comparison's)."""
    def compare(a, b):
        values = ufunc(a, b)
        if type(values) is not np.ndarray or not values.ndim:
            return values
        return in_result_layout(values, *(x if type(x) is np.ndarray else WRAPPED_NUMBER
                                          for x in (a, b)))
    return compare


def _negative(a):
    return unary(K.neg, a) if isinstance(a, np.ndarray) else -a


# A formula's `+ - * /` and `-x` on arrays, by the name of Python's operator node.
ARRAY_ARITHMETIC: dict[str, Callable] = {
    "Add": _arithmetic(K.add, K.add_scalar, lambda s, b, dt: scalar_op(K.add_scalar, b, s, dt),
                       operator.add),
    "Sub": _arithmetic(K.sub, K.add_scalar,
                       lambda s, b, dt: scalar_op(K.rsub_scalar, b, s, dt, reverse=True),
                       operator.sub, negate_scalar=True),
    "Mult": _arithmetic(K.mul, K.mul_scalar, lambda s, b, dt: scalar_op(K.mul_scalar, b, s, dt),
                        operator.mul, zeros=True),
    # (C++'s Scalar / Tensor is the reciprocal times the Scalar)
    "Div": _arithmetic(K.div, K.div_scalar,
                       lambda s, b, dt: scalar_op(K.mul_scalar, _reciprocal(b, dt), s, dt),
                       operator.truediv, to_float=True, zeros=True),
    "USub": _negative,
    # (numpy's comparisons: a nan compares false, without a warning, as in PyTorch)
    **{name: _laid_out(ufunc) for name, ufunc in (
        ("Eq", np.equal), ("NotEq", np.not_equal), ("Lt", np.less), ("LtE", np.less_equal),
        ("Gt", np.greater), ("GtE", np.greater_equal), ("BitAnd", np.logical_and))},
}


class ArrayFormulaNode(Node):
    """A node whose plain backward is its formulas themselves, compiled into one plain
    Python function on arrays (`compile_on_arrays`) the first time a node of the
    class runs a plain backward (at import, the classes a program never uses would
    cost every program milliseconds): the derivative is written once, and a
    `create_graph=True` backward runs the same formulas on tensors
    (`apply_recording`). `tests/minigrad/test_formulas_equal_backwards.py` compiles
    every such class, so a formula outside what arrays can run fails there."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.backward = ArrayFormulaNode._compiled_first  # (each class its own formulas)

    def _compiled_first(self, *grads):
        cls = type(self)
        cls.backward = compile_on_arrays(cls)
        return cls.backward(self, *grads)


@on_arrays("t", method=True)
def _t(a: np.ndarray) -> np.ndarray:
    return a.T


@on_arrays("transpose", method=True)
def _transpose(a: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    # (a 0-d array's transpose(0, 0) has no axes to swap: itself, as a new view)
    return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()


@on_arrays("expand", method=True)
def _expand(a: np.ndarray, shape: tuple) -> np.ndarray:
    return spread(a, shape)


@on_arrays("masked_fill_", method=True)
def _masked_fill_(a: np.ndarray, mask: np.ndarray, value) -> np.ndarray:
    """In place, as the tensor method: the array's version counts the step."""
    np.copyto(a, a.dtype.type(value), where=mask)
    bump_version(a)
    return a


@on_arrays("to", method=True)
def _to(a: np.ndarray, dtype) -> np.ndarray:
    """`t.to(dtype)`, a minigrad or a numpy dtype: `a` itself if it has it already."""
    return a.astype(getattr(dtype, "np", dtype), copy=False)


@on_arrays("zeros_like")
def _zeros_like(a: np.ndarray) -> np.ndarray:
    """Laid out as PyTorch's zeros_like lays it out (`empty_like`): a dense `a`'s strides,
    0 on a size-1 dim included (`sum()`'s gradient of a (1,) tensor), which numpy's
    zeros_like would make its own."""
    out = empty_like(a)
    out.fill(0)
    return out


@on_arrays("squeeze", method=True)
def _squeeze(a: np.ndarray, dim: int) -> np.ndarray:
    if a.size or not a.ndim:
        return np.squeeze(a, dim)
    # (no elements: the other dims keep PyTorch's strides, which numpy's fresh empty
    # array does not have: see `element_strides`)
    dims = {d % a.ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    kept = [d for d in range(a.ndim) if not (d in dims and a.shape[d] == 1)]
    strides = element_strides(a)
    return with_strides(tuple(a.shape[d] for d in kept), a.dtype, tuple(strides[d] for d in kept))


@on_arrays("reshape", method=True)
def _reshape(a: np.ndarray, shape: tuple) -> np.ndarray:
    if 1 in shape or not a.size:  # (where numpy's strides can differ from PyTorch's)
        strides = view_strides(a.shape, element_strides(a), tuple(shape))
        view = None if strides is None else restrided(a, tuple(shape), strides)
        if view is not None:
            return view
    try:
        return np.reshape(a, shape, copy=False)  # a view, where one can be
    except ValueError:
        # A copy that owns its memory, as PyTorch's reshape makes (numpy's own copy
        # would be a view of a temporary, which an input buffer could not add into in
        # place as PyTorch's does).
        out = np.empty(shape, a.dtype)
        out.reshape(a.shape)[...] = a
        return out

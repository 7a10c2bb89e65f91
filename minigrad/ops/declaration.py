"""Ops declared once: the name, the node, the kernel and the backward formula together.

PyTorch lists every differentiable op in one table (`derivatives.yaml`): its
signature, and for each input the formula of its gradient. minigrad does the same,
in each family's module:

    unary_op("exp", node="ExpBackward0", kernel=K.exp,
             formula="grad * result", fused=K.mul,
             doc="e to the power of each element.")

Everything else about the op is built from that one declaration: the function
(`minigrad.exp`), the method (`x.exp()`), the in-place variant (`x.exp_()`, with its
checks and version bump), the node class with its `_saved_*` names, the "what does
each op save?" table of lesson 4 and the op reference, docs/ops.md.

What a node saves follows from the names its formulas use, as in PyTorch's table:
`result` is the op's output, `self` and `other` are its inputs. exp's formula reads
`result`, so ExpBackward0 saves the output; log's (`grad / self`) reads `self`, so
LogBackward0 saves the input. Nobody writes a saves list that could disagree with
the formula.

A formula is minigrad code (`ops/formulas.py`): evaluated on tensors, it computes the
gradient with minigrad's own differentiable ops, and a `create_graph=True` backward
runs it so, recording a graph that can be differentiated again. A plain backward
records nothing, and runs the op's `fused` kernel instead:
the same arithmetic in one pass over numpy arrays, without making a tensor per step.
`tests/minigrad/test_declarations.py` checks, for every declared op, that the two
give the same values.

Ops written by hand (a function and node classes with their own `backward`: `mul`,
`sum`, `transpose`, ...) are declared with `declare`, which registers the module's own
function and method objects under the op's public names, with the node classes it
records and the operators it is behind. `minigrad/__init__.py` builds the namespace
and the Tensor methods from `DECLARATIONS` alone.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..arrays.broadcasting import check_inplace_shape
from ..arrays.dispatch import (
    VECTORISED,
    VECTORISED_BACKWARD,
    backward2,
    quietly,
    short_vectors,
    unary,
    unary_into,
)
from ..arrays.layout import (
    copy_like,
    flat,
    fresh_result,
    in_result_layout,
    is_dense,
    is_row_major,
    laid_out_as,
    odd_unit_stride,
    reorders,
)
from ..arrays.scalars import as_float_data
from ..autograd.graph import Node, SavedTensor, efficient_zeros, is_efficient_zeros
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record, record_elementwise
from ..tensor import Tensor
from . import short_lane
from .formulas import ARRAY_HELPERS, ROLES, Formula, FormulaNode, register_ops
from .public_forms import input_checked, takes_a_tensor_first
from .tangent_formulas import AUTO_ELEMENT_WISE, Tangent


@dataclass(eq=False)
class Declaration:
    """Everything declared about one op, and what was built from it."""

    name: str  # "exp"
    family: str  # "unary": the module of minigrad.ops it is declared in
    node: type[Node] | None  # the node class it records (ExpBackward0); None: no node
    formulas: tuple[Formula, ...]
    doc: str
    # public name -> function: the namespace's entries ({"exp": ..., "exp_": ...})
    functions: dict[str, Callable] = field(default_factory=dict)
    # Tensor method name -> function
    methods: dict[str, Callable] = field(default_factory=dict)
    # Every node class the op may record (PowBackward0/1/2 for pow), `node` first.
    nodes: tuple[type[Node], ...] = ()
    # Other Tensor attributes the op is behind: operators (`__mul__`), properties (`T`).
    attributes: dict[str, object] = field(default_factory=dict)
    # Built here from a kernel and a formula (`unary_op`, `binary_op`), or written by
    # hand in its family's module and registered with `declare`.
    generated: bool = True

    def __post_init__(self) -> None:
        if not self.nodes and self.node is not None:
            self.nodes = (self.node,)
        # A function form is called with anything (`minigrad.exp(2.0)`): where its first
        # argument must be a tensor, a wrapper gives PyTorch's TypeError for the rest.
        self.functions = {public: input_checked(fn, public, _pytorch_argument(fn))
                          if takes_a_tensor_first(fn) else fn
                          for public, fn in self.functions.items()}

    @property
    def saves(self) -> dict[str, str]:
        return self.node.saves if self.node is not None else {}


DECLARATIONS: list[Declaration] = []


def _pytorch_argument(fn: Callable) -> str:
    """The name PyTorch's error gives a function's first argument: its own where it is
    PyTorch's (`where(condition, ...)`, `trapezoid(y, ...)`), else `input`."""
    first = fn.__code__.co_varnames[0]
    return first if first in ("condition", "y") else "input"


def namespace() -> dict[str, Callable]:
    """Every declared op's functions under their public names (`minigrad.exp`, ...)."""
    return {name: fn for d in DECLARATIONS for name, fn in d.functions.items()}


def methods() -> dict[str, Callable]:
    """Every declared op's Tensor methods (`x.exp()`, `x.exp_()`, ...) and the other
    attributes it is behind (`x * y` is `__mul__`, `x.T` a property)."""
    return {name: fn for d in DECLARATIONS
            for name, fn in {**d.methods, **d.attributes}.items()}


def functions_declared_in(module: str) -> dict[str, Callable]:
    """The functions built from `module`'s declarations, under their public names
    (`exp`, `exp_`, ...): a family module adds them to its own globals."""
    return {name: fn for d in DECLARATIONS if d.generated and d.node.__module__ == module
            for name, fn in {**d.functions, **d.methods}.items()}


def saves_of(formulas: tuple[Formula, ...]) -> dict[str, str]:
    """What a node saves: every name its formulas read, in the order `self`,
    `other`, `result`."""
    used = {name for f in formulas for name in f.uses}
    return {name: role for name, role in ROLES.items() if name in used}


def _family_of_caller() -> tuple[str, str]:
    """The module a declaration is written in, and its family: the module's name
    ("unary"), unless it names another (`OP_FAMILY = "arithmetic"` in powers.py)."""
    caller = sys._getframe(2).f_globals
    module = caller["__name__"]
    return module, caller.get("OP_FAMILY", module.rsplit(".", 1)[1])


# -- element-wise ops of one tensor ------------------------------------------------------


class _DeclaredUnary(Node):
    """The node of a declared element-wise op of one tensor: its backward runs the
    fused kernel `fused(grad, saved, out)` on the one tensor the formula reads (or
    `fused(grad, out)` when it reads none)."""

    elementwise = True
    fused = None
    saved_name = ""
    formulas: tuple[Formula, ...] = ()
    zero_passes = False  # (see `_zero_passes`)
    # (grad, saved) -> whether the fused kernel lays its result out as the formula
    # does, for a formula that takes steps of its own before meeting `grad` (see
    # `_layout_check`); None: it always does
    layout_check: Callable | None = None

    def backward(self, grad):
        cls = type(self)  # (`self.saved(name)`, written out: a call fewer per node)
        if grad.base is not None and cls.zero_passes and is_efficient_zeros(grad):
            return (efficient_zeros(grad.shape, grad.dtype),)
        x = self._saved[cls.saved_name].array(self)
        out = short_vectors(cls.fused, grad, x)  # (two short vectors: the common case)
        if out is not None:
            return (out,)
        if cls.layout_check is not None and not cls.layout_check(grad, x):
            return FormulaNode.backward(self, grad)
        return (backward2(cls.fused, grad, x),)


def fused_lays_out_alike(grad: np.ndarray, x: np.ndarray) -> bool:
    """Whether a fused kernel over (grad, x), laid out by both at once, lays its result
    out as the formula does step by step on tensors. PyTorch's formula first makes a
    factor of `x` alone (`grad * self.cos()`), which an element-wise op lays out by
    `x`'s strides where `x` is dense, row-major where `x` is contiguous (its size-1
    dims' strides ignored), else dense in the order of `x`'s strides; the
    factor, not `x`, then lays out the product with `grad`. So they agree when `x` is
    1-d, row-major (size-1 dims' strides counted), or dense with no dim of size 1.
    Otherwise the formula runs on tensors (a fast path must not change the result)."""
    if x.ndim < 2:
        return True
    if x.flags.c_contiguous:
        return 1 not in x.shape or not odd_unit_stride(x)
    return 1 not in x.shape and is_dense(x)


def fused_lays_out_as_helper(grad: np.ndarray, x: np.ndarray) -> bool:
    """Whether a fused kernel over (grad, x) lays its result out as a helper's steps do
    (`sinc_backward`'s last, a `where` that takes its condition, made from `x`, first):
    where both are row-major, or `grad` is spread out (`sum()`'s, which has no say)."""
    return x.ndim < 2 or (is_row_major(x) and (is_row_major(grad) or not any(grad.strides)))


class _DeclaredUnaryScalingGradFirst(_DeclaredUnary):
    """A `_DeclaredUnary` whose formula first scales the gradient alone (`-grad * ...`,
    `-0.5 * grad * ...`): in PyTorch that is a fresh tensor laid out by the gradient
    alone (row-major for `sum()`'s spread-out one), which then lays out the result
    whatever the saved tensor's layout. The fused kernel is given the gradient so
    laid out, where it is laid out otherwise."""

    def backward(self, grad):
        cls = type(self)
        if grad.base is not None and cls.zero_passes and is_efficient_zeros(grad):
            return (efficient_zeros(grad.shape, grad.dtype),)
        x = self._saved[cls.saved_name].array(self)
        if cls.layout_check is not None and not cls.layout_check(grad, x):
            return FormulaNode.backward(self, grad)
        if not grad.flags.c_contiguous:
            grad = copy_like(grad, grad)
        return (backward2(cls.fused, grad, x),)


class _DeclaredUnarySavedFirst(_DeclaredUnary):
    """A `_DeclaredUnary` whose formula multiplies `grad` last, into a factor made from
    the saved tensor alone (erf's `1.128 * (-self.pow(2)).exp() * grad`), or passes
    the saved tensor to a kernel first (relu's `threshold_backward(grad, result, 0)`,
    whose TensorIterator takes `result` before `grad`): in PyTorch the saved tensor
    then lays the result out (a permuted input's gradient is permuted too)."""

    def backward(self, grad):
        cls = type(self)
        if grad.base is not None and cls.zero_passes and is_efficient_zeros(grad):
            return (efficient_zeros(grad.shape, grad.dtype),)
        saved = self._saved[cls.saved_name].array(self)
        if cls.layout_check is not None and not cls.layout_check(grad, saved):
            return FormulaNode.backward(self, grad)
        return (in_result_layout(backward2(cls.fused, grad, saved), saved, grad),)


def _zero_passes(formula: str) -> bool:
    """Whether `formula` multiplies `grad` into the rest, or divides it by the rest
    (`grad / self`, `grad * result`, `2 * exp(-self**2) * grad`): then PyTorch's
    efficient zero gradient (sgn's, see `efficient_zeros`) gives an efficient zero,
    as its mul and div of a zero tensor compute nothing (so `0 / 0` and `0 * inf` are
    0 there, not nan: `x.log().abs()`'s double backward at 0)."""
    node = ast.parse(formula, mode="eval").body
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        node = node.left  # (the numerator)
    factors = [node]
    while factors:
        node = factors.pop()
        if isinstance(node, ast.Name) and node.id == "grad":
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            factors += [node.left, node.right]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            factors.append(node.left)
    return False


# How a formula's steps lay out its result, read off the parsed formula: which base
# class a declared element-wise op's node gets.


def _steps(formula: str):
    """Each step of `formula` but its names (`self.cos()`, `grad * 1`, ...), with the
    names of tensors it reads ("grad", "self", "result")."""
    for node in ast.walk(ast.parse(formula, mode="eval").body):
        if not isinstance(node, ast.Name):
            yield node, {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & _TENSORS


_TENSORS = {"grad", "self", "result"}


# The backward ops PyTorch runs as one element-wise kernel over their operands; any
# other function a formula calls with a saved tensor (`sinc_backward`) takes steps of
# its own.
_ONE_KERNEL = {"tanh_backward", "sigmoid_backward", "threshold_backward"}


def _layout_check(formula: str) -> Callable | None:
    """When a fused kernel lays its result out as `formula` does step by step: where
    the formula calls a helper with the saved tensor (`sinc_backward(grad, self)`,
    whose steps are its own), `fused_lays_out_as_helper`; where it computes something
    of the saved tensor alone before it meets `grad` (`grad * self.cos()`,
    `-grad * (result * result)`), `fused_lays_out_alike`; where `grad` meets the saved
    tensor itself (`grad * result`, `tanh_backward(grad, result)`), always (None)."""
    check = None
    for node, read in _steps(formula):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and read - {"grad"} and node.func.id not in _ONE_KERNEL):
            return fused_lays_out_as_helper
        if read and "grad" not in read:
            check = fused_lays_out_alike
    return check


def _scales_grad_first(formula: str) -> bool:
    """Whether `formula` computes something of `grad` alone before it meets the saved
    tensor (`-grad * ...`, `-0.5 * grad * ...`, `grad * 1 / ...`):
    `_DeclaredUnaryScalingGradFirst`."""
    return any(read == {"grad"} for _, read in _steps(formula))


# The backward ops whose TensorIterator takes the saved tensor before `grad` (of
# `_ONE_KERNEL`).
_SAVED_FIRST_KERNELS = {"threshold_backward"}


def _saved_first(formula: str) -> bool:
    """Whether `formula` multiplies `grad` last, into a factor of the saved tensor
    (`1.128 * (-self.pow(2)).exp() * grad`), or passes both to a kernel that takes the
    saved tensor first (`threshold_backward(grad, result, 0)`):
    `_DeclaredUnarySavedFirst`."""
    top = ast.parse(formula, mode="eval").body
    if isinstance(top, ast.Call):
        return isinstance(top.func, ast.Name) and top.func.id in _SAVED_FIRST_KERNELS
    return (isinstance(top, ast.BinOp) and isinstance(top.op, ast.Mult)
            and isinstance(top.right, ast.Name) and top.right.id == "grad"
            and not any(isinstance(n, ast.Name) and n.id == "grad" for n in ast.walk(top.left)))


class _DeclaredUnarySavingNothing(_DeclaredUnary):
    def backward(self, grad):
        return (unary(type(self).fused, grad),)


class _DeclaredZerosLikeGrad(_DeclaredUnary):
    """The node of an op whose formula is `zeros_like(grad)` (floor's): zeros laid out
    as PyTorch's zeros_like lays them out, which an element-wise kernel over `grad`
    does not where `grad` has a 0 stride on a dim of size 1 (`sum()`'s gradient of a
    (1,) tensor: AccumulateGrad then copies it)."""

    def backward(self, grad):
        return (ARRAY_HELPERS["zeros_like"](grad),)


def _zeros_like_grad(formula: str) -> bool:
    """Whether `formula` is `zeros_like(grad)`: `_DeclaredZerosLikeGrad`."""
    top = ast.parse(formula, mode="eval").body
    return (isinstance(top, ast.Call) and isinstance(top.func, ast.Name)
            and top.func.id == "zeros_like" and not top.keywords
            and [getattr(a, "id", None) for a in top.args] == ["grad"])


class _DeclaredZeroGradient(_DeclaredUnary):
    """The node of an op declared with `fused=None`, whose gradient is zero by
    definition: it returns `efficient_zeros`, as PyTorch returns its efficient zero
    tensor (which an input buffer never adds into, so the versions of the gradients
    it meets stay PyTorch's)."""

    def backward(self, grad):
        return (efficient_zeros(grad.shape, grad.dtype),)


def unary_op(name: str, *, node: str, kernel, formula: str, fused, doc: str,
             vectorised: Callable | None = None, vectorised_fused: Callable | None = None,
             keeps_integers: bool = False,
             bool_error: tuple[type[Exception], str] | None = None,
             aliases: tuple[str, ...] = (), function_inplace: bool = True,
             fused_reads: str | None = "", operator: str | None = None,
             tangent: str | None = None) -> Declaration:
    """Declare an element-wise op of one tensor, `name(input)`.

    node: PyTorch's name for its backward node.
    kernel: the numba kernel `kernel(x, out)` computing the forward on flat arrays.
    formula: the gradient of the input, reading `grad` and at most one of `self` (the
        input) or `result` (the output): what the node saves follows from it.
    fused: the kernel `fused(grad, saved, out)` computing the same formula in one pass
        (`fused(grad, out)` for a formula that reads neither); None for a gradient that
        is zero by definition (`sgn`'s), which PyTorch returns as an efficient zero
        tensor.
    vectorised: numpy's ufunc for the forward (or a function of (x, out)), which long
        arrays use instead of the kernel (see `arrays.dispatch.VECTORISED`);
        `vectorised_fused` the same for the fused backward kernel.
    keeps_integers: the op maps integers to integers (relu, abs); the others compute
        an integer input in the default float dtype. Then `bool_error` is PyTorch's
        error for a bool input.
    aliases: other names of the op (`negative` for `neg`), each with its in-place form.
    function_inplace: whether the namespace has `name_` too (PyTorch's has `exp_`,
        not `sign_`, which is a method only).
    fused_reads: which saved tensor the fused kernel takes, for a formula that reads
        both `self` and `result` (`sgn`'s); None: neither. By default, the one the
        formula reads.
    operator: the Tensor operator that runs the op (`__neg__` for neg).
    tangent: the forward-mode formula, where PyTorch writes one (`abs`'s); by
        default "auto_element_wise", the formula with the input's tangent for `grad`.

    Builds `name(input)`, the method `input.name()` and the in-place `input.name_()`.
    """
    module, family = _family_of_caller()
    formulas = (Formula("self", formula),)
    saves = saves_of(formulas)
    saved_names = tuple(saves)
    if fused_reads == "":
        if len(saves) > 1:
            raise ValueError(f"{name}: say which of {saved_names} the fused kernel reads")
        fused_reads = next(iter(saves), None)
    base = (_DeclaredZeroGradient if fused is None
            else _DeclaredZerosLikeGrad if _zeros_like_grad(formula)
            else _DeclaredUnarySavingNothing if not fused_reads
            else _DeclaredUnaryScalingGradFirst if _scales_grad_first(formula)
            else _DeclaredUnarySavedFirst if _saved_first(formula)
            else _DeclaredUnary)
    node_cls = type(node, (base,), {
        "__module__": module, "__qualname__": node, "__doc__": f"{name}: {doc}",
        # (a numba dispatcher is a descriptor, which `cls.fused` would call in Python:
        # as a staticmethod, the class hands the kernel out in C)
        "saves": saves, "saved_name": fused_reads, "fused": staticmethod(fused),
        "formulas": formulas,
        "tangent": AUTO_ELEMENT_WISE if tangent is None else Tangent(tangent),
        "zero_passes": _zero_passes(formula), "layout_check": _layout_check(formula),
    })
    if vectorised is not None:
        VECTORISED[kernel] = quietly(vectorised) if isinstance(vectorised, np.ufunc) else vectorised
    if vectorised_fused is not None:
        VECTORISED_BACKWARD[fused] = vectorised_fused

    def refuse(dtype: np.dtype) -> None:
        """The error for an input whose dtype the op cannot take (`keeps_integers`)."""
        if dtype == np.bool_ and bool_error is not None:
            raise bool_error[0](bool_error[1])

    def op(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        out = short_lane.run(node_cls, kernel, input)
        if out is not None:  # (a short float64 vector: see `short_lane.py`)
            for saved in saved_names:
                out._grad_fn._saved[saved] = (SavedTensor(out, is_output=True)
                                              if saved == "result" else SavedTensor(input))
            return out
        data = input._data
        if data.dtype.kind != "f":
            if keeps_integers:
                refuse(data.dtype)
            else:
                data = as_float_data(input)
        out = Tensor._make(unary(kernel, data))
        # (Only a float input can need a gradient, and then the output is just like it.)
        recorded = record_elementwise(node_cls, out, input)
        if recorded is not None:
            for saved in saved_names:
                recorded._saved[saved] = (SavedTensor(out, is_output=True) if saved == "result"
                                          else SavedTensor(input))
        return out

    def op_(input: Tensor) -> Tensor:  # noqa: A002
        if not input.dtype.is_floating_point:
            if not keeps_integers:
                raise RuntimeError("result type Float can't be cast to the desired output "
                                   f"type {input.dtype.tensor_type[:-6]}")
            refuse(input._data.dtype)
        recorded = begin_inplace(node_cls, input)
        # The formula reads the input as it was: keep a copy before writing over it
        # (recorded, as PyTorch records its `self.clone()`: CloneBackward0).
        original = (input.clone() if recorded is not None and "self" in saves
                    else None)
        if input._data.flags.c_contiguous:
            data = flat(input._data)
            unary_into(kernel, data, data)
        else:
            input._data[...] = unary(kernel, input._data)
        finish_inplace(input, recorded)
        if recorded is not None:
            for saved in saved_names:
                recorded._saved[saved] = (SavedTensor(input, is_output=True)
                                          if saved == "result" else SavedTensor(original))
        return input

    _name_functions(module, doc, {name: op, name + "_": op_})
    methods = {n: f for alias in (name, *aliases) for n, f in ((alias, op), (alias + "_", op_))}
    functions = {n: f for n, f in methods.items() if function_inplace or not n.endswith("_")}
    declaration = Declaration(name, family, node_cls, formulas, doc,
                              functions=functions, methods=methods,
                              attributes={operator: op} if operator else {})
    DECLARATIONS.append(declaration)
    register_ops(functions, {})
    return declaration


def _name_functions(module: str, doc: str, functions: dict[str, Callable]) -> None:
    """Give generated functions their public names and docs, as if written by hand
    in their family's module (what `help()` and tracebacks show)."""
    for public, fn in functions.items():
        fn.__name__ = fn.__qualname__ = public
        fn.__module__ = module
        fn.__doc__ = doc if not public.endswith("_") else f"In place: {doc}"


# -- element-wise ops of two tensors -------------------------------------------------------


class _DeclaredBinary(Node):
    """The node of a declared element-wise op of two tensors (`atan2`): for each input
    that needs a gradient, its fused kernel of (grad, self, other). Broadcast inputs
    get a gradient of the output's shape, which the engine sums down to theirs."""

    fused: tuple = ()
    # (grad, self, other, i) -> an empty array laid out as PyTorch's formula lays out
    # input i's gradient step by step, where the fused kernel's one sort over all the
    # operands may differ (permuted operands, odd strides of size-1 dims); None: no
    # op sets one yet but atan2
    layout: Callable | None = None

    def backward(self, grad):
        dtype = grad.dtype  # (grad has the output's shape, which both inputs broadcast to)
        a = self.saved("self").astype(dtype, copy=False)
        b = self.saved("other").astype(dtype, copy=False)
        layout = type(self).layout
        if layout is not None and not reorders(grad.shape, (grad, a, b)):
            layout = None
        grads = []
        for i, kernel in enumerate(type(self).fused):
            if not self.needs_grad(i):
                grads.append(None)
                continue
            out, flat_out, flats = fresh_result(grad.shape, dtype, grad, a, b)
            kernel(*flats, flat_out)
            grads.append(out if layout is None else laid_out_as(out, layout(grad, a, b, i)))
        return tuple(grads)


def binary_op(name: str, *, node: str, kernel, formulas: dict[str, str], fused: dict,
              doc: str, promote: Callable, compute: Callable,
              recordable: bool = True, tangent: str | None = None) -> Declaration:
    """Declare an element-wise op of two tensors, `name(input, other)`, computed in
    floating point (integers promote to the default float dtype, as `atan2`'s do).

    formulas: the gradient of `self` and of `other`, each reading `grad`, `self` and
        `other` (what the node saves follows from them).
    fused: for each input, the kernel `fused(grad, self, other, out)` computing its
        formula in one pass.
    promote(input, other): the result's dtype; compute(kernel, a, b, dtype): the
        forward on arrays (broadcasting as `arrays.dispatch.binary` does).
    recordable: False where the formulas, run on tensors, would not record the
        graph PyTorch records (see `Node.recordable`).
    tangent: PyTorch's forward-mode formula (`result:` in derivatives.yaml), reading
        `self_t`, `other_t`, `self_p`, `other_p`; None: forward mode refuses the op.
    """
    module, family = _family_of_caller()
    parsed = tuple(Formula(input, text) for input, text in formulas.items())
    saves = saves_of(parsed)
    save_order = sorted(saves)  # (PyTorch saves, and packs, in name order: `other`, `self`)
    node_cls = type(node, (_DeclaredBinary,), {
        "__module__": module, "__qualname__": node, "__doc__": f"{name}: {doc}",
        "saves": saves, "formulas": parsed,
        "fused": tuple(fused[f.input] for f in parsed), "recordable": recordable,
        "tangent": None if tangent is None else Tangent(tangent),
    })

    def op(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                            f"not {type(input).__name__}")
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, "
                            f"not {type(other).__name__}")
        dt = promote(input, other)
        out = Tensor._make(compute(kernel, input._data, other._data, dt.np))
        recorded = record(node_cls, out, input, other)
        if recorded is not None:
            for saved in save_order:
                recorded._saved[saved] = SavedTensor(input if saved == "self" else other)
        return out

    def op_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, "
                            f"not {type(other).__name__}")
        dt = promote(input, other)
        if dt is not input.dtype:
            raise RuntimeError(f"result type {dt.type_name} can't be cast to the desired "
                               f"output type {input.dtype.type_name}")
        check_inplace_shape(input._data.shape, other._data.shape)
        recorded = begin_inplace(node_cls, input, other)
        # The formulas read the input as it was: keep a copy before writing over it
        # (recorded, as PyTorch records its `self.clone()`: CloneBackward0).
        original = input.clone() if recorded is not None and "self" in saves else None
        input._data[...] = compute(kernel, input._data, other._data, dt.np)
        if recorded is not None:
            for saved in save_order:  # (before the version bump, as PyTorch saves them)
                recorded._saved[saved] = SavedTensor(original if saved == "self" else other)
        finish_inplace(input, recorded)
        return input

    public = {name: op, name + "_": op_}
    _name_functions(module, doc, public)
    declaration = Declaration(name, family, node_cls, parsed, doc,
                              functions={name: op}, methods=public)
    DECLARATIONS.append(declaration)
    register_ops(declaration.functions, {})
    return declaration


# -- ops written by hand -------------------------------------------------------------------


def declare(name: str, *, nodes: tuple[type[Node], ...] = (), function: Callable | None = None,
            method: Callable | bool | None = None, inplace: Callable | None = None,
            aliases: tuple[str, ...] = (), inplace_aliases: bool = True,
            function_inplace: bool = False, alias_methods: dict[str, Callable] | None = None,
            attributes: dict[str, object] | None = None,
            aten: Callable | None = None, doc: str = "") -> Declaration:
    """Declare an op written by hand in its family's module (its forward and node
    classes stand above this call, each node with its `saves` and `formulas`).

    nodes: the node classes the op may record (`PowBackward0`, `PowBackward1`, ...).
    function: `minigrad.<name>`, and `minigrad.<alias>` for each alias; None: none.
    method: `Tensor.<name>` (and each alias); True: the function itself; None: none.
    inplace: `Tensor.<name>_`, and, if `inplace_aliases`, `<alias>_` for each alias;
        with `function_inplace`, `minigrad.<name>_` too.
    alias_methods: an alias's own method where it differs from the op's (PyTorch's
        overloads name the alias in their errors: `x.multiply("a")`).
    attributes: the Tensor operators (`__mul__`, `__rmul__`, `__imul__`) and
        properties (`T`) the op is behind.
    aten: an op backward formulas call that the namespace does not have (PyTorch's
        `torch.ops.aten`: `sigmoid_backward`, `add_scalar`), found by formulas as `name`.

    The methods registered are the module's own objects: `x.mul()` runs no extra
    frame. (A function whose first parameter is a Tensor is wrapped by
    `Declaration`, for PyTorch's error when called with anything else.)
    """
    module, family = _family_of_caller()
    names = (name, *aliases)
    functions = {n: function for n in names} if function is not None else {}
    if method is True:
        method = function
    methods = {n: method for n in names} if method is not None else {}
    methods.update(alias_methods or {})
    if inplace is not None:
        for n in (names if inplace_aliases else (name,)):
            methods[n + "_"] = inplace
        if function_inplace:
            functions[name + "_"] = inplace
    register_ops(functions, {name: aten} if aten is not None else {})
    first = nodes[0] if nodes else None
    declaration = Declaration(
        name, family, first, first.formulas if first is not None else (),
        doc or _first_line(function or method or inplace or aten or first),
        functions=functions, methods=methods, nodes=tuple(nodes),
        attributes=dict(attributes or {}), generated=False)
    DECLARATIONS.append(declaration)
    return declaration


def _first_line(obj) -> str:
    lines = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return lines[0] if lines else ""

"""Backward formulas as minigrad code, and how a node runs them to record a graph.

PyTorch writes each op's gradient in `derivatives.yaml` as C++ that calls ordinary
differentiable ops, so that a `create_graph=True` backward records a graph of its
own, which can be differentiated again. minigrad's formulas are the same thing in
minigrad code: a `Formula` is a string such as `"grad * result"`, and
`apply_recording` runs a node's formulas on tensors, with grad mode on, when the
engine carries tensors.

Three details make the recorded graph PyTorch's, node for node:

* A number in a formula is a C++ `at::Scalar`. In PyTorch's formulas `result + 1`
  calls the Scalar overload of add and records AddBackward1, where Python's `x + 1`
  records AddBackward0 (Python wraps the number into a tensor first). So the numbers
  written in a formula, and the values a node saved as Scalars (`Node.scalars`:
  pow's exponent, add's alpha), are `Scalar`s here.
* The helpers PyTorch's formulas call (its "FunctionsManual": `pow_backward`,
  `maybe_multiply`, ...) are written below in minigrad code, and the ops that only
  backward formulas call (`tanh_backward`, which has a node of its own,
  TanhBackwardBackward0) are registered in `BACKWARD_OPS` by their family modules.
* In `a * b`, PyTorch's build evaluates `b` first (C++ leaves the order of an
  operator's operands open, and its compiler takes the right one first), so the
  nodes `b` records are numbered before those of `a`; the numbers decide which
  nodes a later backward runs first. A formula's operators here do the same.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
import sys
from collections.abc import Callable

import numpy as np

from .._creation import zeros, zeros_like
from .._dtype import result_type
from ..arrays.scalars import signed_dims
from ..autograd.forward_ad import Identity
from ..autograd.graph import (
    INPUT,
    OUTPUT,
    Node,
    SavedNumber,
    SavedTensor,
    bump_version,
    version_of,
)
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
        if isinstance(other, Tensor):
            raise NotImplementedError("a formula cannot subtract a tensor from a Scalar")
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
    `result`, or a value such as `exponent`)."""

    __slots__ = ("input", "text", "names", "uses", "_code")

    def __init__(self, input: str, text: str) -> None:  # noqa: A002 - PyTorch's name
        self.input = input
        self.text = text
        self.names = names_in(text)
        # (the op's tensors it reads, in the order self, other, result)
        self.uses = tuple(name for name in ROLES if name in self.names)
        # Parsed and compiled when first run: most formulas never run in a program,
        # and the few hundred of them would add tens of milliseconds to `import minigrad`.
        self._code = None

    def __call__(self, grad: Tensor, /, **saved) -> Tensor:
        """Evaluate the formula on tensors (`self=x, result=y`)."""
        code = self._code
        if code is None:
            tree = ast.fix_missing_locations(_AsInCpp().visit(ast.parse(self.text, mode="eval")))
            code = self._code = compile(tree, f"<gradient of {self.input}: {self.text}>",
                                        "eval")
        return eval(code, _names(), {"grad": grad, **saved})  # noqa: S307

    def __repr__(self) -> str:
        return f"{self.input}: {self.text}"


_NAMES: dict | None = None


def _names() -> dict:
    """The names a formula can call: minigrad's namespace, as a learner's code sees
    it, the backward ops and the helpers below. (Formulas run only once `import
    minigrad` has finished, so this looks the package up rather than importing it:
    the ops sit below the namespace.)"""
    global _NAMES
    if _NAMES is None:
        _NAMES = {**vars(sys.modules["minigrad"]), **BACKWARD_OPS, **_HELPERS,
                  "Scalar": Scalar, "_RIGHT_FIRST": _RIGHT_FIRST}
    return _NAMES


# -- running a node's formulas ------------------------------------------------------------


def apply_recording(node: Node, grads: list, wanted: list | None = None) -> list:
    """Run `node`'s backward formulas on the tensors `grads` (`Node.apply_recording`).

    Each formula sees `grad` and the node's saved values (see `formula_values`). With
    grad mode on (a `create_graph=True` backward) the ops the formulas call record a
    graph; with it off (`FormulaNode.backward`) they just compute. `wanted[i]`:
    whether input i's gradient is wanted at all (by default, every input that needs
    one)."""
    cls = type(node)
    saved = formula_values(node, grads)
    grad = grads[0]
    out: list = [None] * len(cls.formulas)
    # In the order PyTorch's generated code computes them, by input name (`other`
    # before `self`): the nodes they record are numbered in that order, and the
    # numbers decide which of them a later backward runs first.
    for i, formula in sorted(enumerate(cls.formulas), key=lambda f: f[1].input):
        if node.needs_grad(i) if wanted is None else wanted[i]:
            out[i] = formula(grad, **saved)
    return out


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
    # What the node keeps for its formulas without showing it (`unshown`, kept as
    # `_<name>`), and every output's gradient (`grads`) for a multi-output node.
    for name in getattr(cls, "unshown", ()):
        saved[name] = node._saved["_" + name]
    count = node._num_outputs()  # (`grads` ends at the last output that got a gradient)
    saved["grads"] = grads if count is None or len(grads) >= count else \
        [*grads, *([None] * (count - len(grads)))]
    return saved


Node.apply_recording = apply_recording

# unpack_dual's primal (`autograd/forward_ad.py`, which stands below the ops) passes its
# gradient on unchanged: PyTorch's `_fw_primal` formula, `self: grad`, records nothing.
Identity.formulas = (Formula("self", "grad"),)


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


# -- the helpers PyTorch's formulas call, in minigrad code ------------------------------------

_HELPERS: dict[str, Callable] = {}


def _helper(fn: Callable) -> Callable:
    _HELPERS[fn.__name__] = fn
    return fn


@_helper
def maybe_multiply(t: Tensor, s) -> Tensor:
    """`t * s`, or `t` itself when the Scalar `s` is 1 (add's and sub's alpha)."""
    return t if s == 1 else t * Scalar(s)


@_helper
def pow_backward(grad: Tensor, self: Tensor, exponent) -> Tensor:
    """The gradient of `self ** exponent` for a number: zero for the exponent 0, else
    `grad * (exponent * self ** (exponent - 1))`, computed in double as PyTorch."""
    if exponent == 0:
        return zeros_like(self)
    p = Scalar(float(_value(exponent)))
    return grad * (p * self ** (p - 1))


@_helper
def sgn_backward(self: Tensor, grad: Tensor, result: Tensor) -> Tensor:
    """The gradient of `sgn` for real tensors: zero (its Jacobian is zero wherever it
    has one)."""
    return zeros_like(grad)


@_helper
def sum_backward(grad: Tensor, sizes: tuple, dims, keepdim: bool) -> Tensor:
    """The gradient of a sum over `dims`: the reduced dims put back (unless kept),
    then expanded to the input's sizes."""
    if not keepdim and sizes:
        for d in sorted(d % len(sizes) for d in dims):
            grad = grad.unsqueeze(d)
    return grad.expand(sizes)


@_helper
def mean_backward(grad: Tensor, sizes: tuple, dims, numel: int, keepdim: bool) -> Tensor:
    """The gradient of a mean over `dims` (all of them when empty): the sum's,
    divided by how many elements each mean took."""
    if not dims:
        return grad.expand(sizes) / Scalar(numel)
    count = 1
    for d in dims if sizes else ():  # (a 0-d input's dim 0 averaged its one element)
        count *= sizes[d % len(sizes)]
    return sum_backward(grad, sizes, dims, keepdim) / Scalar(count)


@_helper
def mm_mat1_backward(grad: Tensor, mat2: Tensor, sizes: tuple, strides: tuple,
                     alpha) -> Tensor:
    """The gradient of the first matrix of a product: grad @ mat2.T, or, when that
    matrix was column-major, (mat2 @ grad.T).T, which comes out column-major too."""
    if len(sizes) == 2 and strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(mat2.mm(grad.t()).t(), alpha)
    return maybe_multiply(grad.mm(mat2.t()), alpha)


@_helper
def mm_mat2_backward(grad: Tensor, mat1: Tensor, sizes: tuple, strides: tuple,
                     alpha) -> Tensor:
    """The gradient of the second matrix of a product: mat1.T @ grad, or (grad.T @
    mat1).T when that matrix was column-major."""
    if len(sizes) == 2 and strides[0] == 1 and strides[1] == sizes[0]:
        return maybe_multiply(grad.t().mm(mat1).t(), alpha)
    return maybe_multiply(mat1.t().mm(grad), alpha)


@_helper
def unsqueeze_to(grad: Tensor, sizes: tuple, dims=None) -> Tensor:
    """The gradient of a squeeze: the squeezed dims (those of `dims`, or all) put back
    where the input had a 1."""
    if dims is not None:
        dims = {d % len(sizes) for d in (dims if isinstance(dims, tuple) else (dims,))}
    for d, n in enumerate(sizes):
        if n == 1 and (dims is None or d in dims):
            grad = grad.unsqueeze(d)
    return grad


@_helper
def permute_backwards(grad: Tensor, dims: tuple) -> Tensor:
    """The gradient of `permute(dims)`: the inverse permutation."""
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return grad.permute(inverse)


@_helper
def slice_backward_wrapper(grad: Tensor, sizes: tuple, dim: int, start: int, end: int,
                           step: int) -> Tensor:
    """The gradient of a slice: `slice_backward`, the bounds as the slice kept them
    (an end not given, None, as INT64_MAX)."""
    end = 2**63 - 1 if end is None else end  # (INT64_MAX)
    return BACKWARD_OPS["slice_backward"](grad, sizes, dim, start, end, step)


@_helper
def split_with_sizes_backward(grads: list, split_sizes: tuple, dim: int,
                              sizes: tuple) -> Tensor:
    """The gradient of split: the pieces' gradients joined again (`cat`), zeros for a
    piece that got none."""
    dim %= len(sizes)
    dtype = next(g.dtype for g in grads if g is not None)
    pieces = []
    for g, length in zip(grads, split_sizes):
        if g is None:
            g = zeros(sizes[:dim] + (length,) + sizes[dim + 1:], dtype=dtype)
        pieces.append(g)
    return _names()["cat"](pieces, dim)


@_helper
def split_backward(grads: list, split_size: int, dim: int, sizes: tuple) -> Tensor:
    """The gradient of split into pieces of `split_size` (the last may be smaller)."""
    n = sizes[dim % len(sizes)]
    lengths = tuple(min(split_size, n - s) for s in range(0, n, split_size)) if n else (0,)
    return split_with_sizes_backward(grads, lengths, dim, sizes)


@_helper
def unbind_backward(grads: list, dim: int) -> Tensor:
    """The gradient of unbind: the slices' gradients stacked again, zeros (expanded
    from one) for a slice that got none."""
    like = next(g for g in grads if g is not None)
    zero = zeros((), dtype=like.dtype).expand(like.shape)
    return _names()["stack"]([zero if g is None else g for g in grads], dim)


@_helper
def clamp_backward(grad: Tensor, self: Tensor, min, max) -> Tensor:  # noqa: A002
    """The gradient of clamp with number bounds: `grad` where `self` is within them
    (at a bound too), else 0."""
    if min is None and max is None:
        return grad
    zero = zeros((), dtype=grad.dtype)
    if min is not None and max is not None:
        return _names()["where"]((self >= min) & (self <= max), grad, zero)
    return _names()["where"](self >= min if max is None else self <= max, grad, zero)


@_helper
def div_tensor_self_backward(grad: Tensor, other, self_dtype, rounding_mode) -> Tensor:
    """The gradient of `self / other` for self: zeros for a rounded quotient."""
    if rounding_mode is not None:
        return zeros_like(grad, dtype=self_dtype)
    return grad / other


@_helper
def div_tensor_other_backward(grad: Tensor, self: Tensor, other: Tensor,
                              rounding_mode) -> Tensor:
    """The gradient of `self / other` for other: zeros for a rounded quotient."""
    if rounding_mode is not None:
        return zeros_like(grad, dtype=other.dtype)
    return -grad * ((self / other) / other)


@_helper
def pow_backward_self(grad: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    """The gradient of `self ** exponent` for self (two tensors): exponent * self **
    (exponent - 1), and 0 where the exponent is 0."""
    slope = grad * (exponent * self.pow(exponent - Scalar(1)))
    return _names()["where"](exponent == 0.0, zeros((), dtype=grad.dtype), slope)


def _log(number) -> float:
    """C++'s Scalar.log(): -inf at 0 and nan below (where math.log raises)."""
    if number > 0 or number != number:
        return math.log(number)
    return -math.inf if number == 0 else math.nan


@_helper
def pow_backward_exponent(grad: Tensor, self, exponent: Tensor, result: Tensor) -> Tensor:
    """The gradient of `self ** exponent` for the exponent: result * log(self), and 0
    where self is 0 and the exponent not negative (0 ** p is flat in p there).
    `self` is a tensor, or a number (`2 ** x`: a Scalar)."""
    where = _names()["where"]
    zero = zeros((), dtype=grad.dtype)
    if isinstance(self, Scalar):
        slope = result * Scalar(_log(self.value))
        if self.value == 0:
            return grad * where(exponent >= 0, zero, slope)
        return grad * slope
    dtype = result_type(self, exponent)
    self_ = self if self.dtype is dtype else self.to(dtype)
    return grad * where((self == 0) & (exponent >= 0), zero, result * self_.log())


@_helper
def ger(vec1: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors, as PyTorch computes it: vec1 as a column
    times vec2 (broadcast)."""
    return vec1.reshape(vec1.shape[0], 1) * vec2


@_helper
def evenly_distribute_backward(grad: Tensor, input: Tensor, value: Tensor) -> Tensor:  # noqa: A002
    """The gradient of max()/min() of a whole tensor: shared evenly by the elements
    equal to the result (the NaNs, when the result is NaN)."""
    # (x != x: whether x is NaN)
    mask = input != input if bool(value != value) else input == value
    return grad.new_zeros(tuple(input.shape)).masked_fill_(mask, grad / mask.sum())


@_helper
def mse_loss_double_backward(grad: Tensor, input: Tensor, reduction: int) -> Tensor:  # noqa: A002
    """The slope of mse_loss_backward in self: 2 * grad, divided in place by the
    number of elements for "mean" (reduction 1)."""
    grad_input = Scalar(2) * grad
    if reduction == 1:
        BACKWARD_OPS["div_scalar_"](grad_input, input.numel())
    return grad_input


# softmax_backward_data's slope in its output, applied to `grad` (C++'s order of
# evaluation, as in a formula: see `_AsInCpp`).
_SOFTMAX_DOUBLE_BACKWARD = Formula(
    "output", "grad_output * grad - (output * grad_output).sum(dim, True) * grad "
              "- grad_output * (output * grad).sum(dim, True)")


@_helper
def softmax_double_backward(grad: Tensor, grad_output: Tensor, dim: int,
                            output: Tensor) -> Tensor:
    """The gradient of _softmax_backward_data for its output."""
    return _SOFTMAX_DOUBLE_BACKWARD(grad, grad_output=grad_output, dim=dim, output=output)


@_helper
def std_backward(result: Tensor, grad: Tensor, self: Tensor, dim, correction,
                 keepdim: bool) -> Tensor:
    """The gradient of std: var's, of grad / (2 * std), zeroed in place where the std
    is zero."""
    grad_var = (grad / (result * Scalar(2))).masked_fill_(result == 0, 0)
    return BACKWARD_OPS["var_backward"](grad_var, self, dim, correction, keepdim)


@_helper
def cumsum_backward(grad: Tensor, dim: int) -> Tensor:
    """The gradient of cumsum: a cumulative sum from the end (flip, cumsum, flip)."""
    if grad.numel() <= 1 or grad.shape[dim] == 1:
        return grad
    flip = BACKWARD_OPS["flip"]
    return flip(flip(grad, (dim,)).cumsum(dim), (dim,))


def _unsqueeze_multiple(t: Tensor, dims, ndim: int) -> Tensor:
    """`t` with the reduced `dims` (all, when None or empty) put back as size 1."""
    if dims is None or dims == ():
        return t
    dims = dims if isinstance(dims, tuple) else (dims,)
    for d in sorted(d % ndim for d in dims):
        t = t.unsqueeze(d)
    return t


@_helper
def linalg_vector_norm_backward(grad: Tensor, self: Tensor, ord, norm: Tensor, dim,  # noqa: A002
                                keepdim: bool) -> Tensor | None:
    """The gradient of a vector norm of order `ord` (PyTorch's norm_backward)."""
    p = float(ord)
    if not keepdim and self.dim() != 0:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
        norm = _unsqueeze_multiple(norm, dim, self.dim())
    if p == 0.0:
        return None
    if p == 1.0:
        return self.sgn() * grad
    if p == 2.0:
        return grad * (self / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        self_abs = self.abs()
        mask = (self_abs == norm) | (self_abs != self_abs)  # (or NaN)
        dims = tuple(range(self.dim())) if dim is None or dim == () else dim
        # (C++ evaluates the right operand of `*` first: so does this, for the nodes'
        # numbers)
        shared = (grad / mask.sum(dims, True)) * mask
        return self.sgn() * shared
    if p < 1.0:
        powered = self.abs().pow_(p - 1).masked_fill_(self == 0, 0)
        self_scaled = self.sgn() * powered
        scale = norm.pow(1 - p)
        return self_scaled * grad * scale
    if p < 2.0:
        powered = self.abs().pow_(p - 1)
        self_scaled = self.sgn() * powered
    else:
        self_scaled = self * self.abs().pow_(p - 2)
    scale_v = grad / norm.pow(p - 1)
    scale_v.masked_fill_(norm == 0, 0)
    return self_scaled * scale_v


@_helper
def embedding_backward(grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int,
                       scale_grad_by_freq: bool, sparse: bool) -> Tensor:
    """The gradient of embedding for its weight: the dense one (minigrad has no
    sparse gradients)."""
    return BACKWARD_OPS["embedding_dense_backward"](grad, indices, num_weights, padding_idx,
                                                    scale_grad_by_freq)


@_helper
def embedding_dense_double_backward(grad: Tensor, indices: Tensor, padding_idx: int) -> Tensor:
    """The gradient of embedding_dense_backward: the looked-up rows of `grad` (zero
    for the padding index), shaped like the embedding's output."""
    gg_weight = BACKWARD_OPS["index_select"](grad, 0, indices.reshape(-1))
    if padding_idx >= 0:
        gg_weight.masked_fill_((indices == padding_idx).reshape(-1, 1), 0)
    return gg_weight.view(*indices.shape, -1)

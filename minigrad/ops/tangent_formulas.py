"""Forward-mode formulas: how an op's output tangent follows from its inputs' tangents.

PyTorch writes them in `derivatives.yaml` beside the backward formulas, as the
`result:` entry of each op, and minigrad keeps them beside its own, as a node class's
`tangent`:

* `AUTO_ELEMENT_WISE` ("auto_element_wise"): an element-wise op of one input, whose
  tangent is its backward formula with the input's tangent in place of `grad`
  (exp's `grad * result` gives `self_t * result`);
* `SAME_VIEW` ("auto_linear" for a view op): the same view of the input's tangent;
* `Tangent("...")`: a formula written out, reading `self_t`, `other_t`, ... (the
  inputs' tangents), `self_p`, `other_p`, ... (their values, also as `self`,
  `other`), `result` and what the node saved (`alpha`, `dim`). `linear=True` marks
  PyTorch's `auto_linear` for an op that is not a view: the op itself applied to the
  tangent (`self_t.sum(dim, keepdim)`). A plain string other than the two above is
  such a formula too (`tangent = "self_t.masked_fill(mask, 0)"`), for a module that
  has no reason to import `Tangent`;
* `BY_DECOMPOSITION` ("decomposition"): no formula; the op runs its decomposition
  into smaller ops on the dual inputs and gives its outputs the tangents those ops
  compute (PyTorch's jvp decompositions, for `native_batch_norm_backward` and
  `native_layer_norm_backward`).

An input without a tangent is `ZERO` in a formula, PyTorch's "efficient zero
tensor": multiplying by it gives ZERO, adding it changes nothing, so
`other_t * self_p + self_t * other_p` computes exactly `self_t * other_p` when only
`self` has a tangent. `apply_tangent` (attached to `Node`, as `apply_recording` is)
evaluates a node's tangent; `autograd/tangents.py` decides when.
"""

from __future__ import annotations

from .._creation import zeros_like
from .._registry import attach
from ..arrays.scalars import signed_dims
from ..autograd.graph import Node, SavedNumber, SavedTensor
from ..autograd.tangents import AUTO_ELEMENT_WISE, BY_DECOMPOSITION, SAME_VIEW
from ..tensor import Tensor
from .formulas import LIST_INPUT, Formula, Scalar, input_names

__all__ = ["AUTO_ELEMENT_WISE", "BY_DECOMPOSITION", "SAME_VIEW", "ZERO", "Tangent",
           "apply_tangent", "describe"]


class Tangent(Formula):
    """A tangent formula written out (PyTorch's `result:` entry). `inputs`: the names
    of the node's inputs, in order, where the node has no backward formulas that name
    them."""

    __slots__ = ("inputs", "linear")

    def __init__(self, text: str, inputs: tuple[str, ...] | None = None,
                 linear: bool = False) -> None:
        super().__init__("result", text)
        self.inputs = inputs
        self.linear = linear


class _Zero:
    """The tangent of an input that has none (PyTorch's efficient zero tensor)."""

    def __repr__(self) -> str:
        return "ZERO"

    def __mul__(self, other):
        return self

    __rmul__ = __truediv__ = __mul__

    def __neg__(self):
        return self

    def __add__(self, other):
        # (PyTorch's zero-tensor addition returns a copy of the other operand)
        return self if other is self else other.clone()

    __radd__ = __add__

    def __sub__(self, other):  # ZERO - other
        return self if other is self else -other

    def __rsub__(self, other):  # other - ZERO
        return other.clone()

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self  # (`ZERO.mm(x)`: a product with zero)


ZERO = _Zero()


def _product(op: str):
    """`op(a, b)` for a product op (`mm`, `mv`, `dot`, `bmm`): ZERO if a factor is."""
    def product(a, b):
        return ZERO if a is ZERO or b is ZERO else getattr(a, op)(b)
    product.__name__ = op
    return product


def dense(tangent, primal):
    """`tangent` as a tensor a formula can pass to any op: ZERO becomes real zeros
    like `primal` (0.0 for a number), as PyTorch materializes its zero tensor for ops
    that have no shortcut for it (`where`)."""
    if tangent is not ZERO:
        return tangent
    return zeros_like(primal) if isinstance(primal, Tensor) else 0.0


# The products tangent formulas call, as PyTorch's `at::mm(self_t, mat2_p)`.
_PRODUCTS = {op: _product(op) for op in ("mm", "mv", "dot", "bmm")}


_FROM_TEXT: dict[str, Tangent] = {}


def kind_of(cls: type[Node]):
    """`cls.tangent`, a plain formula string made a `Tangent` (once per text)."""
    kind = cls.tangent
    if isinstance(kind, str) and kind not in (AUTO_ELEMENT_WISE, SAME_VIEW, BY_DECOMPOSITION):
        if kind not in _FROM_TEXT:
            _FROM_TEXT[kind] = Tangent(kind)
        return _FROM_TEXT[kind]
    return kind


def _input_names(cls: type[Node]) -> tuple[str, ...]:
    kind = kind_of(cls)
    if isinstance(kind, Tangent) and kind.inputs is not None:
        return kind.inputs
    return input_names(cls)


def apply_tangent(node: Node, inputs: tuple, tangents: list, result: Tensor) -> Tensor:
    """The tangent of `node`'s output (`Node.apply_tangent`): its formula evaluated on
    the inputs (`inputs`, tensors or numbers), their tangents (None: ZERO), the output
    and the values the op saved on the node."""
    cls = type(node)
    names = dict(_PRODUCTS, dense=dense)
    inputs_named = _input_names(cls)
    for name, value in node._saved.items():
        if isinstance(value, SavedNumber):
            names[name] = value.number(node)
        elif not isinstance(value, SavedTensor):
            names[name] = Scalar(value) if name in cls.scalars else signed_dims(value)
        elif name not in inputs_named and name != "result":  # (where's condition)
            names[name] = value.unpack(node)
    for name, value in cls.saved_defaults.items():
        if name not in names:
            names[name] = Scalar(value) if name in cls.scalars else value
    if inputs_named == (LIST_INPUT,):  # (cat's and stack's list: one input per tensor)
        inputs, tangents = (list(inputs),), [[ZERO if t is None else t for t in tangents]]
    for name, primal, tangent in zip(inputs_named, inputs, tangents):
        names[name] = names[name + "_p"] = primal
        names[name + "_t"] = ZERO if tangent is None else tangent
    names["result"] = result
    kind = kind_of(cls)
    if kind == AUTO_ELEMENT_WISE:
        backward = cls.formulas[0]
        out = backward(names[backward.input + "_t"], **names)
    else:
        out = kind(None, **names)
    return zeros_like(result) if out is ZERO else out


attach(Node, "apply_tangent", apply_tangent)


def reads_self(cls: type[Node]) -> bool:
    """Whether `cls`'s tangent reads its first input's values (so an in-place op
    keeps them from before the write)."""
    kind = kind_of(cls)
    names = cls.formulas[0].names if kind == AUTO_ELEMENT_WISE else kind.names
    first = _input_names(cls)[0]
    return first in names or first + "_p" in names


attach(Node, "tangent_reads_self", classmethod(reads_self))


def describe(cls: type[Node]) -> str | None:
    """How docs/ops.md shows a node's tangent: "auto_element_wise", "auto_linear",
    "decomposition", or the formula; None where minigrad has none."""
    kind = kind_of(cls)
    if kind is None or isinstance(kind, str):
        return kind
    return f"auto_linear: {kind.text}" if kind.linear else kind.text

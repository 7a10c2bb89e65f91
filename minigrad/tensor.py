"""`Tensor`: a numpy array plus the bookkeeping autograd needs.

The autograd-relevant state, as in PyTorch:

* `grad_fn` / `_output_nr`: which backward node produced this tensor (None for a leaf).
* `requires_grad`: set by the user on leaves; every op output with a `grad_fn` has it.
* `grad`: filled in by backward on leaves (and on non-leaves that `retain_grad()`).
* `_version`: a counter shared with every view of the same data, bumped by each
  in-place op. Saved tensors remember it so backward can refuse stale values.
* `_base`: for a view, the tensor whose memory it looks at.

Ops live in `minigrad.ops`; they are attached as methods at the bottom of
`minigrad/__init__.py` so this file stays about the mechanism.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _dtype
from ._dtype import dtype as DType
from .autograd import engine
from .autograd.grad_mode import STATE
from .autograd.graph import (
    AccumulateGrad,
    Node,
    RemovableHandle,
    capture_forward_trace,
    short_name,
)


class VersionCounter:
    """How many times the memory behind a tensor was modified in place.

    `value` starts as the class's 0 and becomes the counter's own on the first
    bump; most tensors are never modified, so making one stays cheap."""

    value = 0


_WARNED_FLOAT = False  # `float(t)` on a tensor requiring grad warns only once


def warn_scalar_conversion(t: Tensor, stacklevel: int) -> None:
    """PyTorch's warning when `float(t)` or `tensor([t, ...])` turns a tensor that
    requires grad into a number (cut off from the graph): once per process, for both
    together (`t.item()` does not warn)."""
    global _WARNED_FLOAT
    if t.requires_grad and not _WARNED_FLOAT:
        _WARNED_FLOAT = True
        warnings.warn(
            "Converting a tensor with requires_grad=True to a scalar may lead to "
            "unexpected behavior.\nConsider using tensor.detach() first.",
            UserWarning, stacklevel=stacklevel,
        )

# How a view came to be, which decides whether it may be modified in place.
DEFAULT = "default"
NO_GRAD_MODE = "no_grad_mode"
MULTI_OUTPUT_NODE = "multi_output_node"
IN_CUSTOM_FUNCTION = "in_custom_function"


class ViewInfo:
    """Links a view to its base tensor.

    `attr_version` is the shared version at which the view's `grad_fn` was last
    valid: once the base (or any view of it) is modified in place, the view's
    `grad_fn` is rebuilt from the base's new history on next access.
    """

    __slots__ = ("base", "creation_meta", "attr_version")

    def __init__(self, base: Tensor, creation_meta: str, version: int) -> None:
        self.base = base
        self.creation_meta = creation_meta
        self.attr_version = version


class device:  # noqa: N801 - mirrors torch.device
    """Where a tensor lives; minigrad only has the CPU."""

    __slots__ = ("type",)

    def __init__(self, type: str = "cpu") -> None:  # noqa: A002
        if str(type) != "cpu":
            raise RuntimeError(f"minigrad runs on the CPU only (got device={type!r})")
        self.type = "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other) -> bool:
        return str(other) == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


_CPU = device()
# The C++ type names PyTorch's messages use for the dtypes (assigning a .grad)
_CPP_TYPE = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}


class Size(tuple):
    """A tensor's shape: a tuple that prints like `torch.Size([2, 3])`."""

    def __repr__(self) -> str:
        return f"minigrad.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


_new_object = object.__new__  # (looked up once: a tensor is made for every result)


class Tensor:
    """A multi-dimensional array that can take part in automatic differentiation."""

    # What every tensor has lives in slots. What few tensors ever get (a `.grad`, a
    # view's base, a leaf's accumulator, hooks) defaults to the class's value and is
    # set per tensor only when used: ops make a tensor for every result, so this
    # keeps making one cheap.
    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad_fn",
        "_output_nr",
        "_version_counter",
        "__dict__",
        "__weakref__",
    )
    _grad: Tensor | None = None
    _view: ViewInfo | None = None
    _grad_acc = None  # a weak reference to the leaf's AccumulateGrad, once made
    _hooks: dict | None = None
    _retains_grad = False
    _is_param = False
    # A Python number a function form wrapped (`minigrad.mul(2, t)`): promotes as the number.
    _wrapped_number = False

    # numpy should defer to Tensor's reflected operators (ndarray * Tensor).
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError(
            "create tensors with minigrad.tensor(...), minigrad.zeros(...) and friends"
        )

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool = False) -> Tensor:
        """Wrap a numpy array (no copy) as a fresh leaf with its own version counter."""
        t = _new_object(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._output_nr = 0
        t._version_counter = VersionCounter()
        return t

    @classmethod
    def _make_output(cls, data, node: Node, output_nr: int, counter: VersionCounter) -> Tensor:
        """Rebuild a saved output tensor (see `SavedTensor`)."""
        t = cls._make(data)
        t._grad_fn = node
        t._output_nr = output_nr
        t._version_counter = counter
        return t

    # -- basic properties ---------------------------------------------------------------

    @property
    def dtype(self) -> DType:
        return _dtype._BY_NUMPY[self._data.dtype]

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the length of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    def nelement(self) -> int:
        return self._data.size

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    @property
    def device(self) -> device:
        return _CPU

    @property
    def is_cuda(self) -> bool:
        return False

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim: int | None = None):
        strides = element_strides(self._data)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def element_size(self) -> int:
        return self._data.itemsize

    # -- autograd state -------------------------------------------------------------------

    @property
    def grad_fn(self) -> Node | None:
        """The backward node that produced this tensor (None for leaves)."""
        view = self._view
        if view is not None and view.attr_version != self._version_counter.value:
            self._refresh_view_grad_fn()
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        if self._requires_grad or self._grad_fn is not None:
            return True
        # A view requires grad when its base does, even one made in no_grad mode.
        view = self._view
        return view is not None and view.base.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag and self.grad_fn is not None:
            # PyTorch's setter refuses even a no-op change on a non-leaf (requires_grad_ allows it).
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(
            flag, "only Tensors of floating point and complex dtype can require gradients"
        )

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` on a leaf (in place); returns the tensor itself."""
        return self._set_requires_grad(
            requires_grad, "only Tensors of floating point dtype can require gradients"
        )

    def _set_requires_grad(self, requires_grad: bool, int_message: str) -> Tensor:
        # PyTorch words the integer-dtype refusal differently for each way of asking.
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(int_message)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, or non-leaves that `retain_grad()`)."""
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                "accessed. Its .grad attribute won't be populated during "
                "autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                "access the non-leaf Tensor by mistake, make sure you access the leaf "
                "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                "information.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_TYPE[value.dtype.name]}'"
                    f" to a tensor with grad_dtype '{self.dtype.type_name}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                    "set the tensor's grad_dtype attribute with a specific dtype, or None to "
                    "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    "tensor and its gradient may break downstream systems that assume they "
                    "match.")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor"
                    f" of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Ask backward to keep this non-leaf tensor's gradient in `.grad`."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return  # leaves keep their gradient anyway
        self._retains_grad = True
        self.grad_fn._extra("_retains_grad")[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """`hook(grad)` runs when this tensor's gradient is computed; a returned
        tensor replaces the gradient."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn
        if node is None:
            if self._hooks is None:
                self._hooks = {}
                acc = self._grad_acc() if self._grad_acc is not None else None
                if acc is not None:  # the engine's short path would skip the hooks
                    acc._plain = False
            handle = RemovableHandle(self._hooks)
            self._hooks[handle._key] = hook
            return handle
        hooks = node._extra("_tensor_pre_hooks").setdefault(self._output_nr, {})
        handle = RemovableHandle(hooks)
        hooks[handle._key] = hook
        return handle

    @property
    def _version(self) -> int:
        return self._version_counter.value

    @property
    def _base(self) -> Tensor | None:
        return self._view.base if self._view is not None else None

    def _is_view(self) -> bool:
        return self._view is not None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def _edge(self) -> tuple:
        """Where a gradient for this tensor goes: `(grad_fn, output_nr)`, the leaf's
        `AccumulateGrad`, or `(None, 0)` when no gradient is needed."""
        node = self.grad_fn
        if node is not None:
            return (node, self._output_nr)
        if self._requires_grad:
            return (self._grad_accumulator(), 0)
        return (None, 0)

    def _grad_accumulator(self) -> AccumulateGrad:
        """The leaf's one `AccumulateGrad`, created on first use and held weakly, so
        it lives exactly as long as some graph uses it."""
        acc = self._grad_acc() if self._grad_acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._grad_acc = weakref.ref(acc)
        return acc

    def _refresh_view_grad_fn(self) -> None:
        """The base was modified in place since this view's `grad_fn` was made: the
        view now differentiates through the base's new history (AsStridedBackward0)."""
        from .autograd.graph import move_retained_grad
        from .ops.views import AsStridedBackward0

        view = self._view
        base = view.base
        if self._grad_fn is None and not base.requires_grad:
            return  # never part of a graph: nothing to rebuild
        if view.creation_meta != DEFAULT:
            # No AsStrided history can be made up for these (see `view_rebase_error`).
            raise view_rebase_error(self, indirect=True)
        view.attr_version = self._version_counter.value
        old_fn, old_nr = self._grad_fn, self._output_nr
        if base.requires_grad and self.dtype.is_floating_point:
            node = AsStridedBackward0((base._edge(),))
            AsStridedBackward0.describe(node, self, base)
            self._grad_fn = node
            self._output_nr = 0
        else:
            self._grad_fn = None
        move_retained_grad(self, old_fn, old_nr)

    # -- detaching ------------------------------------------------------------------------

    def detach(self) -> Tensor:
        """The same memory and version counter, cut off from the graph."""
        t = Tensor._make(self._data)
        t._version_counter = self._version_counter
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor off from the graph, in place."""
        if self._view is not None:  # any view, even one outside every graph
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The same memory, detached, with its OWN version counter: in-place changes
        through `.data` are invisible to autograd's checks."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and not value.dtype.is_floating_point:
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or "
                "complex dtype"
            )
        self._data = value._data

    # -- conversion -----------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The underlying array (shared memory, like PyTorch)."""
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        return self._data

    def item(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def __float__(self) -> float:
        warn_scalar_conversion(self, stacklevel=3)
        return float(self._one_element())

    def __int__(self) -> int:
        return int(self._one_element())

    def _one_element(self):
        """The value of a one-element tensor, for `float(t)` and `int(t)` (which
        raise ValueError where `item()` raises RuntimeError)."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            how_many = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {how_many} is ambiguous")
        return bool(self._data.reshape(()).item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self._data.item(), spec)
        return repr(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self) -> str:
        from ._repr import tensor_repr

        return tensor_repr(self)

    def __reduce__(self):
        raise NotImplementedError("minigrad tensors cannot be pickled")

    # -- backward -------------------------------------------------------------------------

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs=None,
    ) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves (see `autograd.backward`)."""
        engine.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim, with PyTorch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


# -- recording ops in the graph ----------------------------------------------------------


def record(node_cls: type[Node], output: Tensor | None, *inputs,
           like_output: bool = False) -> Node | None:
    """Attach a new `node_cls` node as `output.grad_fn` if any input requires grad.

    `inputs` are the op's differentiable inputs in order (tensors, or None / Python
    numbers for positions that cannot need a gradient). Each input that needs a
    gradient gives the node an edge to its producer and its shape and dtype (which
    the engine checks that gradient against); the others get `(None, 0)` and None.
    An element-wise op whose inputs that may need a gradient all have the output's
    shape and dtype says so with `like_output`: its node keeps no input shapes and
    the engine checks none of its gradients (see `Node.elementwise`). Nor does a
    node whose formula always fits its inputs (`Node.exact`).
    Returns the node so the op can save what its backward needs, or None when no
    graph is recorded. (In-place ops pass `output=None` and attach the node
    themselves, see `begin_inplace`.)
    """
    if not STATE.grad_enabled:
        return None
    edges = []
    needed = False
    for t in inputs:  # this runs for every op, so `Tensor._edge` is spelled out here
        if not isinstance(t, Tensor):
            edges.append(_NO_EDGE)
            continue
        fn = t._grad_fn if t._view is None else t.grad_fn
        if fn is not None:
            edges.append((fn, t._output_nr))
        elif t._requires_grad:
            edges.append((t._grad_accumulator(), 0))
        else:
            edges.append(_NO_EDGE)
            # A view requires grad when its base does, even with no edge to follow
            # (made in no_grad mode, or before the base required grad): the output
            # is still recorded, with a node whose gradient for it goes nowhere.
            if t._view is not None and t._view.base.requires_grad:
                needed = True
            continue
        needed = True
    if not needed:
        return None
    if node_cls.exact or (like_output and node_cls.elementwise):
        node = node_cls(tuple(edges), None)
    else:
        node = node_cls(tuple(edges), _input_meta(inputs, edges))
    if output is not None:
        output._grad_fn = node
        output._output_nr = 0
    if STATE.anomaly_enabled:
        node._forward_trace = capture_forward_trace()
        node._plain = False
    return node


def record_elementwise(node_cls: type[Node], output: Tensor, t: Tensor, *numbers) -> Node | None:
    """`record` for the commonest op of all: an element-wise op of one tensor `t`
    (`exp(x)`, `y + 0.5`), whose output is just like `t`, for an `elementwise` node
    class. `numbers`: the op's Python number, at most one, when the node counts it
    as an input (`x * 2` has two inputs); its edge leads nowhere. The same rule as
    `record`, written out for one tensor because every op of a long chain pays for
    it; anything unusual (anomaly mode, an input that needs no gradient) goes to
    `record`."""
    if not STATE.grad_enabled:
        return None
    fn = t._grad_fn if t._view is None else t.grad_fn
    if fn is not None:
        edge = (fn, t._output_nr)
    elif t._requires_grad:
        edge = (t._grad_accumulator(), 0)
    else:
        edge = None
    if edge is None or STATE.anomaly_enabled:
        return record(node_cls, output, t, *numbers, like_output=True)
    node = node_cls((edge, _NO_EDGE) if numbers else (edge,), None)
    output._grad_fn = node
    output._output_nr = 0
    return node


def _input_meta(inputs: tuple, edges: list) -> tuple:
    """(shape, dtype) of each input with an edge, which its gradient must match;
    None for the others."""
    meta = []
    for t, (fn, _) in zip(inputs, edges):
        meta.append(None if fn is None else (t._data.shape, t._data.dtype))
    return tuple(meta)


_NO_EDGE = (None, 0)


def zero_grad_in_place(grad: Tensor) -> None:
    """Fill a `.grad` with zeros where it is (`zero_grad(set_to_none=False)`). As in
    PyTorch it is first cut off its own graph (or stops requiring grad, if it is a
    leaf): zeroing it in place is then allowed."""
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    grad.zero_()


def element_strides(data: np.ndarray) -> tuple:
    """The strides in elements, as PyTorch counts them (numpy counts bytes). numpy
    gives a new empty array zero strides; PyTorch gives it row-major ones, counting
    an empty dim as 1 ((3, 0) -> (1, 1))."""
    size = data.itemsize
    if data.ndim == 2 and data.size:  # a matrix product's operand: the usual case
        rows, columns = data.strides
        return (rows // size, columns // size)
    if data.size == 0 and not any(data.strides):
        strides, step = [], 1
        for n in reversed(data.shape):
            strides.append(step)
            step *= max(n, 1)
        return tuple(reversed(strides))
    return tuple([s // size for s in data.strides])


def make_view(base: Tensor, data: np.ndarray, creation_meta: str = DEFAULT) -> Tensor:
    """Wrap `data` (a numpy view into `base`'s memory) as a view of `base`: same
    version counter, `_base` pointing at the root base."""
    root = base._view.base if base._view is not None else base
    t = Tensor._make(data)
    t._version_counter = base._version_counter
    if not STATE.grad_enabled:
        creation_meta = NO_GRAD_MODE
    elif base._view is not None and base._view.creation_meta != DEFAULT:
        creation_meta = base._view.creation_meta
    t._view = ViewInfo(root, creation_meta, base._version_counter.value)
    return t


# -- in-place ops ----------------------------------------------------------------------------


def view_rebase_error(t: Tensor, indirect: bool) -> RuntimeError:
    """Why the history of view `t` cannot be rewritten after an in-place op on it
    (`indirect=False`) or on its base or another view of it (`indirect=True`).

    One output of unbind/split cannot get its own CopySlices (its node computes all
    outputs' gradients at once), a view made in no_grad mode has no history to
    rewrite, and rewriting a custom Function's output would bypass its backward, so
    PyTorch refuses all three rather than guess.
    """
    what = ("its base or another view of its base has been" if indirect else "is being")
    meta = t._view.creation_meta
    fn = t._grad_fn
    if meta == NO_GRAD_MODE or fn is None:
        # With a node, `t` is a view (made with grad) of a view made in no_grad mode.
        who = (f"Output {t._output_nr} of {short_name(fn.name())} is a view of a view which "
               "was created in" if fn is not None else "A view was created in")
        text = f"{who} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        text = (f"Output {t._output_nr} of {short_name(fn.name())} is a view and {what} "
                "modified inplace.")
    if meta == MULTI_OUTPUT_NODE:
        return RuntimeError(
            f"{text} This view is the output of a function that returns multiple views. "
            "Such functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one."
        )
    if meta == IN_CUSTOM_FUNCTION:
        return RuntimeError(
            f"{text} This view was created inside a custom Function (or because an input "
            "was returned as-is) and the autograd logic to handle view+inplace would "
            "override the custom backward associated with the custom Function, leading to "
            "incorrect gradients. This behavior is forbidden. You can fix this by cloning "
            "the output of the custom Function."
        )
    return RuntimeError(
        f"{text} Given that this use case is ambiguous and error-prone, it is forbidden. "
        "You can clarify your code by moving both the view and the inplace either both "
        "inside the no_grad block (if you don't want the inplace to be tracked) or both "
        "outside (if you want the inplace to be tracked)."
    )


def check_inplace(t: Tensor, other_requires_grad: bool = False) -> None:
    """PyTorch's rules for modifying a tensor in place while grad mode records."""
    if not STATE.grad_enabled:
        return
    if not (t.requires_grad or other_requires_grad):
        return
    view = t._view
    if view is not None:
        if view.creation_meta != DEFAULT:
            raise view_rebase_error(t, indirect=False)
        # Whether the base requires grad does not matter (PyTorch checks only is_leaf).
        if t.requires_grad and view.base.is_leaf:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
    if t.requires_grad and t.is_leaf:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def check_no_overlap(t: Tensor) -> None:
    """An expanded tensor has several elements in one memory place: PyTorch refuses
    to write into it rather than let the writes race."""
    data = t._data
    if any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the "
            "operation."
        )


def begin_inplace(node_cls: type[Node], t: Tensor, *others) -> Node | None:
    """Check the in-place rules and, if a graph must be recorded, make the node.

    Called *before* the data changes: `t`'s current `grad_fn` becomes the new
    node's first input, `others` (the op's other operands) the following ones.
    After computing, the op calls `finish_inplace`.
    """
    others_require_grad = any(isinstance(x, Tensor) and x.requires_grad for x in others)
    check_inplace(t, others_require_grad)
    check_no_overlap(t)
    return record(node_cls, None, t, *others)


def finish_inplace(t: Tensor, node: Node | None) -> None:
    """Bump the version (every in-place op does, tracked or not) and make `node`
    the tensor's new producer."""
    t._version_counter.value += 1
    if node is not None:
        rebase_history(t, node)


def rebase_history(t: Tensor, node: Node) -> None:
    """Make `node` the new producer of `t` after an in-place op."""
    from .autograd.graph import move_retained_grad

    view = t._view
    if view is not None and t.dtype.is_floating_point:
        from .ops.views import CopySlices

        base = view.base
        old_fn, old_nr = base._grad_fn, base._output_nr
        base._grad_fn = CopySlices(base, t, node)
        base._output_nr = 0
        move_retained_grad(base, old_fn, old_nr)
        t._refresh_view_grad_fn()  # (moves the view's own retained gradient)
    else:
        old_fn, old_nr = t._grad_fn, t._output_nr
        t._grad_fn = node
        t._output_nr = 0
        move_retained_grad(t, old_fn, old_nr)


def as_tensor_arg(x: Any) -> Tensor | float | int | bool:
    """Pass tensors and Python numbers through; reject everything else clearly."""
    if isinstance(x, (Tensor, float, int)):  # (a bool is an int)
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):  # `t + array`: PyTorch makes the array a tensor
        return Tensor._make(np.array(x, _dtype.from_numpy_dtype(x.dtype).np))
    if isinstance(x, complex):
        raise NotImplementedError("minigrad has no complex dtypes (float32, float64, int64 "
                                  "and bool only)")
    raise TypeError(f"unsupported operand type for a minigrad op: '{type(x).__name__}'")

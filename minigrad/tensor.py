"""`Tensor`: a numpy array plus the bookkeeping autograd needs.

The autograd-relevant state, as in PyTorch:

* `grad_fn` / `_output_nr`: which backward node produced this tensor (None for a leaf).
* `requires_grad`: set by the user on leaves; every op output with a `grad_fn` has it.
* `grad`: filled in by backward on leaves (and on non-leaves that `retain_grad()`).
* `_version`: a counter shared with every view of the same data, bumped by each
  in-place op. Saved tensors remember it so backward can refuse stale values.
* `_base`: for a view, the tensor whose memory it looks at.

Ops live in `minigrad.ops`; `minigrad/__init__.py` attaches them as methods (through
`_registry.attach`, the one registration point) so this file stays about the mechanism.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dtype
from ._device import device
from ._dtype import dtype as DType
from ._hooks import RemovableHandle
from ._warn import Once
from .arrays.layout import contiguous_strides, element_strides, is_efficient_zeros, with_strides
from .grad_mode import STATE

if TYPE_CHECKING:
    from .autograd.graph import Node


class VersionCounter:
    """How many times the memory behind a tensor was modified in place.

    `value` starts as the class's 0 and becomes the counter's own on the first
    bump; most tensors are never modified, so making one stays cheap."""

    value = 0


class _DispatchMode:
    """`on` while `allow_mutation_on_saved_tensors` is open (autograd/mutation.py sets
    it): PyTorch runs every op there through a Python dispatch mode, which hands a
    wrapped number on as a plain Python number, so an op on one fails (saved.py's
    `SavedNumberTensor`), and under which backward builds gradients out of place
    (`graph.bump_version`)."""

    on = False


DISPATCH_MODE = _DispatchMode()
_SCALAR_CONVERSION = Once()  # `float(t)` on a tensor requiring grad: once per process


def warn_scalar_conversion(t: Tensor, stacklevel: int) -> None:
    """PyTorch's warning when `float(t)` or `tensor([t, ...])` turns a tensor that
    requires grad into a number (cut off from the graph): once per process, for both
    together (`t.item()` does not warn)."""
    if t.requires_grad and _SCALAR_CONVERSION.due():
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


_CPU = device("cpu")
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
    # A Python number a function form wrapped (`minigrad.mul(2, t)`), or one a node saved
    # (`_saved_other` of `t * 2.5`): promotes as the number.
    _wrapped_number = False
    # Forward mode (`autograd/tangents.py`): the tangent of a dual tensor, and the
    # computation of one not computed yet.
    _fw_grad: Tensor | None = None
    _fw_pending = None

    # numpy should defer to Tensor's reflected operators (ndarray * Tensor).
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs) -> Tensor:
        """`minigrad.Tensor(data)` / `Tensor(*sizes)`: PyTorch's legacy constructor
        (float32). It is `_creation.legacy_tensor`, attached by `_creation.py` (through
        `_registry.attach`): the factories sit above this module."""
        return cls._legacy_new(*args, **kwargs)

    def __init__(self, *args, **kwargs) -> None:  # (everything happens in __new__)
        pass

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool = False) -> Tensor:
        """Wrap a numpy array (no copy) as a fresh leaf with its own version counter."""
        if not data.size and data.base is None and data.ndim and not any(data.strides):
            # (numpy's fresh array of no elements, zero strides: PyTorch's is row-major,
            # and views of it count their strides from those)
            data = with_strides(data.shape, data.dtype, contiguous_strides(data.shape))
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
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise TypeError(f"size(): argument 'dim' (position 1) must be int, "
                            f"not {type(dim).__name__}")
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
        data = self._data
        return bool(data.flags.c_contiguous) or is_efficient_zeros(data)

    def stride(self, dim: int | None = None):
        data = self._data  # (an efficient zero is row-major in PyTorch: it has no memory)
        strides = contiguous_strides(data.shape) if is_efficient_zeros(data) else \
            element_strides(data)
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
        if not isinstance(flag, bool):  # `x.requires_grad = "yes"` is not truth-tested
            raise RuntimeError("requires_grad must be a bool")
        if flag and self.grad_fn is not None:
            # PyTorch's setter refuses even a no-op change on a non-leaf (requires_grad_ allows it).
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(
            flag, "only Tensors of floating point and complex dtype can require gradients"
        )

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` on a leaf (in place); returns the tensor itself."""
        if not isinstance(requires_grad, bool):
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
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
        # (PyTorch asks the stored producer here: reading `.grad` of a view whose base
        # was modified since never rebuilds, or refuses to rebuild, its history.)
        if self._grad_fn is not None and not self._retains_grad:
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

    def numpy(self, *args, force: bool = False, **kwargs) -> np.ndarray:
        """The underlying array (shared memory, like PyTorch). `force=True` also
        gives it for a tensor that requires grad (as `detach().numpy()` would)."""
        if args:  # (PyTorch's argument parser's errors)
            raise TypeError(f"numpy() takes 0 positional arguments but {len(args)} "
                            f"{'was' if len(args) == 1 else 'were'} given")
        if kwargs:
            raise TypeError(f"numpy() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if type(force) is not bool:
            raise TypeError(f"numpy(): argument 'force' must be bool, not {type(force).__name__}")
        if self.requires_grad and not force:
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

    # -- supplied by the layers above -------------------------------------------------------
    # This module sits beneath the graph and the engine and imports neither. What a
    # tensor needs from them is attached to the class when they are imported, through
    # `_registry.attach` (as the ops' methods are, by `minigrad/__init__.py`):
    #   backward(gradient, retain_graph, create_graph, inputs)   autograd/entry_points.py
    #   _grad_accumulator()  a leaf's one AccumulateGrad          autograd/graph.py
    #   _refresh_view_grad_fn()  a view's history after its base
    #                        was modified in place (AsStrided)    autograd/inplace.py


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim, with PyTorch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


# -- helpers for the layers above -------------------------------------------------------


def zero_grad_in_place(grad: Tensor) -> None:
    """Fill a `.grad` with zeros where it is (`zero_grad(set_to_none=False)`). As in
    PyTorch it is first cut off its own graph (or stops requiring grad, if it is a
    leaf): zeroing it in place is then allowed."""
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    grad.zero_()


def make_view(base: Tensor, data: np.ndarray, creation_meta: str = DEFAULT) -> Tensor:
    """Wrap `data` (a numpy view into `base`'s memory) as a view of `base`: same
    version counter, `_base` pointing at the root base."""
    root = base._view.base if base._view is not None else base
    t = Tensor._make(data)
    t._version_counter = base._version_counter
    if not STATE.grad_enabled:
        creation_meta = NO_GRAD_MODE
    if creation_meta == DEFAULT and base._view is not None:
        # A plain view of a special view stays special; a special kind of its own
        # (unbind's outputs of a view made in no_grad mode) wins, as in PyTorch.
        creation_meta = base._view.creation_meta
    t._view = ViewInfo(root, creation_meta, base._version_counter.value)
    return t


def operand(x: Any) -> Tensor | float | int | bool:
    """An op's other operand: tensors and Python numbers pass through (a numpy array
    becomes a tensor, a numpy number a Python one); anything else is NotImplemented,
    which an operator's method hands back to Python (see `as_tensor_arg`)."""
    if isinstance(x, (Tensor, float, int)):  # (a bool is an int)
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):  # `t + array`: PyTorch makes the array a tensor
        return Tensor._make(np.array(x, _dtype.from_numpy_dtype(x.dtype).np))
    if isinstance(x, complex):
        raise NotImplementedError("minigrad has no complex dtypes (float32, float64, int64 "
                                  "and bool only)")
    return NotImplemented


def not_an_operand(op: str, x: Any, position: int = 1) -> TypeError:
    """PyTorch's error for an operand op `op` cannot take (`t.add("a")`)."""
    return TypeError(f"{op}(): argument 'other' (position {position}) must be Tensor, "
                     f"not {type(x).__name__}")


def as_tensor_arg(x: Any, op: str = "") -> Tensor | float | int | bool:
    """`operand(x)`, or a clear error for anything else (PyTorch's, for op `op`)."""
    value = operand(x)
    if value is NotImplemented:
        raise not_an_operand(op, x) if op else TypeError(
            f"unsupported operand type for a minigrad op: '{type(x).__name__}'")
    return value


def is_tensor(obj: Any) -> bool:
    """`minigrad.is_tensor(obj)`: whether obj is a Tensor."""
    return isinstance(obj, Tensor)


def numel(x: Tensor) -> int:
    """`minigrad.numel(x)`: its number of elements."""
    return x.numel()

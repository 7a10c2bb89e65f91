"""What a node keeps for backward: `SavedTensor` (a tensor with the version it had
when saved: backward refuses it if it changed since, and without `retain_graph` it is
released after the node ran), `SavedNumber` (a Python number an op saved), and the
per-thread stack of saved-tensor hooks they are packed with. The hooks' context
managers (`saved_tensors_hooks`, ...) are in `saved_hooks.py`; `graph.py` re-exports
them, where PyTorch has them (`torch.autograd.graph`).
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .._dtype import of_number
from ..grad_mode import ANOMALY, no_grad
from ..tensor import DISPATCH_MODE, Tensor

if TYPE_CHECKING:  # (graph.py stands on this module; the hints only name its Node)
    from .graph import Node

# Saved-tensor roles, used by the "what does each op save?" table.
INPUT = "input"
OUTPUT = "output"
VALUE = "value"  # (a number or a list of them, saved as it is: `SavedNumber`)

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


def short_name(node_name: str) -> str:
    """How PyTorch 2.13 names a producer in the version error: `ExpBackward0` is
    called `Exp`, `ClampBackward1` is `Clamp1`; C++ names stay as they are."""
    return re.sub(r"Backward(\d*)$", lambda m: m.group(1).lstrip("0"), node_name)


def _version_error(tensor_desc: str, producer: str | None, now: int, saved: int) -> RuntimeError:
    text = (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{tensor_desc}]"
    )
    if producer:
        text += f", which is {producer},"
    text += f" is at version {now}; expected version {saved} instead."
    if ANOMALY.enabled:
        text += (
            " Hint: the backtrace further above shows the operation that failed to "
            "compute its gradient. The variable in question was changed in there or "
            "anywhere later. Good luck!"
        )
    else:
        text += (
            " Hint: enable anomaly detection to find the operation that failed to compute "
            "its gradient, with minigrad.autograd.set_detect_anomaly(True, check_nan=False)."
        )
    return RuntimeError(text)


def _tensor_type(np_dtype) -> str:
    """PyTorch's legacy type name for a dtype ("FloatTensor"), used in messages."""
    from .._dtype import from_numpy_dtype

    return from_numpy_dtype(np_dtype).tensor_type


# Forward mode's `share_tangent(source, target)` (autograd/tangents.py, which stands
# above this module, sets it when imported): gives `target` the tangent of `source`.
SHARE_TANGENT: Callable = lambda source, target: None  # noqa: E731


class SavedTensor:
    """A tensor kept by a node for backward, with the version it was saved at.

    An *input* is kept as the tensor itself. An *output* of the node is kept only as
    its data and version counter: holding the output tensor would make a cycle
    (output -> grad_fn -> saved output), and then the graph could not be freed by
    reference counting. Unpacking rebuilds an equivalent tensor.
    """

    __slots__ = (
        "_tensor",
        "_data",
        "_counter",
        "_output_nr",
        "_view_fn",
        "saved_version",
        "is_output",
        "is_released",
        "_hooks",
        "_fw_output",
    )
    hooked = False  # True once saved through saved-tensor hooks (`HookedSavedTensor`)

    def __init__(self, tensor, is_output: bool = False) -> None:
        self.is_output = is_output
        self.is_released = False
        counter = self._counter = tensor._version_counter
        self.saved_version = counter.value
        self._output_nr = tensor._output_nr
        if is_output:  # (only an output's `_view_fn` and `_fw_output` are ever read)
            self._view_fn = None
            self._fw_output = None
            if tensor._fw_grad is not None or tensor._fw_pending is not None:
                # Forward mode: the output's tangent comes back with it when unpacked,
                # as PyTorch's SavedVariable keeps an output's forward gradient. (Held
                # through the output itself: its tangent may still be pending. The
                # cycle this makes lasts only as long as the dual level.)
                self._fw_output = tensor
            self._tensor = None
            self._data = tensor._data
            if tensor._view is not None and tensor.grad_fn is not None:
                # An in-place op on a view saved its output: the view's producer at
                # this moment (its rebuilt AsStridedBackward0) is, for as long as
                # something else keeps it alive, the node the version error names.
                # (It has none when the op recorded no graph, only a tangent.)
                self._view_fn = weakref.ref(tensor.grad_fn)
        else:
            self._tensor = tensor
            self._data = None
        if _pushed:  # (some thread is inside `saved_tensors_hooks`: the one cheap check)
            self._pack_with_default_hooks(tensor)

    @property
    def current_version(self) -> int:
        return self._counter.value

    def release(self) -> None:
        self._tensor = None
        self._data = None
        self._fw_output = None
        self.is_released = True

    def check(self, node: Node) -> None:
        """Raise PyTorch's errors if the tensor was freed or modified in place."""
        if self.is_released:
            raise RuntimeError(FREED_MESSAGE)
        now = self._counter.value
        if now != self.saved_version:
            # What the tensor is now, as PyTorch's message shows it: "[minigrad.FloatTensor [3]]".
            data = self._data if self.is_output else self._tensor._data
            desc = f"minigrad.{_tensor_type(data.dtype)} [{', '.join(map(str, data.shape))}]"
            if self.is_output:
                view_fn = self._view_fn() if self._view_fn is not None else None
                named = view_fn if view_fn is not None else node
                producer = f"output {self._output_nr} of {short_name(named.name())}"
            else:
                grad_fn = self._tensor.grad_fn
                producer = (
                    f"output {self._tensor._output_nr} of {short_name(grad_fn.name())}"
                    if grad_fn
                    else None
                )
            raise _version_error(desc, producer, now, self.saved_version)

    def array(self, node: Node):
        """The saved values as a numpy array, after the version check."""
        if self.is_released or self._counter.value != self.saved_version:
            self.check(node)  # raises
        return self._data if self.is_output else self._tensor._data

    def unpack(self, node: Node | None = None):
        """The saved tensor as a `Tensor` (what `grad_fn._saved_<name>` returns). A
        saved output is rebuilt with `node` as its `grad_fn`; called without one (as
        `node._raw_saved_result.unpack()`), PyTorch refuses to rebuild it."""
        if self.is_output and node is None and not self.is_released:
            raise RuntimeError(DETACHED_MESSAGE)
        self.check(node)
        if not self.is_output:
            return self._tensor
        # An in-place op on a view: while the view's producer then (its rebuilt
        # AsStridedBackward0) lives, PyTorch's unpacked output leads there.
        view_fn = self._view_fn() if self._view_fn is not None else None
        out = Tensor._make_output(self._data, node if view_fn is None else view_fn,
                                  self._output_nr, self._counter)
        if self._fw_output is not None:
            SHARE_TANGENT(self._fw_output, out)
        return out

    # The engine's slow path (`_check_saved_slowly`) calls `prepare` on each saved
    # tensor of a node in PyTorch's order before its formula runs, and the formula
    # reads them with `array` / `unpacked`: a version check here, an unpack hook call
    # for a `HookedSavedTensor`.
    def prepare(self, node: Node) -> None:
        self.check(node)

    def unpacked(self, node: Node):
        return self.unpack(node)

    # -- PyTorch's `torch._C._autograd.SavedTensor` surface (`node._raw_saved_<name>`)

    @property
    def data(self):
        """What is stored: the tensor itself for a saved input, a plain tensor on the
        saved data for an output; None once released."""
        if self.is_released:
            return None
        if not self.is_output:
            return self._tensor
        plain = Tensor._make(self._data)
        plain._version_counter = self._counter
        return plain

    @property
    def unpack_hook(self) -> Callable | None:
        """The unpack hook this tensor was packed with (None: no hooks)."""
        return None

    def register_hooks(self, *args, **kwargs) -> None:
        """`register_hooks(pack_hook, unpack_hook)`: pack this saved tensor now (a
        detached tensor goes to `pack_hook`) and keep only what it returned; backward
        and `_saved_<name>` then get the tensor back from `unpack_hook`."""
        if kwargs or len(args) != 2 or not all(callable(a) for a in args):
            raise _incompatible_arguments("register_hooks", (self, *args), kwargs)
        if self.hooked:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been "
                "set. Hint: only one pair of hooks is allowed at a time."
            )
        if self.is_released:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward."
            )
        pack_hook, unpack_hook = args
        source = self._source()
        given = source.detach() if not self.is_output else self.data
        self._pack(source, given, pack_hook, unpack_hook)

    # -- packing ---------------------------------------------------------------------

    def _source(self) -> Tensor:
        """The tensor whose metadata (producer, leaf or not) an unpack restores."""
        return self._tensor if not self.is_output else self.data

    def _pack_with_default_hooks(self, tensor: Tensor) -> None:
        """Pack with the innermost `saved_tensors_hooks` of this thread, if any. (A
        Python number wrapped as a tensor is never shown to hooks, as in PyTorch.)"""
        stack = _HOOK_STATE.stack
        if stack and not tensor._wrapped_number and not _HOOK_STATE.skip:
            self._pack(tensor, tensor, *stack[-1])

    def _pack(self, source: Tensor, given: Tensor, pack_hook, unpack_hook) -> None:
        """Call `pack_hook(given)` (grad mode off) and keep what it returns instead of
        the tensor, with what an unpack needs to rebuild the tensor's autograd
        metadata from `source`."""
        record = _Packed()
        record.pack_hook, record.unpack_hook, record.cached = pack_hook, unpack_hook, None
        # (A saved output gets its producer back from the node when unpacked.)
        record.is_leaf = not self.is_output and source.grad_fn is None
        record.grad_fn = None if self.is_output else source.grad_fn
        record.requires_grad = record.is_leaf and source._requires_grad
        record.grad_acc = source._grad_acc if record.is_leaf else None
        counter = given._version_counter
        version = counter.value
        with no_grad():
            record.packed = pack_hook(given)
        if counter.value != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided "
                "as input to pack hook cannot be modified by in-place operations as this can "
                "lead to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook."
            )
        self._hooks = record
        self._tensor = self._data = None
        self._counter = _NOT_CHECKED
        self.__class__ = _HOOKED[type(self)]

    def __repr__(self) -> str:
        state = "released" if self.is_released else f"version {self.saved_version}"
        return f"<SavedTensor {'output' if self.is_output else 'input'}, {state}>"


class SavedNumberTensor(Tensor):
    """What a saved Python number unpacks to: PyTorch's wrapped number, a 0-d tensor
    that promotes as the number does. Inside `allow_mutation_on_saved_tensors`, whose
    dispatch mode hands a wrapped number on as the plain number, detaching it or
    reading its value fails with PyTorch's error (`.tolist()` still works)."""

    __slots__ = ()
    _wrapped_number = True

    def detach(self) -> Tensor:
        self._refuse_in_dispatch_mode("detach", "aten::detach(Tensor(a) self) -> Tensor(a)")
        return super().detach()

    def numpy(self, *args, **kwargs) -> np.ndarray:
        # (PyTorch's numpy() detaches first)
        self._refuse_in_dispatch_mode("detach", "aten::detach(Tensor(a) self) -> Tensor(a)")
        return super().numpy(*args, **kwargs)

    def item(self):
        self._refuse_in_dispatch_mode("_local_scalar_dense",
                                      "aten::_local_scalar_dense(Tensor self) -> Scalar")
        return super().item()

    def _refuse_in_dispatch_mode(self, op: str, declaration: str) -> None:
        if not DISPATCH_MODE.on:
            return
        value = self._data.item()
        raise RuntimeError(
            f"aten::{op}() Expected a value of type 'Tensor' for argument 'self' but instead "
            f"found type '{type(value).__name__}'.\nPosition: 0\nValue: {value!r}\n"
            f"Declaration: {declaration}\nCast error details: Unable to cast {value!r} to Tensor"
        )


class SavedNumber(SavedTensor):
    """A Python number a node saved. PyTorch keeps it as a 0-d float64 or int64 tensor,
    saved and released like any other (which is why even `(a * 2).sum()` cannot be
    backpropagated twice); minigrad makes that tensor only when someone looks at it."""

    __slots__ = ("_value",)

    class _Untouched:
        """The version of a number nobody could reach yet: always 0."""

        value = 0

    # What never changes for a saved number is the class's, not set per number: a
    # node is made for every `y * 0.5`, and so is one of these.
    _data = None
    _output_nr = 0
    saved_version = 0
    is_output = False

    def __init__(self, value) -> None:
        self._value = value
        self._tensor = None
        self._counter = SavedNumber._Untouched
        self.is_released = False

    def _as_tensor(self):
        if self._tensor is None:
            self._tensor = SavedNumberTensor._make(np.array(self._value,
                                                            of_number(self._value).np))
            self._counter = self._tensor._version_counter
        return self._tensor

    def array(self, node: Node):
        self.check(node)
        return self._as_tensor()._data

    def number(self, node: Node):
        """The saved number itself, after the version check: a backward formula that
        only needs the value skips building the 0-d tensor."""
        if self.is_released or self._counter.value != self.saved_version:
            self.check(node)  # raises
        return self._value if self._tensor is None else self._tensor._data.item()

    def unpack(self, node: Node | None = None):
        self.check(node)
        return self._as_tensor()

    @property
    def data(self):
        return None if self.is_released else self._as_tensor()

    def _source(self) -> Tensor:
        return self._as_tensor()

    def release(self) -> None:
        self._tensor = self._value = None
        self.is_released = True


class _Packed:
    """What a hooked saved tensor keeps: the pack hook's result, the hooks, and the
    autograd metadata of the tensor it stands for (PyTorch's `save_metadata`)."""

    __slots__ = ("packed", "pack_hook", "unpack_hook", "is_leaf", "grad_fn", "requires_grad",
                 "grad_acc", "cached")


class _NotChecked:
    """The version counter of a hooked saved tensor: it matches no saved version, so
    the engine's fast check sends the node to the slow path, which unpacks."""

    value = -1


_NOT_CHECKED = _NotChecked()


class _Hooked:
    """A saved tensor packed by saved-tensor hooks. It keeps only what the pack hook
    returned; each unpack calls the unpack hook. As in PyTorch, no version check:
    the hooks decide what comes back."""

    __slots__ = ()
    hooked = True

    @property
    def current_version(self) -> int:
        return self.saved_version

    def check(self, node: Node | None) -> None:
        if self.is_released:
            raise RuntimeError(FREED_MESSAGE)

    def prepare(self, node: Node) -> None:
        """Unpack now, before the formula runs, which then reads the result once."""
        tensor = self.unpack(node)
        self._hooks.cached = tensor
        UNPACKED_FOR_FORMULA.append(self)

    def unpacked(self, node: Node):
        record = self._hooks
        if record is not None and record.cached is not None:
            return record.cached
        return self.unpack(node)

    def forget_unpacked(self) -> None:
        if self._hooks is not None:
            self._hooks.cached = None

    def array(self, node: Node):
        return self.unpacked(node)._data

    def number(self, node: Node):
        return self.unpacked(node)._data.item()

    def unpack(self, node: Node | None = None):
        """`unpack_hook(packed)`, as a tensor with the saved tensor's autograd
        metadata: its producer (`node` for a saved output), or, for a leaf, whether it
        requires grad and its `AccumulateGrad`; the version counter is the result's."""
        record = self._hooks
        if record is None:
            raise RuntimeError(FREED_MESSAGE)
        view_fn = getattr(self, "_view_fn", None)
        grad_fn = view_fn() if view_fn is not None else record.grad_fn
        if not record.is_leaf and grad_fn is None:
            if node is None:
                raise RuntimeError(DETACHED_MESSAGE)
            grad_fn = node
        result = record.unpack_hook(record.packed)
        if not isinstance(result, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {_type_name(result)}")
        if grad_fn is None and not record.requires_grad and not result.requires_grad:
            return result
        tensor = Tensor._make(result._data)
        if grad_fn is not None:
            tensor._grad_fn = grad_fn
            tensor._output_nr = self._output_nr
        else:
            tensor._requires_grad = record.requires_grad
            tensor._grad_acc = record.grad_acc
        tensor._version_counter = result._version_counter
        return tensor

    def release(self) -> None:
        self._hooks = None
        self.is_released = True

    @property
    def data(self):
        """What the pack hook returned (None once released)."""
        return None if self._hooks is None else self._hooks.packed

    @property
    def unpack_hook(self) -> Callable | None:
        return None if self._hooks is None else self._hooks.unpack_hook


class HookedSavedTensor(_Hooked, SavedTensor):
    """A `SavedTensor` after its pack hook ran (see `_Hooked`)."""

    __slots__ = ()


class HookedSavedNumber(_Hooked, SavedNumber):
    """A saved Python number someone registered hooks on."""

    __slots__ = ()


_HOOKED = {SavedTensor: HookedSavedTensor, SavedNumber: HookedSavedNumber}

# The hooked saved tensors unpacked for the formula running now (each unpacked once,
# however often the formula reads it); forgotten when the next node's are unpacked
# and when backward ends, so that nothing keeps them alive after their node ran.
UNPACKED_FOR_FORMULA: list = []


def forget_unpacked() -> None:
    for saved in UNPACKED_FOR_FORMULA:
        saved.forget_unpacked()
    UNPACKED_FOR_FORMULA.clear()


class NoneSaved:
    """What `_raw_saved_tensors` shows for a None that a custom Function saved."""

    data = None
    unpack_hook = None
    hooked = False

    def unpack(self, node: Node | None = None) -> None:
        return None

    def register_hooks(self, *args, **kwargs) -> None:
        if kwargs or len(args) != 2 or not all(callable(a) for a in args):
            raise _incompatible_arguments("register_hooks", (self, *args), kwargs)
        raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                           "forbidden")


DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead"
)


def _type_name(obj) -> str:
    """A type's name as PyTorch's C++ prints it: `int`, `numpy.ndarray`, `Holder`."""
    cls = type(obj)
    heap = cls.__flags__ & (1 << 9)  # (a class defined in Python: its bare name)
    if heap or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def _incompatible_arguments(name: str, args: tuple, kwargs: dict) -> TypeError:
    """The TypeError PyTorch's bindings raise for arguments of the wrong kind."""
    first = "self: minigrad._C._autograd.SavedTensor, " if name == "register_hooks" else ""
    shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    return TypeError(
        f"{name}(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. ({first}arg0: collections.abc.Callable, arg1: "
        f"collections.abc.Callable) -> None\n\nInvoked with: {shown}"
    )


# -- saved-tensor hooks: the per-thread stack ---------------------------------------------


class _HookState(threading.local):
    """Each thread's own: the (pack, unpack) pairs pushed, innermost last, and the
    message of `disable_saved_tensors_hooks` (None: enabled)."""

    def __init__(self) -> None:
        self.stack: list[tuple[Callable, Callable]] = []
        self.disabled: str | None = None
        # True while an op stores values on a node made only for forward mode
        # (`autograd/tangents.py`), which PyTorch does not make, so packs nothing for.
        self.skip = False


_HOOK_STATE = _HookState()
# How many pairs are pushed in all threads: while 0 (always, unless someone uses hooks)
# saving a tensor looks no further.
_pushed = 0
_pushed_lock = threading.Lock()


def skip_packing(skip: bool) -> None:
    """Whether what ops save now is kept from the hooks (see `_HookState.skip`)."""
    _HOOK_STATE.skip = skip

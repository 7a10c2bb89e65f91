"""The pieces a backward graph is made of.

* `Node`: one backward function (`MulBackward0`, ...). It points *down* the graph to
  the nodes that produced its inputs through `next_functions`, a tuple of
  `(node, output_index)` pairs; `(None, 0)` marks an input that needs no gradient.
* `SavedTensor`: a tensor a node keeps for its backward formula, with the version
  it had when saved. Backward refuses to use it if it changed since (in-place ops
  bump versions), and without `retain_graph` it is released after the node ran.
* `AccumulateGrad`: the node at the bottom of the graph that adds a gradient into
  a leaf's `.grad`. Each leaf has exactly one, reused by every graph it feeds.

Nothing here points back up from a node to the tensors it produced, so dropping the
last reference to a graph's output frees the whole graph by reference counting.
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import of_number
from ..arrays.layout import is_dense
from ..grad_mode import ANOMALY, no_grad
from ..tensor import Tensor
from ..utils.hooks import RemovableHandle

_sequence = itertools.count()

# Saved-tensor roles, used by the "what does each op save?" table.
INPUT = "input"
OUTPUT = "output"

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
    )
    hooked = False  # True once saved through saved-tensor hooks (`HookedSavedTensor`)

    def __init__(self, tensor, is_output: bool = False) -> None:
        self.is_output = is_output
        self.is_released = False
        counter = self._counter = tensor._version_counter
        self.saved_version = counter.value
        self._output_nr = tensor._output_nr
        self._view_fn = None
        if is_output:
            self._tensor = None
            self._data = tensor._data
            if tensor._view is not None:
                # An in-place op on a view saved its output: the view's producer at
                # this moment (its rebuilt AsStridedBackward0) is, for as long as
                # something else keeps it alive, the node the version error names.
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
        return Tensor._make_output(self._data, node, self._output_nr, self._counter)

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
        if stack and not tensor._wrapped_number:
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


class SavedNumber(SavedTensor):
    """A Python number a node saved. PyTorch keeps it as a 0-d float64 or int64 tensor,
    saved and released like any other (which is why even `(a * 2).sum()` cannot be
    backpropagated twice); minigrad makes that tensor only when someone looks at it."""

    __slots__ = ("_value",)

    class _Untouched:
        """The version of a number nobody could reach yet: always 0."""

        value = 0

    def __init__(self, value) -> None:
        self._value = value
        self._tensor = None
        self._data = None
        self._counter = SavedNumber._Untouched
        self._output_nr = 0
        self.saved_version = 0
        self.is_output = False
        self.is_released = False

    def _as_tensor(self):
        if self._tensor is None:
            self._tensor = Tensor._make(np.array(self._value, of_number(self._value).np))
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
        self._tensor = self._data = self._value = None
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


_HOOK_STATE = _HookState()
# How many pairs are pushed in all threads: while 0 (always, unless someone uses hooks)
# saving a tensor looks no further.
_pushed = 0
_pushed_lock = threading.Lock()


def push_saved_tensors_default_hooks(pack_hook: Callable, unpack_hook: Callable) -> None:
    """Make (pack_hook, unpack_hook) this thread's innermost pair."""
    global _pushed
    if not (callable(pack_hook) and callable(unpack_hook)):
        raise _incompatible_arguments("_push_saved_tensors_default_hooks",
                                      (pack_hook, unpack_hook), {})
    if _HOOK_STATE.disabled is not None:
        raise RuntimeError(_HOOK_STATE.disabled)
    _HOOK_STATE.stack.append((pack_hook, unpack_hook))
    with _pushed_lock:
        _pushed += 1


def pop_saved_tensors_default_hooks() -> tuple[Callable, Callable]:
    """Remove and return this thread's innermost pair."""
    global _pushed
    pair = _HOOK_STATE.stack.pop()
    with _pushed_lock:
        _pushed -= 1
    return pair


def saved_tensors_hooks_get_disabled_error_message() -> str | None:
    return _HOOK_STATE.disabled


def saved_tensors_hooks_disable(message: str) -> None:
    """Refuse hooks in this thread from now on, with `message` (an error at once if
    some are in use)."""
    _HOOK_STATE.disabled = message
    if _HOOK_STATE.stack:
        raise RuntimeError(message)


def saved_tensors_hooks_enable() -> None:
    _HOOK_STATE.disabled = None


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: every tensor an op saves for backward inside it is handed
    to `pack_hook(tensor)`, and the graph keeps whatever that returns; backward (and
    `grad_fn._saved_<name>`) gets the tensor back from `unpack_hook(packed)`.

    Per thread; when nested, only the innermost pair applies. A Python number an op
    saves is not shown to the hooks. Saved tensors are not version-checked: what
    `unpack_hook` returns is used as it is."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        pop_saved_tensors_default_hooks()


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: inside it, entering `saved_tensors_hooks` (or using it
    already) raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self._previous: list = []

    def __enter__(self) -> None:
        self._previous.append(_HOOK_STATE.disabled)
        try:
            saved_tensors_hooks_disable(self.error_message)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *args: object) -> None:
        _HOOK_STATE.disabled = self._previous.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are packed as (device, tensor on the CPU) and moved back on
    unpack. minigrad's tensors are on the CPU already: the tensor is kept as it is,
    or, with `pin_memory=True`, as a copy (pinning needs CUDA, as on a machine
    without it)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            # (a fresh row-major tensor, `copy_` into it: version 1, as in PyTorch)
            packed = Tensor._make(np.empty(tensor._data.shape, tensor._data.dtype))
            return (tensor.device, packed.copy_(tensor))

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class Node:
    """A backward function in the graph. Subclasses are the named nodes
    (`MulBackward0`, `CopySlices`, ...) and implement `backward`.

    A subclass lists the attribute names it may save in `saves`, mapping each to its
    role (INPUT, OUTPUT, or a plain value such as a dim); the engine only ever
    releases tensors. `grad_fn._saved_<name>` reads them like PyTorch does.
    """

    # What every node has lives in slots; what few nodes ever get (hooks, retained
    # gradients, anomaly mode's forward trace) defaults to None on the class and is
    # set per node only when used. A node is made for every recorded op, so this
    # keeps making one cheap.
    __slots__ = ("next_functions", "_seq", "_saved", "_input_meta", "__dict__", "__weakref__")

    saves: dict[str, str] = {}
    # Values `_saved_<name>` shows when the op did not store them (`alpha=1`).
    saved_defaults: dict[str, Any] = {}
    # How the node calls itself in messages; PyTorch prints C++ names for a few.
    _display_name: str | None = None
    # Saved tensors kept somewhere other than `_saved` (a custom Function's ctx,
    # CopySlices' wrapped node): only `release_variables` knows how to drop them.
    _saves_elsewhere = False
    # An element-wise formula: given a gradient of the output's shape and dtype, it
    # returns gradients of that same shape and dtype. When the op tells `record` that
    # every input that may need a gradient has the output's shape and dtype too
    # (`like_output`), `_input_meta` is None and the engine has nothing to check.
    elementwise = False
    # A formula whose gradients always have its inputs' shapes and dtypes, whatever
    # they were (a transpose, a product of two matrices of one dtype, a full sum):
    # such a node never keeps input shapes, and the engine checks none of its
    # gradients.
    exact = False
    # Each input's backward formula as minigrad code, in the order of
    # `next_functions` (`ops/formulas.py`): what a `create_graph=True` backward runs,
    # through `apply_recording` (attached by `ops/formulas.py`, which stands above).
    # `scalars`: the saved values PyTorch keeps as C++ Scalars (pow's exponent), which
    # the formulas see as such. `recordable`: False where running the formulas would
    # not record PyTorch's graph (such a node refuses create_graph=True).
    formulas: tuple = ()
    scalars: tuple[str, ...] = ()
    # The order PyTorch unpacks the saved tensors in, where it is not the usual one
    # (inputs by name, then outputs: see the engine's `_check_saved_slowly`).
    unpack_order: tuple[str, ...] | None = None
    recordable = True

    _pre_hooks: dict | None = None
    _post_hooks: dict | None = None
    _tensor_pre_hooks: dict | None = None
    _retains_grad: dict | None = None
    _forward_trace: str | None = None
    # False once any of those is set (see `_extra`): the engine then runs the node
    # the long way round, hooks and all. A plain node takes its short path.
    _plain = True

    def __init__(self, next_functions: tuple = (), input_meta: tuple = ()) -> None:
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._saved: dict[str, Any] = {}
        # (shape, dtype) of each input, which its gradient must match (None for
        # inputs that need no gradient); None when all of them are the output's (see
        # `elementwise`).
        self._input_meta = input_meta

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes about this node (PyTorch's `metadata`)."""
        return self.__dict__.setdefault("_metadata", {})

    # -- the PyTorch-visible surface -------------------------------------------------

    def name(self) -> str:
        """The node's name, as used in error messages."""
        return self._display_name or type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def __lt__(self, other: Node) -> bool:
        """`a < b`: among ready nodes, `a` runs first, having the larger sequence
        number (it was made later in forward). The engine's ready queue is a `heapq`
        heap of nodes, smallest on top. Nodes can tie (every `AccumulateGrad` has the
        largest number); `heapq` then sifts exactly as the binary heap of PyTorch's
        ready queue (C++'s `std::priority_queue`) does: down to a leaf, towards the
        right child when two are equal, and back up. So ties break as in PyTorch,
        and the stepper shows PyTorch's order."""
        try:
            return self._seq > other._seq
        except AttributeError:  # (not a node: no order)
            return NotImplemented

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after the node; it may return new
        `grad_inputs`."""
        hooks = self._extra("_post_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle._key] = fn
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_outputs)` runs before the node; it may return new `grad_outputs`."""
        hooks = self._extra("_pre_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle._key] = fn
        return handle

    def _extra(self, attr: str) -> dict:
        """The node's hooks or retained gradients (`attr`), made on first use; the
        node is no longer plain."""
        extra = getattr(self, attr)
        if extra is None:
            extra = {}
            setattr(self, attr, extra)
            self._plain = False
        return extra

    def __getattr__(self, attr: str) -> Any:
        # `_saved_<name>` / `_raw_saved_<name>` for every name the node declares.
        if attr.startswith("_saved_"):
            name = attr[7:]
            if name in type(self).saves:
                value = self._saved.get(name, type(self).saved_defaults.get(name))
                if isinstance(value, SavedTensor):
                    return value.unpack(self)
                if isinstance(value, tuple) and any(isinstance(v, SavedTensor) for v in value):
                    return tuple(
                        v.unpack(self) if isinstance(v, SavedTensor) else v for v in value
                    )
                return value
        elif attr.startswith("_raw_saved_"):
            name = attr[11:]
            if name in type(self).saves:
                return self._saved.get(name, type(self).saved_defaults.get(name))
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        names = list(super().__dir__())
        for name in type(self).saves:
            names += [f"_saved_{name}", f"_raw_saved_{name}"]
        return sorted(set(names))

    # -- what the engine uses ------------------------------------------------------

    def saved_items(self) -> list:
        """(name, SavedTensor) for every tensor this node holds for backward."""
        items = []
        for name, value in self._saved.items():
            if isinstance(value, SavedTensor):
                items.append((name, value))
            elif isinstance(value, tuple):
                items.extend((f"{name}[{i}]", v) for i, v in enumerate(value)
                             if isinstance(v, SavedTensor))
        return items

    def release_variables(self) -> tuple[str, ...]:
        """Drop every saved tensor (the engine does this unless `retain_graph`) and
        return the names of those released."""
        released = []
        for name, saved in self.saved_items():
            if not saved.is_released:
                saved.release()
                released.append(name)
        return tuple(released)

    def _num_outputs(self) -> int | None:
        """How many outputs the node's forward had (a pre-hook must return one
        gradient for each), or None where minigrad does not know. One for most ops."""
        return 1

    def needs_grad(self, i: int) -> bool:
        """Whether input `i` wants a gradient (PyTorch's `should_compute_output`)."""
        return self.next_functions[i][0] is not None

    def saved(self, name: str):
        """The data of saved tensor `name`, version-checked (for `backward`)."""
        return self._saved[name].array(self)

    def backward(self, *grads):
        raise NotImplementedError

    def apply(self, grads: list) -> tuple:
        """Run the backward formula. `grads[i]` is the gradient for output `i`."""
        return self.backward(*grads)


class AccumulateGrad(Node):
    """The node that adds incoming gradients into its leaf tensor's `.grad`.

    Its "formula" is `accumulate`. It is plain (the engine's short path) until a hook
    is registered on it or on its leaf: the leaf's tensor hooks run first, and only
    the engine's long path runs hooks."""

    __slots__ = ("variable",)
    _display_name = "minigrad::autograd::AccumulateGrad"

    def __init__(self, variable) -> None:
        # (Node's fields, set directly: every graph makes one accumulator per leaf.)
        self.next_functions = ()
        # Accumulators run as soon as they are ready, like PyTorch's, which give them
        # the largest sequence number (and take none from the counter).
        self._seq = sys.maxsize
        self._saved = {}
        self._input_meta = None  # (no inputs: nothing for the engine to check)
        self.variable = variable
        if variable._hooks:
            self._plain = False

    def apply(self, grads: list) -> tuple:
        """The short path's turn: `.grad` takes the gradient over or adds it."""
        grad = grads[0]  # a local, as in the engine's long path: see `ENGINE_REFS`
        self.accumulate(grad)
        return ()

    def accumulate_recorded(self, grad: Tensor) -> Tensor:
        """`accumulate` in a `create_graph=True` backward, where grad mode is on and
        the gradient is a tensor, as PyTorch's AccumulateGrad does then: the first
        gradient is copied into a new tensor laid out as the leaf (`copy_`, recorded
        as CopyBackwards: version 1), a later one is added out of place (recorded as
        AddBackward0: version 0), so that `.grad` can be differentiated again."""
        leaf = self.variable
        if leaf._grad is None:
            fresh = Tensor._make(np.empty_like(leaf._data, dtype=grad._data.dtype))
            leaf._grad = fresh.copy_(grad)  # (a method the ops attach to Tensor)
        else:
            leaf._grad = leaf._grad + grad
        return leaf._grad

    def accumulate(self, grad: np.ndarray):
        """Add `grad` into the leaf's `.grad` and return `.grad`.

        Later backward calls add into `.grad` in place, so the leaf must own its
        memory. PyTorch keeps ("steals") the incoming gradient when nothing else
        refers to it and it is laid out as the leaf is (`fits_layout`); minigrad
        does the same when, besides, the gradient is writable and owns its memory or
        is a whole-buffer view of an array nothing else refers to (`TBackward0`'s
        `grad.T`). Otherwise (the same array flowing to two leaves, the caller's
        `gradient=` tensor, a hook's result) the leaf gets a copy, laid out as the
        leaf is (see `first_grad` for its version)."""
        leaf = self.variable
        if leaf._grad is None:
            data = leaf._data
            fits = grad.flags.c_contiguous if data.flags.c_contiguous else fits_layout(grad, data)
            kept = fits and sys.getrefcount(grad) <= ENGINE_REFS  # (what PyTorch would keep)
            if kept and grad.flags.writeable and alone_on_its_memory(grad):
                leaf._grad = Tensor._make(grad)
                if _VERSIONS:  # (the stolen array keeps its version, as in PyTorch)
                    leaf._grad._version_counter.value = version_of(grad)
            else:
                # (PyTorch keeps its efficient zero tensor too: see `is_efficient_zeros`)
                leaf._grad = first_grad(grad, data, stolen=kept or is_efficient_zeros(grad))
        else:
            g = leaf._grad
            g._data += grad
            g._version_counter.value += 1
        return leaf._grad


def grad_accumulator(self: Tensor) -> AccumulateGrad:
    """The leaf's one `AccumulateGrad`, created on first use and held weakly, so
    it lives exactly as long as some graph uses it. (`Tensor._grad_accumulator`.)"""
    acc = self._grad_acc() if self._grad_acc is not None else None
    if acc is None:
        acc = AccumulateGrad(self)
        self._grad_acc = weakref.ref(acc)
    return acc


Tensor._grad_accumulator = grad_accumulator


# The versions gradient arrays have collected, by the array's id, for as long as the
# array lives. A gradient is a numpy array, which has no version; PyTorch's gradient
# tensors do, and it goes up whenever one is modified in place: by the input buffer
# adding a second stream into the first (`(x*2 + x*3).sum()` gives `x.grad` version
# 1), or by a backward formula that builds its result in place (max's, indexing's).
# The count waits here until the array becomes a tensor: a leaf's `.grad`, a hook's
# argument, a returned gradient.
class _Version(weakref.ref):
    """A weak reference to the array, carrying its count; when the array dies, its
    entry goes too, before the id can belong to another array."""

    __slots__ = ("key", "count")


def _forget(entry: _Version) -> None:
    _VERSIONS.pop(entry.key, None)


_VERSIONS: dict[int, _Version] = {}


def bump_version(array: np.ndarray, times: int = 1) -> None:
    """Note that `array` was modified in place (`times` times) as PyTorch modifies
    its gradient tensor. (Counted on the memory's owner: views of it share the
    count, as PyTorch's views share their base's version counter.)"""
    owner = array if array.base is None else array.base
    key = id(owner)
    entry = _VERSIONS.get(key)
    if entry is None:
        entry = _VERSIONS[key] = _Version(owner, _forget)
        entry.key, entry.count = key, 0
    entry.count += times


def version_of(array: np.ndarray) -> int:
    """The `_version` PyTorch's gradient tensor for `array` (or for the array it
    views) would have."""
    entry = _VERSIONS.get(id(array if array.base is None else array.base))
    return 0 if entry is None else entry.count


def fits_layout(grad: np.ndarray, leaf: np.ndarray) -> bool:
    """PyTorch's layout contract for a leaf's `.grad`: the strides of a dense leaf
    (where a dim has more than one element), row-major for any other leaf."""
    if leaf.flags.c_contiguous or not is_dense(leaf):
        return grad.flags.c_contiguous
    return all(g == v for g, v, n in zip(grad.strides, leaf.strides, grad.shape) if n != 1)


def first_grad(grad: np.ndarray, leaf: np.ndarray, stolen: bool):
    """A copy of `grad` as a leaf's new `.grad` tensor, laid out as `fits_layout` asks
    (a transposed leaf gets a transposed `.grad`) and at the version PyTorch's would
    have. If PyTorch would have kept the gradient itself (`stolen`: minigrad copies
    it anyway when it shares memory with another tensor, a view of the caller's
    gradient, which PyTorch does not look at), the gradient's own version
    (`version_of`). Else 1: PyTorch copies into a new tensor of the leaf's layout
    with `copy_`, an in-place op (0 for a leaf that is not dense, which gets a
    plain row-major clone)."""
    dense = leaf.flags.c_contiguous or is_dense(leaf)
    if leaf.flags.c_contiguous or not dense:
        copy = np.array(grad, copy=True, order="C")
    else:
        copy = np.empty_like(leaf, dtype=grad.dtype)  # (its layout is the leaf's)
        copy[...] = grad
    t = Tensor._make(copy)
    version = version_of(grad) if stolen else int(dense)
    if version:
        t._version_counter.value = version
    return t


# One 0-d zero per dtype, which every efficient zero array of that dtype views.
_ZEROS: dict = {}


def efficient_zeros(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """minigrad's form of PyTorch's efficient zero tensor (the gradient of `sgn`): a
    read-only array of zeros that owns no memory (it views one 0-d zero). PyTorch
    never adds into one in place, and keeps one as a leaf's `.grad` as is."""
    zero = _ZEROS.get(dtype)
    if zero is None:
        zero = _ZEROS[dtype] = np.zeros((), dtype)
    return np.broadcast_to(zero, shape)


def is_efficient_zeros(array: np.ndarray) -> bool:
    """Whether `array` was made by `efficient_zeros`."""
    base = array.base
    return base is not None and base is _ZEROS.get(array.dtype)


def alone_on_its_memory(array: np.ndarray) -> bool:
    """Whether `array` owns its memory, or is a view of all of an array nothing else
    refers to (`TBackward0`'s `grad.T`): then changing it, or keeping it as a
    `.grad`, affects no one else."""
    owner = array.base
    return owner is None or (owner.base is None and owner.size == array.size
                             and sys.getrefcount(owner) <= OWNER_REFS)


# References to a gradient array the engine itself holds when `accumulate` looks at
# it: the node's input buffer, the caller's local (`AccumulateGrad.apply`, or the
# engine's long path), `accumulate`'s argument and `sys.getrefcount`'s own argument.
ENGINE_REFS = 4
# References to the array a view looks into, when only that view refers to it: the
# view's `base`, `alone_on_its_memory`'s local and `sys.getrefcount`'s argument.
OWNER_REFS = 3


def move_retained_grad(tensor, old_fn: Node | None, old_nr: int) -> None:
    """`tensor` got a new producer (an in-place op on it, on its base or on another
    view of its base): if it retains its gradient, that request moves from its old
    node (output `old_nr`) to the new one, as PyTorch moves its retain_grad hook.
    Other hooks stay with the old node."""
    if not tensor._retains_grad:
        return
    if old_fn is not None and old_fn._retains_grad:
        ref = old_fn._retains_grad.get(old_nr)
        if ref is not None and ref() is tensor:
            del old_fn._retains_grad[old_nr]
    new_fn = tensor._grad_fn
    if new_fn is not None:
        new_fn._extra("_retains_grad")[tensor._output_nr] = weakref.ref(tensor)


def capture_forward_trace() -> str:
    """The Python stack of the forward call, kept by anomaly mode on each node."""
    return "".join(traceback.format_stack()[:-3])


def weak(obj) -> weakref.ref:
    return weakref.ref(obj)

"""The pieces a backward graph is made of.

* `Node`: one backward function (`MulBackward0`, ...). It points *down* the graph to
  the nodes that produced its inputs through `next_functions`, a tuple of
  `(node, output_index)` pairs; `(None, 0)` marks an input that needs no gradient.
* `SavedTensor` (in `saved.py`, with the saved-tensor hooks): a tensor a node keeps
  for its backward formula, with the version it had when saved. Backward refuses to
  use it if it changed since (in-place ops bump versions), and without
  `retain_graph` it is released after the node ran.
* `AccumulateGrad`: the node at the bottom of the graph that adds a gradient into
  a leaf's `.grad`. Each leaf has exactly one, reused by every graph it feeds.

Nothing here points back up from a node to the tensors it produced, so dropping the
last reference to a graph's output frees the whole graph by reference counting.
"""

from __future__ import annotations

import functools
import itertools
import sys
import threading
import traceback
import warnings
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._hooks import RemovableHandle
from .._registry import attach
from .._warn import Once
from ..arrays.layout import (  # noqa: F401 - efficient zeros: imported from here too
    astype_kept,
    efficient_zeros,
    element_strides,
    is_dense,
    is_efficient_zeros,
    keeps_strides,
    non_overlapping_and_dense,
    obeys_layout_contract,
    with_strides,
)
from ..grad_mode import enable_grad
from ..tensor import DISPATCH_MODE, Tensor, VersionCounter

# Imported from here by the engine and the ops; and the hooks are where PyTorch has
# them (`torch.autograd.graph.saved_tensors_hooks`).
from .mutation import allow_mutation_on_saved_tensors  # noqa: F401
from .saved import (  # noqa: F401
    FREED_MESSAGE,
    INPUT,
    OUTPUT,
    UNPACKED_FOR_FORMULA,
    VALUE,
    NoneSaved,
    SavedNumber,
    SavedTensor,
    _tensor_type,
    forget_unpacked,
    short_name,
)
from .saved_hooks import (  # noqa: F401
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)

_next_sequence_nr = itertools.count().__next__
_new_object = object.__new__


class _Recording(threading.local):
    """Whose backward runs now in a `create_graph=True` backward pass, in this thread.

    The engine sets `parent` for each node's turn (its formula, and adding its
    gradients into the input buffers), as PyTorch's engine keeps its "current
    evaluating node": every node made meanwhile was recorded by that backward and
    says so (`Node._recorded_by`). `made` collects those nodes when the engine
    reports them (a traced run)."""

    def __init__(self) -> None:
        self.parent: Node | None = None
        self.made: list | None = None


RECORDING = _Recording()


class _RecordingPasses:
    """How many `create_graph=True` backward passes are under way, in all threads.
    `Node.__init__` reads the thread-local `RECORDING` only while there are some:
    reading a thread-local costs about as much as the rest of making a node, and
    every op of a forward pass makes one."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        with self._lock:
            self.count += n


RECORDING_PASSES = _RecordingPasses()


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
    # How forward mode computes the output's tangent (`ops/tangent_formulas.py`):
    # "auto_element_wise", "auto_linear" (a view) or a `Tangent` formula; None: the op
    # refuses dual inputs (see `autograd/tangents.py`).
    tangent = None

    _pre_hooks: dict | None = None
    _post_hooks: dict | None = None
    _tensor_pre_hooks: dict | None = None
    _retains_grad: dict | None = None
    _forward_trace: str | None = None
    # A node a `create_graph=True` backward recorded: a weak reference to the node
    # whose backward made it (PyTorch keeps it as `metadata["parent_"]`, in anomaly
    # mode only). None for the nodes of a forward pass.
    _recorded_by: weakref.ref | None = None
    # False once any of those is set (see `_extra`): the engine then runs the node
    # the long way round, hooks and all. A plain node takes its short path.
    _plain = True

    def __init__(self, next_functions: tuple = (), input_meta: tuple = ()) -> None:
        # (`plain_node`, after the class, makes the commonest node without this frame)
        self.next_functions = next_functions
        self._seq = _next_sequence_nr()
        self._saved: dict[str, Any] = {}
        # (shape, dtype) of each input, which its gradient must match (None for
        # inputs that need no gradient); None when all of them are the output's (see
        # `elementwise`).
        self._input_meta = input_meta
        if RECORDING_PASSES.count and RECORDING.parent is not None:  # (see RECORDING)
            self._recorded_by = weakref.ref(RECORDING.parent)
            if RECORDING.made is not None:
                RECORDING.made.append(self)

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

    # Whether `apply` is the one above, so that the engine's short path may call
    # `backward` itself, one call fewer per node (`AccumulateGrad` and a few others
    # have an `apply` of their own).
    _apply_is_backward = True

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._apply_is_backward = cls.apply is Node.apply


# PyTorch's AccumulateGrad reports UINT64_MAX as its `_sequence_nr()`.
ACCUMULATE_GRAD_SEQUENCE_NR = 2**64 - 1


def plain_node(cls: type[Node], next_functions: tuple) -> Node:
    """`cls(next_functions, None)`, made without `Node.__init__`'s frame while no
    `create_graph=True` backward is under way (one would need `_recorded_by`). The
    short lane (`ops/short_lane.py`) makes its node for every op of a chain so: for
    node classes that keep `Node.__init__`, which a test checks."""
    if RECORDING_PASSES.count:
        return cls(next_functions, None)
    node = _new_object(cls)
    node.next_functions = next_functions
    node._seq = _next_sequence_nr()
    node._saved = {}
    node._input_meta = None
    return node


class AccumulateGrad(Node):
    """The node that adds incoming gradients into its leaf tensor's `.grad`.

    Its "formula" is `accumulate`. It is plain (the engine's short path) until a hook
    is registered on it or on its leaf: the leaf's tensor hooks run first, its
    post-accumulate hooks last, and only the engine's long path runs hooks."""

    __slots__ = ("variable",)
    _display_name = "minigrad::autograd::AccumulateGrad"

    def __init__(self, variable) -> None:
        # (Node's fields, set directly: every graph makes one accumulator per leaf.)
        self.next_functions = ()
        # Accumulators run as soon as they are ready, like PyTorch's, which give them
        # the largest sequence number, UINT64_MAX (and take none from the counter).
        self._seq = ACCUMULATE_GRAD_SEQUENCE_NR
        self._saved = {}
        self._input_meta = None  # (no inputs: nothing for the engine to check)
        self.variable = variable
        if variable._hooks or variable._post_accumulate_grad_hooks:
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
        `grad.T`); a 0-d view, or a view of a gradient given to `backward()`, is kept
        as a writable view of the same memory (`_shared_view`). Otherwise (the same
        array flowing to two leaves, the caller's `gradient=` tensor itself, a hook's
        result) the leaf gets a copy, laid out as the leaf is (see `first_grad` for
        its version)."""
        leaf = self.variable
        if leaf._grad is None:
            data = leaf._data
            if not data.size:  # (no memory to share: only PyTorch's rules matter)
                unshared = sys.getrefcount(grad) <= ENGINE_REFS
                leaf._grad = _first_empty_grad(grad, data, unshared)
                return leaf._grad
            fits = grad.flags.c_contiguous if data.flags.c_contiguous else fits_layout(grad, data)
            if fits and (not grad.flags.writeable or 0 in grad.strides):
                fits = not expanded_view(grad)
            kept = fits and sys.getrefcount(grad) <= ENGINE_REFS  # (what PyTorch would keep)
            if kept and grad.flags.writeable and alone_on_its_memory(grad):
                leaf._grad = Tensor._make(grad)
                if _VERSIONS:  # (the stolen array keeps its version, as in PyTorch)
                    leaf._grad._version_counter.value = version_of(grad)
            elif (kept and (not grad.ndim or _lent_by_caller(grad))
                  and (shared := _shared_view(grad)) is not None):
                leaf._grad = shared
            elif is_efficient_zeros(grad):
                leaf._grad = efficient_zeros_grad(grad, data)
            else:
                leaf._grad = first_grad(grad, data, stolen=kept)
        else:
            g = leaf._grad
            g._data += grad
            g._version_counter.value += 1
            if not (g._data.flags.c_contiguous and all(g._data.strides)
                    and leaf._data.flags.c_contiguous):
                _check_layout_contract(g._data, leaf._data)
        return leaf._grad


def grad_accumulator(self: Tensor) -> AccumulateGrad:
    """The leaf's one `AccumulateGrad`, created on first use and held weakly, so
    it lives exactly as long as some graph uses it. (`Tensor._grad_accumulator`.)"""
    acc = self._grad_acc() if self._grad_acc is not None else None
    if acc is None:
        acc = AccumulateGrad(self)
        self._grad_acc = weakref.ref(acc)
    return acc


attach(Tensor, "_grad_accumulator", grad_accumulator)


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
    count, as PyTorch's views share their base's version counter.) Not under a
    dispatch mode (inside `allow_mutation_on_saved_tensors`): PyTorch's formulas and
    input buffer treat every tensor there as a subclass and work out of place."""
    if DISPATCH_MODE.on:
        return
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


def expanded_view(array: np.ndarray) -> bool:
    """Whether an array has a 0 stride where PyTorch's layout contract looks at it and
    numpy's contiguity does not: on a dim of size 1 (`sum()`'s gradient of a (1,)
    leaf, a broadcast view, or `flip`'s of it, laid out as it is), or on any dim of
    an array of no elements (numpy calls every empty array contiguous). No leaf's
    layout has such a stride. (A fresh array of no elements has 0 strides: not one.)"""
    return (array.base is not None or array.size > 0) and any(
        s == 0 for s, n in zip(array.strides, array.shape) if n == 1 or array.size == 0)


def first_grad(grad: np.ndarray, leaf: np.ndarray, stolen: bool):
    """A copy of `grad` as a leaf's new `.grad` tensor, laid out as `fits_layout` asks
    (a transposed leaf gets a transposed `.grad`) and at the version PyTorch's would
    have. If PyTorch would have kept the gradient itself (`stolen`: minigrad copies
    it anyway when it shares memory with another array, which PyTorch does not look
    at), the gradient's own version
    (`version_of`). Else 1: PyTorch copies into a new tensor of the leaf's layout
    with `copy_`, an in-place op (0 for a leaf that is not dense, which gets a
    plain row-major clone)."""
    dense = leaf.flags.c_contiguous or is_dense(leaf)
    if keeps_strides(leaf):  # (a dim of size 1 whose stride numpy would choose itself)
        copy = astype_kept(grad, grad.dtype, leaf)
    elif leaf.flags.c_contiguous or not dense:
        copy = np.array(grad, copy=True, order="C")
    else:
        copy = np.empty_like(leaf, dtype=grad.dtype)  # (its layout is the leaf's)
        copy[...] = grad
    t = Tensor._make(copy)
    if stolen and grad.base is not None:
        t._version_counter = counter_of_base(grad.base, version_of(grad))
        return t
    version = version_of(grad) if stolen else int(dense)
    if version:
        t._version_counter.value = version
    return t


def efficient_zeros_grad(grad: np.ndarray, leaf: np.ndarray) -> Tensor:
    """A leaf's first `.grad` from PyTorch's efficient zero tensor (`efficient_zeros`),
    which is row-major: kept as it is (version 0) where a row-major `.grad` fits the
    leaf's layout (`fits_layout`), else copied into the leaf's (`first_grad`)."""
    zeros = np.zeros(grad.shape, grad.dtype)
    return Tensor._make(zeros) if fits_layout(zeros, leaf) else first_grad(grad, leaf, False)


def _shared_view(grad: np.ndarray) -> Tensor | None:
    """A gradient PyTorch keeps as `.grad` although it views memory other gradients
    view (PyTorch looks at nothing but the tensor's own references): `cat`'s or
    `stack`'s backward slices one gradient, `t()`'s views the one its input got, so
    two leaves' `.grad` can share memory, and their version counter. Where the slices
    overlap (0-d leaves under `sum()`'s spread-out gradient: their `.grad` is one
    element) adding into one `.grad` changes the other. minigrad keeps the same for a
    0-d gradient, the one kind whose sharing changes values (a larger one shares
    only disjoint memory, or has a 0 stride the layout contract refuses) and whose
    layout cannot differ from PyTorch's: a writable view of the memory's owner
    (numpy's own view is read-only where it spreads a value), sharing the counter of
    the views of that owner. None (a copy is made) where the owner cannot lend its
    memory so, or is an efficient zero."""
    if is_efficient_zeros(grad):
        return None
    lent = writable_view(grad)
    if lent is None:
        return None
    owner, data = lent
    view = Tensor._make(data)
    view._version_counter = counter_of_base(owner, version_of(grad))
    return view


def writable_view(grad: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`(owner, view)`: a writable view of the memory's owner laid out as the view
    `grad` is (numpy's own view is read-only where `broadcast_to` spreads a value), or
    None where `grad` is no view or its owner cannot lend its memory so."""
    if grad.base is None:
        return None
    owner = grad
    while owner.base is not None:
        owner = owner.base
    if (not isinstance(owner, np.ndarray) or not owner.flags.writeable
            or not owner.flags.c_contiguous):
        return None
    offset = grad.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return owner, np.ndarray(grad.shape, grad.dtype, buffer=owner, offset=offset,
                             strides=grad.strides)


# Gradients PyTorch keeps that are views of one tensor (`cat`'s backward slices its
# gradient, one slice a leaf) share that tensor's version counter: adding into one
# leaf's `.grad` later bumps the other's version too. minigrad copies such a view, so
# the copies of views of one array share a counter, found here by the array (held
# weakly: a new array at the same address is another tensor).
_COUNTERS_OF_BASES: dict[int, tuple[weakref.ref, Any]] = {}


# The memory of the gradients callers gave `backward()` (by the owner array's id, held
# weakly): a leaf keeps a view of it as its `.grad` as PyTorch keeps one (`cat`'s or
# `view`'s gradient of a given `g`), and adding into that `.grad` later changes `g`.
_LENT: dict[int, weakref.ref] = {}


def lend_counter(given: Tensor) -> None:
    """Note a gradient given to `backward()`: views of its memory share its version
    counter (PyTorch's views of `given` share it), so adding into a `.grad` that
    views it bumps `given._version` as PyTorch's in-place add does."""
    owner = given._data
    while owner.base is not None:
        owner = owner.base
    if not isinstance(owner, np.ndarray):
        return
    key = id(owner)
    ref = weakref.ref(owner, lambda _, key=key: (_LENT.pop(key, None),
                                                 _COUNTERS_OF_BASES.pop(key, None)))
    _COUNTERS_OF_BASES[key] = (ref, given._version_counter)
    _LENT[key] = ref


def _lent_by_caller(grad: np.ndarray) -> bool:
    """Whether `grad` views the memory of a gradient given to `backward()`."""
    owner = grad
    while owner.base is not None:
        owner = owner.base
    ref = _LENT.get(id(owner))
    return ref is not None and ref() is owner


def counter_of_base(base: np.ndarray, version: int):
    """The version counter the kept views of `base` share (made at `version`)."""
    entry = _COUNTERS_OF_BASES.get(id(base))
    if entry is not None and entry[0]() is base:
        return entry[1]
    for key in [k for k, (ref, _) in _COUNTERS_OF_BASES.items() if ref() is None]:
        del _COUNTERS_OF_BASES[key]
    counter = VersionCounter()
    counter.value = version
    _COUNTERS_OF_BASES[id(base)] = (weakref.ref(base), counter)
    return counter


_LAYOUT = Once()  # (PyTorch warns once per process)


def _check_layout_contract(grad: np.ndarray, leaf: np.ndarray) -> None:
    """PyTorch's warning (once a process) when a `.grad` added into stops obeying the
    layout contract (a leaf with a zero stride on a size-1 dim, one of no elements
    made from a numpy array)."""
    grad_layout = (grad.shape, element_strides(grad))
    leaf_layout = (leaf.shape, element_strides(leaf))
    if obeys_layout_contract(grad_layout, leaf_layout) or not _LAYOUT.due():
        return

    def listed(values: tuple) -> str:
        return "[" + ", ".join(map(str, values)) + "]"

    warnings.warn("grad and param do not obey the gradient layout contract. This is not an "
                  "error, but may impair performance.\n"
                  f"grad.sizes() = {listed(grad.shape)}, strides() = {listed(grad_layout[1])}\n"
                  f"param.sizes() = {listed(leaf.shape)}, strides() = {listed(leaf_layout[1])}",
                  UserWarning, stacklevel=2)


def _first_empty_grad(grad: np.ndarray, leaf: np.ndarray, unshared: bool) -> Tensor:
    """A leaf of no elements' first `.grad`, as PyTorch's AccumulateGrad makes it: the
    gradient itself (with its version) where nothing else refers to it and it obeys
    the layout contract; else a copy (`clone_obey_contract`): into the leaf's strides
    with `copy_` (version 1) if the leaf is dense, else a row-major clone (version 0)."""
    grad_layout = (grad.shape, element_strides(grad))
    leaf_layout = (leaf.shape, element_strides(leaf))
    if unshared and obeys_layout_contract(grad_layout, leaf_layout):
        # (kept: an array of its strides, writable, which an expanded `grad` is not)
        t = Tensor._make(with_strides(grad.shape, grad.dtype, grad_layout[1]))
        t._version_counter.value = version_of(grad)
        return t
    if non_overlapping_and_dense(*leaf_layout):
        t = Tensor._make(with_strides(leaf.shape, grad.dtype, leaf_layout[1]))
        t._version_counter.value = 1
        return t
    return Tensor._make(np.empty(leaf.shape, grad.dtype))


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


# -- the graph APIs of `torch.autograd.graph` -----------------------------------------


class GradientEdge(NamedTuple):
    """Where a tensor's gradient arrives in the graph: the node that receives it (the
    tensor's `grad_fn`, or a leaf's `AccumulateGrad`) and at which of that node's
    inputs (`output_nr`: the tensor was output number `output_nr` of its op). It can
    stand for the tensor in `autograd.grad(..., inputs=)`: useful when the tensor
    itself is gone, or was modified in place, but its place in the graph is what
    you mean. (`ownership_token` keeps a custom Function's graph alive in PyTorch.)"""

    node: Node
    output_nr: int
    ownership_token: Node | None = None

    def _edge(self) -> tuple:
        """The `(node, output_nr)` pair the engine uses, as `Tensor._edge` gives."""
        if not isinstance(self.node, Node):
            raise RuntimeError("GradientEdge's first object must be an autograd.graph.Node "
                               f"but got {type(self.node).__name__}")
        return (self.node, self.output_nr)

    def _meta(self) -> tuple:
        """(shape, numpy dtype) of the gradient this edge takes, for the edge as an
        output of `grad()` / `backward()` (PyTorch reads `node._input_metadata`):
        a leaf's, a custom Function's output's, or the tensor's `get_gradient_edge` was
        given. minigrad's nodes keep no shapes of their outputs, so an edge made by
        hand to another node cannot be an output."""
        node, nr = self._edge()
        if type(node) is AccumulateGrad:
            return node.variable._data.shape, node.variable._data.dtype
        meta = dict(enumerate(getattr(node, "_output_meta", None) or ()))
        meta.update(node.__dict__.get("_edge_meta", {}))
        if nr not in meta:
            raise NotImplementedError(
                "minigrad does not know the shape of the gradient at this GradientEdge "
                f"({node.name()}, {nr}): make it with autograd.graph.get_gradient_edge(tensor) "
                "to use it as an output")
        return meta[nr]


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The `GradientEdge` where `tensor`'s gradient will be computed:
    `autograd.grad(loss, get_gradient_edge(x))` equals `autograd.grad(loss, x)`."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor "
                           "that does not require gradients")
    node = grad_fn_or_accumulator(tensor)
    if type(node) is not AccumulateGrad:  # (for the edge as an output: see `_meta`)
        node.__dict__.setdefault("_edge_meta", {})[tensor._output_nr] = (
            tensor._data.shape, tensor._data.dtype)
    token = None
    if hasattr(node, "save_for_backward"):  # (a custom Function's node: see above)
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(node, tensor._output_nr, ownership_token=token)


def grad_fn_or_accumulator(t: Tensor | GradientEdge) -> Node:
    """The node a gradient for `t` goes to: its `grad_fn`, or for a leaf that
    requires grad its `AccumulateGrad` (an edge's node, for an edge)."""
    if isinstance(t, GradientEdge):
        return t.node
    # (`_edge`: a view made in no_grad mode requires grad, yet has neither a grad_fn
    # nor an AccumulateGrad)
    node = t._edge()[0]
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def increment_version(tensor) -> None:
    """Tell autograd that `tensor` (or each tensor of an iterable) was modified in
    place behind its back (through numpy, say): its version goes up by one, so a
    backward that saved it refuses to use it. A view and its base share one count."""
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        items = iter(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in items:  # (as PyTorch: those before a non-tensor were counted already)
        if not isinstance(t, Tensor):
            raise RuntimeError(
                "increment_version expects each element of the iterable to be a tensor")
        t._version_counter.value += 1


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable) -> RemovableHandle:
    """`hook(tensor)` runs after a backward pass has added into this leaf's `.grad`
    (it returns nothing). The hook sees the updated `.grad`, so it can take an
    optimizer step for this parameter right there, inside backward, and free `.grad`.
    Only leaves have one (a non-leaf's gradient is never accumulated).
    (`Tensor.register_post_accumulate_grad_hook`.)"""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    hooks = self._post_accumulate_grad_hooks
    if hooks is None:
        hooks = self._post_accumulate_grad_hooks = {}
        acc = self._grad_acc() if self._grad_acc is not None else None
        if acc is not None:  # (the engine's short path would skip the hooks)
            acc._plain = False
    handle = RemovableHandle(hooks)
    hooks[handle._key] = hook
    return handle


attach(Tensor, "_post_accumulate_grad_hooks", None)  # (a dict, once a hook is registered)
attach(Tensor, "register_post_accumulate_grad_hook", register_post_accumulate_grad_hook)


class _MultiHandle(RemovableHandle):
    """The handle of a multi-grad hook: removing it removes its hook on every tensor."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


# Set by the engine (which stands above this module): `current_graph_task_id()`, the
# backward pass running in this thread (-1: none), and
# `will_engine_execute_node(node)`, whether that pass runs `node`.
ENGINE: dict[str, Callable] = {}


def _current_pass() -> int:
    task = ENGINE["current_graph_task_id"]()
    if task == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """One hook over several tensors' gradients, built from tensor hooks.

    `mode="all"`: `fn(grads)` runs once per backward pass, when the gradient of
    every tensor this pass computes has arrived, with one entry per tensor (None
    for those the pass does not reach: not in its graph, or not needed for the
    `inputs` asked for). `mode="any"`: `fn(grad)` runs once per pass, with the first
    of those gradients to arrive. `fn` should not modify what it is given."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        nodes = [grad_fn_or_accumulator(t) for t in tensors]
        arrived: dict[int, list] = {}  # per pass: the gradients so far
        expected: dict[int, int] = {}  # per pass: how many will come

        def hook_for(index: int) -> Callable:
            def inner_hook(grad: Tensor) -> None:
                task = _current_pass()
                with lock:
                    if task not in arrived:  # (the first of this pass: count them)
                        arrived[task] = [None] * len(nodes)
                        will_run = ENGINE["will_engine_execute_node"]
                        expected[task] = sum(1 for node in nodes if will_run(node))
                    grads = arrived[task]
                    grads[index] = grad
                    expected[task] -= 1
                    done = expected[task] == 0
                    if done:
                        del arrived[task], expected[task]
                if done:
                    fn(grads)

            return inner_hook

        handles = tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors))
    else:
        ran: set = set()  # the passes in which `fn` ran

        @functools.wraps(fn)
        def first_only(grad: Tensor) -> None:
            task = _current_pass()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        handles = tuple(t.register_hook(first_only) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


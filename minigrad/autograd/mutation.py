"""`allow_mutation_on_saved_tensors()`: PyTorch's own answer to "an in-place op broke
my backward". Inside it, a tensor saved for backward that is about to be modified in
place is cloned first, and backward uses the clone: the values as they were when
saved.

It is built from two pieces minigrad already has, as in PyTorch:

* saved-tensor hooks (`saved_tensors_hooks`): every saved tensor is packed as a
  *handle*, and the context remembers which tensor each handle stands for;
* a watch on in-place writes (PyTorch uses a dispatch mode): `check_inplace`, which
  every in-place op calls before it writes, calls `before_write(t)`. If `t` shares
  its memory address and version with a saved tensor, that tensor is cloned and its
  handle now unpacks to the clone.

The match is by (memory address, version), as PyTorch's is, so a saved tensor and a
view that starts at the same address are matched; a view that starts further in is
not (its writes are not noticed, and there is no version check either: the hooks
replace it). Backward outside the context that recorded the graph is refused.
"""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Iterator
from weakref import WeakKeyDictionary, WeakValueDictionary

from ..grad_mode import no_grad
from ..tensor import DISPATCH_MODE, Tensor
from .saved_hooks import saved_tensors_hooks

_OUTSIDE_MESSAGE = (
    # (PyTorch's text, two literals joined without a space)
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)

# Whether some `allow_mutation_on_saved_tensors` context is open (one flag for the
# process, as in PyTorch).
_enabled = False


class _Watch(threading.local):
    """This thread's open contexts, whose `before_write` an in-place op calls."""

    def __init__(self) -> None:
        self.contexts: list[_AllowMutationOnSavedContext] = []


_WATCH = _Watch()
# How many contexts are open in all threads: while 0, `check_inplace` looks no further.
watching = 0
_lock = threading.Lock()


class _Handle:
    """What a saved tensor is packed as: a key into the context's tables."""


def _tid(t: Tensor) -> tuple[int, int, int]:
    """One tensor object at one version: (id, memory address, version)."""
    return (id(t), _address(t), t._version_counter.value)


def _sid(t: Tensor) -> tuple[int, int]:
    """Any tensor over the same memory at the same version: (address, version)."""
    return (_address(t), t._version_counter.value)


def _address(t: Tensor) -> int:
    """Where the tensor's first element is in memory (PyTorch's `data_ptr()`)."""
    return t._data.__array_interface__["data"][0]


class _AllowMutationOnSavedContext:
    """What one context knows: the saved tensors by handle (`original`), the clones
    made of those about to change (`cloned`), and how to find a saved tensor from a
    tensor about to be written (`sid_to_tid`, `tid_to_weakhandle`). The handles are
    held by the graph: once a graph is freed, its entries go."""

    def __init__(self) -> None:
        self.cloned: WeakKeyDictionary = WeakKeyDictionary()
        self.original: WeakKeyDictionary = WeakKeyDictionary()
        self.tid_to_weakhandle: WeakValueDictionary = WeakValueDictionary()
        self.sid_to_tid: defaultdict = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, t: Tensor) -> _Handle:
        """Remember `t` (the same tensor at the same version gets the same handle)."""
        tid = _tid(t)
        self.sid_to_tid[_sid(t)].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = t
        return handle

    def unpack(self, handle: _Handle) -> Tensor:
        """The clone, if the tensor was modified since it was saved, else the tensor."""
        if not _enabled:
            raise AssertionError(_OUTSIDE_MESSAGE)
        if handle in self.cloned:
            return self.cloned[handle]
        if handle not in self.original:
            raise AssertionError(_OUTSIDE_MESSAGE)
        return self.original[handle]

    def before_write(self, t: Tensor) -> None:
        """`t` is about to be modified in place: clone every saved tensor that has
        its address and version (once per saved tensor)."""
        for tid in self.sid_to_tid.get(_sid(t), ()):
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:
                continue  # (its graph was freed, or it was cloned already)
            with no_grad():
                self.cloned[handle] = self.original[handle].clone()
            del self.original[handle]


def before_write(t: Tensor) -> None:
    """Called by every in-place op before it writes into `t` (while `watching`)."""
    for ctx in _WATCH.contexts:
        ctx.before_write(t)


@contextlib.contextmanager
def _watching(ctx: _AllowMutationOnSavedContext) -> Iterator[None]:
    global watching
    _WATCH.contexts.append(ctx)
    with _lock:
        watching += 1
        DISPATCH_MODE.on = True  # (PyTorch's dispatch mode: see tensor.DISPATCH_MODE)
    try:
        yield
    finally:
        _WATCH.contexts.remove(ctx)
        with _lock:
            watching -= 1
            DISPATCH_MODE.on = watching > 0


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Context manager: a tensor saved for backward may be modified in place inside
    it; it is cloned just before, and backward uses the clone. Run both forward and
    backward inside the same context. It yields the context's state (for
    debugging), cleared on exit. Contexts cannot be nested."""
    global _enabled
    ctx = _AllowMutationOnSavedContext()
    # (In PyTorch's order: the hooks and the watch first, then the nesting check,
    # whose failure also switches the outer context off.)
    with saved_tensors_hooks(ctx.pack, ctx.unpack), _watching(ctx):
        try:
            if _enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled = True
            yield ctx
        finally:
            ctx.clear()
            _enabled = False

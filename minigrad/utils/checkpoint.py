"""Activation checkpointing: `minigrad.utils.checkpoint.checkpoint(fn, *args,
use_reentrant=False)`, built on saved-tensor hooks as PyTorch's is.

While `fn` runs forward, every tensor an op would save is replaced by a small
`_Holder` (the pack hook), so the graph keeps nothing of `fn`'s intermediate values:
only `fn`'s inputs are saved. The first time backward (or `grad_fn._saved_<name>`)
unpacks one of them, `fn` runs again on the saved inputs, with grad mode on and the
random generator as it was in forward; each tensor the recomputation saves is matched
to its holder by position (the n-th saved in forward is the n-th saved again) and
handed out once. Recomputation stops as soon as every holder has its tensor
(`early_stop`). Once per backward pass: a second backward (with retain_graph) runs
`fn` again.

(It stands above autograd, while `minigrad.utils.hooks` sits at the bottom of
minigrad's layers: `minigrad.utils` itself imports neither, see docs/architecture.md.)
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .. import _generator
from ..autograd.engine import current_graph_task_id
from ..autograd.graph import SavedTensor, saved_tensors_hooks
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..tensor import Tensor

__all__ = ["checkpoint", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation did not save what forward saved."""


def noop_context_fn() -> tuple:
    """The default `context_fn`: no context for forward or recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _default_meta_extractor(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


# What `determinism_check` may name: how a saved tensor is described, to compare.
_DETERMINISM_CHECKS: dict[str, Callable[[Tensor], Any]] = {
    "default": _default_meta_extractor,
    "none": lambda _: None,
}

_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`minigrad.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with minigrad.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under minigrad.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use minigrad._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call minigrad._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""

_SUPPRESSED = (
    "minigrad.utils.checkpoint: the forward context provided by context_fn suppressed an "
    "exception raised during the checkpointed forward. This is not supported because "
    "checkpoint cannot return a value for a failed forward."
)

# Ids for unpacks outside any backward pass (PyTorch draws a random one each time).
_outside_ids = itertools.count(-2, -1)


def _internal_assert(condition: bool) -> None:
    if not condition:
        raise AssertionError(
            "Something went unexpectedly wrong in activation checkpoint. Please report "
            "this bug by filing an issue to PyTorch."
        )


class _Handle:
    """The key of one recomputed tensor, for one backward pass."""


class _Holder:
    """What forward's pack hook saves instead of a tensor: per backward pass, the
    handle of the recomputed tensor standing for it (None once unpacked)."""

    def __init__(self) -> None:
        self.handles: dict[int, _Handle | None] = {}


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every holder has its tensor."""


class _Frame:
    """One checkpointed call: its saved inputs, forward's holders, and what each
    backward pass recomputed."""

    def __init__(self, recompute_fn: Callable, early_stop: bool,
                 metadata_fn: Callable) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args: list = []
        self.weak_holders: list[weakref.ref] = []
        self.x_metadatas: list = []
        # Per backward pass (graph task id): the recomputed tensors, by handle (gone
        # with their holder), how many the recomputation saved, and whether it ran.
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args) -> None:
        # (saved like any saved tensor: an enclosing checkpoint packs them in turn)
        self.saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid: int) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "minigrad.utils.checkpoint: A different number of tensors was saved during "
                "the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_DEBUG_TIP}"
            )
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(gid in holder.handles and holder.handles[gid] is not None)
            recomputed = self.recomputed[gid][holder.handles[gid]]
            if self.x_metadatas[idx] != self.metadata_fn(recomputed):
                different.append((idx, self.x_metadatas[idx], self.metadata_fn(recomputed)))
        if different:
            listed = "".join(
                f"tensor at position {idx}:\nsaved metadata: {saved}\n"
                f"recomputed metadata: {now}\n"
                for idx, saved, now in different
            )
            raise CheckpointError(
                "minigrad.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{listed}.\n{_DEBUG_TIP}"
            )


class _ForwardHooks(saved_tensors_hooks):
    """Forward: save a holder instead of each tensor; unpack by recomputing."""

    def __init__(self, frame: _Frame) -> None:
        def pack_hook(x: Tensor) -> _Holder:
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            with no_grad():
                frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder: _Holder) -> Tensor:
            gid = current_graph_task_id()
            if gid == -1:
                gid = next(_outside_ids)
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _RecomputationHooks(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputation:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                raise CheckpointError(
                    "minigrad.utils.checkpoint: Unpack is being triggered for a tensor that "
                    "was already unpacked once. If you are calling ctx.saved_tensors in "
                    "backward, make sure to do so only once. Otherwise please open an issue "
                    "with details on your use case."
                )
            handle = holder.handles[gid]
            _internal_assert(handle in frame.recomputed[gid])
            holder.handles[gid] = None  # (handed out once: the tensor can go with its node)
            return frame.recomputed[gid][handle]

        super().__init__(pack_hook, unpack_hook)


class _RecomputationHooks(saved_tensors_hooks):
    """Recomputation: give the n-th saved tensor to forward's n-th holder, and stop
    once all have theirs."""

    def __init__(self, frame_ref: weakref.ref, gid: int) -> None:
        def pack_hook(x: Tensor) -> Tensor:
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            _internal_assert(frame is not None)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # (backward inside the checkpointed function, without early stop)
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "minigrad.utils.checkpoint: trying to save more tensors during "
                    f"recomputation than during the original forward pass.\n{_DEBUG_TIP}"
                )
            holder = frame.weak_holders[idx]()
            if holder is not None:  # (None: its node is gone already)
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputation
            return x

        super().__init__(pack_hook, lambda x: x)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """Run `function(*args, **kwargs)` saving none of its intermediate tensors for
    backward, only its inputs; backward runs it again to get them back.

    `use_reentrant=False` is the variant minigrad has (PyTorch recommends it); the
    reentrant one raises NotImplementedError, as does leaving `use_reentrant` out
    (PyTorch 2.13 then warns and uses the reentrant one). `preserve_rng_state=True`
    (a keyword): the recomputation draws the same random numbers as forward did.
    `context_fn`: a pair of context managers, for forward and for recomputation.
    `determinism_check`: "default" compares the shapes, dtypes and devices of what
    forward and recomputation saved; "none" does not. `early_stop`: stop
    recomputing once every saved tensor is back."""
    if use_reentrant is None:
        warnings.warn(
            "minigrad.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
            "will raise an exception. use_reentrant=False is recommended, but if you need "
            "to preserve the current default behavior, you can pass use_reentrant=True. "
            "Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        raise NotImplementedError(
            "minigrad implements only the non-reentrant checkpoint (the one PyTorch "
            "recommends): pass use_reentrant=False"
        )
    if debug:
        raise NotImplementedError(
            "minigrad's checkpoint has no debug mode (PyTorch's logs every operator it "
            "dispatches, which minigrad does not do)"
        )
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
            f"{determinism_check}"
        )
    forward_context, recompute_context = context_fn()
    generator = _generator.default_generator
    forward_state = _generator.snapshot(generator) if preserve else None

    def recompute_fn(*inputs) -> None:
        # As PyTorch's fork_rng: the forward's state for the recomputation, and the
        # caller's back afterwards, so that recomputing draws nothing from its stream.
        outside = _generator.snapshot(generator) if preserve else None
        try:
            if preserve:
                _generator.restore(generator, forward_state)
            with recompute_context:
                function(*inputs, **kwargs)
        finally:
            if preserve:
                _generator.restore(generator, outside)

    if not is_grad_enabled():  # (nothing is saved: nothing to recompute)
        return function(*args, **kwargs)
    frame = _Frame(recompute_fn, early_stop, _DETERMINISM_CHECKS[determinism_check])
    frame.save_inputs(*args)
    suppressed = True
    with _ForwardHooks(frame), forward_context:
        result = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(_SUPPRESSED)
    frame.forward_completed = True
    return result

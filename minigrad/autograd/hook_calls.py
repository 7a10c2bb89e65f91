"""How the engine calls the hooks registered on tensors and nodes, with PyTorch's
checks of what a hook returns (a hook may change a gradient's values, not its type or
size). Hooks are given tensors; a plain backward carries arrays, so it wraps them
here (a `create_graph=True` backward carries tensors already).
"""

from __future__ import annotations

from ..arrays.layout import copy_of
from ..tensor import Tensor
from . import events as ev
from .graph import _tensor_type, version_of


def as_tensor(data, copy_of=None):
    """`data` as a tensor, at the version PyTorch's gradient tensor would have (that
    of `copy_of`, when `data` is its copy): see `version_of`. A tensor (the
    gradients of a `create_graph=True` backward) is itself."""
    if data is None or isinstance(data, Tensor):
        return data
    t = Tensor._make(data)
    version = version_of(data if copy_of is None else copy_of)
    if version:
        t._version_counter.value = version
    return t


def snapshot(data):
    """A copy of the gradient `data` as it is now, as a tensor, for an event. Events
    hold copies: the engine goes on to add streams into the arrays it hands on and
    to keep gradients as `.grad`, and it decides that by who else refers to them, so
    a traced run does what an untraced one does, and its events still show each
    gradient as it was."""
    if isinstance(data, Tensor):
        data = data._data
    return None if data is None else as_tensor(copy_of(data), copy_of=data)


def snapshots(grads) -> tuple:
    """`snapshot` of each gradient in `grads`, for an event."""
    return tuple(snapshot(g) for g in grads)


def run_hooks(hooks: dict | None, grad, node, kind: str, step: int, sink: list | None):
    """Apply tensor hooks in registration order; each may replace the gradient.
    `sink`: where the events go (None: an untraced run, no events)."""
    if not hooks or grad is None:
        return grad
    for hook in list(hooks.values()):
        shown = snapshot(grad) if sink is not None else None  # (what the hook is given)
        before = as_tensor(grad)
        result = hook(before)
        if result is not None:
            grad = hook_grad(hook, grad, result)
        if sink is not None:
            sink.append(ev.HookFired(step, node, kind, hook, shown, snapshot(grad)))
    return grad


def run_pre_hooks(node, grads: list, step: int, sink: list | None) -> list:
    """The node's pre-hooks (`Node.register_prehook`), in registration order; each
    may return new gradients for the node's outputs. `grads` ends at the last output
    that received a gradient; a hook sees (and must return) one per output of the
    node's forward."""
    count = node._num_outputs()
    if count is not None and len(grads) < count:
        grads = [*grads, *([None] * (count - len(grads)))]
    for hook in list(node._pre_hooks.values()):
        shown = snapshots(grads) if sink is not None else None
        result = hook(tuple(as_tensor(g) for g in grads))
        if result is not None:
            grads = hook_grads(hook, grads, result, check_count=count is not None)
        if sink is not None:
            sink.append(ev.HookFired(step, node, "prehook", hook, shown, snapshots(grads)))
    # (returning lets go of what the hooks were shown: an AccumulateGrad may keep its
    # gradient only if nothing else refers to it, see `ENGINE_REFS`)
    return grads


def run_post_hooks(node, grads: list, outputs: list, step: int, sink: list | None) -> list:
    """The node's hooks (`Node.register_hook`), in registration order, given the
    gradients the node computed (`outputs`) and those it received (`grads`); each may
    return new gradients for the node's inputs."""
    for hook in list(node._post_hooks.values()):
        shown = snapshots(outputs) if sink is not None else None
        result = hook(tuple(as_tensor(g) for g in outputs), tuple(as_tensor(g) for g in grads))
        if result is not None:
            outputs = hook_grads(hook, outputs, result, check_count=True)
        if sink is not None:
            sink.append(ev.HookFired(step, node, "posthook", hook, shown, snapshots(outputs)))
    return outputs


def hook_grad(hook, old, new):
    """The gradient a hook returned in place of `old`, with PyTorch's checks: a hook
    may change the values of a gradient, not its type or size. (An array in a plain
    backward, the tensor itself in a `create_graph=True` one.)"""
    if new is None:
        return None
    name = getattr(hook, "__name__", "<unknown>")
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    carries_tensors = isinstance(old, Tensor)
    if carries_tensors:
        old = old._data
    if new._data.dtype != old.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was "
            f"minigrad.{_tensor_type(old.dtype)} got minigrad.{_tensor_type(new._data.dtype)})"
        )
    if new._data.shape != old.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new if carries_tensors else new._data


def hook_grads(hook, old: list, new, check_count: bool) -> list:
    """`hook_grad` for a node hook, which returns a tuple of gradients."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if check_count and len(new) != len(old):
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', '<unknown>')}' has returned an incorrect "
            f"number of values (got {len(new)}, but expected {len(old)})"
        )
    return [hook_grad(hook, g, r) for g, r in zip(old, new)]


def run_post_accumulate_hooks(leaf, node, step: int, sink: list | None) -> None:
    """`leaf`'s post-accumulate-grad hooks, in registration order, once its `.grad`
    has taken the new gradient: each is given the leaf and must return None. (An
    event shows `.grad` before and after each hook: a hook may step the parameter
    and set `.grad` to None.) `sink`: where the events go (None: no events)."""
    for hook in list(leaf._post_accumulate_grad_hooks.values()):
        shown = snapshot(leaf._grad) if sink is not None else None
        result = hook(leaf)
        if result is not None:
            if isinstance(result, Tensor):
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
        if sink is not None:
            sink.append(ev.HookFired(step, node, "postaccumulate", hook, shown,
                                     snapshot(leaf._grad)))


# What each backward pass under way runs, by its id (`current_graph_task_id`): the
# nodes it reaches, its roots, the nodes that lead to wanted gradients (None: all)
# and those whose gradients are wanted, and whether it accumulates (`backward`) or
# only captures (`grad`). The engine adds an entry as a pass starts and drops it as
# the pass ends. (`register_multi_grad_hook` asks: how many of its tensors will get
# a gradient in this pass?)
PASSES: dict[int, tuple] = {}


def will_execute(task: tuple | None, node) -> bool:
    """Whether the pass `task` runs `node` (PyTorch's `_will_engine_execute_node`)."""
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the "
                           "backward pass")
    reached, roots, needed, targets, accumulate = task
    if node not in reached and node not in roots:
        return False
    if needed is None:
        return True
    if id(node) not in needed:
        return False
    if (not accumulate and id(node) in targets
            and all(n is None for n, _ in node.next_functions)):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not "
                           "supported.")
    return True

"""The backward pass.

1. Count, for every node reachable from the roots, how many gradient streams
   will flow into it (its *dependencies*).
2. Seed the roots' input buffers with the starting gradients.
3. Repeatedly take a ready node (all its streams arrived) from a priority queue
   - the most recently created node first, as in PyTorch - and run it: hooks,
   version checks of what it saved, its backward formula, releasing what it
   saved (unless `retain_graph`), then hand each result to `next_functions`.

It is a loop over a queue, not a recursion, so a 100 000-node chain is fine.
`backward_events` is a generator; with `trace=True` it yields an event between
steps (see `events.py`). `backward()` and `grad()` drain the same generator.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator, Sequence
from heapq import heappop, heappush

import numpy as np

from ..arrays.broadcasting import sum_to
from ..arrays.dispatch import binary, run_kernel
from ..arrays.layout import flat, is_dense, memory_order
from ..grad_mode import ANOMALY, grad_mode_off_while_running
from ..kernels import elementwise as K
from ..tensor import Tensor
from . import events as ev
from .graph import (
    AccumulateGrad,
    Node,
    SavedTensor,
    _tensor_type,
    bump_version,
    first_grad,
    fits_layout,
    version_of,
)


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _tensor(data, copy_of=None):
    """`data` as a tensor, at the version PyTorch's gradient tensor would have (that
    of `copy_of`, when `data` is its copy): see `version_of`."""
    if data is None:
        return None
    t = Tensor._make(data)
    version = version_of(data if copy_of is None else copy_of)
    if version:
        t._version_counter.value = version
    return t


def _snapshot(data):
    """A copy of the gradient `data` as it is now, as a tensor, for an event. Events
    hold copies: the engine goes on to add streams into the arrays it hands on and
    to keep gradients as `.grad`, and it decides that by who else refers to them, so
    a traced run does what an untraced one does, and its events still show each
    gradient as it was."""
    return None if data is None else _tensor(np.array(data, copy=True), copy_of=data)


def _shape_str(shape) -> str:
    return f"minigrad.Size([{', '.join(map(str, shape))}])"


def _root_gradients(tensors: tuple, grad_tensors: tuple) -> list:
    """The starting gradient of each root, with PyTorch's checks in PyTorch's order.

    Extra gradients are ignored (PyTorch zips the two lists). A root that does not
    require grad and has no gradient given gets None: it needs no implicit gradient,
    and the caller then reports "element i of tensors does not require grad".
    """
    if 0 < len(grad_tensors) < len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    grads = []
    for i, t in enumerate(tensors):
        g = grad_tensors[i] if grad_tensors else None
        if g is None:
            if not t.requires_grad:
                grads.append(None)
                continue
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            grads.append(np.ones(t._data.shape, t._data.dtype))
            continue
        if not isinstance(g, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
        if g._data.shape != t._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {_shape_str(g._data.shape)} "
                f"and output[{i}] has a shape of {_shape_str(t._data.shape)}."
            )
        grads.append(g._data.astype(t._data.dtype, copy=False))
    return grads


def _dependencies(roots: list[Node]) -> dict:
    """How many edges point at each reachable node (iterative graph walk)."""
    # Nodes hash by identity, so they key the dict directly. A node is walked when
    # its first edge is counted; roots are walked from the start, and only once
    # (a node can be the root of several outputs, or reachable from another root).
    deps: dict = {}
    root_set = set(roots)
    stack = list(root_set)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                if nxt not in root_set:
                    stack.append(nxt)
    return deps


def _needed(roots: list[Node], targets: set) -> set:
    """Nodes from which some target node can be reached: only these need to run
    when gradients are wanted for specific inputs."""
    needed: set = set()
    order: list = []
    seen = set()
    stack = [(r, False) for r in roots]
    while stack:  # iterative post-order
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append((nxt, False))
    for node in order:
        if id(node) in targets or any(
            nxt is not None and id(nxt) in needed for nxt, _ in node.next_functions
        ):
            needed.add(id(node))
    return needed


def _validate(node: Node, grads) -> list:
    """Shape/dtype of each gradient must match the input it is for; broadcasting is
    undone by summing (PyTorch's `validate_outputs`). Gradients for inputs that
    need none are dropped."""
    meta = node._input_meta  # None where the input needs no gradient
    if len(grads) == len(meta):
        for g, m in zip(grads, meta):
            if g is not None and (m is None or g.shape != m[0] or g.dtype is not m[1]):
                break
        else:
            return grads  # the usual case: every gradient is what its input expects
    return _conform_all(node, grads)


def _conform_all(node: Node, grads) -> list:
    """`_validate` for gradients that need work (or an error)."""
    next_functions = node.next_functions
    if len(grads) != len(next_functions):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{len(next_functions)}, got {len(grads)})"
        )
    meta = node._input_meta
    out = None  # copied only if some gradient has to change
    for i, g in enumerate(grads):
        if g is None:
            continue
        m = meta[i] if i < len(meta) else None
        if next_functions[i][0] is None:
            g = None
        elif m is None or (g.shape == m[0] and g.dtype == m[1]):
            continue  # exactly what the input expects
        else:
            g = _conform(node, i, g, m)
        if out is None:
            out = list(grads)
        out[i] = g
    return grads if out is None else out


def _conform(node: Node, i: int, g: np.ndarray, meta: tuple) -> np.ndarray:
    """Sum a broadcast gradient down to its input's shape and cast it to the input's
    dtype, or raise PyTorch's error when the shapes cannot match."""
    shape, dtype = meta
    if g.shape != shape:
        if not _expands_to(shape, g.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, g.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]"
            )
        g = sum_to(g, shape)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return g


def _expands_to(shape: tuple, target: tuple) -> bool:
    """Whether broadcasting turns `shape` into exactly `target` (so a gradient of
    `target`'s shape can be summed back down to `shape`)."""
    lead = len(target) - len(shape)
    if lead < 0:
        return False
    trailing = target[lead:]
    # (Equal trailing dims, a bias's gradient over a batch, is the usual case.)
    return trailing == shape or all(s == t or s == 1 for s, t in zip(shape, trailing))


def _run_hooks(hooks: dict | None, grad, step, node, kind, trace, out_events):
    """Apply tensor hooks in registration order; each may replace the gradient."""
    if not hooks or grad is None:
        return grad
    for hook in list(hooks.values()):
        shown = _snapshot(grad) if trace else None  # (what the hook is given, as it is)
        before = _tensor(grad)
        result = hook(before)
        if result is not None:
            grad = _hook_grad(hook, grad, result)
        if trace:
            out_events.append(ev.HookFired(step, node, kind, hook, shown, _snapshot(grad)))
    return grad


def _hook_grad(hook, old: np.ndarray | None, new) -> np.ndarray | None:
    """The gradient a hook returned in place of `old`, with PyTorch's checks: a hook
    may change the values of a gradient, not its type or size."""
    if new is None:
        return None
    name = getattr(hook, "__name__", "<unknown>")
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new._data.dtype != old.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was "
            f"minigrad.{_tensor_type(old.dtype)} got minigrad.{_tensor_type(new._data.dtype)})"
        )
    if new._data.shape != old.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new._data


def _hook_grads(hook, old: list, new, check_count: bool) -> list:
    """`_hook_grad` for a node hook, which returns a tuple of gradients."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if check_count and len(new) != len(old):
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', '<unknown>')}' has returned an incorrect "
            f"number of values (got {len(new)}, but expected {len(old)})"
        )
    return [_hook_grad(hook, g, r) for g, r in zip(old, new)]


@grad_mode_off_while_running  # as PyTorch's engine: hooks record nothing
def backward_events(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    inputs=None,
    *,
    accumulate: bool = True,
    trace: bool = True,
    captured: dict | None = None,
) -> Iterator:
    """Run backward from `tensors`, yielding events as it goes (when `trace`).

    With `inputs`, only the parts of the graph leading to those tensors run. With
    `accumulate=False` (as `autograd.grad` uses) their gradients are stored in
    `captured[id(tensor)]` instead of being added to `.grad`.
    """
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise AssertionError("Expected output to be a minigrad.Tensor")
    keep = bool(retain_graph)
    root_grads = _root_gradients(tensors, grad_tensors)
    roots: list = []
    for i, t in enumerate(tensors):
        edge = t._edge()
        if edge[0] is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        roots.append(edge)

    # Where to capture gradients for `inputs` (autograd.grad / backward(inputs=)).
    capture_at: dict = {}  # (id(node), output_nr) -> tensor
    targets: set = set()
    for x in _as_tuple(inputs):
        if accumulate:
            # Like PyTorch, `backward(inputs=...)` retains a non-leaf input's gradient
            # (from now on), which is how its `.grad` gets filled.
            x.retain_grad()
        node, nr = x._edge()
        if node is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        capture_at[(id(node), nr)] = x
        targets.add(id(node))

    root_nodes = [node for node, _ in roots]
    deps = _dependencies(root_nodes)
    needed = _needed(root_nodes, targets) if targets else None

    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        _add_to_buffer(buffers, node, nr, g)

    # The ready queue: a heap of nodes, the one to run next (see `Node.__lt__`) on top.
    ready: list = []
    pushed = set()
    for node in root_nodes:
        if deps.get(node, 0) == 0 and id(node) not in pushed:
            pushed.add(id(node))
            heappush(ready, node)

    if trace:
        yield ev.BackwardStarted(
            -1, tuple(root_nodes), tuple(_snapshot(g) for g in root_grads), dict(deps), keep
        )

    # An untraced run that captures nothing, outside anomaly mode, takes a short path
    # through plain nodes (no hooks, no retained gradients): version checks,
    # formula, release.
    short = not trace and not capture_at and needed is None and not ANOMALY.enabled
    step = -1
    while ready:
        node = heappop(ready)
        grads = buffers.pop(node)
        step += 1
        if short and node._plain:
            outputs = _run_formula(node, grads, keep)
        else:
            outputs = yield from _run_node_events(
                node, grads, step, keep, accumulate, capture_at, captured, trace, needed
            )
        grads = None  # (a formula may hand on its incoming gradient itself: see below)

        for (nxt, nr), g in zip(node.next_functions, outputs):
            if nxt is None:
                continue
            if needed is not None and id(nxt) not in needed:
                continue
            _add_to_buffer(buffers, nxt, nr, g, outputs)
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heappush(ready, nxt)
        # Drop this frame's references to the gradients just handed on: a buffer may
        # add a stream into one, and an AccumulateGrad take one over, only if
        # nothing else refers to it.
        outputs = g = None

    if trace:
        yield ev.BackwardFinished(step, step + 1)


def _run_formula(node: Node, grads: list, keep: bool) -> list:
    """A plain node's turn in an untraced run outside anomaly mode: check what it
    saved, run its formula, release what it saved (unless `keep`)."""
    if grads[0] is None and (len(grads) == 1 or _all_none(grads)):
        return [None] * len(node.next_functions)
    held = _check_saved(node) if node._saved else ()
    # `_apply_formula` and `_release` spelled out (without anomaly mode's check):
    # this runs for every node.
    outputs = node.apply(grads)
    if node._input_meta is not None:
        outputs = _validate(node, outputs)
    if not keep:
        for saved in held:
            saved.release()
        if node._saves_elsewhere:
            node.release_variables()
    return outputs


def _release(node: Node, held) -> None:
    """Drop what `node` saved after an untraced run: the saved tensors its version
    check found (`held`), and, for nodes that keep theirs elsewhere (custom
    Functions, CopySlices), whatever `release_variables` knows of."""
    for saved in held:
        saved.release()
    if node._saves_elsewhere:
        node.release_variables()


def _apply_formula(node: Node, grads: list) -> list:
    """The node's backward formula, its gradients checked against its inputs."""
    outputs = node.apply(grads)
    if node._input_meta is not None:  # (None: an element-wise node, nothing to check)
        outputs = _validate(node, outputs)
    if ANOMALY.enabled and ANOMALY.check_nan:
        _check_nan(node, outputs)
    return outputs


def _run_node_events(node, grads, step, keep, accumulate, capture_at, captured, trace, needed):
    """A node's turn the long way round (hooks, retained gradients, captured inputs,
    events): yields its events and returns its gradients for `next_functions`."""
    pending: list = []
    try:
        if needed is not None and id(node) not in needed:
            return [None] * len(node.next_functions)
        if trace:
            yield ev.NodeStarted(step, node, tuple(_snapshot(g) for g in grads))
        outputs = _run_node(
            node, grads, step, keep, accumulate, capture_at, captured, trace, pending
        )
    except Exception as error:
        yield from pending
        if ANOMALY.enabled and node._forward_trace:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused "
                f"the error:\n{node._forward_trace}",
                UserWarning,
                stacklevel=3,
            )
        if trace:
            yield ev.EngineFailed(step, node, error)
        raise
    yield from pending
    return outputs


def _add_to_buffer(buffers: dict, node: Node, nr: int, grad, siblings=()) -> None:
    """Sum a gradient stream into the node's input slot `nr` (PyTorch's InputBuffer).
    `siblings`: the gradients the formula that sent `grad` returned along with it."""
    buf = buffers.get(node)
    if buf is None:
        if nr == 0:  # the usual first stream: a one-slot buffer holding it
            buffers[node] = [grad]
            return
        buf = buffers[node] = [None] * (nr + 1)
    elif len(buf) <= nr:
        buf.extend([None] * (nr + 1 - len(buf)))
    if grad is None:
        return
    summed = buf[nr]
    if summed is None:
        buf[nr] = grad
    elif _summable_in_place(summed, grad, siblings):
        # Only this buffer refers to the sum so far: add into it, as PyTorch's
        # InputBuffer does, instead of making a new array. (A transposed or permuted
        # sum is walked in its memory order, and the stream in the same order.)
        into, stream = summed, grad
        if not summed.flags.c_contiguous:
            order = memory_order(summed)
            into, stream = summed.transpose(order), grad.transpose(order)
        run_kernel(K.add_into, flat(into), flat(stream))
        bump_version(summed)  # (as there, the gradient's version goes up)
    else:
        buf[nr] = binary(K.add, summed, grad, summed.dtype)


def _summable_in_place(summed: np.ndarray, grad: np.ndarray, siblings) -> bool:
    """PyTorch's rule for adding a stream into the running sum in place: the sum
    owns its memory (a view never qualifies: it shares its base's), nothing but the
    buffer refers to it (the engine is still handing on the formula's outputs, so a
    sibling's reference does not count), it is dense and writable, and the stream
    has its shape and dtype."""
    if summed.base is not None:
        return False
    refs = sys.getrefcount(summed) - _BUFFER_REFS
    for sibling in siblings:
        if sibling is summed:
            refs -= 1
    return (refs <= 0 and summed.shape == grad.shape and summed.dtype == grad.dtype
            and summed.flags.writeable
            and (summed.flags.c_contiguous or is_dense(summed)))


# References to the running sum when `_summable_in_place` looks: the buffer list,
# `_add_to_buffer`'s local, `_summable_in_place`'s argument and `sys.getrefcount`'s.
_BUFFER_REFS = 4


def _run_node(node, grads, step, keep, accumulate, capture_at, captured, trace, pending):
    """One node's turn: hooks, the backward formula, releasing what it saved. Events
    go to `pending` (in order), which the caller yields once the node is done."""
    # Hooks registered on the tensors this node produced, then retain_grad. (A leaf's
    # hooks are its AccumulateGrad's: they too run before the node's own pre-hooks.)
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if nr < len(grads):
                grads[nr] = _run_hooks(hooks, grads[nr], step, node, "tensor", trace, pending)
    if type(node) is AccumulateGrad and node.variable._hooks:
        grads[0] = _run_hooks(node.variable._hooks, grads[0], step, node, "tensor", trace,
                              pending)
    if node._retains_grad:
        for nr, ref in node._retains_grad.items():
            t = ref()
            if t is not None and nr < len(grads) and grads[nr] is not None:
                g = grads[nr]
                if t._grad is None:
                    t._grad = _tensor(g.copy())
                else:
                    t._grad = _tensor(t._grad._data + g)
                if trace:
                    pending.append(ev.GradRetained(step, node, t, t._grad))
    if capture_at:
        for nr in range(len(grads)):
            x = capture_at.get((id(node), nr))
            if x is not None and grads[nr] is not None and not isinstance(node, AccumulateGrad):
                _store_capture(captured, x, grads[nr], accumulate)
    # `autograd.grad` only captures a leaf's gradient: like PyTorch, it runs neither the
    # leaf's AccumulateGrad nor that node's hooks (the leaf's tensor hooks ran above).
    captures_only = not accumulate and type(node) is AccumulateGrad
    if node._pre_hooks and not captures_only:
        # `grads` ends at the last output that received a gradient; a hook sees (and
        # must return) one per output of the node's forward.
        count = node._num_outputs()
        if count is not None and len(grads) < count:
            grads = [*grads, *([None] * (count - len(grads)))]
        for hook in list(node._pre_hooks.values()):
            shown = tuple(_snapshot(g) for g in grads) if trace else None
            before = tuple(_tensor(g) for g in grads)
            result = hook(before)
            if result is not None:
                grads = _hook_grads(hook, grads, result, check_count=count is not None)
            if trace:
                pending.append(ev.HookFired(step, node, "prehook", hook, shown,
                                            tuple(_snapshot(g) for g in grads)))
        # Let go of what the hooks were shown: an AccumulateGrad may keep its gradient
        # only if nothing else refers to it (see `ENGINE_REFS`).
        before = result = None

    held = None  # the saved tensors checked before the formula ran (untraced runs)
    if type(node) is AccumulateGrad:
        grad = grads[0]
        leaf = node.variable
        if grad is not None:
            if capture_at and (id(node), 0) in capture_at:
                _store_capture(captured, leaf, grad, accumulate)
            else:
                # A gradient someone else still refers to (a hook's result the user
                # kept) is copied: see `ENGINE_REFS`.
                total = node.accumulate(grad)
                if trace:
                    pending.append(ev.GradAccumulated(step, node, leaf, _snapshot(grad), total))
        outputs: list = []
    elif grads[0] is None and (len(grads) == 1 or _all_none(grads)):
        outputs = [None] * len(node.next_functions)
    else:
        # Check every saved tensor first (the error names the node that needs it).
        if trace:
            items = node.saved_items()
            for name, saved in items:
                if saved.is_released or saved.current_version != saved.saved_version:
                    _raise_saved_error(node)
                pending.append(ev.SavedTensorUnpacked(
                    step, node, name, saved.saved_version, saved.current_version))
        else:
            held = _check_saved(node) if node._saved else ()
        outputs = _apply_formula(node, grads)
    if trace:
        pending.append(ev.NodeFinished(step, node, tuple(_snapshot(g) for g in grads),
                                       tuple(_snapshot(g) for g in outputs)))
    # Post hooks run before the release, as in PyTorch (if one raises, nothing is freed).
    if node._post_hooks and not captures_only:
        for hook in list(node._post_hooks.values()):
            shown = tuple(_snapshot(g) for g in outputs) if trace else None
            gi = tuple(_tensor(g) for g in outputs)
            go = tuple(_tensor(g) for g in grads)
            result = hook(gi, go)
            if result is not None:
                outputs = _hook_grads(hook, outputs, result, check_count=True)
            if trace:
                pending.append(ev.HookFired(step, node, "posthook", hook, shown,
                                            tuple(_snapshot(g) for g in outputs)))
    # Unless retain_graph, the node drops what it saved. An untraced run already
    # holds the saved tensors its check found (`held`); a traced run (and a node
    # whose formula did not run) asks `release_variables`, which names what it drops.
    if not keep:
        if held is None:
            released = node.release_variables()
            if trace and released:
                pending.append(ev.SavedTensorsReleased(step, node, released))
        else:
            _release(node, held)
    return outputs


def _check_saved(node: Node) -> list:
    """The version check of every tensor `node` saved, written for speed (it runs for
    every node): no (name, tensor) pairs as `saved_items` makes them, and the message
    is built (by `SavedTensor.check`) only when something is wrong. Returns the saved
    tensors (none when the node saved only plain values)."""
    held = []
    for value in node._saved.values():
        if isinstance(value, SavedTensor):
            held.append(value)
            if value.is_released or value._counter.value != value.saved_version:
                _raise_saved_error(node)
        elif isinstance(value, tuple):
            for v in value:
                if isinstance(v, SavedTensor):
                    held.append(v)
                    if v.is_released or v._counter.value != v.saved_version:
                        _raise_saved_error(node)
    return held


def _raise_saved_error(node: Node) -> None:
    """Some saved tensor of `node` is stale or freed: raise the error about the one
    PyTorch checks first. PyTorch's generated nodes unpack their saved inputs sorted
    by name (`other` before `self`), then their outputs; a custom Function's keep
    the order they were saved in."""
    items = node.saved_items()
    if type(node).saves:
        items.sort(key=lambda item: (item[1].is_output, item[0].split("[")[0]))
    for _, saved in items:
        saved.check(node)


def _check_nan(node: Node, outputs) -> None:
    """Anomaly mode's check of a node's gradients."""
    for i, g in enumerate(outputs):
        if g is not None and g.dtype.kind == "f" and np.isnan(g).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _all_none(grads: list) -> bool:
    for g in grads:
        if g is not None:
            return False
    return True


def _store_capture(captured, x, grad, accumulate):
    if captured is None:
        return
    prev = captured.get(id(x))
    captured[id(x)] = grad if prev is None else prev + grad


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None) -> None:
    """Compute and accumulate gradients of `tensors` into the leaves' `.grad`."""
    if create_graph:
        raise NotImplementedError(
            "minigrad does not support create_graph=True (no double backward)"
        )
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        captured: dict = {}
        for _ in backward_events(tensors, grad_tensors, retain_graph, inputs,
                                 trace=False, captured=captured):
            pass
        for x in inputs:
            g = captured.get(id(x))
            if g is None or x.grad_fn is not None:
                continue  # (a non-leaf's retained gradient is already in its .grad)
            if x._grad is None:
                # (PyTorch would run the leaf's AccumulateGrad: `first_grad` tells the
                # version as it would, with the engine's references to `g` left out.)
                x._grad = first_grad(g, x._data, stolen=fits_layout(g, x._data))
            else:
                x._grad._data += g
                x._grad._version_counter.value += 1
        return
    for _ in backward_events(tensors, grad_tensors, retain_graph, trace=False):
        pass


def tensor_backward(self: Tensor, gradient: Tensor | None = None,
                    retain_graph: bool | None = None, create_graph: bool = False,
                    inputs=None) -> None:
    """Compute the gradient of this tensor w.r.t. graph leaves (see `backward`).
    (`Tensor.backward`.)"""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = tensor_backward


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of `outputs` w.r.t. `inputs`, returned (not accumulated)."""
    if create_graph:
        raise NotImplementedError(
            "minigrad does not support create_graph=True (no double backward)"
        )
    if is_grads_batched:
        raise NotImplementedError("minigrad does not support is_grads_batched=True")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    inputs_t: Sequence = _as_tuple(inputs)
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for x in inputs_t:
        if not isinstance(x, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(x).__name__}")
    for x in inputs_t:
        if not x.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    captured: dict = {}
    for _ in backward_events(outputs, grad_outputs, retain_graph, inputs_t, accumulate=False,
                             trace=False, captured=captured):
        pass
    result = []
    for index, x in enumerate(inputs_t):
        g = captured.get(id(x))
        if g is None:
            if materialize_grads:
                result.append(_tensor(np.zeros(x._data.shape, x._data.dtype)))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        else:
            result.append(_tensor(np.array(g, copy=True), copy_of=g))
    return tuple(result)

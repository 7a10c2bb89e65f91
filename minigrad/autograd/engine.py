"""The backward pass. One call of `backward()` or `grad()` is one `GraphTask`, run
by `execute`:

1. Count, for every node reachable from the roots, how many gradient streams
   will flow into it (its *dependencies*), and seed the roots' input buffers with
   the starting gradients (`_start`).
2. Repeatedly take a ready node (all its streams arrived) from a priority queue
   - the most recently created node first, as in PyTorch - and run it: hooks,
   version checks of what it saved, its backward formula, releasing what it
   saved (unless `retain_graph`), then hand each result to `next_functions`.

It is a loop over a queue, not a recursion, so a 100 000-node chain is fine.
`execute` is a generator; when the task traces, it yields an event between steps
(see `events.py`). `backward()`, `backward_events()` and `grad()`
(`entry_points.py`) drain it.

A node's turn is `_node_turn` and `_run_node` (the long way: hooks, retained
gradients, captured inputs, events). Its pieces (`_check_saved`, the formula on
arrays, `_release`) also make up the engine's fast path, `_run_plain_chain`: the turn
of a node without hooks in a run that neither traces nor captures, and of the plain
nodes of a chain after it, one after another without the buffers and the queue;
`_check_saved` is itself a fast version of the check the traced path makes.
Each is measured where it is written. The other parts live in their own modules:
the input buffers (`input_buffer.py`), the checks of gradients (`validate.py`) and
the calls of hooks (`hook_calls.py`).
"""

from __future__ import annotations

import functools
import itertools
import threading
import warnings
from collections.abc import Callable, Iterator
from heapq import heappop, heappush

import numpy as np

from ..grad_mode import ANOMALY, STATE
from ..tensor import Tensor
from . import events as ev
from .graph import (
    ENGINE,
    RECORDING,
    RECORDING_PASSES,
    UNPACKED_FOR_FORMULA,
    AccumulateGrad,
    GradientEdge,
    Node,
    SavedTensor,
    forget_unpacked,
    lend_counter,
)
from .hook_calls import (
    PASSES,
    as_tensor,
    run_hooks,
    run_post_accumulate_hooks,
    run_post_hooks,
    run_pre_hooks,
    snapshot,
    snapshots,
    will_execute,
)
from .input_buffer import add_to_buffer
from .tangents import DUAL
from .validate import root_gradients, validate, validate_recorded


def _dependencies(roots: list[Node]) -> dict:
    """How many edges point at each reachable node (iterative graph walk)."""
    # Nodes hash by identity, so they key the dict directly. A node is walked when
    # its first edge is counted; roots are walked from the start, and only once
    # (a node can be the root of several outputs, or reachable from another root).
    # The walk goes straight on to the last new node a node leads to, and keeps the
    # others on the stack: along a chain, the stack is never touched (0.26 -> 0.19 us
    # a node on `benchmarks/bench_overhead.py`'s chain).
    deps: dict = {}
    root_set = set(roots)
    stack = list(root_set)
    # (one root cannot lead to itself: the graph has no cycles)
    several_roots = len(root_set) > 1
    while stack:
        node = stack.pop()
        while node is not None:
            new = None
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    if not several_roots or nxt not in root_set:
                        if new is not None:
                            stack.append(new)
                        new = nxt
            node = new
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


class GraphTask:
    """What one backward call needs, as PyTorch's `GraphTask`: its options, the
    dependency count of every node, the input buffers of the nodes not ready yet,
    the ready queue, where the gradients of `inputs` go, and the event sink.

    * `retain_graph`: keep what the nodes saved (else each node drops it after its
      turn);
    * `create_graph`: the backward pass records a graph of its own (grad mode on),
      so that its gradients can be differentiated again;
    * `accumulate`: add into the leaves' `.grad` (`backward()`); False for `grad()`,
      whose gradients are captured (`captured`) and returned instead;
    * `trace`: report events (`events.py`); an untraced run reports none;
    * `tensor_grads`: the gradients are tensors and each formula runs as minigrad
      code (`Node.apply_recording`): with `create_graph`, and for `grad()` inside a
      dual level (forward over reverse, nothing recorded); else they are arrays, each
      formula a fused kernel.
    """

    __slots__ = ("id", "retain_graph", "create_graph", "accumulate", "trace", "tensor_grads",
                 "dependencies", "not_ready", "ready", "capture_at", "captured", "needed",
                 "events")

    def __init__(self, retain_graph: bool, create_graph: bool, *, accumulate: bool = True,
                 trace: bool = False) -> None:
        self.id = -1  # (numbered when it starts: see `current_graph_task_id`)
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.accumulate = accumulate
        self.trace = trace
        self.tensor_grads = create_graph or (DUAL.active and not accumulate)
        self.dependencies: dict = {}  # node -> how many streams it still waits for
        self.not_ready: dict = {}  # node -> its input buffer, one slot per output
        self.ready: list = []  # a heap of nodes, the one to run next on top (`Node.__lt__`)
        self.capture_at: dict = {}  # (id(node), output_nr) -> (node, the inputs there)
        self.captured: dict = {}  # id(input tensor) -> its gradient
        self.needed: set | None = None  # ids of the nodes that lead to an input
        self.events: list = []  # the event sink: a node's events, yielded after its turn


class _RunningTasks(threading.local):
    def __init__(self) -> None:
        self.ids: list[int] = []


_RUNNING = _RunningTasks()
_task_ids = itertools.count()


def current_graph_task_id() -> int:
    """The id of the backward pass running in this thread, -1 outside backward
    (PyTorch's `torch._C._current_graph_task_id`: checkpointing recomputes once per
    backward pass)."""
    running = _RUNNING.ids
    return running[-1] if running else -1


ENGINE["current_graph_task_id"] = current_graph_task_id
ENGINE["will_engine_execute_node"] = lambda node: will_execute(
    PASSES.get(current_graph_task_id()), node)


def _one_backward_pass(gen_fn: Callable[..., Iterator]) -> Callable[..., Iterator]:
    """Run each call of generator function `gen_fn(task, ...)` as one backward pass
    of this thread. While the generator runs, not while it waits at a `yield` (a
    stepper showing an event):

    * grad mode is off, as in PyTorch's engine (a hook's `g * w` records nothing);
      with `create_graph=True` it is on, so that the formulas record a graph;
    * the pass is the current one (`current_graph_task_id`: checkpointing
      recomputes once per backward pass);
    * while any `create_graph=True` pass is under way, `RECORDING` is this pass's
      own: which node's backward records now (what the caller does between two
      events is not part of this pass).

    One wrapper does all three, and a plain backward skips the `RECORDING` swap and
    the pass counter's lock: a one-node backward takes about 2 us less."""

    @functools.wraps(gen_fn)
    def run(task: GraphTask, *args) -> Iterator:
        task.id = next(_task_ids)
        create_graph = task.create_graph
        gen = gen_fn(task, *args)
        mine = (None, None)  # this pass's RECORDING, kept while it waits at a yield
        if create_graph:
            RECORDING_PASSES.add(1)
        try:
            while True:
                running = _RUNNING.ids
                running.append(task.id)
                prev_mode = STATE.grad_enabled
                STATE.grad_enabled = create_graph
                swap = RECORDING_PASSES.count
                if swap:
                    outer = RECORDING.parent, RECORDING.made
                    RECORDING.parent, RECORDING.made = mine
                try:
                    event = next(gen)
                except StopIteration:
                    return
                finally:
                    running.pop()
                    STATE.grad_enabled = prev_mode
                    if swap:
                        mine = RECORDING.parent, RECORDING.made
                        RECORDING.parent, RECORDING.made = outer
                yield event
        finally:  # (also when the caller drops the generator half way)
            PASSES.pop(task.id, None)
            if create_graph:
                RECORDING_PASSES.add(-1)

    return run


@_one_backward_pass
def execute(task: GraphTask, tensors: tuple, grad_tensors: tuple = (),
            inputs: tuple = ()) -> Iterator[ev.Event]:
    """Run `task`: backward from `tensors`, seeded with `grad_tensors` (for scalars,
    ones when not given), yielding events as it goes (when `task.trace`). With
    `inputs`, only the parts of the graph leading to those tensors run, and their
    gradients are captured (`task.captured`)."""
    roots, root_grads = _start(task, tensors, grad_tensors, inputs)
    ready, buffers, deps, needed = task.ready, task.not_ready, task.dependencies, task.needed
    if task.trace:
        yield ev.BackwardStarted(-1, roots, snapshots(root_grads), dict(deps), task.retain_graph)
    roots = root_grads = None
    short = _takes_short_path(task)
    step = -1
    while ready:
        node = heappop(ready)
        grads = buffers.pop(node)
        step += 1
        if short and node._plain:  # (and the chain of plain nodes it may start)
            node, outputs = _run_plain_chain(task, node, grads)
        else:
            outputs = yield from _node_turn(task, node, grads, step)
        grads = None  # (a formula may hand on its incoming gradient itself: see below)

        for (nxt, nr), g in zip(node.next_functions, outputs):
            if nxt is None or (needed is not None and id(nxt) not in needed):
                continue
            add_to_buffer(buffers, nxt, nr, g, outputs)
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heappush(ready, nxt)
        # Drop this frame's references to the gradients just handed on: a buffer may
        # add a stream into one, and an AccumulateGrad take one over, only if
        # nothing else refers to it.
        outputs = g = None

    if UNPACKED_FOR_FORMULA:  # (saved-tensor hooks: the last node's unpacked tensors)
        forget_unpacked()
    if task.trace:
        yield ev.BackwardFinished(step, step + 1)


def _start(task: GraphTask, tensors: tuple, grad_tensors: tuple, inputs: tuple) -> tuple:
    """Everything before the first node runs: check the roots and their gradients,
    note where to capture the gradients of `inputs`, count every node's dependencies,
    seed the roots' input buffers and push the ready roots. Returns the root nodes
    and their gradients."""
    for t in tensors:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise AssertionError("Expected output to be a minigrad.Tensor")
    root_grads = root_gradients(tensors, grad_tensors, task.tensor_grads)
    if not task.tensor_grads:
        for g in grad_tensors:
            if isinstance(g, Tensor):
                lend_counter(g)
    roots: list = []
    for i, t in enumerate(tensors):
        edge = t._edge()
        if edge[0] is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        roots.append(edge)
    _note_inputs(task, inputs)
    root_nodes = [node for node, _ in roots]
    task.dependencies = deps = _dependencies(root_nodes)
    targets = {id(node) for node, *_ in task.capture_at.values()}
    if targets:
        task.needed = _needed(root_nodes, targets)
    # (what `register_multi_grad_hook` asks while the pass runs: see `will_execute`)
    PASSES[task.id] = (deps.keys(), root_nodes, task.needed, targets, task.accumulate)
    for (node, nr), g in zip(roots, root_grads):
        add_to_buffer(task.not_ready, node, nr, g)
    for node in dict.fromkeys(root_nodes):  # (a node can be the root of several outputs)
        if deps.get(node, 0) == 0:
            heappush(task.ready, node)
    return tuple(root_nodes), root_grads


def _note_inputs(task: GraphTask, inputs: tuple) -> None:
    """Where to capture the gradients of `inputs` (`grad()`, `backward(inputs=)`):
    `task.capture_at[(id(node), output_nr)]` for the edge of each: `(node, x, ...)`,
    every input at that edge (one tensor, or several `GradientEdge`s to one place,
    each of which gets the gradient)."""
    for x in inputs:
        if not isinstance(x, (Tensor, GradientEdge)):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(x).__name__}")
    for x in inputs:
        if task.accumulate and isinstance(x, Tensor):
            # Like PyTorch, `backward(inputs=...)` retains a non-leaf input's gradient
            # (from now on), which is how its `.grad` gets filled.
            x.retain_grad()
        node, nr = x._edge()
        if node is None:
            if not x.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            # A view made in no_grad mode of a tensor that requires grad: it requires
            # grad, yet no graph leads to it. Like PyTorch, its gradient is captured at
            # a node of its own that nothing reaches (so it is unused: None).
            node, nr = Node(), 0
        there = task.capture_at.get((id(node), nr), (node,))
        if all(y is not x for y in there[1:]):
            task.capture_at[(id(node), nr)] = (*there, x)


def _takes_short_path(task: GraphTask) -> bool:
    """Whether plain nodes may take the short path (`_run_plain_chain`): an untraced
    run of arrays that captures nothing, outside anomaly mode."""
    return not (task.trace or task.capture_at or ANOMALY.enabled or task.tensor_grads)


def _run_plain_chain(task: GraphTask, node: Node, grads: list) -> tuple[Node, list]:
    """The short path: a plain node's turn (no hooks, no retained gradient) when
    `_takes_short_path`, then, for as long as they are plain, the turns of the nodes
    after it that would run next anyway. Returns the last node that ran and its
    gradients, which `execute` hands on.

    A turn here is `_run_node` without the steps that find nothing to do (hooks,
    retained gradients, captures, events) and without `_node_turn`'s generator; its
    pieces (`_check_saved`, `_formula_on_arrays`, `_release`) are written out.

    Along a chain, when no other node is ready and a node's one gradient goes to a
    node waiting for no other stream, the loop in `execute` would put that gradient in
    an input buffer and the node in the ready queue, only to take both straight out
    again: here the gradient is handed over directly. (`execute` counts the chain as
    one step: steps count only for events, which a short run has none of.)

    Measured on `benchmarks/bench_overhead.py`'s chain of 200 element-wise ops on 10
    float64 values, each version in turns: backward alone took 936 us through
    `_run_node`, 708 us with the short turn, 566 us with the chain handed over
    directly too (benchmarks/README.md has the later figures)."""
    ready, buffers, deps = task.ready, task.not_ready, task.dependencies
    retain = task.retain_graph
    while True:
        # -- the node's turn
        if grads[0] is None and (len(grads) == 1 or _all_none(grads)):
            outputs = [None] * len(node.next_functions)
        else:
            held = _check_saved(node) if node._saved else ()
            outputs = node.backward(*grads) if node._apply_is_backward else node.apply(grads)
            if node._input_meta is not None:
                outputs = validate(node, outputs)
            if not retain:
                for saved in held:
                    saved.release()
                if node._saves_elsewhere:
                    node.release_variables()
        # -- the next node, if the chain goes on
        if ready:
            return node, outputs
        edge = None
        i = 0  # (counted by hand: a loop over `zip` costs twice as much here)
        for fn_nr in node.next_functions:
            if fn_nr[0] is not None:
                if edge is not None:  # (two gradients to hand on: not a chain)
                    return node, outputs
                edge, at = fn_nr, i
            i += 1
        if edge is None or at >= len(outputs):
            return node, outputs
        nxt, nr = edge
        if nr or deps[nxt] != 1 or not nxt._plain or nxt in buffers:
            return node, outputs
        deps[nxt] = 0
        # The gradient's one reference must be the new `grads`, as if it came from a
        # buffer (an AccumulateGrad may then take it over, see `graph.ENGINE_REFS`):
        # the list the node ran on, which the caller holds too, is emptied, since a
        # formula may hand on its incoming gradient itself (`+ 0.5`'s does).
        grads.clear()
        node, grads = nxt, [outputs[at]]
        outputs = None


def _apply_formula(task: GraphTask, node: Node, grads: list) -> list:
    """The node's backward formula, its gradients checked against its inputs: the
    fused kernels on arrays, or (`task.tensor_grads`) the formula as minigrad code,
    for the inputs that lead to a wanted gradient (`task.needed`: like PyTorch,
    nothing else is computed, and so nothing else recorded)."""
    if task.tensor_grads:
        needed = task.needed
        wanted = None if needed is None else [
            fn is not None and id(fn) in needed for fn, _ in node.next_functions]
        outputs = validate_recorded(node, node.apply_recording(grads, wanted))
    else:
        outputs = _formula_on_arrays(node, grads)
    if ANOMALY.enabled and ANOMALY.check_nan:
        _check_nan(node, outputs)
    return outputs


def _formula_on_arrays(node: Node, grads: list) -> list:
    """The node's fused backward kernels on array gradients, the results checked
    against its inputs. (`backward` itself where `apply` would only call it: one call
    fewer per node.)"""
    outputs = node.backward(*grads) if node._apply_is_backward else node.apply(grads)
    if node._input_meta is not None:  # (None: element-wise, nothing to check)
        outputs = validate(node, outputs)
    return outputs


def _release(node: Node, held) -> None:
    """Drop what `node` saved after an untraced run: the saved tensors its version
    check found (`held`), and, for nodes that keep theirs elsewhere (custom
    Functions, CopySlices), whatever `release_variables` knows of."""
    for saved in held:
        saved.release()
    if node._saves_elsewhere:
        node.release_variables()


def _node_turn(task: GraphTask, node: Node, grads: list, step: int) -> Iterator:
    """A node's turn the long way round (hooks, retained gradients, captured inputs,
    events): yields its events and returns its gradients for `next_functions`."""
    if task.create_graph:
        yield from _start_recording_turn(task, node, step)
    try:
        if task.needed is not None and id(node) not in task.needed:
            return [None] * len(node.next_functions)
        if task.trace:
            yield ev.NodeStarted(step, node, snapshots(grads))
        outputs = _run_node(task, node, grads, step)
    except Exception as error:
        yield from _sunk(task)
        _warn_in_anomaly_mode(node)
        if task.trace:
            yield ev.EngineFailed(step, node, error)
        raise
    yield from _sunk(task)
    if task.create_graph and task.trace:
        made, RECORDING.made = RECORDING.made, []
        yield ev.NodesRecorded(step, node, tuple(made), tuple(outputs))
    return outputs


def _sunk(task: GraphTask) -> Iterator:
    """The events a node's turn left in the sink, in order; the sink is emptied."""
    events, task.events = task.events, []
    yield from events


def _warn_in_anomaly_mode(node: Node) -> None:
    """Anomaly mode's warning when a node's turn raised: where its forward ran."""
    if ANOMALY.enabled:  # (a node recorded outside anomaly mode kept no traceback)
        where = (f"Traceback of forward call that caused the error:\n{node._forward_trace}"
                 if node._forward_trace else "No forward pass information available. "
                 "Enable detect anomaly during forward pass for more information.")
        warnings.warn(f"Error detected in {node.name()}. {where}", UserWarning, stacklevel=4)


def _start_recording_turn(task: GraphTask, node: Node, step: int) -> Iterator:
    """In a `create_graph=True` backward, `node`'s turn begins: every node made from
    now on, by its formula and by the input buffers adding up its results, was
    recorded by `node` (`RECORDING`, read by `Node.__init__`), until the next turn.
    A traced run first reports what the buffers recorded for the previous node."""
    if task.trace and RECORDING.made:
        yield ev.NodesRecorded(step - 1, RECORDING.parent, tuple(RECORDING.made))
    RECORDING.parent, RECORDING.made = node, [] if task.trace else None


def _run_node(task: GraphTask, node: Node, grads: list, step: int) -> list:
    """One node's turn: tensor hooks and retained gradients, pre-hooks, the backward
    formula, post-hooks, releasing what it saved. Events go to the sink
    (`task.events`), which `_node_turn` yields once the node is done."""
    sink = task.events if task.trace else None
    _run_tensor_hooks(node, grads, step, sink)
    if node._retains_grad:
        _retain_grads(task, node, grads, step)
    if task.capture_at:
        _capture(task, node, grads)
    # `autograd.grad` only captures a leaf's gradient: like PyTorch, it runs neither the
    # leaf's AccumulateGrad nor that node's hooks (the leaf's tensor hooks ran above).
    captures_only = not task.accumulate and type(node) is AccumulateGrad
    if node._pre_hooks and not captures_only:
        grads = run_pre_hooks(node, grads, step, sink)
    held = None  # the saved tensors checked before the formula ran (untraced runs)
    if type(node) is AccumulateGrad:
        _accumulate(task, node, grads[0], step)
        outputs: list = []
    elif grads[0] is None and (len(grads) == 1 or _all_none(grads)):
        outputs = [None] * len(node.next_functions)
    else:
        # Check every saved tensor first (the error names the node that needs it).
        held = _check_saved_traced(node, step, sink) if sink is not None else (
            _check_saved(node) if node._saved else ())
        outputs = _apply_formula(task, node, grads)
    if sink is not None:
        sink.append(ev.NodeFinished(step, node, snapshots(grads), snapshots(outputs)))
    # Post hooks run before the release, as in PyTorch (if one raises, nothing is freed).
    if node._post_hooks and not captures_only:
        outputs = run_post_hooks(node, grads, outputs, step, sink)
    # Unless retain_graph, the node drops what it saved. An untraced run already
    # holds the saved tensors its check found (`held`); a traced run (and a node
    # whose formula did not run) asks `release_variables`, which names what it drops.
    if not task.retain_graph:
        if held is None:
            released = node.release_variables()
            if sink is not None and released:
                sink.append(ev.SavedTensorsReleased(step, node, released))
        else:
            _release(node, held)
    return outputs


def _run_tensor_hooks(node: Node, grads: list, step: int, sink: list | None) -> None:
    """The hooks registered on the tensors `node` produced (a leaf's are its
    AccumulateGrad's): they run first, before the node's own pre-hooks, and may
    replace the gradients in `grads`."""
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if nr < len(grads):
                grads[nr] = run_hooks(hooks, grads[nr], node, "tensor", step, sink)
    if type(node) is AccumulateGrad and node.variable._hooks:
        grads[0] = run_hooks(node.variable._hooks, grads[0], node, "tensor", step, sink)


def _retain_grads(task: GraphTask, node: Node, grads: list, step: int) -> None:
    """`retain_grad()`: the tensors `node` produced that asked for it get their
    gradients in `.grad` (added to what they had)."""
    for nr, ref in node._retains_grad.items():
        t = ref()
        if t is not None and nr < len(grads) and grads[nr] is not None:
            g = grads[nr]
            if task.tensor_grads:  # (as PyTorch's retain_grad hook: clone, then add)
                t._grad = g.clone() if t._grad is None else t._grad + g
            elif t._grad is None:
                t._grad = as_tensor(g.copy())
            else:
                t._grad = as_tensor(t._grad._data + g)
            if task.trace:
                task.events.append(ev.GradRetained(step, node, t, t._grad))


def _capture(task: GraphTask, node: Node, grads: list) -> None:
    """The gradients `node` received for the outputs that are among the `inputs` of
    `grad()` or `backward(inputs=)` (a leaf's: see `_accumulate`)."""
    if type(node) is AccumulateGrad:
        return
    for nr in range(len(grads)):
        wanted = task.capture_at.get((id(node), nr))
        if wanted is not None and grads[nr] is not None:
            for x in wanted[1:]:
                _store_capture(task, x, grads[nr])


def _accumulate(task: GraphTask, node: AccumulateGrad, grad, step: int) -> None:
    """An AccumulateGrad's turn: its leaf's gradient is captured, when the leaf is
    among the inputs, or else added into `.grad`. (`grad` is this frame's one
    reference to the gradient: a gradient someone else still refers to, a hook's
    result the user kept, is copied, see `ENGINE_REFS`.)"""
    if grad is None:
        return
    wanted = task.capture_at.get((id(node), 0)) if task.capture_at else None
    if wanted is not None:  # (the inputs as given: the leaf, or its GradientEdges)
        for x in wanted[1:]:
            _store_capture(task, x, grad)
        return
    leaf = node.variable
    total = node.accumulate_recorded(grad) if task.tensor_grads else node.accumulate(grad)
    if task.trace:
        task.events.append(ev.GradAccumulated(step, node, leaf, snapshot(grad), total))
    if leaf._post_accumulate_grad_hooks:
        run_post_accumulate_hooks(leaf, node, step, task.events if task.trace else None)


def _check_saved_traced(node: Node, step: int, sink: list) -> None:
    """A traced run's check of what `node` saved: every saved tensor is unpacked and
    reported (`SavedTensorUnpacked`), in PyTorch's order when some are hooked."""
    items = node.saved_items()
    if any(saved.hooked for _, saved in items):
        _check_saved_slowly(node)  # (saved-tensor hooks: unpack, in PyTorch's order)
    for name, saved in items:
        if saved.is_released or saved.current_version != saved.saved_version:
            _check_saved_slowly(node)
        sink.append(ev.SavedTensorUnpacked(
            step, node, name, saved.saved_version, saved.current_version))


def _check_saved(node: Node) -> list:
    """The short path's version check of every tensor `node` saved, written for speed
    (it runs for every node): no (name, tensor) pairs as `saved_items` makes them,
    and the message is built (by `SavedTensor.check`) only when something is wrong.
    Returns the saved tensors (none when the node saved only plain values). A tensor
    saved through saved-tensor hooks never matches (see `_NotChecked`): such a node
    takes the slow path, which unpacks it.

    Measured as `_run_plain_chain` is: on `benchmarks/bench_overhead.py`'s chain,
    backward alone takes 708 us with it, 777 us (+10%) when every node is checked
    through `saved_items()` instead; the benchmark's forward + backward 1.51 ms
    against 1.60 ms (+5%)."""
    held = []
    for value in node._saved.values():
        if isinstance(value, SavedTensor):
            held.append(value)
            if value.is_released or value._counter.value != value.saved_version:
                return _check_saved_slowly(node)
        elif isinstance(value, tuple):
            for v in value:
                if isinstance(v, SavedTensor):
                    held.append(v)
                    if v.is_released or v._counter.value != v.saved_version:
                        return _check_saved_slowly(node)
    return held


def _check_saved_slowly(node: Node) -> list:
    """Some saved tensor of `node` is stale, freed or hooked: go through them in the
    order PyTorch unpacks them, raising the error about the first that is stale or
    freed and calling the unpack hook of each hooked one. PyTorch's generated nodes
    unpack their saved inputs sorted by name (`other` before `self`), then their
    outputs; a custom Function's keep the order they were saved in. Returns the
    saved tensors."""
    if UNPACKED_FOR_FORMULA:
        forget_unpacked()  # (the previous node's: it has run)
    items = node.saved_items()
    order = type(node).unpack_order
    if order is not None:
        items.sort(key=lambda item: order.index(item[0].split("[")[0]))
    elif type(node).saves:
        items.sort(key=lambda item: (item[1].is_output, item[0].split("[")[0]))
    for _, saved in items:
        saved.prepare(node)
    return [saved for _, saved in items]


def _check_nan(node: Node, outputs) -> None:
    """Anomaly mode's check of a node's gradients."""
    for i, g in enumerate(outputs):
        data = g._data if isinstance(g, Tensor) else g
        if data is not None and data.dtype.kind == "f" and np.isnan(data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _all_none(grads: list) -> bool:
    for g in grads:
        if g is not None:
            return False
    return True


def _store_capture(task: GraphTask, x: Tensor, grad) -> None:
    """Add `grad` to what `task` captured for input `x`."""
    prev = task.captured.get(id(x))
    task.captured[id(x)] = grad if prev is None else prev + grad

"""Record PyTorch's own backward pass, node by node, for the stepper.

PyTorch's engine runs in C++ and cannot be paused between nodes, so this module runs
it **once**, watching it through PyTorch's public hooks only:

* `Node.register_prehook` on every node of the graph: called when the engine starts
  that node, with the gradients it received (after any tensor hooks and
  `retain_grad`, exactly what the node's formula gets);
* `Node.register_hook`: called when the node has run, with the gradients it sends on
  (for `AccumulateGrad`, after the leaf's `.grad` was updated);
* the `_saved_<name>` attributes, read before a node runs and again when the next
  one starts: PyTorch frees a node's saved tensors right after running it (unless
  `retain_graph`), and reading a freed one raises;
* `retains_grad` / `.grad` of the tensors the stepper knows by name.

What it sees is written down as the same events minigrad's engine yields
(`minigrad.autograd.events`), so `BackwardRecording` and `BackwardStepper` replay a
PyTorch run exactly as they step a minigrad one. All hooks are removed afterwards:
the tensors are left exactly as after `loss.backward()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minigrad.autograd import events as ev

from .graph import BACKWARD, BackwardGraph, saved_attribute_names
from .recording import BackwardRecording, snapshot


def is_torch_tensor(value: Any) -> bool:
    """True for a real `torch.Tensor` (without importing torch)."""
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "grad_fn")


def _readable_saved(node: Any) -> set[str]:
    """Names of the node's saved tensors that can still be read now."""
    readable = set()
    for attr in saved_attribute_names(node):
        try:  # a custom Function keeps its tensors in `saved_tensors`
            getattr(node, "saved_tensors" if attr == "tensors" else "_saved_" + attr)
        except RuntimeError:
            continue
        readable.add(attr)
    return readable


def record_torch_backward(
    loss: Any,
    graph: BackwardGraph,
    grad_tensors: Any = None,
    retain_graph: bool = False,
) -> tuple[list[Any], BaseException | None]:
    """Run `loss.backward(grad_tensors, retain_graph)` once with observing hooks.

    Returns the events in the order PyTorch produced them, and the exception PyTorch
    raised (None if backward finished). `graph` is `build_graph(loss)`, built before
    this call: its nodes get the hooks, its named tensors are watched for
    `retain_grad`.
    """
    import torch

    events: list[Any] = []
    started: list[Any] = []  # nodes in the order PyTorch ran them
    readable_before: dict[int, set[str]] = {}
    watched = [t for _, t in graph.names.items() if getattr(t, "grad_fn", None) is not None]
    watched += [t for t in graph.root_tensors if all(t is not w for w in watched)]

    def close_previous() -> None:
        """The node that ran last: which of its saved tensors did PyTorch just free?"""
        if not started:
            return
        node = started[-1]
        freed = tuple(sorted(readable_before.pop(id(node), set()) - _readable_saved(node)))
        if freed:
            events.append(ev.SavedTensorsReleased(len(started) - 1, node, freed))

    def prehook(node: Any, grads_in: tuple) -> None:
        close_previous()
        step = len(started)
        started.append(node)
        if graph.node_of(node) is not None and graph.node_of(node).kind == BACKWARD:
            readable_before[id(node)] = _readable_saved(node)
        events.append(ev.NodeStarted(step, node, tuple(snapshot(g) for g in grads_in)))
        for tensor in watched:  # retain_grad fills .grad before the node's pre-hooks run
            if tensor.grad_fn is node and tensor.retains_grad:
                events.append(ev.GradRetained(step, node, tensor, snapshot(tensor.grad)))

    def posthook(node: Any, grads_out: tuple, grads_in: tuple) -> None:
        step = len(started) - 1
        events.append(
            ev.NodeFinished(
                step,
                node,
                tuple(snapshot(g) for g in grads_in),
                tuple(snapshot(g) for g in grads_out),
            )
        )
        leaf = getattr(node, "variable", None)
        if leaf is not None:  # AccumulateGrad: its post hook runs after .grad was set
            events.append(
                ev.GradAccumulated(step, node, leaf, snapshot(grads_in[0]), snapshot(leaf.grad))
            )

    handles = []
    for described in graph.engine_nodes:
        node = described.obj
        handles.append(node.register_prehook(lambda g, node=node: prehook(node, g)))
        handles.append(node.register_hook(lambda out, g, node=node: posthook(node, out, g)))

    seeds: tuple[Any, ...] = ()
    if grad_tensors is not None:
        seeds = (grad_tensors,)
    elif loss.numel() == 1:
        seeds = (torch.ones_like(loss),)
    error: BaseException | None = None
    try:
        loss.backward(grad_tensors, retain_graph=retain_graph)
    except Exception as raised:  # PyTorch's own error, shown at the node that raised it
        error = raised
    finally:
        for handle in handles:
            handle.remove()
    if error is None:
        close_previous()
    elif started:
        events.append(ev.EngineFailed(len(started) - 1, started[-1], error))
    # The stepper's slider runs to the number of nodes PyTorch really executed.
    header = ev.BackwardStarted(
        -1,
        (loss.grad_fn,),
        tuple(snapshot(s) for s in seeds),
        {node: 1 for node in started},
        retain_graph,
    )
    if error is None:
        events.append(ev.BackwardFinished(len(started) - 1, len(started)))
    return [header, *events], error


def _replay(events: list[Any], error: BaseException | None) -> Iterator[Any]:
    """The recorded events, then PyTorch's exception, as a live engine would give them."""
    yield from events
    if error is not None:
        raise error


def torch_recording(
    loss: Any, graph: BackwardGraph, grad_tensors: Any = None, retain_graph: bool = False
) -> BackwardRecording:
    """A `BackwardRecording` of PyTorch's real backward of `loss` (run now, once)."""
    events, error = record_torch_backward(loss, graph, grad_tensors, retain_graph)
    return BackwardRecording(_replay(events, error), [loss])


__all__ = ["is_torch_tensor", "record_torch_backward", "torch_recording"]

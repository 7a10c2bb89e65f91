"""What the backward engine reports while it runs: minigrad's documented event stream.

`minigrad.autograd.backward_events(...)` (public, in `minigrad.autograd.__all__`) is
`backward(...)` as a generator: it performs the real backward pass and, between its
steps, yields these events. `Tensor.backward()` drains the same stream untraced; the
widgets' stepper pulls one event at a time. Both therefore watch the same engine do
the same work. The widgets read graphs through minigrad's public surface and this
stream only (docs/architecture.md).

Every event carries `step`: the index (0, 1, 2, ...) of the node being executed, in
execution order. `BackwardStarted` comes before any node and has step -1;
`BackwardFinished` carries the step of the last node that ran (-1 if none did).

The gradients an event carries are copies, taken when it happened (at the version
the engine's own array had): the engine goes on adding streams into its arrays in
place, and decides whether it may by who else refers to them, so tracing changes
nothing it does. (`GradAccumulated.total` is the exception: the leaf's `.grad`
itself.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class BackwardStarted:
    """The engine has counted dependencies and is about to run the first node.

    `roots` are the graph roots (the `grad_fn`s, or `AccumulateGrad`s of leaf roots)
    with the gradients they are seeded with; `dependencies` maps every reachable node
    to how many gradient streams it waits for.
    """

    step: int
    roots: tuple[Any, ...]
    root_grads: tuple[Any, ...]
    dependencies: dict
    retain_graph: bool


@dataclass(frozen=True, slots=True)
class NodeStarted:
    """A node is ready: every gradient stream it waits for has arrived.

    `grads_in[i]` is the gradient for the node's output `i` (None when no stream
    reached that output).
    """

    step: int
    node: Any
    grads_in: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class HookFired:
    """A hook ran. `kind` is "tensor" (a `Tensor.register_hook`), "prehook" or
    "posthook" (`Node.register_prehook` / `Node.register_hook`), or
    "postaccumulate" (`Tensor.register_post_accumulate_grad_hook`). `before` and
    `after` are the gradients the hook saw and the ones that flow on (for
    "postaccumulate", the leaf's `.grad` before and after the hook)."""

    step: int
    node: Any
    kind: str
    hook: Any
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class GradRetained:
    """A non-leaf tensor that called `retain_grad()` received its gradient."""

    step: int
    node: Any
    tensor: Any
    grad: Any


@dataclass(frozen=True, slots=True)
class SavedTensorUnpacked:
    """The node read one of its saved tensors; versions matched."""

    step: int
    node: Any
    name: str
    saved_version: int
    current_version: int


@dataclass(frozen=True, slots=True)
class NodeFinished:
    """The node computed the gradients for its inputs. `grads_out[i]` goes to
    `node.next_functions[i]` (None where that input needs no gradient)."""

    step: int
    node: Any
    grads_in: tuple[Any, ...]
    grads_out: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class NodesRecorded:
    """In a `create_graph=True` backward: nodes `node`'s turn recorded, in the order
    they were made, each with `node` as its `_recorded_by`. Right after the node ran,
    those of its formulas, with `grads`, the gradients it sent on (the tensors
    themselves, each with the graph recorded so far); then, before the next node
    starts, the sums the input buffers made of its results, if any (`grads` empty)."""

    step: int
    node: Any
    nodes: tuple[Any, ...]
    grads: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class SavedTensorsReleased:
    """Without `retain_graph`, a node drops what it saved right after running."""

    step: int
    node: Any
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GradAccumulated:
    """An `AccumulateGrad` node added `grad` into its leaf: `total` is the new
    `leaf.grad` (the same object the leaf now holds)."""

    step: int
    node: Any
    tensor: Any
    grad: Any
    total: Any


@dataclass(frozen=True, slots=True)
class EngineFailed:
    """The engine raised while running `node`; the same exception propagates."""

    step: int
    node: Any
    error: BaseException


@dataclass(frozen=True, slots=True)
class BackwardFinished:
    """Every reachable node has run."""

    step: int
    nodes_run: int


Event = (
    BackwardStarted
    | NodeStarted
    | HookFired
    | GradRetained
    | SavedTensorUnpacked
    | NodeFinished
    | SavedTensorsReleased
    | GradAccumulated
    | EngineFailed
    | BackwardFinished
)

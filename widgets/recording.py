"""Frames of a real backward pass, pulled lazily from minigrad's engine events.

`BackwardRecording` wraps `minigrad.autograd.backward_events(...)`. The engine runs
forward only once: each call to `ensure(k)` pulls just enough events for frame `k`, and
earlier frames stay recorded so a viewer can go back. Frame 0 is "backward started,
nothing ran yet"; frame k (k >= 1) is the state right after engine step k - 1.

Everything shown later is snapshotted (copied to numpy) when its event arrives: the
engine keeps accumulating into the same `.grad` arrays, and history must not change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .draw import CURRENT, DONE, FAILED, GraphState
from .formatting import to_numpy, value_text


def snapshot(value: Any) -> np.ndarray | None:
    """A private copy of a tensor's values (None stays None)."""
    return None if value is None else np.array(to_numpy(value), copy=True)


@dataclass
class Accumulation:
    """An AccumulateGrad step: `grad` was added, the leaf's `.grad` became `total`."""

    leaf: Any
    grad: np.ndarray | None
    total: np.ndarray | None


@dataclass
class HookCall:
    kind: str
    name: str
    before: str
    after: str


@dataclass
class Frame:
    """What one engine step did (or, for frame 0, how backward was seeded)."""

    index: int
    step: int  # engine step, -1 for frame 0
    node: Any = None
    grads_in: tuple[np.ndarray | None, ...] = ()
    grads_out: tuple[np.ndarray | None, ...] = ()
    unpacked: list[tuple[str, int, int]] = field(default_factory=list)
    released: tuple[str, ...] = ()
    accumulation: Accumulation | None = None
    retained: list[tuple[Any, np.ndarray | None]] = field(default_factory=list)
    hooks: list[HookCall] = field(default_factory=list)
    error: BaseException | None = None
    # create_graph=True: the nodes this step recorded, and the gradients it sent on
    # (the tensors themselves, whose graphs hold those nodes).
    recorded: tuple[Any, ...] = ()
    sent: tuple[Any, ...] = ()

    @property
    def node_name(self) -> str:
        return "" if self.node is None else str(self.node.name()).rsplit("::", 1)[-1]


class BackwardRecording:
    """Frames of one backward pass, recorded as the engine's events are pulled."""

    def __init__(self, events: Iterator, root_tensors: list[Any]) -> None:
        self._events = events
        self._root_tensors = root_tensors
        self.frames: list[Frame] = [Frame(0, -1)]
        self.root_grads: tuple[np.ndarray | None, ...] = ()
        self.expected_steps: int | None = None
        self.finished = False
        self.error: BaseException | None = None
        self._buffered: Any = None  # an event that opens the next frame
        # A gradient's text, by id of the array the frames keep: every later frame shows
        # it again, and formatting it is most of describing a frame.
        self._texts: dict[int, tuple[Any, str]] = {}
        self._pull_until_first_node()

    @property
    def done(self) -> bool:
        """No more frames will come (finished, or the engine raised)."""
        return self.finished or self.error is not None

    @property
    def nodes_run(self) -> int:
        return len(self.frames) - 1

    def ensure(self, index: int) -> bool:
        """Pull events until frame `index` is complete; False if backward ended first."""
        while len(self.frames) <= index or (
            len(self.frames) == index + 1 and not self._frame_complete(index)
        ):
            if self.done:
                return index < len(self.frames)
            self._pull_next_frame()
        return True

    def run_to_end(self) -> None:
        """Let the engine finish (or fail)."""
        while not self.done:
            self._pull_next_frame()

    # -- pulling -------------------------------------------------------------------------

    def _frame_complete(self, index: int) -> bool:
        return index < len(self.frames) - 1 or self.done or self._buffered is not None

    def _next_event(self) -> Any:
        if self._buffered is not None:
            event, self._buffered = self._buffered, None
            return event
        try:
            return next(self._events)
        except StopIteration:
            self.finished = True
        except Exception as error:  # the engine's own exception, shown where it happened
            self.error = error
            self.frames[-1].error = self.frames[-1].error or error
        return None

    def _pull_until_first_node(self) -> None:
        while not self.done and self._buffered is None:
            event = self._next_event()
            if event is None:
                return
            if type(event).__name__ == "NodeStarted":
                self._buffered = event
            else:
                self._apply(self.frames[0], event)

    def _pull_next_frame(self) -> None:
        """Consume events of one node: from its NodeStarted up to the next one."""
        event = self._next_event()
        if event is None:
            return
        frame = self.frames[-1]
        if type(event).__name__ == "NodeStarted":
            frame = Frame(len(self.frames), event.step, event.node)
            frame.grads_in = tuple(snapshot(g) for g in event.grads_in)
            self.frames.append(frame)
        else:
            self._apply(frame, event)
        while not self.done:
            event = self._next_event()
            if event is None:
                return
            if type(event).__name__ == "NodeStarted":
                self._buffered = event
                return
            self._apply(frame, event)

    def _apply(self, frame: Frame, event: Any) -> None:
        kind = type(event).__name__
        if kind == "BackwardStarted":
            self.root_grads = tuple(snapshot(g) for g in event.root_grads)
            nodes = {id(n) for n in event.dependencies} | {id(n) for n in event.roots}
            self.expected_steps = len(nodes)
        elif kind == "NodeFinished":
            frame.grads_in = tuple(snapshot(g) for g in event.grads_in)
            frame.grads_out = tuple(snapshot(g) for g in event.grads_out)
        elif kind == "SavedTensorUnpacked":
            frame.unpacked.append((event.name, event.saved_version, event.current_version))
        elif kind == "SavedTensorsReleased":
            frame.released += tuple(event.names)
        elif kind == "GradAccumulated":
            frame.accumulation = Accumulation(
                event.tensor, snapshot(event.grad), snapshot(event.total)
            )
        elif kind == "GradRetained":
            frame.retained.append((event.tensor, snapshot(event.grad)))
        elif kind == "HookFired":
            if event.kind == "posthook":
                # A node's post hook may replace what it sends on: show what really flows.
                frame.grads_out = tuple(snapshot(g) for g in event.after)
            name = getattr(event.hook, "__name__", type(event.hook).__name__)
            frame.hooks.append(
                HookCall(event.kind, name, value_text(event.before), value_text(event.after))
            )
        elif kind == "NodesRecorded":  # (the formula's nodes, then the buffers' sums)
            frame.recorded += tuple(event.nodes)
            frame.sent = tuple(event.grads) or frame.sent
        elif kind == "EngineFailed":
            frame.error = event.error
        elif kind == "BackwardFinished":
            self.finished = True

    # -- cumulative views --------------------------------------------------------------------

    def graph_state(self, index: int) -> GraphState:
        """Node colours, edge gradients and released tensors as of frame `index`."""
        state = GraphState()
        for tensor, grad in zip(self._root_tensors, self.root_grads):
            if grad is not None:
                state.edge_text[(id(tensor), 0)] = self._edge_text(grad)
        for frame in self.frames[1 : index + 1]:
            status = CURRENT if frame.index == index else DONE
            if frame.error is not None:
                status = FAILED
            state.node_status[id(frame.node)] = status
            for i, grad in enumerate(frame.grads_out):
                if grad is not None:
                    state.edge_text[(id(frame.node), i)] = self._edge_text(grad)
            state.released.update((id(frame.node), name) for name in frame.released)
        return state

    def _edge_text(self, grad: Any) -> str:
        seen = self._texts.get(id(grad))
        if seen is None or seen[0] is not grad:  # (kept with its array: ids are reused)
            seen = self._texts[id(grad)] = (grad, value_text(grad, max_chars=28))
        return seen[1]

    def leaf_grads(self, index: int, initial: dict[int, np.ndarray | None]) -> dict[int, Any]:
        """id(leaf) -> its `.grad` values as of frame `index` (starting from `initial`)."""
        grads = dict(initial)
        for frame in self.frames[1 : index + 1]:
            if frame.accumulation is not None:
                grads[id(frame.accumulation.leaf)] = frame.accumulation.total
        return grads

    def retained_grads(self, index: int) -> list[tuple[Any, np.ndarray | None]]:
        """Non-leaf tensors whose `retain_grad()` gradient arrived by frame `index`."""
        latest: dict[int, tuple[Any, np.ndarray | None]] = {}
        for frame in self.frames[1 : index + 1]:
            for tensor, grad in frame.retained:
                latest[id(tensor)] = (tensor, grad)
        return list(latest.values())

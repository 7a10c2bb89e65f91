"""`BackwardStepper`: step through a real backward pass in a notebook.

The stepper never re-enacts backward. On minigrad it drains
`minigrad.autograd.backward_events`, the generator `Tensor.backward()` itself
drains; on a torch tensor it records PyTorch's own run (`torch_recording`). The whole
pass is recorded when the stepper is made, so every tensor is then exactly as
`loss.backward()` leaves it; when the engine raises, the recording stops at that node
and the stepper shows the exception there.

The stepper is an `anywidget.AnyWidget`: Python lays the graph out once
(`scene.scene`) and describes every frame (`scene.frame_view` plus the step panel's
text); the browser draws the graph as SVG and steps through the frames by itself
(widgets/web/stepper.js), so a click never waits for the kernel. The step on display is
the synced traitlet `index`: the browser writes it, Python reads it (and setting it
moves the view). A notebook output also carries a PNG of the frame on display, so a
saved notebook shows the graph where widgets cannot be drawn (GitHub, nbviewer).
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anywidget
import traitlets
from matplotlib.figure import Figure

from .draw import DPI, GraphDrawing, draw_graph
from .formatting import escape, is_tensor_like, node_display_name, shape_text, value_text
from .graph import ACCUMULATE, TensorNames, build_graph, check_roots, resolve_names
from .recording import BackwardRecording, Frame, snapshot
from .scene import frame_view, scene
from .torch_recording import is_torch_tensor, torch_recording

WEB = Path(__file__).resolve().parent / "web"  # the widget's browser side
_SECOND_TIME = "backward through the graph a second time"


def require_minigrad_tensor(value: Any, caller: str) -> None:
    """Raise a clear error unless `value` is a minigrad tensor with a backward graph."""
    if type(value).__module__.split(".")[0] == "torch":
        raise TypeError(
            f"{caller} steps through minigrad's own backward engine, so it needs a minigrad "
            "tensor, not a torch.Tensor. Build the same computation after "
            "`import minigrad as torch` (draw_graph can still draw torch graphs)."
        )
    try:
        import minigrad
    except ImportError as error:  # pragma: no cover - minigrad ships with the course
        raise RuntimeError(f"{caller} needs minigrad, which failed to import: {error}") from error
    if not isinstance(value, minigrad.Tensor):
        kind = "tensor-like " if is_tensor_like(value) else ""
        raise TypeError(
            f"{caller} expects a minigrad tensor (e.g. a loss), got a {kind}"
            f"{type(value).__name__}: {value_text(value, max_chars=40)}"
        )
    if value.grad_fn is None:
        raise ValueError(
            f"{caller} needs a tensor with a grad_fn, the result of operations on tensors "
            "that require grad; this one is a leaf"
            + (" that does not require grad." if not value.requires_grad else ".")
        )


class BackwardStepper(anywidget.AnyWidget):
    """Step through the real backward pass of `loss`, one engine node at a time.

    Parameters
    ----------
    loss: a minigrad tensor with a grad_fn (scalar, or give `grad_tensors`); or a torch
        tensor, whose backward PyTorch runs once, recorded (`torch_recording`), replayed.
    retain_graph: passed to the engine, as in `loss.backward(retain_graph=...)`; by
        default (None) the graph is kept exactly when `create_graph` is True.
    names: None, ``"auto"`` (use the caller's variable names), or ``{"w": w, ...}``.
    grad_tensors: the starting gradient for a non-scalar `loss`.
    create_graph: as in `loss.backward(create_graph=True)` (minigrad only): the backward
        pass records a graph of its own; each step lists the nodes it recorded
        (`frame.recorded`, drawn by `draw_recorded()`), and the gradients end up with
        grad_fns.
    inputs: as in `loss.backward(inputs=[...])` (minigrad only): only the parts of the
        graph leading to these tensors run, and only their `.grad` fill up.

    The backward pass runs (recorded) when the stepper is made: afterwards the tensors
    are as `loss.backward()` leaves them, whichever step is on display.
    """

    _esm = (WEB / "stepper.js").read_text(encoding="utf-8")
    _css = (WEB / "stepper.css").read_text(encoding="utf-8")
    scene = traitlets.Dict().tag(sync=True)  # the laid-out graph (scene.scene)
    frames = traitlets.List().tag(sync=True)  # what each step shows (scene.frame_view)
    index = traitlets.Int(0).tag(sync=True)  # the step on display: 0 before any node ran
    interval_ms = traitlets.Int(900).tag(sync=True)  # the pause between steps of "play"

    # IPython prefers ipywidgets 7's `_ipython_display_` to `_repr_mimebundle_`: without
    # it, both majors display the bundle below (the widget, a PNG, a line of text).
    _ipython_display_ = None

    def __init__(
        self,
        loss: Any,
        retain_graph: bool | None = None,
        names: Any = None,
        grad_tensors: Any = None,
        show_saved: bool = True,
        dpi: float = DPI,
        interval_ms: int = 900,
        *,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        on_torch = is_torch_tensor(loss)  # a torch loss: PyTorch's engine, run once, replayed
        if on_torch:
            check_roots((loss,), "BackwardStepper")
            if create_graph or inputs is not None:
                raise NotImplementedError(
                    "BackwardStepper replays PyTorch's backward without create_graph or "
                    "inputs; step through the same code on minigrad for those"
                )
        else:
            require_minigrad_tensor(loss, "BackwardStepper")
        self.loss = loss
        self.create_graph = bool(create_graph)
        self.retain_graph = self.create_graph if retain_graph is None else bool(retain_graph)
        self.inputs = _as_inputs(inputs)
        self.graph = build_graph(
            loss, names=resolve_names(names, sys._getframe(1)), caller="BackwardStepper"
        )
        self.drawing = GraphDrawing(self.graph, with_status=True, show_saved=show_saved, dpi=dpi)
        self._leaves = [n for n in self.graph.nodes if n.kind == ACCUMULATE]
        self._initial_grads = {id(n.variable): snapshot(n.variable.grad) for n in self._leaves}
        self.notes = self._stale_state_notes()
        if on_torch:
            self.recording = torch_recording(loss, self.graph, grad_tensors, self.retain_graph)
        else:
            events = _minigrad_events(loss, grad_tensors, self.retain_graph, self.create_graph,
                                      self.inputs)
            self.recording = BackwardRecording(events, [loss])
        self.recording.run_to_end()
        super().__init__(scene=scene(self.drawing), frames=self._frame_views(),
                         index=0, interval_ms=int(interval_ms))
        self.drawing.update(self.recording.graph_state(0))

    def _frame_views(self) -> list[dict[str, Any]]:
        views = []
        for frame in self.recording.frames:
            view = frame_view(self.drawing, self.recording.graph_state(frame.index))
            view.update(caption=self._caption(frame), panel=self._frame_html(frame.index),
                        grads=self._leaves_html(frame.index))
            views.append(view)
        return views

    def _caption(self, frame: Frame) -> str:
        if frame.index == 0:
            return f"Before backward (step 0 of {self.recording.nodes_run})"
        return f"Step {frame.index} of {self.recording.nodes_run}: {frame.node_name}"

    # -- public API --------------------------------------------------------------------------

    @traitlets.validate("index")
    def _clamp_index(self, proposal: Any) -> int:
        return min(max(int(proposal["value"]), 0), len(self.recording.frames) - 1)

    @traitlets.observe("index")
    def _index_changed(self, change: Any) -> None:
        # The matplotlib drawing follows the view: tools and tests read its statuses,
        # and a notebook's PNG fallback shows this frame.
        self.drawing.update(self.recording.graph_state(change["new"]))

    @property
    def frame(self) -> Frame:
        return self.recording.frames[self.index]

    @property
    def current_node_name(self) -> str:
        """Name of the node highlighted now ("" before the first step)."""
        return self.frame.node_name

    @property
    def error(self) -> BaseException | None:
        """The exception the engine raised, once the stepper shows the node that raised
        it (the last frame); `recording.error` has it from the start."""
        return self.recording.error if self.at_end else None

    @property
    def at_end(self) -> bool:
        """True on the last frame: backward finished, or the node where it failed."""
        return self.index == len(self.recording.frames) - 1

    @property
    def panel_html(self) -> str:
        """The step panel on display (what this step did), as HTML."""
        return self.frames[self.index]["panel"]

    @property
    def grads_html(self) -> str:
        """The table of the leaves' `.grad` as of the step on display, as HTML."""
        return self.frames[self.index]["grads"]

    @property
    def caption(self) -> str:
        """The line above the graph: "Step k of n: NodeName"."""
        return self.frames[self.index]["caption"]

    def to_png(self, index: int | None = None) -> bytes:
        """The matplotlib picture of step `index` (default: the one on display)."""
        if index is None or int(index) == self.index:
            return self.drawing.to_png()
        self.drawing.update(self.recording.graph_state(self._frame_at(index).index))
        try:
            return self.drawing.to_png()
        finally:
            self.drawing.update(self.recording.graph_state(self.index))

    def recorded_names(self, index: int | None = None) -> list[str]:
        """Names of the nodes step `index` (default: the one on display) recorded, in
        the order they were made (create_graph=True; empty otherwise)."""
        frame = self.frame if index is None else self._frame_at(index)
        return [node_display_name(n) for n in frame.recorded]

    def draw_recorded(self, index: int | None = None, **options: Any) -> Figure:
        """Draw the gradients step `index` (default: the one on display) sent on, with
        the graphs a create_graph=True backward gave them: the nodes the backward
        pass recorded marked apart, those of this step outlined. `options` go to
        `draw_graph` (e.g. `names=`)."""
        frame = self.frame if index is None else self._frame_at(index)
        named = [(f"grad out[{i}]", g) for i, g in enumerate(frame.sent)
                 if g is not None and g.grad_fn is not None]
        if frame.accumulation is not None and getattr(frame.accumulation.leaf.grad,
                                                      "grad_fn", None) is not None:
            leaf = self.graph.names.name_of(frame.accumulation.leaf) or "leaf"
            named.append((f"{leaf}.grad", frame.accumulation.leaf.grad))  # what it stored
        tensors = [g for _, g in named]
        if not tensors:
            why = ("the stepper was made without create_graph=True" if not self.create_graph
                   else "no gradient it sent on has a grad_fn")
            raise ValueError(f"step {frame.index} has no recorded graph to draw: {why}")
        if "highlight" not in options:
            present = [n for n in frame.recorded
                       if build_graph(*tensors, caller="draw_recorded").node_of(n) is not None]
            options["highlight"] = present or None
        options.setdefault("names", TensorNames([*named, *self.graph.names.items()]))
        return draw_graph(*tensors, **options)

    def _frame_at(self, index: int) -> Frame:
        if not 0 <= int(index) < len(self.recording.frames):
            raise IndexError(f"backward ran {self.recording.nodes_run} steps; there is no "
                             f"step {index}")
        return self.recording.frames[int(index)]

    def next(self) -> None:
        self.show(self.index + 1)

    def previous(self) -> None:
        self.show(self.index - 1)

    def first(self) -> None:
        self.show(0)

    def last(self) -> None:
        """Show the last frame: backward finished, or the node where the engine raised."""
        self.show(len(self.recording.frames) - 1)

    def show(self, index: int) -> None:
        """Display frame `index` (clamped to the recorded frames)."""
        self.index = int(index)

    @property
    def widget(self) -> BackwardStepper:
        """The widget itself (kept for code written when the stepper held one)."""
        return self

    def _repr_mimebundle_(self, **kwargs: Any):
        """The widget, plus a PNG of the frame on display and a plain-text line for
        front ends that cannot draw widgets (a saved notebook on GitHub, nbviewer)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data, metadata = dict(data), dict(metadata or {})
        data["image/png"] = base64.b64encode(self.to_png()).decode("ascii")
        metadata["image/png"] = {"unconfined": True}  # unshrunk, as draw_graph's pictures
        data["text/plain"] = (f"BackwardStepper at step {self.index}"
                              f"{': ' + self.current_node_name if self.index else ''}"
                              " (run the notebook to step through it)")
        return data, metadata

    def gradient_graph_text(self) -> str:
        """What create_graph=True left behind, once backward finished: the `.grad` of
        each leaf and its `grad_fn` (a gradient with a graph of its own)."""
        recorded = sum(len(f.recorded) for f in self.recording.frames)
        parts = []
        for node in self._leaves:
            grad = node.variable.grad
            if grad is None:
                continue
            fn = grad.grad_fn
            has = f"grad_fn={node_display_name(fn)}" if fn is not None else "no grad_fn"
            parts.append(f"{node.leaf_name or 'leaf'}.grad has {has}")
        return (f"create_graph=True: the backward pass recorded {recorded} nodes; "
                + ("; ".join(parts) if parts else "no leaf got a gradient")
                + " (a gradient with a graph can be differentiated again).")

    # -- a graph that already ran ------------------------------------------------------------

    def _stale_state_notes(self) -> list[str]:
        """What is unusual about the graph and its leaves before the first step."""
        notes = []
        freed = [n.name for n in self.graph.nodes
                 if n.is_engine_node and any(sv.released for sv in n.saved)]
        if freed:
            notes.append(
                f"This graph already went through backward: the saved tensors of "
                f"{', '.join(sorted(set(freed)))} were freed, so the engine will stop there "
                "with 'Trying to backward through the graph a second time'. If you ran this "
                "cell again, re-run the cells that build the loss first: they record a fresh "
                "graph."
            )
        full = [n.leaf_name or "a leaf" for n in self._leaves if n.variable.grad is not None]
        if full:
            notes.append(
                f"{', '.join(g + '.grad' for g in full)} already "
                f"{'holds' if len(full) == 1 else 'hold'} a gradient from an earlier "
                "backward: stepping adds this pass on top (gradients accumulate). To start "
                "from None, re-run the cells that create the tensors, or set .grad = None "
                "before making the stepper."
            )
        return notes

    # -- text panels ---------------------------------------------------------------------------

    def _describe_input(self, node: Any, i: int) -> str:
        target, output_nr = node.next_functions[i]
        if target is None:
            return "(None, 0): needs no gradient"
        described = self.graph.node_of(target)
        name = described.name if described is not None else str(target.name())
        if described is not None and described.leaf_name:
            name += f" ({described.leaf_name})"
        return f"{name}, output {output_nr}" if output_nr else name

    def _frame_html(self, index: int) -> str:
        frame, recording = self.recording.frames[index], self.recording
        total = recording.expected_steps
        lines = [f'<div class="stepper-note">{escape(note)}</div>' for note in self.notes]
        if frame.index == 0:
            lines.append("<b>Before backward</b>: nothing has run yet.")
            for grad in recording.root_grads:
                lines.append(
                    f"Seed gradient d(loss)/d(loss) = <code>{escape(value_text(grad))}</code>"
                )
        else:
            of = f" of {total}" if total else ""
            lines.append(f"<b>Step {frame.index}{of}</b>: <code>{escape(frame.node_name)}</code>")
            described = self.graph.node_of(frame.node)
            if described is not None and described.leaf_name:
                lines.append(f"accumulates into leaf <b>{escape(described.leaf_name)}</b>")
            # A declared op's node carries its backward formulas (minigrad/ops/declaration.py).
            rows = [(f"formula for {f.input}", f.text)
                    for f in getattr(type(frame.node), "formulas", ())]
            rows += [
                ("grad in" + (f"[{i}]" if len(frame.grads_in) > 1 else ""), value_text(g))
                for i, g in enumerate(frame.grads_in)
            ]
            rows += [
                (f"grad out[{i}] \u2192 {self._describe_input(frame.node, i)}", value_text(g))
                for i, g in enumerate(frame.grads_out)
            ]
            # (What saved-tensor hooks packed comes back from their unpack hook, unchecked.)
            hooked = {v.attr for v in described.saved if v.hooked} if described else set()
            for name, saved, now in frame.unpacked:
                if name in hooked:
                    how = "from its unpack hook, no version check"
                    rows.append((f"unpacked saved {name}", how))
                else:
                    rows.append((f"read saved {name}", f"version {saved} (now {now})"))
            if frame.released:
                rows.append(("released", ", ".join(frame.released)))
            for hook in frame.hooks:
                rows.append((f"{hook.kind} hook {hook.name}", f"{hook.before} \u2192 {hook.after}"))
            for _, grad in frame.retained:
                rows.append(("retained grad", value_text(grad)))
            if frame.accumulation is not None:
                rows.append((".grad += ", value_text(frame.accumulation.grad)))
                rows.append((".grad is now", value_text(frame.accumulation.total)))
            if self.create_graph:
                made = ", ".join(node_display_name(n) for n in frame.recorded)
                rows.append(("recorded", made or "no node (no op of its formula ran on "
                                                  "a tensor that requires grad)"))
            lines.append(_table(rows))
        if frame.error is not None:
            advice = ""
            if _SECOND_TIME in str(frame.error):
                advice = (
                    "<br><i>This node's saved tensors were freed by an earlier backward "
                    "through the same graph (a re-run cell, or a sub-graph reused by a new "
                    "loss). Re-run the cells that build the graph, then make the stepper "
                    "again; or pass retain_graph=True to the first backward.</i>"
                )
            lines.append(
                '<div class="stepper-error">'
                f"<b>{escape(type(frame.error).__name__)}</b>: "
                f"{escape(str(frame.error))}{advice}</div>"
            )
        elif recording.finished and frame.index == len(recording.frames) - 1:
            kept = "kept" if self.retain_graph else "released"
            lines.append(
                f'<div class="stepper-finished"><b>Backward finished</b>: '
                f"{recording.nodes_run} nodes ran; saved tensors {kept}.</div>"
            )
            if self.create_graph:
                lines.append(escape(self.gradient_graph_text()))
        return "<div>" + "<br>".join(lines) + "</div>"

    def _leaves_html(self, index: int) -> str:
        grads = self.recording.leaf_grads(index, self._initial_grads)
        rows = []
        for node in self._leaves:
            leaf = node.variable
            rows.append(
                (f"{node.leaf_name or 'leaf'} {shape_text(leaf)}", value_text(grads.get(id(leaf))))
            )
        for tensor, grad in self.recording.retained_grads(index):
            name = self.graph.names.name_of(tensor) or "non-leaf"
            rows.append((f"{name} (retain_grad)", value_text(grad)))
        return f"<div><b>.grad</b>{_table(rows)}</div>"


def _as_inputs(inputs: Any) -> tuple | None:
    """`inputs=` as `backward` takes it: a tensor or a sequence of them, not empty."""
    if inputs is None:
        return None
    inputs = (inputs,) if is_tensor_like(inputs) else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    return inputs


def _minigrad_events(loss: Any, grad_tensors: Any, retain_graph: bool, create_graph: bool,
                     inputs: tuple | None) -> Iterator:
    """The events of `loss.backward(grad_tensors, retain_graph, create_graph, inputs)`,
    one at a time: minigrad's own event stream (`minigrad.autograd.backward_events`),
    the one `backward()` drains."""
    from minigrad.autograd import backward_events

    return backward_events((loss,), grad_tensors, retain_graph, create_graph, inputs)


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f"<tr><td>{escape(a)}</td>"
        f"<td><code>{escape(b)}</code></td></tr>"
        for a, b in rows
    )
    return f"<table>{cells}</table>"


__all__ = ["BackwardStepper", "require_minigrad_tensor"]

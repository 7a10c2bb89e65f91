"""`BackwardStepper`: step through minigrad's real backward pass in a notebook.

The stepper never re-enacts backward: it drives `minigrad.autograd.engine.backward_events`,
the generator `Tensor.backward()` itself drains, one node per click. Going back replays
recorded frames; going forward pulls more events. When the engine raises, the stepper
stops at that node and shows the exception. Once stepped to the end, every tensor is
exactly as `loss.backward()` would have left it.

A stepper opens at step 0, before any node ran. Its notebook output also carries a PNG
of that frame, so a saved notebook shows the graph where widgets cannot be drawn. When
the graph already went through a backward pass (a stepper cell run a second time) or
its leaves already hold gradients, the panel says so and how to start afresh.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from typing import Any

import ipywidgets as widgets
from matplotlib.figure import Figure

from .draw import DPI, GraphDrawing, draw_graph
from .formatting import escape, is_tensor_like, node_display_name, shape_text, value_text
from .graph import ACCUMULATE, TensorNames, build_graph, check_roots, resolve_names
from .recording import BackwardRecording, Frame, snapshot
from .torch_recording import is_torch_tensor, torch_recording

# JupyterLab's theme variables (with light fallbacks), so the panel reads in dark themes too.
_PANEL_STYLE = ("font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; "
                "color: var(--jp-ui-font-color1, #212529);")
_LABEL_COLOR = "var(--jp-ui-font-color2, #495057)"
_ERROR_COLOR = "var(--jp-error-color1, #c92a2a)"
_SUCCESS_COLOR = "var(--jp-success-color1, #2b8a3e)"
# The graph is a PNG drawn on white. In a dark JupyterLab theme it is shown inverted
# (white becomes near-black, black text near-white) and hue-rotated back, so the
# status colours keep their hues: the picture follows the theme as the panel does.
DARK_THEME_CSS = (
    "<style>body[data-jp-theme-light='false'] .minigrad-stepper .stepper-image "
    "{filter: invert(0.88) hue-rotate(180deg);}</style>"
)
_WARN_STYLE = ("color: var(--jp-warn-color0, #8a5a00); border: 1px solid "
               "var(--jp-warn-color1, #e8a400); border-radius: 4px; padding: 6px; "
               "margin-bottom: 6px")
_SECOND_TIME = "backward through the graph a second time"
PICTURE_CACHE = 64 * 2**20  # bytes of frame pictures a stepper keeps


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


class BackwardStepper:
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
    """

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
        self._index = 0
        self._syncing = False
        # Frame index -> its picture. A recorded frame never changes, so going back (or
        # playing again) shows the picture drawn the first time, up to PICTURE_CACHE bytes.
        self._pictures: dict[int, bytes] = {}
        self._build_widgets(interval_ms)
        self.show(0)

    # -- public API --------------------------------------------------------------------------

    @property
    def index(self) -> int:
        """The frame on display: 0 before any node ran, k after the k-th node."""
        return self._index

    @property
    def frame(self) -> Frame:
        return self.recording.frames[self._index]

    @property
    def current_node_name(self) -> str:
        """Name of the node highlighted now ("" before the first step)."""
        return self.frame.node_name

    @property
    def error(self) -> BaseException | None:
        """The exception the engine raised, once the stepper has reached it."""
        return self.recording.error

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
        if not self.recording.ensure(int(index)):
            raise IndexError(f"backward ran {self.recording.nodes_run} steps; there is no "
                             f"step {index}")
        return self.recording.frames[int(index)]

    def next(self) -> None:
        self.show(self._index + 1)

    def previous(self) -> None:
        self.show(max(self._index - 1, 0))

    def first(self) -> None:
        self.show(0)

    def last(self) -> None:
        """Run the engine to the end (or to its error) and show the last frame."""
        self.recording.run_to_end()
        self.show(len(self.recording.frames) - 1)

    def show(self, index: int) -> None:
        """Display frame `index`, pulling engine events as far as needed."""
        index = max(int(index), 0)
        if not self.recording.ensure(index):
            index = len(self.recording.frames) - 1
        index = min(index, len(self.recording.frames) - 1)
        self._index = index
        self._sync_slider()
        self._render()

    @property
    def widget(self) -> widgets.Widget:
        """The ipywidgets box (displayed automatically in a notebook)."""
        return self._box

    def _repr_mimebundle_(self, **kwargs: Any):
        """The widget, plus a PNG of the frame on display and a plain-text line for
        front ends that cannot draw widgets (a saved notebook on GitHub, nbviewer)."""
        bundle = self._box._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        metadata["image/png"] = {"unconfined": True}  # unshrunk, as draw_graph's pictures
        data["text/plain"] = (f"BackwardStepper at step {self._index}"
                              f"{': ' + self.current_node_name if self._index else ''}"
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

    # -- widgets -----------------------------------------------------------------------------

    def _build_widgets(self, interval_ms: int) -> None:
        def button(description: str, icon: str, tooltip: str, action) -> widgets.Button:
            b = widgets.Button(
                description=description,
                icon=icon,
                tooltip=tooltip,
                layout=widgets.Layout(width="auto"),
            )
            b.on_click(lambda _: action())
            return b

        self.buttons = {
            "first": button("first", "fast-backward", "before backward starts", self.first),
            "previous": button("previous", "step-backward", "one node back", self.previous),
            "next": button("next", "step-forward", "run the next node", self.next),
            "last": button("last", "fast-forward", "run backward to the end", self.last),
        }
        top = self._slider_max()
        self.slider = widgets.IntSlider(
            value=0, min=0, max=top, description="step", continuous_update=False
        )
        self.play = widgets.Play(
            value=0, min=0, max=top, step=1, interval=interval_ms, description="play"
        )
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._on_slider, names="value")
        # The graph is shown at its natural size, so its text stays as large as the
        # notebook's; a graph larger than the room scrolls inside its own box, which
        # keeps the buttons in sight.
        self.image = widgets.Image(
            format="png", layout=widgets.Layout(max_width="none", flex="0 0 auto")
        )
        self.picture = widgets.Box(
            [self.image],
            layout=widgets.Layout(overflow="auto", max_width="100%", max_height="80vh",
                                  min_width="0", flex="0 1 auto"),
        )
        self.panel = widgets.HTML()
        self.leaf_table = widgets.HTML()
        # Both rows wrap: in a narrow window (a projector at 1024 px) the buttons keep
        # their labels and the panel moves under the graph instead of being clipped.
        wrap = widgets.Layout(flex_flow="row wrap", align_items="flex-start")
        controls = widgets.HBox([*self.buttons.values(), self.play, self.slider], layout=wrap)
        side = widgets.VBox(
            [self.panel, self.leaf_table],
            layout=widgets.Layout(min_width="280px", max_width="420px", padding="0 0 0 12px",
                                  flex="1 1 280px"),
        )
        self._box = widgets.VBox([controls, widgets.HBox([self.picture, side], layout=wrap)])
        # Stable CSS hooks for browser tests and for styling.
        self._box.add_class("minigrad-stepper")
        for name, control in self.buttons.items():
            control.add_class(f"stepper-{name}")
        for control, name in (
            (self.slider, "slider"),
            (self.play, "play"),
            (self.image, "image"),
            (self.picture, "picture"),
            (self.panel, "panel"),
            (self.leaf_table, "grads"),
        ):
            control.add_class(f"stepper-{name}")

    def _slider_max(self) -> int:
        if self.recording.done:
            return len(self.recording.frames) - 1
        expected = self.recording.expected_steps or 0
        return max(expected, len(self.recording.frames) - 1)

    def _on_slider(self, change: dict) -> None:
        if not self._syncing:
            self.show(change["new"])

    def _sync_slider(self) -> None:
        self._syncing = True
        try:
            top = self._slider_max()
            for control in (self.slider, self.play):
                if control.max != top:
                    control.max = top
            if self.slider.value != self._index:
                self.slider.value = self._index
        finally:
            self._syncing = False
        at_end = self.recording.done and self._index == len(self.recording.frames) - 1
        self.buttons["first"].disabled = self.buttons["previous"].disabled = self._index == 0
        self.buttons["next"].disabled = self.buttons["last"].disabled = at_end

    def _render(self) -> None:
        self.drawing.update(self.recording.graph_state(self._index))  # kept current for tools
        picture = self._pictures.get(self._index)
        if picture is None:
            picture = self.drawing.to_png()
            if sum(map(len, self._pictures.values())) + len(picture) <= PICTURE_CACHE:
                self._pictures[self._index] = picture
        self.image.value = picture
        self.panel.value = self._frame_html()
        self.leaf_table.value = self._leaves_html()

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

    def _frame_html(self) -> str:
        frame, recording = self.frame, self.recording
        total = recording.expected_steps
        lines = [f'<div style="{_WARN_STYLE}">{escape(note)}</div>' for note in self.notes]
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
                rows.append(("recorded", made or "no node (no input of its formula "
                                                  "requires grad)"))
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
                f'<div style="color:{_ERROR_COLOR};border:1px solid {_ERROR_COLOR};'
                'border-radius:4px;padding:6px;margin-top:6px">'
                f"<b>{escape(type(frame.error).__name__)}</b>: "
                f"{escape(str(frame.error))}{advice}</div>"
            )
        elif recording.finished and frame.index == len(recording.frames) - 1:
            kept = "kept" if self.retain_graph else "released"
            lines.append(
                f'<div style="color:{_SUCCESS_COLOR};margin-top:6px"><b>Backward finished</b>: '
                f"{recording.nodes_run} nodes ran; saved tensors {kept}.</div>"
            )
            if self.create_graph:
                lines.append(escape(self.gradient_graph_text()))
        return (DARK_THEME_CSS + f'<div style="{_PANEL_STYLE}">' + "<br>".join(lines)
                + "</div>")

    def _leaves_html(self) -> str:
        grads = self.recording.leaf_grads(self._index, self._initial_grads)
        rows = []
        for node in self._leaves:
            leaf = node.variable
            rows.append(
                (f"{node.leaf_name or 'leaf'} {shape_text(leaf)}", value_text(grads.get(id(leaf))))
            )
        for tensor, grad in self.recording.retained_grads(self._index):
            name = self.graph.names.name_of(tensor) or "non-leaf"
            rows.append((f"{name} (retain_grad)", value_text(grad)))
        return f'<div style="{_PANEL_STYLE}"><b>.grad</b>{_table(rows)}</div>'


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
    one at a time: minigrad's engine, traced, plus (with `inputs`) the leaves' `.grad`
    filled in at the end, as `backward(inputs=...)` does after the engine (shown as
    accumulations of the last step)."""
    from minigrad.autograd import entry_points
    from minigrad.autograd import events as ev
    from minigrad.autograd.engine import backward_events

    if create_graph:
        entry_points._warn_of_cycle()  # (PyTorch's warning for backward(create_graph=True))
    captured: dict = {}
    for event in backward_events((loss,), grad_tensors, retain_graph, inputs, trace=True,
                                 captured=captured, create_graph=create_graph):
        if isinstance(event, ev.BackwardFinished) and inputs is not None:
            entry_points.accumulate_into_inputs(inputs, captured, create_graph)
            for x in inputs:
                if x.grad_fn is None and id(x) in captured:
                    yield ev.GradAccumulated(event.step, x._grad_accumulator(), x,
                                             snapshot(captured[id(x)]), x.grad)
        yield event


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f'<tr><td style="padding:1px 8px 1px 0;color:{_LABEL_COLOR}">{escape(a)}</td>'
        f"<td><code>{escape(b)}</code></td></tr>"
        for a, b in rows
    )
    return f'<table style="border-collapse:collapse">{cells}</table>'


__all__ = ["BackwardStepper", "require_minigrad_tensor"]

"""Inspectors: saved tensors and their versions, gradients over a loop, graphs side by side.

Named `inspectors` so it never shadows the standard library's `inspect`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .draw import (
    DPI,
    LEGEND_FONT,
    MAX_SIDE_PX,
    GraphDrawing,
    GraphState,
    NotebookFigure,
    figure_to_png,
)
from .formatting import escape, is_tensor_like, to_numpy, value_text
from .graph import MODIFIED, OK, RELEASED, BackwardGraph, build_graph, resolve_names

# -- (a) saved tensors -----------------------------------------------------------------------

STATUS_TEXT = {
    OK: "ok",
    MODIFIED: "will fail: modified in place",
    RELEASED: "released",
}


@dataclass(frozen=True)
class SavedTensorRow:
    """One tensor a backward node saved, and whether backward can still use it."""

    node_name: str
    step: int  # position of the node in the engine's execution order (0 runs first)
    attr: str  # `grad_fn._saved_<attr>`
    saved_version: int | None
    current_version: int | None
    status: str  # "ok", "will fail: modified in place", "released"
    tensor_name: str | None = None
    shape: str | None = None
    message: str | None = None  # what reading it raised, when it did
    node: Any = None
    # Saved-tensor hooks: what the pack hook returned (None: no hook packed it), and
    # what the unpack hook gives back, which backward will use unchecked.
    packed: str | None = None
    unpacked: str | None = None

    @property
    def will_fail(self) -> bool:
        return self.status != "ok"

    @property
    def hooked(self) -> bool:
        """True when saved-tensor hooks packed this tensor (its version is not checked)."""
        return self.packed is not None


class SavedTensorsTable(list):
    """Rows of `SavedTensorRow`, in execution order, with a notebook rendering.

    `failure` is the row where backward will stop (the first bad one in execution
    order), `summary` says it in a sentence. For a graph built under saved-tensor
    hooks, `hooked` are the rows a pack hook packed: the table shows what the hook
    returned and what unpacking gives, the graph's saved tensors seen from outside.
    """

    @property
    def hooked(self) -> list[SavedTensorRow]:
        return [row for row in self if row.hooked]

    @property
    def failure(self) -> SavedTensorRow | None:
        return next((row for row in self if row.will_fail), None)

    @property
    def summary(self) -> str:
        row = self.failure
        if row is None and self.hooked:
            return (
                f"All {len(self)} saved tensors can be read: backward can run. Hooks "
                f"packed {len(self.hooked)} of them: backward uses what the unpack hook "
                "returns, and no version check protects those."
            )
        if row is None:
            return f"All {len(self)} saved tensors are intact: backward can run."
        what = f"saved tensor `{row.attr}`" + (f" ({row.tensor_name})" if row.tensor_name else "")
        if row.status == "released":
            why = (
                "was already released by an earlier backward; pass retain_graph=True to the "
                "first backward to keep it"
            )
        elif row.status.startswith("will fail"):
            why = (
                f"was saved at version {row.saved_version} but is now at version "
                f"{row.current_version}: it was modified in place after being saved"
            )
        else:
            why = f"cannot be read: {row.message or row.status}"
            if row.hooked:
                why = f"cannot be unpacked: its unpack hook raised {row.message}"
        return f"Backward will fail at step {row.step} ({row.node_name}): its {what} {why}."

    def _columns(self) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """Headings and cells of the table; with columns for what hooks packed and
        unpacked when a hook packed any row."""
        hooks = bool(self.hooked)
        head = ("step", "node", "saved", "tensor", "saved v", "now v")
        head += ("packed by hook", "unpack gives", "status") if hooks else ("status",)
        rows = []
        for row in self:
            versions = [row.saved_version, row.current_version]
            versions = ["not checked" if row.hooked else "?" if v is None else v for v in versions]
            cells = (
                row.step,
                row.node_name,
                row.attr,
                " ".join(filter(None, (row.tensor_name, row.shape))),
                *versions,
            )
            if hooks:
                cells += (row.packed or "-", row.unpacked or "-")
            rows.append((*cells, row.status))
        return head, rows

    def __str__(self) -> str:
        """The summary and the table as aligned plain text (for `print`)."""
        head, rows = self._columns()
        table = [head, *[tuple(str(c) for c in r) for r in rows]]
        widths = [max(len(line[i]) for line in table) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in table]
        return "\n".join([self.summary, *lines])

    def _repr_html_(self) -> str:
        color = "#c92a2a" if self.failure else "#2b8a3e"
        columns, rows = self._columns()
        head = "".join(
            f'<th style="text-align:left;padding:2px 10px 2px 0">{h}</th>' for h in columns
        )
        body = []
        for row, cells in zip(self, rows):
            style = ' style="color:#c92a2a;font-weight:bold"' if row.will_fail else ""
            body.append(
                f"<tr{style}>"
                + "".join(f'<td style="padding:2px 10px 2px 0">{escape(c)}</td>' for c in cells)
                + "</tr>"
            )
        message = ""
        if self.failure is not None and self.failure.message:
            error = self.failure.message
            if not re.match(r"\w+Error: ", error):  # (a failing unpack hook's is prefixed)
                error = f"RuntimeError: {error}"
            message = (
                '<div style="color:#868e96;font-size:90%">The engine will raise: '
                f"{escape(error)}</div>"
            )
        return (
            f'<div><p style="color:{color};font-weight:bold">{escape(self.summary)}</p>'
            f'{message}<table style="border-collapse:collapse"><tr>{head}</tr>'
            f"{''.join(body)}</table></div>"
        )

    def widget(self) -> widgets.HTML:
        """The table as an ipywidgets.HTML, to place inside other widgets."""
        return widgets.HTML(self._repr_html_())


def saved_tensors_table(*roots: Any, names: Any = None) -> SavedTensorsTable:
    """Every tensor the graph of `roots` saved for backward, in execution order, with
    saved and current versions and whether backward will be able to use it.

    For tensors packed by saved-tensor hooks (`saved_tensors_hooks`, `save_on_cpu`,
    `_raw_saved_<name>.register_hooks`) it shows what the pack hook returned and what
    the unpack hook gives back; building the table calls the unpack hooks, as reading
    `grad_fn._saved_<name>` does."""
    graph = build_graph(
        *roots, names=resolve_names(names, sys._getframe(1)), caller="saved_tensors_table"
    )
    return saved_tensors_of(graph)


def saved_tensors_of(graph: BackwardGraph) -> SavedTensorsTable:
    """`saved_tensors_table` for an already built graph."""
    table = SavedTensorsTable()
    for step, node in enumerate(graph.predicted_order()):
        for saved in node.saved_tensors:
            table.append(
                SavedTensorRow(
                    node_name=node.name,
                    step=step,
                    attr=saved.attr,
                    saved_version=saved.saved_version,
                    current_version=saved.current_version,
                    status=STATUS_TEXT.get(saved.status, f"unreadable: {saved.error}"),
                    tensor_name=saved.tensor_name,
                    shape=saved.shape,
                    message=saved.error,
                    node=node.obj,
                    packed=saved.packed,
                    unpacked=(
                        f"{saved.dtype} {saved.shape} {saved.text}"
                        if saved.hooked and saved.shape is not None
                        else None
                    ),
                )
            )
    return table


# -- (b) gradients across a loop ------------------------------------------------------------------


class GradHistory:
    """Record `.grad` of some tensors at every iteration of a loop, then plot it.

    >>> history = GradHistory({"w": w})      # or GradHistory(w), GradHistory(model)
    >>> for step in range(5):
    ...     loss = (w * x).sum(); loss.backward()
    ...     history.record(step)
    >>> history.plot()                       # growing lines: nobody called zero_grad()

    A `.grad` that is None is recorded as missing (a gap in the plot).
    """

    def __init__(self, tensors: Any, names: Any = None) -> None:
        self.tensors = _named_tensors(tensors, names, sys._getframe(1))
        self.steps: list[Any] = []
        self.values: dict[str, list[np.ndarray | None]] = {name: [] for name in self.tensors}

    def record(self, step: Any = None) -> None:
        """Copy every tracked tensor's current `.grad`."""
        self.steps.append(len(self.steps) if step is None else step)
        for name, tensor in self.tensors.items():
            grad = tensor.grad
            self.values[name].append(None if grad is None else np.array(to_numpy(grad)))

    def norms(self, name: str) -> list[float]:
        """The L2 norm of `name`'s gradient at each recorded step (nan when None)."""
        return [float("nan") if g is None else float(np.linalg.norm(g)) for g in self.values[name]]

    def plot(self, ax: Axes | None = None, max_elements: int = 8) -> Figure:
        """Gradient elements (or the norm, for big tensors) against the recorded steps."""
        if not self.steps:
            raise ValueError("GradHistory has nothing to plot yet: call record() in your loop")
        if ax is None:
            # at the graphs' DPI, so LEGEND_FONT is JupyterLab's body text size (14 px)
            figure = NotebookFigure(figsize=(6.4, 2.6 * len(self.tensors)), dpi=DPI)
            axes = figure.subplots(len(self.tensors), 1, squeeze=False)[:, 0]
        else:
            if len(self.tensors) != 1:
                raise ValueError("plot(ax=...) draws a single tensor; track one or omit ax")
            figure, axes = ax.figure, [ax]
        x = np.arange(len(self.steps))
        for axis, (name, values) in zip(axes, self.values.items()):
            size = max((v.size for v in values if v is not None), default=0)
            if 0 < size <= max_elements:
                stacked = np.array(
                    [np.full(size, np.nan) if v is None else v.reshape(-1) for v in values]
                )
                for k in range(size):
                    axis.plot(x, stacked[:, k], marker="o", label=f"{name}.grad[{k}]")
            else:
                axis.plot(x, self.norms(name), marker="o", label=f"\u2016{name}.grad\u2016")
            axis.set_xticks(x, [str(s) for s in self.steps])
            axis.set_xlabel("recorded step", fontsize=LEGEND_FONT)
            axis.set_title(f"{name}.grad", fontsize=LEGEND_FONT)
            axis.tick_params(labelsize=LEGEND_FONT)
            axis.legend(fontsize=LEGEND_FONT, loc="best")
            axis.grid(alpha=0.3)
        if ax is None:
            figure.tight_layout()
        return figure

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(name)}.grad</th>" for name in self.values)
        rows = []
        for i, step in enumerate(self.steps):
            cells = "".join(
                f"<td><code>{escape(value_text(values[i]))}</code></td>"
                for values in self.values.values()
            )
            rows.append(f"<tr><td>{escape(step)}</td>{cells}</tr>")
        return f"<table><tr><th>step</th>{head}</tr>{''.join(rows)}</table>"


def _named_tensors(tensors: Any, names: Any, frame) -> dict[str, Any]:
    if isinstance(tensors, Mapping) or callable(getattr(tensors, "named_parameters", None)):
        return {name: t for name, t in resolve_names(tensors).items()}
    items = [tensors] if is_tensor_like(tensors) else list(tensors)
    for item in items:
        if not is_tensor_like(item):
            raise TypeError(
                "GradHistory tracks tensors: pass a tensor, a list of tensors, a dict "
                f'{{"w": w}} or a module, not {type(item).__name__}'
            )
    known = resolve_names(names if names is not None else "auto", frame)
    result: dict[str, Any] = {}
    for position, item in enumerate(items):
        name = known.name_of(item) or f"tensor {position}"
        result[name if name not in result else f"{name} ({position})"] = item
    return result


# -- (c) graphs of two loop iterations ----------------------------------------------------------

SHARED_COLOR = "#ffa94d"
REBUILT_COLOR = "#74c0fc"


@dataclass
class GraphComparison:
    """Which nodes two graphs share (the very same objects) and which were rebuilt."""

    graph_a: BackwardGraph
    graph_b: BackwardGraph
    shared: list[str]
    rebuilt_a: list[str]
    rebuilt_b: list[str]
    figure: Figure

    @property
    def summary(self) -> str:
        return (
            f"{len(self.shared)} node(s) shared by both graphs (same objects), "
            f"{len(self.rebuilt_b)} rebuilt in the second graph"
        )

    def _repr_png_(self) -> bytes:
        return figure_to_png(self.figure)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None):
        """SVG and PNG, shown unshrunk, as `draw_graph`'s figures."""
        data, metadata = self.figure._repr_mimebundle_()
        data["text/plain"] = repr(self)
        return data, metadata

    def __repr__(self) -> str:
        return f"<GraphComparison: {self.summary}>"


def compare_graphs(
    graph_a_root: Any, graph_b_root: Any, names: Any = None, show_saved: bool = False
) -> GraphComparison:
    """Draw two graphs side by side (e.g. the losses of two loop iterations), colouring the
    nodes both contain -- the same objects, such as the AccumulateGrad of a parameter or
    a sub-graph carried over between iterations -- apart from those built anew."""
    known = resolve_names(names, sys._getframe(1))
    graph_a = build_graph(graph_a_root, names=known, caller="compare_graphs")
    graph_b = build_graph(graph_b_root, names=known, caller="compare_graphs")
    ids_a = {id(n.obj) for n in graph_a.engine_nodes}
    ids_b = {id(n.obj) for n in graph_b.engine_nodes}
    common = ids_a & ids_b

    def label(node) -> str:
        return f"{node.name}({node.leaf_name})" if node.leaf_name else node.name

    figure = NotebookFigure(dpi=DPI)
    drawings = []
    for graph, title in ((graph_a, "first graph"), (graph_b, "second graph")):
        drawing = GraphDrawing(
            graph,
            ax=figure.add_axes((0, 0, 1, 1)),
            show_saved=show_saved,
            title=title,
            legend=False,
        )
        colors = {
            id(n.obj): SHARED_COLOR if id(n.obj) in common else REBUILT_COLOR
            for n in graph.engine_nodes
        }
        drawing.update(GraphState(node_colors=colors, default_status=None))
        drawings.append(drawing)
    _side_by_side(figure, drawings)
    figure.legend(
        handles=[
            Patch(
                facecolor=SHARED_COLOR, edgecolor="#495057", label="in both graphs (same object)"
            ),
            Patch(facecolor=REBUILT_COLOR, edgecolor="#495057", label="built anew"),
        ],
        loc="lower center",
        ncol=2,
        frameon=False,
        fontsize=LEGEND_FONT,
    )
    return GraphComparison(
        graph_a,
        graph_b,
        shared=[label(n) for n in graph_b.engine_nodes if id(n.obj) in common],
        rebuilt_a=[label(n) for n in graph_a.engine_nodes if id(n.obj) not in common],
        rebuilt_b=[label(n) for n in graph_b.engine_nodes if id(n.obj) not in common],
        figure=figure,
    )


def _side_by_side(figure: Figure, drawings: list[GraphDrawing]) -> None:
    """Size the figure so each drawing gets its natural size, next to each other."""
    gap, legend = 24.0, 2.5 * LEGEND_FONT  # points
    widths = [d.extent[1] - d.extent[0] for d in drawings]
    height = max(d.extent[3] - d.extent[2] for d in drawings)
    total = sum(widths) + gap * (len(drawings) - 1)
    scale = min(1.0, MAX_SIDE_PX / (max(total, height + legend) * figure.dpi / 72))
    figure.set_size_inches(total * scale / 72, (height + legend) * scale / 72)
    left = 0.0
    for drawing, width in zip(drawings, widths):
        own = drawing.extent[3] - drawing.extent[2]
        drawing.ax.set_position(
            (
                left / total,
                (legend + height - own) / (height + legend),
                width / total,
                own / (height + legend),
            )
        )
        left += width + gap


__all__ = [
    "GradHistory",
    "GraphComparison",
    "SavedTensorRow",
    "SavedTensorsTable",
    "compare_graphs",
    "saved_tensors_table",
]

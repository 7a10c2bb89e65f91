"""Draw a backward graph with matplotlib (a `Figure`, never pyplot's global state).

`draw_graph(loss)` returns a figure. `GraphDrawing` keeps the artists so a stepper can
restyle the same figure frame after frame (`update(state)`) instead of rebuilding it.

Speed: everything is drawn in data coordinates measured in points, with a handful of
collections (boxes, edges, text outlines from `textpaths`), so a frame is a few draw
calls whatever the number of nodes.

Legibility: the figure's size comes from the layout (node count, depth, label lengths)
at a fixed scale, so text is always at least as large as a notebook's body text. A big
graph gives a big figure, shown at its natural size: the notebook output scrolls (a
picture is never shrunk to the output's width). Edge labels sit in slots the layout
reserves for them (`layout.py`), beside their edge, clear of boxes, edges and labels.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PatchCollection, PathCollection, PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from .figures import NotebookFigure, figure_to_png
from .formatting import is_tensor_like
from .graph import (
    ACCUMULATE,
    BACKWARD,
    NO_GRAD,
    ROOT,
    BackwardGraph,
    GraphNode,
    SavedValue,
    build_graph,
    resolve_names,
)
from .layout import (
    COLLAPSE_ABOVE,
    LABEL_PAD,
    LABEL_SPACE,
    Footprint,
    Layout,
    LayoutEdge,
    layered_layout,
)
from .textpaths import LINE_SPACING, text_path, text_size

# Node statuses a stepper can show.
PENDING = "pending"
CURRENT = "current"
DONE = "done"
FAILED = "failed"

PALETTE = {
    ROOT: "#d0bfff",
    BACKWARD: "#e9ecef",
    ACCUMULATE: "#a5d8ff",
    NO_GRAD: "#ffffff",
    "group": "#f8f9fa",
    # A node the backward pass recorded (create_graph=True): teal, apart from the
    # forward graph's grey nodes it leads into.
    "recorded": "#c3fae8",
    "recorded_edge": "#087f5b",
    "saved": "#ffd8a8",
    "saved_edge": "#d9480f",
    "saved_bad": "#ffc9c9",
    "released": "#f1f3f5",
    "outline": "#495057",
    "shared": "#5f3dc4",
    "highlight": "#f59f00",
    "edge": "#868e96",
    "edge_active": "#1971c2",  # gradients written in it: 5:1 on white (WCAG asks 4.5)
    "bad": "#c92a2a",
    "text": "#212529",
    "faint": "#868e96",
    CURRENT: "#ffe066",
    DONE: "#b2f2bb",
    FAILED: "#ff8787",
}
# A saved tensor's box: fill, outline, outline width, line style, text colour.
SAVED_LOOKS = {
    "ok": (PALETTE["saved"], PALETTE["saved_edge"], 0.8, "-", PALETTE["text"]),
    "modified": (PALETTE["saved_bad"], PALETTE["bad"], 1.6, "-", PALETTE["bad"]),
    "released": (PALETTE["released"], PALETTE["edge"], 1.0, "--", PALETTE["faint"]),
}
STATUS_EDGE = {CURRENT: "#e67700", DONE: "#2b8a3e", FAILED: "#c92a2a"}
RECORDED_WIDTH = 1.6  # the outline of a node the backward pass recorded

# Text size. JupyterLab sets a notebook's prose at 14 px (--jp-content-font-size1 of its
# default themes; code and UI text are 13 px). A figure shown at its natural size draws an
# s-point font s * dpi / 72 pixels high. At DPI = 96 a point is 4/3 of a pixel, as in an
# SVG a browser shows, so the PNG and the SVG of a graph come out the same size, and no
# text of a drawing is smaller than MIN_FONT = 10.5 points = 14 pixels.
BODY_TEXT_PX = 14.0
DPI = 96.0
MIN_FONT = BODY_TEXT_PX * 72 / DPI
NODE_FONT = 11.0
SAVED_FONT = MIN_FONT
EDGE_FONT = MIN_FONT
LEGEND_FONT = MIN_FONT
SAVED_ROW = SAVED_FONT * LINE_SPACING + 8  # one saved-tensor box plus spacing
LABEL_HEIGHT = EDGE_FONT * LINE_SPACING + 2  # an edge label's slot
# Room kept beside an edge for the gradient the stepper writes on it: 21 digits and an
# ellipsis; a longer value is cut to fit (the stepper's panel shows it whole).
GRADIENT_ROOM = text_size("0" * 21 + "\u2026", EDGE_FONT)[0]
MARGIN = 16.0  # points around the drawing
MIN_WIDTH = 420.0  # points: room for the legend on tiny graphs
# Agg cannot draw more than 2**16 pixels a side; only a drawing larger than this (a few
# hundred boxes side by side) is scaled down. Anything smaller keeps its text size.
MAX_SIDE_PX = 30000
Rect = tuple[float, float, float, float]  # left, bottom, right, top


@dataclass
class GraphState:
    """What a stepper shows on top of the graph. Keys are `id()`s of node objects.

    `edge_text[(id(source), input_index)]` labels the edge to
    `source.next_functions[input_index]` (for a root tensor: `(id(tensor), 0)`).
    `released` holds `(id(node), attr)` for saved tensors the engine has freed.
    Engine nodes missing from `node_status` show as `default_status` (None: no status).
    `node_colors` overrides the fill colour of nodes (used by `compare_graphs`).
    """

    node_status: dict[int, str] = field(default_factory=dict)
    edge_text: dict[tuple[int, int], str] = field(default_factory=dict)
    released: set[tuple[int, str]] = field(default_factory=set)
    default_status: str | None = PENDING
    node_colors: dict[int, str] = field(default_factory=dict)


class BoxLook(NamedTuple):
    """A node box's colours: fill, outline, outline width, line style, opacity."""

    face: str
    edge: str
    width: float
    style: str
    alpha: float


class LegendEntry(NamedTuple):
    label: str
    face: str
    edge: str = PALETTE["outline"]
    linestyle: str = "-"
    linewidth: float = 1.0


def draw_graph(
    *roots: Any,
    names: Any = None,
    highlight: Any = None,
    ax: Axes | None = None,
    figsize: tuple[float, float] | None = None,
    state: GraphState | None = None,
    show_saved: bool = True,
    collapse_above: int = COLLAPSE_ABOVE,
    title: str | None = None,
) -> Figure:
    """Draw the backward graph of `roots` (torch or minigrad tensors) and return the figure.

    names: None, ``"auto"`` (name tensors after the caller's variables), a dict
        ``{"w": w}`` or a module with `named_parameters()`.
    highlight: a tensor, backward node or name (or a list of them) to outline.
    ax: draw into this axes instead of a new figure.
    state: a `GraphState` colouring nodes the way the stepper does.
    show_saved: draw the saved-tensor boxes.
    collapse_above: graphs with more nodes get long linear chains collapsed.
    """
    graph = build_graph(*roots, names=resolve_names(names, sys._getframe(1)), caller="draw_graph")
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"draw_graph: ax must be a matplotlib Axes, not {type(ax).__name__}")
    if figsize is not None and not _is_size(figsize):
        raise ValueError(
            f"draw_graph: figsize must be (width, height) in inches, two positive numbers, "
            f"not {figsize!r}"
        )
    drawing = GraphDrawing(
        graph,
        ax=ax,
        figsize=figsize,
        show_saved=show_saved,
        collapse_above=collapse_above,
        with_status=state is not None,
        highlight=highlight,
        title=title,
    )
    if state is not None:
        drawing.update(state)
    return drawing.figure


def node_label(node: GraphNode) -> str:
    """The text inside a node's box."""
    if node.kind == ROOT:
        kind = "leaf" if node.is_leaf_root else "tensor"
        return f"{node.name}\n{kind} {node.shape}"
    if node.kind == ACCUMULATE:
        return f"AccumulateGrad\n{node.leaf_name or 'leaf'} {node.shape}"
    lines = [node.name]
    if node.kind == BACKWARD and node.tensor_names:
        lines.append(f"\u2192 {', '.join(node.tensor_names)}")
    if node.recorded_by:
        lines.append(f"by {node.recorded_by}'s backward")
    return "\n".join(lines)


def saved_label(saved: SavedValue, released: bool = False) -> str:
    """`self=a v0\u2192v0`, `result v0\u2192v1` (a mismatch), `other released`, `self
    packed` (by saved-tensor hooks: no versions to compare)."""
    name = saved.attr + (f"={saved.tensor_name}" if saved.tensor_name else "")
    if released or saved.released:
        return f"{name} released"
    if saved.hooked:
        return f"{name} packed"

    def version(v: int | None) -> str:
        return "?" if v is None else str(v)

    return f"{name} v{version(saved.saved_version)}\u2192v{version(saved.current_version)}"


class GraphDrawing:
    """A drawn graph whose artists can be restyled cheaply with `update(state)`."""

    def __init__(
        self,
        graph: BackwardGraph,
        ax: Axes | None = None,
        figsize: tuple[float, float] | None = None,
        show_saved: bool = True,
        collapse_above: int = COLLAPSE_ABOVE,
        with_status: bool = False,
        highlight: Any = None,
        title: str | None = None,
        dpi: float = DPI,
        legend: bool = True,
    ) -> None:
        self.graph = graph
        self.show_saved = show_saved
        self.with_status = with_status
        self.highlighted = _highlighted_indices(graph, highlight)
        self._multi_output = {edge.target for edge in graph.edges if edge.output_index}
        self.layout: Layout = layered_layout(
            graph,
            footprint=self._footprint,
            collapse_above=collapse_above,
            group_footprint=self._group_footprint,
            label_room=self._label_room,
            label_height=LABEL_HEIGHT,
        )
        # What is shown, for tests and tools: box key -> status, (key, attr) -> "ok" /
        # "modified" / "released", (source index, input index) -> edge text.
        self.box_status: dict[int, str | None] = {}
        self.box_face: dict[int, str] = {}  # box key -> its fill colour (before fading)
        self.saved_look: dict[tuple[int, str], str] = {}
        self.edge_labels: dict[tuple[int, int], str] = {}
        self.index_labels: list[tuple[int, int, str]] = []  # (source, target, label)
        # Where labels are drawn, (left, bottom, right, top) in points:
        self.edge_label_boxes: list[Rect] = []  # gradients written on edges (update)
        self.index_label_boxes: list[Rect] = []  # "#1": which output of the target
        self._legend = self._legend_entries(with_status) if legend else []
        legend_height, columns = self._legend_shape()
        title_height = NODE_FONT * 2.2 if title else 0.0
        width = max(self.layout.width, MIN_WIDTH)
        left = (self.layout.width - width) / 2 - MARGIN
        right = left + width + 2 * MARGIN
        bottom = -self.layout.height - MARGIN
        top = MARGIN + legend_height + title_height
        self.extent = (left, right, bottom, top)
        if ax is None:
            self.figure, self.ax = _new_figure(self.extent, figsize, dpi)
        else:
            self.figure, self.ax = ax.figure, ax
            ax.set_xlim(left, right)
            ax.set_ylim(bottom, top)
            ax.set_aspect("equal", adjustable="box")
            ax.set_axis_off()
        self.title = title
        if title:
            self._add_text(
                [(title, left + MARGIN, top - title_height / 2, NODE_FONT * 1.2, "left")]
            )
        self._draw_legend(left + MARGIN, MARGIN + legend_height, columns)
        self._draw_edges()
        self._draw_boxes()
        self._draw_saved()
        self.update(None)

    # -- sizes ---------------------------------------------------------------------------

    def _footprint(self, node: GraphNode) -> Footprint:
        width, height = text_size(node_label(node), NODE_FONT)
        width, height = width + 14, height + 8
        if node.kind == NO_GRAD:
            return Footprint(width, max(height * 0.8, NODE_FONT * LINE_SPACING + 4))
        saved = self._shown_saved(node)
        if not saved:
            return Footprint(width, height)
        saved_width = max(_saved_width(s) for s in saved)
        return Footprint(width, height, saved_width + 10, len(saved) * SAVED_ROW)

    @staticmethod
    def _group_footprint(label: str) -> Footprint:
        width, height = text_size(label, NODE_FONT)
        return Footprint(width + 14, height + 8)

    def _label_room(self, edge: LayoutEdge) -> tuple[float, float]:
        """Width kept beside `edge` for its labels: the gradient the stepper writes near
        the source, the output index of a multi-output target ("#1") near the target."""
        gradient = GRADIENT_ROOM if self.with_status else 0.0
        index = self._index_text(edge)
        return gradient, (text_size(index, EDGE_FONT)[0] if index else 0.0)

    def _index_text(self, edge: LayoutEdge) -> str | None:
        """ "#1" on an edge into output 1 of a multi-output node ("#1", not a bare "1": a
        gradient value may be written on the same edge)."""
        first = self.graph.edges[edge.graph_edges[0]]
        if len(edge.graph_edges) == 1 and first.target in self._multi_output:
            return f"#{first.output_index}"
        return None

    def _shown_saved(self, node: GraphNode) -> tuple[SavedValue, ...]:
        return node.saved_tensors if self.show_saved else ()

    # -- building ------------------------------------------------------------------------

    def _add_text(self, items: list[tuple[str, float, float, float, str]], color=None):
        paths = [text_path(text, x, y, size, ha) for text, x, y, size, ha in items]
        collection = PathCollection(
            paths,
            facecolors=color or PALETTE["text"],
            edgecolors="none",
            linewidths=0,
            transform=self.ax.transData,
            zorder=5,
        )
        self.ax.add_collection(collection, autolim=False)
        return collection

    def _draw_boxes(self) -> None:
        layout, graph = self.layout, self.graph
        self._box_keys = list(layout.positions)
        patches, labels = [], []
        for key in self._box_keys:
            x, y = layout.positions[key]
            width, height = layout.footprints[key][:2]
            label = (
                node_label(graph.nodes[key])
                if key < len(graph.nodes)
                else (layout.groups[key].label)
            )
            patches.append(_box(x, y, width, height, 5.0))
            labels.append((label, x, y, NODE_FONT, "center"))
        self._boxes = PatchCollection(patches, zorder=3)
        self.ax.add_collection(self._boxes, autolim=False)
        self._box_text = self._add_text(labels)

    def _draw_saved(self) -> None:
        layout, graph = self.layout, self.graph
        self._saved_items: list[tuple[int, SavedValue, float, float]] = []
        patches, connectors = [], []
        for key in self._box_keys:
            if key >= len(graph.nodes):
                continue
            saved = self._shown_saved(graph.nodes[key])
            x, y = layout.positions[key]
            right = x + layout.footprints[key].width / 2
            top = y + len(saved) * SAVED_ROW / 2
            for k, value in enumerate(saved):
                width = _saved_width(value)
                cy = top - (k + 0.5) * SAVED_ROW
                patches.append(_box(right + 10 + width / 2, cy, width, SAVED_ROW - 3, 3.0))
                connectors.append([(right, y), (right + 10, cy)])
                self._saved_items.append((key, value, right + 10 + width / 2, cy))
        self._saved_boxes = PatchCollection(patches, zorder=3)
        self.ax.add_collection(self._saved_boxes, autolim=False)
        self.ax.add_collection(
            LineCollection(connectors, colors="#adb5bd", linewidths=0.8, linestyles=":", zorder=2),
            autolim=False,
        )
        self._saved_text = self._add_text([])

    def box_rects(self) -> dict[str, list[Rect]]:
        """Where the boxes are, (left, bottom, right, top) in points: "node" boxes (one
        per box key, in `layout.positions` order) and "saved" tensor boxes."""
        nodes = []
        for key in self._box_keys:
            x, y = self.layout.positions[key]
            width, height = self.layout.footprints[key][:2]
            nodes.append((x - width / 2, y - height / 2, x + width / 2, y + height / 2))
        saved = []
        for _, value, x, y in self._saved_items:
            width, height = _saved_width(value), SAVED_ROW - 3
            saved.append((x - width / 2, y - height / 2, x + width / 2, y + height / 2))
        return {"node": nodes, "saved": saved}

    def _draw_edges(self) -> None:
        segments, heads, index_labels = [], [], []
        self.index_label_items: list[tuple[str, float, float]] = []  # "#1", left, y
        for edge in self.layout.edges:
            route = edge.route
            segments.append(route)
            heads.append(_arrow_head(route[-2], route[-1], size=ARROW_SIZE))
            index = self._index_text(edge)
            if index is None:
                continue
            first = self.graph.edges[edge.graph_edges[0]]
            self.index_labels.append((first.source, first.target, str(first.output_index)))
            if edge.target_slot is None:
                continue  # an edge drawn straight has no slot (only in huge graphs)
            x, y = edge.target_slot
            index_labels.append((index, x + LABEL_PAD, y, EDGE_FONT, "left"))
            self.index_label_items.append((index, x + LABEL_PAD, y))
            self.index_label_boxes.append(_label_rect(index, x + LABEL_PAD, y))
        self._edge_lines = LineCollection(segments, zorder=1)
        self._edge_heads = PolyCollection(heads, edgecolors="none", zorder=1)
        self.ax.add_collection(self._edge_lines, autolim=False)
        self.ax.add_collection(self._edge_heads, autolim=False)
        self._add_text(index_labels, color="#495057")
        self._edge_text = self._add_text([], color=PALETTE["edge_active"])
        self._edge_text.set_zorder(6)

    def _legend_entries(self, with_status: bool) -> list[LegendEntry]:
        graph = self.graph
        visible = [graph.nodes[k] for k in self.layout.positions if k < len(graph.nodes)]
        kinds = {n.kind for n in visible}
        saved = [s for n in visible for s in self._shown_saved(n)]
        entries = [
            LegendEntry("root tensor", PALETTE[ROOT]),
            LegendEntry("backward node", PALETTE[BACKWARD]),
        ]
        if ACCUMULATE in kinds:
            entries.append(LegendEntry("AccumulateGrad (leaf)", PALETTE[ACCUMULATE]))
        if any(n.recorded for n in visible):
            entries.append(
                LegendEntry(
                    "recorded by backward (create_graph)",
                    PALETTE["recorded"],
                    PALETTE["recorded_edge"],
                    "-",
                    RECORDED_WIDTH,
                )
            )
        if saved:
            entries.append(
                LegendEntry(
                    "saved tensor v(saved)\u2192v(now)", PALETTE["saved"], PALETTE["saved_edge"]
                )
            )
        if any(s.version_mismatch for s in saved):
            entries.append(
                LegendEntry(
                    "saved, modified in place", PALETTE["saved_bad"], PALETTE["bad"], "-", 1.6
                )
            )
        if with_status or any(s.released for s in saved):
            entries.append(
                LegendEntry("saved, released", PALETTE["released"], PALETTE["edge"], "--")
            )
        if NO_GRAD in kinds:
            entries.append(LegendEntry("(None, 0): needs no grad", "white", PALETTE["edge"], "--"))
        if any(n.shared for n in visible):
            entries.append(
                LegendEntry("shared by several roots", "white", PALETTE["shared"], "-", 2.2)
            )
        if self.layout.groups:
            entries.append(
                LegendEntry("collapsed nodes", PALETTE["group"], PALETTE["outline"], "--")
            )
        if self.highlighted:
            entries.append(LegendEntry("highlighted", "white", PALETTE["highlight"], "-", 2.6))
        if with_status:
            entries += [
                LegendEntry("current node", PALETTE[CURRENT], STATUS_EDGE[CURRENT], "-", 2.2),
                LegendEntry("done", PALETTE[DONE], STATUS_EDGE[DONE], "-", 2.2),
                LegendEntry("failed", PALETTE[FAILED], STATUS_EDGE[FAILED], "-", 2.2),
            ]
        return entries

    def _legend_shape(self) -> tuple[float, int]:
        if not self._legend:
            return 0.0, 1
        column = max(text_size(e.label, LEGEND_FONT)[0] for e in self._legend) + 36
        columns = max(1, int(max(self.layout.width, MIN_WIDTH) // column))
        rows = -(-len(self._legend) // columns)
        self._legend_column = column
        return rows * LEGEND_FONT * 2 + 4, columns

    def _draw_legend(self, left: float, top: float, columns: int) -> None:
        patches, labels = [], []
        self.legend_placed: list[tuple[LegendEntry, float, float]] = []  # entry, left, y
        row_height = LEGEND_FONT * 2
        for i, entry in enumerate(self._legend):
            row, column = divmod(i, columns)
            x = left + column * self._legend_column
            y = top - (row + 0.5) * row_height
            patches.append(_box(x + 9, y, 18, 12, 2.0))
            labels.append((entry.label, x + 24, y, LEGEND_FONT, "left"))
            self.legend_placed.append((entry, x, y))
        swatches = PatchCollection(
            patches,
            facecolors=[e.face for e in self._legend],
            edgecolors=[e.edge for e in self._legend],
            linestyles=[e.linestyle for e in self._legend],
            linewidths=[e.linewidth for e in self._legend],
            zorder=3,
        )
        self.ax.add_collection(swatches, autolim=False)
        self._add_text(labels, color="#343a40")

    @property
    def legend_labels(self) -> list[str]:
        return [entry.label for entry in self._legend]

    # -- restyling -----------------------------------------------------------------------

    def update(self, state: GraphState | None) -> None:
        """Recolour nodes, label edges and mark released saved tensors for `state`."""
        self._restyle_boxes(state)
        self._restyle_saved(state)
        self._restyle_edges(state)

    def status_of(self, key: int, state: GraphState | None) -> str | None:
        """The status shown for box `key` (a group shows the most urgent of its members)."""
        if state is None:
            return None
        graph = self.graph
        members = self.layout.groups[key].members if key in self.layout.groups else (key,)
        statuses = {
            state.node_status.get(id(graph.nodes[i].obj), state.default_status)
            for i in members
            if graph.nodes[i].is_engine_node
        } - {None}
        if not statuses:
            return None
        for status in (FAILED, CURRENT):
            if status in statuses:
                return status
        return DONE if statuses == {DONE} else PENDING

    def box_look(self, key: int, status: str | None, state: GraphState | None = None) -> BoxLook:
        """How box `key` is drawn when it shows `status` (the stepper's colours)."""
        graph = self.graph
        node = graph.nodes[key] if key < len(graph.nodes) else None
        kind = node.kind if node is not None else "group"
        face, edge, width, style, alpha = PALETTE[kind], PALETTE["outline"], 1.0, "-", 1.0
        if kind in (NO_GRAD, "group"):
            style = "--"
            alpha = 0.5 if kind == NO_GRAD else 1.0
        if node is not None and node.recorded:
            face, edge, width = PALETTE["recorded"], PALETTE["recorded_edge"], RECORDED_WIDTH
        if node is not None and node.shared:
            edge, width = PALETTE["shared"], 2.2
        if state is not None and node is not None and id(node.obj) in state.node_colors:
            face = state.node_colors[id(node.obj)]
        if status == PENDING:
            alpha = 0.5
        elif status in STATUS_EDGE:
            face, edge, width = PALETTE[status], STATUS_EDGE[status], 2.6
        if key in self.highlighted and status not in STATUS_EDGE:
            edge, width = PALETTE["highlight"], 2.8
        return BoxLook(face, edge, width, style, alpha)

    def _restyle_boxes(self, state: GraphState | None) -> None:
        faces, edges, widths, styles, text_colors = [], [], [], [], []
        for key in self._box_keys:
            status = self.status_of(key, state)
            look = self.box_look(key, status, state)
            self.box_status[key] = status
            self.box_face[key] = look.face
            faces.append(to_rgba(look.face, look.alpha))
            edges.append(to_rgba(look.edge, max(look.alpha, 0.6)))
            widths.append(look.width)
            styles.append(look.style)
            text_colors.append(to_rgba(PALETTE["text"], max(look.alpha, 0.55)))
        self._boxes.set_facecolors(faces)
        self._boxes.set_edgecolors(edges)
        self._boxes.set_linewidths(widths)
        self._boxes.set_linestyles(styles)
        self._box_text.set_facecolors(text_colors)

    def is_released(self, key: int, value: SavedValue, state: GraphState | None) -> bool:
        obj = self.graph.nodes[key].obj
        return value.released or (state is not None and (id(obj), value.attr) in state.released)

    def _restyle_saved(self, state: GraphState | None) -> None:
        faces, edges, widths, styles, paths, text_colors = [], [], [], [], [], []
        for key, value, x, y in self._saved_items:
            released = self.is_released(key, value, state)
            look_name = "released" if released else "modified" if value.version_mismatch else "ok"
            self.saved_look[(key, value.attr)] = look_name
            face, edge, width, style, text_color = SAVED_LOOKS[look_name]
            faces.append(face)
            edges.append(edge)
            widths.append(width)
            styles.append(style)
            text_colors.append(text_color)
            paths.append(text_path(saved_label(value, released), x, y, SAVED_FONT))
        if not paths:
            return
        self._saved_boxes.set_facecolors(faces)
        self._saved_boxes.set_edgecolors(edges)
        self._saved_boxes.set_linewidths(widths)
        self._saved_boxes.set_linestyles(styles)
        self._saved_text.set_paths(paths)
        self._saved_text.set_facecolors(text_colors)

    def edge_texts(self, state: GraphState | None) -> list[str | None]:
        """The gradient written on each drawn edge (`layout.edges` order) for `state`:
        None for an edge no gradient has flowed along yet."""
        graph, texts = self.graph, []
        for edge in self.layout.edges:
            text = None
            if state is not None:
                for e in edge.graph_edges:
                    source = graph.nodes[graph.edges[e].source].obj
                    found = state.edge_text.get((id(source), graph.edges[e].input_index))
                    text = found if found is not None else text
            texts.append(text)
        return texts

    def label_text(self, edge: LayoutEdge, text: str) -> tuple[str, float, float]:
        """`text` as written beside `edge` (cut to its room) and where it starts."""
        x, y = edge.source_slot
        shown = _fit(text, GRADIENT_ROOM if self.with_status else 0.0)
        if edge.label_left:  # the leftmost edge of a fan: its label ends left of it
            return shown, x - LABEL_PAD - text_size(shown, EDGE_FONT)[0], y
        x += LABEL_PAD
        index = self._index_text(edge)
        if index is not None and edge.source_slot == edge.target_slot:
            x += text_size(index, EDGE_FONT)[0] + LABEL_SPACE  # after the "#1"
        return shown, x, y

    @property
    def box_keys(self) -> list[int]:
        """The drawn boxes' keys, in drawing order (graph node indices, then groups)."""
        return self._box_keys

    @property
    def saved_items(self) -> list[tuple[int, SavedValue, float, float]]:
        """The saved-tensor boxes: (box key, saved value, centre x, centre y)."""
        return self._saved_items

    @property
    def legend(self) -> list[LegendEntry]:
        return self._legend

    def legend_shape(self) -> tuple[float, int]:
        """(height, columns) of the legend."""
        return self._legend_shape()

    def _restyle_edges(self, state: GraphState | None) -> None:
        graph = self.graph
        colors, widths, paths = [], [], []
        self.edge_labels = {}
        self.edge_label_boxes = []
        for edge, text in zip(self.layout.edges, self.edge_texts(state)):
            colors.append(PALETTE["edge_active"] if text is not None else PALETTE["edge"])
            widths.append(1.8 if text is not None else 1.0)
            if text and edge.source_slot is not None:
                first = graph.edges[edge.graph_edges[-1]]
                self.edge_labels[(first.source, first.input_index)] = text
                text, x, y = self.label_text(edge, text)
                paths.append(text_path(text, x, y, EDGE_FONT, "left"))
                self.edge_label_boxes.append(_label_rect(text, x, y))
        self._edge_lines.set_colors(colors)
        self._edge_lines.set_linewidths(widths)
        self._edge_heads.set_facecolors(colors)
        self._edge_text.set_paths(paths)

    def to_png(self, dpi: float | None = None) -> bytes:
        """The current figure as PNG bytes."""
        return figure_to_png(self.figure, dpi)


def _new_figure(extent, figsize, dpi) -> tuple[Figure, Axes]:
    left, right, bottom, top = extent
    width, height = right - left, top - bottom
    natural = (width / 72, height / 72)
    if figsize is None:
        shrink = min(1.0, MAX_SIDE_PX / (max(natural) * dpi))
        figsize = (natural[0] * shrink, natural[1] * shrink)
    figure = NotebookFigure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
    ax.set_aspect("equal", adjustable="box")
    return figure, ax


def _is_size(value: Any) -> bool:
    try:
        width, height = value
        return float(width) > 0 and float(height) > 0
    except (TypeError, ValueError):
        return False


def _box(x: float, y: float, width: float, height: float, rounding: float) -> FancyBboxPatch:
    return FancyBboxPatch(
        (x - width / 2, y - height / 2),
        width,
        height,
        boxstyle=f"round,pad=0,rounding_size={rounding}",
    )


def _highlighted_indices(graph: BackwardGraph, highlight: Any) -> set[int]:
    if highlight is None:
        return set()
    single = isinstance(highlight, str) or is_tensor_like(highlight)
    items = [highlight] if single or not isinstance(highlight, Iterable) else list(highlight)
    found: set[int] = set()
    for item in items:
        if isinstance(item, str):
            matches = graph.find(item)
            if not matches:
                raise ValueError(f"highlight: no node or tensor named {item!r} in this graph")
            found.update(n.index for n in matches)
            continue
        candidates = [item]
        if is_tensor_like(item):
            candidates = [item.grad_fn]
            candidates += [
                n.obj for n in graph.nodes if n.kind == ACCUMULATE and n.variable is item
            ]
            candidates += [n.obj for n in graph.nodes if n.kind == ROOT and n.obj is item]
        nodes = [graph.node_of(c) for c in candidates if c is not None]
        nodes = [n for n in nodes if n is not None]
        if not nodes:
            raise ValueError(f"highlight: this {type(item).__name__} is not part of the graph")
        found.update(n.index for n in nodes)
    return found


ARROW_SIZE = 7.0


def _arrow_head(before: tuple[float, float], tip: tuple[float, float], size: float):
    (x0, y0), (x1, y1) = before, tip
    dx, dy = x1 - x0, y1 - y0
    length = (dx * dx + dy * dy) ** 0.5 or 1.0
    ux, uy = dx / length, dy / length
    bx, by = x1 - ux * size, y1 - uy * size
    px, py = -uy * size * 0.45, ux * size * 0.45
    return [(x1, y1), (bx + px, by + py), (bx - px, by - py)]


def _saved_width(value: SavedValue) -> float:
    """A saved-tensor box is as wide as the longer of its two texts (kept, released)."""
    return max(
        text_size(saved_label(value), SAVED_FONT)[0],
        text_size(saved_label(value, released=True), SAVED_FONT)[0],
    ) + 10


def _label_rect(text: str, left: float, y: float) -> Rect:
    width, height = text_size(text, EDGE_FONT)
    return (left, y - height / 2, left + width, y + height / 2)


def _fit(text: str, room: float) -> str:
    """`text` cut short with an ellipsis so it is at most `room` points wide."""
    if room <= 0 or text_size(text, EDGE_FONT)[0] <= room:
        return text
    while len(text) > 1 and text_size(text + "\u2026", EDGE_FONT)[0] > room:
        text = text[:-1]
    return text + "\u2026"


__all__ = [
    "CURRENT",
    "DONE",
    "BoxLook",
    "FAILED",
    "PENDING",
    "GraphDrawing",
    "GraphState",
    "draw_graph",
    "node_label",
    "saved_label",
]

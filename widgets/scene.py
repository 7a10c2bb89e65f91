"""A drawn graph as data a browser draws as SVG: the stepper's scene and its frames.

`GraphDrawing` (draw.py) lays a graph out once and draws it with matplotlib. The
stepper's browser side draws the very same layout as SVG: `scene(drawing)` lists every
box, edge, label and legend entry with its coordinates (in points, y pointing down as
in SVG) and every look a box can take; `frame_view(drawing, state)` says what one step
changes (each box's status, the gradients written on edges, the released saved
tensors). The browser then steps from frame to frame without asking Python.

Text lines come with their baselines computed here, the way `textpaths.text_path`
places them, so the SVG and the matplotlib picture put every word in the same place.
"""

from __future__ import annotations

from typing import Any

from .draw import (
    ARROW_SIZE,
    CURRENT,
    DONE,
    DPI,
    EDGE_FONT,
    FAILED,
    LEGEND_FONT,
    MARGIN,
    NODE_FONT,
    PALETTE,
    PENDING,
    SAVED_FONT,
    SAVED_LOOKS,
    SAVED_ROW,
    GraphDrawing,
    GraphState,
    _arrow_head,
    _saved_width,
    node_label,
    saved_label,
)
from .textpaths import LINE_SPACING

# One character per box in a frame's status string.
STATUS_CODES = {None: "-", PENDING: "p", CURRENT: "c", DONE: "d", FAILED: "f"}
DASHES = {"-": "", "--": "4 3", ":": "1 2"}


def _r(value: float) -> float:
    return round(float(value), 1)


def _point(x: float, y: float) -> list[float]:
    """A layout point (y up) as an SVG point (y down)."""
    return [_r(x), _r(-y)]


def text_lines(text: str, x: float, y: float, size: float) -> list[list[Any]]:
    """[line, x, baseline] of each line of `text` centred vertically on `y` (SVG y)."""
    lines = text.split("\n")
    step = size * LINE_SPACING
    top = y + len(lines) * step / 2
    return [[line, _r(x), _r(-(top - (j + 1) * step + size * 0.3))]
            for j, line in enumerate(lines)]


def scene(drawing: GraphDrawing) -> dict[str, Any]:
    """Everything the browser draws once, as JSON-ready data."""
    graph, layout = drawing.graph, drawing.layout
    looks: list[list[Any]] = []
    look_index: dict[tuple, int] = {}

    def look_id(look) -> int:
        key = (look.face, look.edge, look.width, look.style, look.alpha)
        if key not in look_index:
            look_index[key] = len(looks)
            looks.append([look.face, look.edge, look.width, DASHES[look.style], look.alpha])
        return look_index[key]

    boxes = []
    for key in drawing.box_keys:
        x, y = layout.positions[key]
        width, height = layout.footprints[key][:2]
        node = graph.nodes[key] if key < len(graph.nodes) else None
        label = node_label(node) if node is not None else layout.groups[key].label
        statuses = [None]
        if node is None or node.is_engine_node:
            statuses += [PENDING, CURRENT, DONE, FAILED]
        boxes.append({
            "key": key,
            "name": node.name if node is not None else label,
            "rect": [_r(x - width / 2), _r(-(y + height / 2)), _r(width), _r(height)],
            "lines": text_lines(label, x, y, NODE_FONT),
            "looks": {STATUS_CODES[s]: look_id(drawing.box_look(key, s)) for s in statuses},
        })
    saved = []
    for key, value, x, y in drawing.saved_items:
        width = _saved_width(value)
        box_x, box_y = layout.positions[key]
        right = box_x + layout.footprints[key].width / 2
        saved.append({
            "rect": [_r(x - width / 2), _r(-(y + (SAVED_ROW - 3) / 2)), _r(width),
                     _r(SAVED_ROW - 3)],
            "link": [_point(right, box_y), _point(right + 10, y)],
            "text": text_lines("", x, y, SAVED_FONT)[0][1:],  # centre x, baseline
            "label": saved_label(value),
            "released_label": saved_label(value, released=True),
            "look": "modified" if value.version_mismatch else "ok",
        })
    edges = []
    for edge in layout.edges:
        route = edge.route
        edges.append({
            "points": [_point(x, y) for x, y in route],
            "head": [_point(x, y) for x, y in _arrow_head(route[-2], route[-1], ARROW_SIZE)],
        })
    legend = [[e.label, e.face, e.edge, DASHES.get(e.linestyle, ""), e.linewidth, _r(x),
               _r(-y)] for e, x, y in drawing.legend_placed]
    left, right, bottom, top = drawing.extent
    title = None
    if drawing.title:
        title_height = NODE_FONT * 2.2
        size = NODE_FONT * 1.2
        title = [*text_lines(drawing.title, left + MARGIN, top - title_height / 2, size)[0],
                 size]
    return {
        "view": [_r(left), _r(-top), _r(right - left), _r(top - bottom)],
        "px_per_pt": DPI / 72,
        "fonts": {"node": NODE_FONT, "edge": EDGE_FONT, "saved": SAVED_FONT,
                  "legend": LEGEND_FONT, "line": LINE_SPACING},
        "palette": {k: PALETTE[k] for k in ("text", "edge", "edge_active", "faint")},
        "saved_looks": {name: [face, edge, width, DASHES[style], text]
                        for name, (face, edge, width, style, text) in SAVED_LOOKS.items()},
        "looks": looks,
        "boxes": boxes,
        "saved": saved,
        "edges": edges,
        "index_labels": [[text, _r(x), _r(-y)] for text, x, y in drawing.index_label_items],
        "legend": legend,
        "title": title,
    }


def frame_view(drawing: GraphDrawing, state: GraphState) -> dict[str, Any]:
    """What one frame shows: `status` (a character per box, `STATUS_CODES`), `edges`
    ([edge index, text, x, y] for each edge a gradient flowed along; text and place
    None when the edge has no room for it) and `released` (saved-box indices)."""
    status = "".join(STATUS_CODES[drawing.status_of(key, state)] for key in drawing.box_keys)
    edges = []
    for i, (edge, text) in enumerate(zip(drawing.layout.edges, drawing.edge_texts(state))):
        if text is None:
            continue
        if text and edge.source_slot is not None:
            shown, x, y = drawing.label_text(edge, text)
            edges.append([i, shown, _r(x), _r(-y)])
        else:
            edges.append([i, None, None, None])
    released = [i for i, (key, value, _, _) in enumerate(drawing.saved_items)
                if drawing.is_released(key, value, state)]
    return {"status": status, "edges": edges, "released": released}


__all__ = ["STATUS_CODES", "frame_view", "scene", "text_lines"]

"""Graphs that read well: geometry checks on every graph the course draws and on random
graphs of up to 60 nodes (no two boxes overlap; edge labels touch no edge, box or other
label; text stays inside its box), and text at least as large as the notebook's."""

from __future__ import annotations

import io
import random
import re

import numpy as np
import pytest
from matplotlib.path import Path as MplPath
from PIL import Image

import minigrad as torch
import widgets.exercises  # noqa: F401  (loads the exercise bank, which it imports)
from minigrad import nn
from widgets import BackwardStepper, draw_graph
from widgets._exercise_bank import _l8_functions
from widgets.draw import (
    BODY_TEXT_PX,
    EDGE_FONT,
    GRADIENT_ROOM,
    MIN_FONT,
    NODE_FONT,
    GraphDrawing,
    GraphState,
)
from widgets.figures import figure_to_png, figure_to_svg
from widgets.graph import build_graph
from widgets.textpaths import text_path, text_size

# A gradient written on every edge at once, as at the end of a stepper run; the long one
# is longer than the room kept for it and must be cut to fit.
SHORT, LONG = "[1.2345, -6.789]", "[[0.1234, 0.5678], [-9.8765, 4.3210]]"


# -- the course's graphs (the code of the lessons' cells that draw or step) ---------------


def lesson0_add():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = a + b
    return (c.sum(),), {"a": a, "b": b, "c": c}


def lesson1_mul():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0])
    c = a * b
    return (c.sum(),), {"a": a, "b": b, "c": c}


def lesson1_k():
    h = torch.tensor([1.0, 2.0], requires_grad=True)
    g = torch.tensor([3.0, 4.0], requires_grad=True)
    i = g / h
    j = i + h
    k = (j * i).sum()
    return (k,), {"h": h, "g": g, "i": i, "j": j, "k": k}


def lesson1_broadcast():
    a2 = torch.ones(3, 1, requires_grad=True)
    b2 = torch.ones(4, requires_grad=True)
    return ((a2 + b2).sum(),), {"a": a2, "b": b2}


def lesson2_reassignment():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0], requires_grad=True)
    x = a * b
    first = x
    x = x * c
    return (x.sum(),), {"a": a, "b": b, "c": c, "x": x, "old x": first}


def lesson3_retain_loop():
    x = torch.tensor([1.0, 0.0], dtype=torch.float64)
    t = torch.eye(2, dtype=torch.float64, requires_grad=True)
    a = torch.ones(2, dtype=torch.float64, requires_grad=True)
    y = t @ a
    return (((t @ (x + y) - x) ** 2).mean(),), {"t": t, "a": a, "x": x, "y": y}


def lesson4_exp_then_add():
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.exp()
    y += 1
    return (y.sum(),), {"x": x}


def lesson4_copy_slices():
    t = torch.arange(3.0, requires_grad=True)
    u = 2 * t
    u[0] = 666
    return (u.sum(),), {"t": t, "u": u}


def lesson5_unbind():
    a = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    b, c, d = a.unbind()
    e = b * c * d
    return (e,), {"a": a, "b": b, "c": c, "d": d, "e": e}


def lesson7_training_step():
    w = nn.Parameter(torch.tensor([0.5, -1.0]))
    x = torch.tensor([1.0, 2.0])
    f = w * x
    loss = (f.sum() - torch.tensor(3.0)) ** 2
    return (loss,), {"w": w, "x": x, "f": f, "loss": loss}


MyExp = _l8_functions(torch)  # lesson 8's own Function, as the exercise bank defines it


def lesson8_custom_function():
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    return ((MyExp.apply(x) * 2).sum(),), {"x": x}


def lesson9_diamond():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()
    return ((s * 3 + s.sin()).sum(),), {"x": x, "s": s}


def lesson10_gan():
    disc, gen = nn.Linear(2, 1), nn.Linear(1, 2)
    fake = gen(torch.ones(4, 1))
    score = disc(fake)
    return ((-score).mean(),), {"disc.weight": disc.weight}


def lesson10_recurrent():
    w = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    h = torch.zeros(1, 2)
    for _ in range(2):
        h = (h @ w + torch.ones(1, 2)).tanh()
    return ((h**2).sum(),), {"w": w}


def lesson10_inplace_relu():
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    out = torch.nn.ReLU(inplace=True)(x.sigmoid())
    return (out.sum(),), {"x": x}


def lesson11_cube_gradient():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    return (g,), {"x": x, "g": g}


def lesson11_tanh_gradient():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    w = torch.tensor([0.5, 3.0], requires_grad=True)
    loss = torch.tanh(x * w).sum()
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    return (g,), {"x": x, "w": w, "g": g, "loss": loss}


def lesson11_step_recorded():
    """What `draw_recorded(3)` draws: the two gradients MulBackward0's step sent on."""
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    w = torch.tensor([0.5, 3.0], requires_grad=True)
    loss = torch.tanh(x * w).sum()
    (gx, gw) = torch.autograd.grad(loss, (x, w), create_graph=True)
    return (gx, gw), {"x": x, "w": w}


def lesson11_gradient_penalty():
    W = torch.tensor([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]], requires_grad=True)
    v = torch.tensor([[1.0], [-2.0]], requires_grad=True)
    x_hat = torch.tensor([[0.2, 0.1, 0.3], [1.0, 0.4, -0.2]], requires_grad=True)
    (grad_x,) = torch.autograd.grad((torch.tanh(x_hat @ W) @ v).sum(), x_hat,
                                    create_graph=True)
    return (((grad_x.norm(2, dim=1) - 1) ** 2).mean(),), {"W": W, "v": v, "x_hat": x_hat}


COURSE = [
    lesson0_add, lesson1_mul, lesson1_k, lesson1_broadcast, lesson2_reassignment,
    lesson3_retain_loop, lesson4_exp_then_add, lesson4_copy_slices, lesson5_unbind,
    lesson7_training_step, lesson8_custom_function, lesson9_diamond, lesson10_gan,
    lesson10_recurrent, lesson10_inplace_relu, lesson11_cube_gradient,
    lesson11_tanh_gradient, lesson11_step_recorded, lesson11_gradient_penalty,
]


# -- random graphs ------------------------------------------------------------------------


def random_graph(seed: int, max_nodes: int = 60):
    """A random computation whose backward graph has at most `max_nodes` nodes: unary and
    binary ops, reuse of earlier results, multi-output unbind, tensors needing no grad."""
    rng = random.Random(seed)
    leaves = [torch.tensor([0.5 + i, -1.0, 2.0], requires_grad=rng.random() < 0.8)
              for i in range(rng.randint(1, 4))]
    leaves[0].requires_grad_(True)
    pool = list(leaves)
    result = pool[0] * 1.5
    for _ in range(80):  # until the node budget is reached
        a, b = rng.choice(pool), rng.choice(pool)
        kind = rng.random()
        if kind < 0.3:
            made = [getattr(a, rng.choice(["exp", "sin", "tanh", "sigmoid", "neg"]))()]
        elif kind < 0.8:
            made = [rng.choice([a * b, a + b, a - b, a / (b * b + 1.0)])]
        elif kind < 0.9 and a.dim() > 0:
            made = list((a * 2).unbind())
        elif a.dim() == b.dim() == 1:
            made = [(a @ b) * torch.ones(3)]
        else:
            made = [a.exp()]
        candidate = result + sum(m.sum() for m in made)
        if len(build_graph(candidate).nodes) > max_nodes:
            continue  # too big: try another op
        pool += made
        result = candidate
    return (result,), {f"x{i}": leaf for i, leaf in enumerate(leaves)}


# -- geometry -----------------------------------------------------------------------------


def overlap(a, b, slack=0.0) -> bool:
    """Do rectangles (left, bottom, right, top) share more than a `slack`-wide strip?"""
    return (min(a[2], b[2]) - max(a[0], b[0]) > slack
            and min(a[3], b[3]) - max(a[1], b[1]) > slack)


def segment_hits(rect, p, q, clearance: float) -> bool:
    """Does the segment p-q come within `clearance` of `rect` (Liang-Barsky clipping)?"""
    left, bottom, right, top = (rect[0] - clearance, rect[1] - clearance,
                                rect[2] + clearance, rect[3] + clearance)
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    low, high = 0.0, 1.0
    for step, room in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - bottom), (dy, top - y0)):
        if step == 0:
            if room < 0:
                return False
            continue
        t = room / step
        if step < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return False
    return True


def extents(path):
    """Bounds of a path's points, control points included: they enclose the outline."""
    points = path.vertices
    if path.codes is not None:
        points = points[path.codes != MplPath.CLOSEPOLY]  # a CLOSEPOLY's point is unused
    (left, bottom), (right, top) = points.min(axis=0), points.max(axis=0)
    return (left, bottom, right, top)


def inside(inner, outer) -> bool:
    return (inner[0] >= outer[0] - 1e-6 and inner[1] >= outer[1] - 1e-6
            and inner[2] <= outer[2] + 1e-6 and inner[3] <= outer[3] + 1e-6)


def labelled(roots, names, text=SHORT) -> GraphDrawing:
    """The stepper's drawing with a gradient written on every edge at once."""
    drawing = GraphDrawing(build_graph(*roots, names=names), with_status=True)
    graph = drawing.graph
    edge_text = {(id(graph.nodes[e.source].obj), e.input_index): text for e in graph.edges}
    drawing.update(GraphState(edge_text=edge_text))
    return drawing


def assert_reads_well(drawing: GraphDrawing) -> None:
    boxes = drawing.box_rects()
    solid = boxes["node"] + boxes["saved"]
    for i, a in enumerate(solid):
        for b in solid[i + 1:]:
            assert not overlap(a, b), f"boxes {a} and {b} overlap"
    labels = drawing.edge_label_boxes + drawing.index_label_boxes
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not overlap(a, b), f"labels {a} and {b} overlap"
        for box in solid:
            assert not overlap(a, box), f"label {a} overlaps box {box}"
        for edge in drawing.layout.edges:
            for p, q in zip(edge.route, edge.route[1:]):
                # half the drawn line width (1.8 points when the edge carries a gradient)
                assert not segment_hits(a, p, q, 0.9), f"label {a} lies on edge {p}-{q}"
    heads = [extents(head) for head in drawing._edge_heads.get_paths()]
    for a in labels:
        for head in heads:
            assert not overlap(a, head), f"label {a} lies on an arrowhead"
    # text inside its box: node labels, saved-tensor labels, edge labels
    for path, box in zip(drawing._box_text.get_paths(), boxes["node"]):
        assert inside(extents(path), box)
    for path, box in zip(drawing._saved_text.get_paths(), boxes["saved"]):
        assert inside(extents(path), box)
    for path, box in zip(drawing._edge_text.get_paths(), drawing.edge_label_boxes):
        assert inside(extents(path), box)
    left, right, bottom, top = drawing.extent
    for rect in solid + labels:
        assert inside(rect, (left, bottom, right, top)), f"{rect} outside the figure"


@pytest.mark.parametrize("build", COURSE, ids=lambda build: build.__name__)
def test_course_graphs_read_well(build):
    roots, names = build()
    drawing = labelled(roots, names)
    assert len(drawing.edge_labels) > 0
    assert_reads_well(drawing)
    plain = GraphDrawing(build_graph(*roots, names=names))  # what draw_graph shows
    assert plain.edge_label_boxes == []
    assert_reads_well(plain)


def size_cap(seed: int) -> int:
    """Node budgets from 10 (seed 0) to 60 (seed 23)."""
    return 10 + seed * 50 // 23


@pytest.mark.parametrize("seed", range(24))
def test_random_graphs_read_well(seed):
    roots, names = random_graph(seed, size_cap(seed))
    graph = build_graph(*roots, names=names)
    assert size_cap(seed) - 12 <= len(graph.nodes) <= size_cap(seed) <= 60
    drawing = labelled(roots, names, text=LONG if seed % 2 else SHORT)
    assert len(drawing.edge_labels) == len(drawing.layout.edges)
    assert_reads_well(drawing)


def test_the_checks_see_overlaps():
    """The geometry checks fail on a label written over an edge or over a box."""
    drawing = labelled(*lesson5_unbind())
    assert_reads_well(drawing)
    (x0, y0), (x1, y1) = drawing.layout.edges[0].route[:2]
    on_edge = ((x0 + x1) / 2 - 5, (y0 + y1) / 2 - 5, (x0 + x1) / 2 + 5, (y0 + y1) / 2 + 5)
    assert segment_hits(on_edge, (x0, y0), (x1, y1), 0.9)
    drawing.edge_label_boxes.append(on_edge)
    with pytest.raises(AssertionError, match="lies on edge|overlaps box"):
        assert_reads_well(drawing)
    drawing.edge_label_boxes[-1] = drawing.box_rects()["node"][0]
    with pytest.raises(AssertionError, match="overlaps box"):
        assert_reads_well(drawing)


def test_long_gradients_are_cut_to_their_room():
    drawing = labelled(*lesson5_unbind(), text=LONG)
    shown = [extents(p) for p in drawing._edge_text.get_paths()]
    assert shown and all(right - left < text_size(LONG, EDGE_FONT)[0]
                         for left, _, right, _ in shown)


# -- text size ----------------------------------------------------------------------------


def pixels_per_point(figure, ax) -> float:
    """How many pixels of the figure, shown at its natural size, one point of the
    drawing takes."""
    (x0, _), (x1, _) = ax.transData.transform([(0.0, 0.0), (100.0, 0.0)])
    return (x1 - x0) / 100.0


def test_text_is_at_least_body_text_size():
    assert BODY_TEXT_PX >= 14  # JupyterLab's prose (--jp-content-font-size1)
    assert NODE_FONT >= MIN_FONT
    for roots, names in (lesson1_k(), random_graph(5)):
        fig = draw_graph(*roots, names=names)
        scale = pixels_per_point(fig, fig.axes[0])
        assert MIN_FONT * scale >= BODY_TEXT_PX - 1e-9
        png = Image.open(io.BytesIO(figure_to_png(fig)))
        width, height = fig.get_size_inches() * fig.dpi
        assert abs(png.size[0] - width) <= 1 and abs(png.size[1] - height) <= 1


def test_single_line_labels_render_at_body_text_height():
    """The height of "AccumulateGrad" (ascenders, no descender) in pixels, against the
    same word in body text: 14 px text draws it about 0.76 * 14 = 10.6 px high."""
    fig = draw_graph(*lesson1_mul()[0])
    scale = pixels_per_point(fig, fig.axes[0])
    word = text_path("AccumulateGrad", 0, 0, NODE_FONT)
    word_px = (extents(word)[3] - extents(word)[1]) * scale
    body = text_path("AccumulateGrad", 0, 0, BODY_TEXT_PX)  # a 14-unit font, in pixels
    assert word_px >= extents(body)[3] - extents(body)[1]


def test_stepper_frames_are_shown_at_natural_size():
    roots, names = lesson9_diamond()
    stepper = BackwardStepper(roots[0], names=names)
    drawing = stepper.drawing
    assert MIN_FONT * pixels_per_point(drawing.figure, drawing.ax) >= BODY_TEXT_PX - 1e-9
    png = Image.open(io.BytesIO(stepper.to_png()))
    width, height = drawing.figure.get_size_inches() * drawing.figure.dpi
    assert abs(png.size[0] - width) <= 1 and abs(png.size[1] - height) <= 1
    # The browser draws the same layout as SVG at 96 px per inch (text at body size), not
    # shrunk to the output's width: the picture scrolls in its own box instead.
    assert stepper.scene["px_per_pt"] * MIN_FONT >= BODY_TEXT_PX - 1e-9
    assert "max-height: 62vh; overflow: auto;" in stepper._css
    data, metadata = stepper._repr_mimebundle_()
    assert metadata["image/png"]["unconfined"] is True


def test_big_graphs_grow_instead_of_shrinking():
    small, big = draw_graph(*lesson0_add()[0]), draw_graph(*random_graph(7)[0])
    for fig in (small, big):
        assert pixels_per_point(fig, fig.axes[0]) == pytest.approx(fig.dpi / 72)
    assert big.get_size_inches()[1] > 2 * small.get_size_inches()[1]


def test_notebook_output_is_svg_and_png_unconfined(monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)  # (with it, the SVG alone)
    fig = draw_graph(*lesson5_unbind()[0])
    data, metadata = fig._repr_mimebundle_()
    assert set(data) == {"image/svg+xml", "image/png", "text/plain"}
    assert metadata == {"image/svg+xml": {"unconfined": True},
                        "image/png": {"unconfined": True}}
    svg = data["image/svg+xml"]
    assert svg == figure_to_svg(fig)  # no date, no random ids: stored outputs stay put
    # an SVG's points show as 4/3 pixel: the same size on screen as the PNG
    width_pt = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', svg).group(1))
    png = Image.open(io.BytesIO(figure_to_png(fig)))
    assert abs(width_pt * 96 / 72 - png.size[0]) <= 1
    assert np.asarray(png.convert("L")).min() < 128  # something dark was drawn


def _sideways(edge) -> float:
    return sum(abs(q[0] - p[0]) for p, q in zip(edge.route, edge.route[1:]))


def detour(edge) -> float:
    """How far an edge travels sideways beyond the way from its start to its end: a
    bend out and back (around a box or a label) counts twice its width."""
    return _sideways(edge) - abs(edge.route[-1][0] - edge.route[0][0])


def assert_edges_pass_no_box(drawing: GraphDrawing) -> None:
    """No edge runs through a box, or a saved tensor's box, other than its own two ends."""
    boxes = drawing.box_rects()
    node_of = dict(zip(drawing.box_keys, boxes["node"]))
    for edge in drawing.layout.edges:
        ends = (node_of[edge.source], node_of[edge.target])
        for rect in boxes["node"] + boxes["saved"]:
            if rect in ends:
                continue
            for p, q in zip(edge.route, edge.route[1:]):
                assert not segment_hits(rect, p, q, 0.5), f"edge {p}-{q} crosses box {rect}"


@pytest.mark.parametrize("build", COURSE, ids=lambda b: b.__name__)
def test_edges_take_direct_routes(build):
    """Every graph of the course: no edge crosses a box that is not its end, none bends
    out and back by more than the width of the gradient written beside an edge, and all
    edges together travel sideways less than 0.75 graph widths. (Edges used to enter a
    box only at its centre and to bend around other edges' labels: lesson 1's Mul->Div
    edge went out past Add's labels and back, 1.24 widths in all; lesson 5's unbind edges
    1.46 widths, one bending 303 points out and back.)"""
    drawing = labelled(*build())
    assert_edges_pass_no_box(drawing)
    worst = max(drawing.layout.edges, key=detour)
    assert detour(worst) <= 1.1 * GRADIENT_ROOM, (worst.route, GRADIENT_ROOM)
    travel = sum(_sideways(edge) for edge in drawing.layout.edges)
    assert travel <= 0.75 * drawing.layout.width, (travel, drawing.layout.width)
    assert_reads_well(drawing)


@pytest.mark.parametrize("seed", range(24))
def test_random_graphs_edges_pass_no_box(seed):
    roots, names = random_graph(seed, size_cap(seed))
    assert_edges_pass_no_box(labelled(roots, names, text=LONG if seed % 2 else SHORT))
    assert_edges_pass_no_box(GraphDrawing(build_graph(*roots, names=names)))


def test_the_box_check_sees_an_edge_through_a_box():
    drawing = labelled(*lesson1_k())
    assert_edges_pass_no_box(drawing)
    edge = drawing.layout.edges[0]
    x, y = drawing.layout.positions[drawing.layout.edges[-1].target]
    edge.route = [*edge.route[:-1], (x, y), edge.route[-1]]  # through another box
    with pytest.raises(AssertionError, match="crosses box"):
        assert_edges_pass_no_box(drawing)


def test_fans_write_the_leftmost_gradient_on_the_left():
    """The leftmost edge of a fan writes its gradient on its left, so the edges out of
    one box need no label's width between them (lesson 1's graph had edges fanning out
    a label's width and back)."""
    for build in (lesson1_k, lesson5_unbind, lesson9_diamond):
        drawing = labelled(*build())
        assert any(edge.label_left for edge in drawing.layout.edges)
        assert_reads_well(drawing)

"""Widgets: how long one BackwardStepper frame takes for a ~30-node and a ~60-node graph
(target: under 50 ms a frame, so a click or the play button feels instant), and how long
draw_graph takes on the course's graphs, drawn from minigrad tensors and, side by side,
from the same code on real torch."""

from __future__ import annotations

import statistics
import time

from ._common import Row, best_time, try_import_torch

FRAME_TARGET = "target: under 50 ms a frame"


def _thirty_node_loss(rounds: int = 12):
    """28 nodes (rounds=12); 60 nodes with rounds=28."""
    import minigrad as torch

    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor([1.5, 0.25, -0.5], requires_grad=True)
    y = a * b
    for i in range(rounds):
        y = (y.sin() + a) if i % 2 else (y * b).tanh()
    return y.sum()


def _node_count(root) -> int:
    seen, stack = set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n, _ in node.next_functions)
    return len(seen)


# -- the course's graphs, written once for either library ----------------------------------


def _mul(lib):
    """Lesson 1: c = a * b."""
    a = lib.tensor([2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0], requires_grad=True)
    return (a * b,)


def _retain_loop(lib):
    """Lesson 3: a sub-graph built outside the loop, reused by the loss."""
    x = lib.tensor([1.0, 0.0], dtype=lib.float64)
    t = lib.eye(2, dtype=lib.float64, requires_grad=True)
    a = lib.ones(2, dtype=lib.float64, requires_grad=True)
    y = t @ a
    return (((t @ (x + y) - x) ** 2).mean(),)


def _copy_slices(lib):
    """Lesson 4: an in-place write into a slice (CopySlices)."""
    t = lib.arange(3.0, requires_grad=True)
    u = 2 * t
    u[0] = 666
    return (u,)


def _unbind(lib):
    """Lesson 5: one UnbindBackward0 with three numbered outputs."""
    a = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
    b, c, d = a.unbind()
    return (b * c * d,)


def _two_losses(lib):
    """Two roots sharing a sub-graph."""
    t = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = lib.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
    y = t @ w
    return y.sum(), (y * y).mean()


def _long_chain(lib):
    """500 nodes: drawn with the chain collapsed."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(250):
        y = (y * 1.001).sin()
    return (y.sum(),)


COURSE_GRAPHS = [
    ("c = a * b", _mul),
    ("retain_graph loop graph", _retain_loop),
    ("CopySlices", _copy_slices),
    ("unbind, 3 outputs", _unbind),
    ("two losses, shared sub-graph", _two_losses),
    ("500-node chain (collapsed)", _long_chain),
]


def run(quick: bool) -> list[Row]:
    import matplotlib

    matplotlib.use("Agg")
    import minigrad
    from widgets import BackwardStepper, draw_graph, figure_to_png

    rows = []
    losses = [
        ("lesson 3's ", _retain_loop(minigrad)[0]),  # a graph a lesson steps through
        ("", _thirty_node_loss(12)),
        ("", _thirty_node_loss(28)),
    ]
    for which, loss in losses:
        nodes = _node_count(loss)
        stepper = BackwardStepper(loss)
        steps = stepper.slider.max
        frames = []
        for _ in range(steps):
            start = time.perf_counter()
            stepper.next()  # runs one engine node and renders its frame
            frames.append(time.perf_counter() - start)
        figure = stepper.drawing.figure
        size = "x".join(str(round(v)) for v in figure.get_size_inches() * figure.dpi)
        rows.append(Row(
            "widgets", f"BackwardStepper frame (next: engine node + drawing), {which}"
            f"{nodes}-node graph, {size} px", "ms",
            {"minigrad": statistics.median(frames) * 1e3}, note=FRAME_TARGET,
        ))

        def redraw(stepper=stepper, steps=steps):  # every frame drawn and encoded anew
            for index in range(steps + 1):
                stepper.drawing.update(stepper.recording.graph_state(index))
                stepper.drawing.to_png()

        def replay(stepper=stepper, steps=steps):  # previous / slider: pictures kept
            for index in range(steps + 1):
                stepper.show(index)

        repeat = 1 if quick else 3
        for case, fn in (("drawn anew (restyle + PNG)", redraw),
                         ("shown again (previous/slider)", replay)):
            rows.append(Row(
                "widgets", f"BackwardStepper frame {case}, {which}{nodes} nodes", "ms",
                {"minigrad": best_time(fn, repeat) / (steps + 1) * 1e3}, note=FRAME_TARGET,
            ))

    torch = try_import_torch()
    repeat = 2 if quick else 5
    for name, build in COURSE_GRAPHS:
        times = {}
        for label, lib in (("minigrad", minigrad), ("torch", torch)):
            if lib is None:
                continue
            roots = build(lib)
            drawn = best_time(lambda roots=roots: figure_to_png(draw_graph(*roots)), repeat)
            times[label] = drawn * 1e3
        first = name == COURSE_GRAPHS[0][0]
        note = "torch column: the same picture drawn from torch tensors" if first else ""
        rows.append(Row("widgets", f"draw_graph to PNG: {name}", "ms", times, note=note))
    return rows

"""Widgets: how long one BackwardStepper frame takes for a 30-node graph (it must feel
instant: well under 100 ms), and how long draw_graph takes on the course's graphs."""

from __future__ import annotations

import time

from ._common import Row


def _thirty_node_loss():
    import minigrad as torch

    a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor([1.5, 0.25, -0.5], requires_grad=True)
    y = a * b
    for i in range(12):
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


def run(quick: bool) -> list[Row]:
    import matplotlib

    matplotlib.use("Agg")
    import minigrad as torch
    from widgets import BackwardStepper, draw_graph, figure_to_png

    loss = _thirty_node_loss()
    nodes = _node_count(loss)
    stepper = BackwardStepper(loss)
    steps = stepper.slider.max
    start = time.perf_counter()
    for _ in range(steps):
        stepper.next()
    per_frame = (time.perf_counter() - start) / steps * 1e3
    rows = [Row("widgets", f"BackwardStepper frame, {nodes}-node graph", "ms",
                {"minigrad": per_frame}, note="target: well under 100 ms")]

    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0])
    c = a * b
    repeat = 3 if quick else 10
    start = time.perf_counter()
    for _ in range(repeat):
        figure_to_png(draw_graph(c))
    rows.append(Row("widgets", "draw_graph of c = a * b, to PNG", "ms",
                    {"minigrad": (time.perf_counter() - start) / repeat * 1e3}))
    return rows

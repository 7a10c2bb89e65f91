"""Widgets: how long a BackwardStepper takes to be made (the whole backward recorded, every
frame described) and how long one of its steps takes to be drawn in a real browser
(headless Chromium, from an offline page) for lesson 3's graph and graphs of 28 and 60
nodes (target: under 16 ms a step for the course's graphs, under 50 ms for 60 nodes),
and how long draw_graph takes on the course's graphs, drawn from minigrad tensors and,
side by side, from the same code on real torch."""

from __future__ import annotations

import statistics

from ._common import Row, best_time, try_import_torch

STEP_TARGET = "target: under 16 ms for the course's graphs, under 50 ms for 60 nodes"
CHROMIUM = "/usr/bin/chromium"
# Each step as a click does it, then a forced style and layout of the page: what the
# browser must do before it can paint the step.
STEP_TIMES = """async () => {
    const root = document.querySelector(".minigrad-stepper");
    const next = root.querySelector("button.stepper-next");
    const times = [];
    while (!next.disabled) {
        const began = performance.now();
        next.click();
        void document.body.offsetHeight;
        times.push(performance.now() - began);
        await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    }
    return times;
}"""


def browser_step_times(stepper) -> list[float] | None:
    """Milliseconds per step of `stepper` drawn in headless Chromium from an offline page
    (`widgets.embed.widget_html`), clicking "next" to the end; None without a browser."""
    import os
    import tempfile

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not os.path.exists(CHROMIUM):
        return None
    from widgets.embed import widget_html

    with tempfile.TemporaryDirectory() as folder:
        page_file = os.path.join(folder, "stepper.html")
        with open(page_file, "w", encoding="utf-8") as out:
            out.write("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                      + widget_html(stepper) + "</body></html>")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM,
                                         args=["--headless=new", "--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto("file://" + page_file)
                page.wait_for_selector("svg.stepper-graph")
                return page.evaluate(STEP_TIMES)
            finally:
                browser.close()


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
        ("lesson 3's ", lambda: _retain_loop(minigrad)[0]),  # a graph a lesson steps through
        ("", lambda: _thirty_node_loss(12)),
        ("", lambda: _thirty_node_loss(28)),
    ]
    repeat = 1 if quick else 3
    for which, make in losses:
        nodes = _node_count(make())
        stepper = BackwardStepper(make())

        def record(make=make):  # backward recorded, laid out, every frame described
            BackwardStepper(make())._repr_mimebundle_()  # with the output's PNG

        rows.append(Row(
            "widgets", f"BackwardStepper made and shown (backward recorded, every frame "
            f"described, one PNG), {which}{nodes}-node graph", "ms",
            {"minigrad": best_time(record, repeat) * 1e3},
        ))
        steps = browser_step_times(stepper)
        if steps is None:
            rows.append(Row("widgets", f"a step drawn in Chromium, {which}{nodes} nodes", "ms",
                            {}, note="skipped: needs playwright and /usr/bin/chromium"))
            continue
        rows.append(Row(
            "widgets", f"a step drawn in Chromium (SVG restyled, panel, style and layout), "
            f"{which}{nodes} nodes, median of {len(steps)} (max {max(steps):.1f})", "ms",
            {"minigrad": statistics.median(steps)}, note=STEP_TARGET,
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

"""How `widgets.figures` turns a figure into notebook output, and what that costs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine

from widgets.figures import NotebookFigure, figure_to_svg

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _plot() -> NotebookFigure:
    """A lesson-style plot: two axes, a log scale, a legend, laid out by tight_layout."""
    fig = NotebookFigure(figsize=(8, 2.8), dpi=80)
    left, right = fig.subplots(1, 2)
    left.plot(np.linspace(1.0, 0.01, 50))
    left.set_yscale("log")
    right.plot(np.arange(8), np.arange(8) ** 2, label="model")
    right.legend()
    fig.tight_layout()
    return fig


def test_svg_of_a_tight_laid_out_figure_draws_it_once(monkeypatch):
    fig = _plot()
    first = figure_to_svg(fig)
    assert isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine)  # as it was left
    draws = []
    original = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(1),
                                                                original(self, renderer)))
    assert figure_to_svg(fig) == first  # the same bytes, from one draw instead of two
    assert len(draws) == 1
    assert isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine)


def test_a_notebook_servers_kernel_sends_the_svg_alone(monkeypatch):
    fig = _plot()
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)  # nbconvert, nbclient, VS Code
    data, metadata = fig._repr_mimebundle_()
    assert set(data) == {"image/svg+xml", "image/png", "text/plain"}
    assert set(metadata) == {"image/svg+xml", "image/png"}
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/learner/07_training_loops.ipynb")
    calls = []
    monkeypatch.setattr("widgets.figures.figure_to_png", lambda fig: calls.append(fig))
    alone, alone_metadata = fig._repr_mimebundle_()
    assert set(alone) == {"image/svg+xml", "text/plain"} and not calls  # no PNG drawn
    assert alone["image/svg+xml"] == data["image/svg+xml"]
    assert alone_metadata == {"image/svg+xml": {"unconfined": True}}


def test_stored_lesson_figures_carry_a_png_beside_the_svg():
    # JupyterLab shows the SVGs of a notebook it did not sign (a lesson as cloned) as a
    # warning, and picks the PNG: a lesson re-run and saved from JupyterLab, where the
    # kernel sends the SVG alone, must be re-run with nbconvert instead.
    for lesson in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(lesson.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                if "image/svg+xml" in output.get("data", {}):
                    assert "image/png" in output["data"], lesson.name


# A kernel's view: `%matplotlib inline` registers its own PNG printer for every Figure,
# a display handle updates its figure in place, and a figure ending a cell is shown once.
_LIVE_PLOT = [
    "%matplotlib inline\n"
    "from IPython.display import display\n"
    "from widgets.figures import NotebookFigure\n"
    "def plot(n):\n"
    "    fig = NotebookFigure(figsize=(3, 2), dpi=80)\n"
    "    fig.subplots().plot(range(n))\n"
    "    return fig",
    "handle = display(plot(2), display_id=True)\n"
    "for n in (3, 4):\n"
    "    handle.update(plot(n))",
    "plot(4)",
]


def _plot_of(n: int) -> NotebookFigure:
    fig = NotebookFigure(figsize=(3, 2), dpi=80)
    fig.subplots().plot(range(n))
    return fig


def test_a_display_handle_updates_its_figure_in_place(monkeypatch):
    import base64

    import nbformat
    from nbclient import NotebookClient

    from widgets.figures import figure_to_png

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in _LIVE_PLOT]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    (live,) = nb.cells[1].outputs  # one figure, the last update's, not three stacked
    (last,) = nb.cells[2].outputs
    assert live.output_type == "display_data" and last.output_type == "execute_result"
    assert live.data == last.data
    assert live.data["image/svg+xml"] == figure_to_svg(_plot_of(4))
    # the figure's own PNG, not the one `%matplotlib inline` would have put in its place
    assert base64.b64decode(live.data["image/png"]) == figure_to_png(_plot_of(4))
    assert live.metadata == {"image/svg+xml": {"unconfined": True},
                             "image/png": {"unconfined": True}}


def test_a_stored_lesson_cell_holds_one_figure_at_most():
    # A plot a loop redraws goes through a display handle and replaces its output; a
    # cell whose updates stacked up (lesson 7's training plot once stored 13) fails here.
    for lesson in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells):
            figures = [o for o in cell.get("outputs", []) if "image/svg+xml" in o.get("data", {})]
            assert len(figures) <= 1, f"{lesson.name}, cell {number}: {len(figures)} figures"

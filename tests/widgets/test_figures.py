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

"""How `widgets.figures` turns a figure into notebook output, and what that costs."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine

from widgets.figures import NotebookFigure, figure_to_svg


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

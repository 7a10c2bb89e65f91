"""Text as vector paths in data coordinates.

Agg spends milliseconds laying out every `Text` artist on every draw; a graph has
dozens of labels and the stepper redraws it on each click. Glyph outlines computed once
(and cached per string) and drawn as one `PathCollection` cost a fraction of that, and
they scale with the drawing when it is drawn into a smaller axes (a `figsize`, an `ax`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath, TextToPath

LINE_SPACING = 1.25
_FONT = FontProperties(family="DejaVu Sans")
_TO_PATH = TextToPath()
_EMPTY = Path(np.zeros((1, 2)), [Path.MOVETO])


@lru_cache(maxsize=8192)
def line_width(line: str, size: float) -> float:
    """Advance width of one line of text, in points at font size `size`."""
    if not line:
        return 0.0
    prop = _FONT.copy()
    prop.set_size(size)
    return _TO_PATH.get_text_width_height_descent(line, prop, ismath=False)[0]


def text_size(text: str, size: float) -> tuple[float, float]:
    """Width and height of a (possibly multi-line) text block, in points."""
    lines = text.split("\n")
    return max(line_width(line, size) for line in lines), len(lines) * size * LINE_SPACING


@lru_cache(maxsize=8192)
def _line_path(line: str, size: float) -> Path | None:
    if not line.strip():
        return None
    return TextPath((0, 0), line, size=size, prop=_FONT)


def text_path(text: str, x: float, y: float, size: float, ha: str = "center") -> Path:
    """The outline of `text` centred vertically on `y`; `ha` is "center" or "left"."""
    lines = text.split("\n")
    step = size * LINE_SPACING
    top = y + len(lines) * step / 2
    parts = []
    for j, line in enumerate(lines):
        path = _line_path(line, size)
        if path is None:
            continue
        left = x - line_width(line, size) / 2 if ha == "center" else x
        baseline = top - (j + 1) * step + size * 0.3
        parts.append(Path(path.vertices + (left, baseline), path.codes))
    if not parts:
        return _EMPTY
    return parts[0] if len(parts) == 1 else Path.make_compound_path(*parts)

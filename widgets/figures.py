"""How a matplotlib figure leaves Python: as PNG bytes (encoded for speed: a stepper
encodes a frame on every click), as SVG text (the same from run to run), and, for a
`NotebookFigure`, as what the notebook's front end will show, at its natural size."""

from __future__ import annotations

import base64
import io
import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine


class NotebookFigure(Figure):
    """A matplotlib `Figure` that shows itself in a notebook at its natural size, as SVG
    (crisp at any zoom) with a PNG for front ends that show no SVG (JupyterLab shows an
    untrusted notebook's SVGs as a warning and picks the PNG then).

    Both are marked ``unconfined``: JupyterLab then shows them unshrunk and the output
    scrolls when the drawing is wider than the notebook. The PNG is left out where
    nothing would show it (see `svg_is_enough`).
    """

    def _repr_png_(self) -> bytes:
        return figure_to_png(self)

    def _repr_svg_(self) -> str:
        return figure_to_svg(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None):
        _leave_figures_to_their_bundle()
        data = {"image/svg+xml": figure_to_svg(self)}
        if not svg_is_enough():
            data["image/png"] = base64.b64encode(figure_to_png(self)).decode("ascii")
        data["text/plain"] = repr(self)
        metadata = {kind: {"unconfined": True} for kind in data if kind.startswith("image/")}
        return data, metadata


def _leave_figures_to_their_bundle() -> None:
    """Make IPython show a `NotebookFigure` by its `_repr_mimebundle_` alone.

    `%matplotlib inline` registers a PNG printer for every `Figure`, and in IPython a
    printer registered for a format outranks the object's own bundle: it would replace
    the PNG (or add one where the SVG is enough). A printer that returns nothing,
    registered for `NotebookFigure` itself, is found first and leaves the bundle as it
    is. (An `_ipython_display_` method would do the same, but IPython then lets the
    object publish itself, and `display(fig, display_id=True)` loses its id: every
    `handle.update(fig)` would add a figure instead of replacing the one shown.)"""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    for kind, formatter in shell.display_formatter.formatters.items():
        # (the text/plain formatter's printers take other arguments; nothing registers
        # a Figure there, and the bundle's text is used)
        if kind != "text/plain" and NotebookFigure not in formatter.type_printers:
            formatter.for_type(NotebookFigure, _nothing)


def _nothing(fig: Figure) -> None:
    """A printer that leaves a figure's format to its `_repr_mimebundle_`."""
    return None


def svg_is_enough() -> bool:
    """Whether this kernel's figures need no PNG beside their SVG: true in a kernel a
    Jupyter server started for a notebook (JupyterLab, Notebook 7, a hub; the server
    names the notebook in ``JPY_SESSION_NAME``). Outputs made live are trusted there, so
    the SVG shows, and a notebook saved there is signed and shows its SVGs when opened
    again. Elsewhere (nbconvert and nbclient, which store the lessons' outputs; VS Code;
    Colab) the PNG goes along: an unsigned notebook's SVGs are not shown in JupyterLab.
    (The PNG costs a second drawing of the figure, paid again on every redraw of a plot
    that a training loop updates.)"""
    return bool(os.environ.get("JPY_SESSION_NAME"))


def figure_to_png(fig: Figure, dpi: float | None = None) -> bytes:
    """Render `fig` with the Agg canvas and return PNG bytes."""
    if not isinstance(fig, Figure):
        raise TypeError(f"figure_to_png expects a matplotlib Figure, not {type(fig).__name__}")
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    if dpi is None or dpi == fig.dpi:
        fig.canvas.draw()
        return _png(fig.canvas.buffer_rgba())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()


def _png(pixels: Any) -> bytes:
    """Encode an RGBA pixel buffer as PNG, built for speed: the stepper encodes a frame
    on every click, and `savefig`'s encoder (adaptive row filters) took most of a frame's
    time. No row filter and zlib's fastest level (flat-coloured drawings still compress
    about 25:1), the rows compressed in parallel slices."""
    height, width = pixels.shape[:2]
    rows = np.empty((height, width * 4 + 1), np.uint8)
    rows[:, 0] = 0  # each row starts with its filter type: 0, none
    rows[:, 1:] = np.asarray(pixels).reshape(height, width * 4)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", _deflate(rows.reshape(-1))) + chunk(b"IEND", b""))


_COMPRESSORS: ThreadPoolExecutor | None = None


def _deflate(data: np.ndarray) -> bytes:
    """zlib-compress `data` (one zlib stream) in slices on several threads (zlib lets go
    of the GIL), as pigz does: every slice but the last ends with a full flush, which
    byte-aligns it and forgets the history, so the slices can be joined as they are."""
    global _COMPRESSORS
    slices = max(1, min(os.cpu_count() or 1, 4, data.size >> 20))  # a slice per MB or more
    if slices == 1:
        return zlib.compress(data, 1)
    if _COMPRESSORS is None:
        _COMPRESSORS = ThreadPoolExecutor(4, thread_name_prefix="minigrad-png")
    bounds = [data.size * k // slices for k in range(slices + 1)]

    def deflate(k: int) -> bytes:
        compressor = zlib.compressobj(1, zlib.DEFLATED, -15)  # raw deflate, no header
        flush = zlib.Z_FINISH if k == slices - 1 else zlib.Z_FULL_FLUSH
        return compressor.compress(data[bounds[k] : bounds[k + 1]]) + compressor.flush(flush)

    body = b"".join(_COMPRESSORS.map(deflate, range(slices)))
    return b"\x78\x01" + body + struct.pack(">I", zlib.adler32(data))


def figure_to_svg(fig: Figure) -> str:
    """`fig` as SVG text, the same from run to run (no date, fixed element ids)."""
    if not isinstance(fig, Figure):
        raise TypeError(f"figure_to_svg expects a matplotlib Figure, not {type(fig).__name__}")
    buffer = io.StringIO()
    # `fig.tight_layout()` leaves a placeholder layout engine behind, which does nothing
    # but makes `savefig` draw the whole figure once more first (to lay it out): set it
    # aside while saving, which halves the work and changes no byte.
    engine = fig.get_layout_engine()
    idle = isinstance(engine, PlaceHolderLayoutEngine)
    with matplotlib.rc_context({"svg.hashsalt": "minigrad", "figure.autolayout": False,
                                "figure.constrained_layout.use": False}):
        if idle:
            fig.set_layout_engine(None)
        try:
            fig.savefig(buffer, format="svg", metadata={"Date": None})
        finally:
            if idle:
                fig.set_layout_engine(engine)
    return buffer.getvalue()

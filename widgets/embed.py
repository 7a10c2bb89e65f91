"""Notebooks as HTML pages whose steppers work with no kernel and no network.

An executed notebook keeps its widgets' state (the `widgets` metadata nbconvert and
JupyterLab write). nbconvert's HTML export then loads a widget renderer from a CDN;
`export_html` points it instead at this package's own loader (web/embed.js, inlined as a
data: URL), which draws every anywidget widget of the page, the stepper among them,
from the saved state. Nothing is fetched: the page works offline, from a file.

    python -m widgets.embed lesson.ipynb lesson.html
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path

WEB = Path(__file__).resolve().parent / "web"


def loader_script() -> str:
    """The JavaScript that draws anywidget widgets from a page's saved widget state."""
    return (WEB / "embed.js").read_text(encoding="utf-8")


def loader_url() -> str:
    """`loader_script()` as a data: URL (a page's script `src`, no file beside it)."""
    encoded = base64.b64encode(loader_script().encode("utf-8")).decode("ascii")
    return f"data:text/javascript;base64,{encoded}"


def export_html(notebook: str | Path, output: str | Path) -> Path:
    """Write `notebook` (executed, with its widget state saved) as an HTML page whose
    anywidget widgets render offline."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", widget_renderer_url=loader_url())
    body, _ = exporter.from_notebook_node(nbformat.read(str(notebook), as_version=4))
    output = Path(output)
    output.write_text(body, encoding="utf-8")
    return output


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m widgets.embed NOTEBOOK.ipynb OUTPUT.html", file=sys.stderr)
        return 2
    print(export_html(args[0], args[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["export_html", "loader_script", "loader_url"]

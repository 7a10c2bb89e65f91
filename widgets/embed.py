"""Notebooks and widgets as HTML whose steppers work with no kernel and no network.

An executed notebook keeps its widgets' state (the `widgets` metadata nbconvert and
JupyterLab write). nbconvert's HTML export then loads a widget renderer from a CDN;
`export_html` points it instead at this package's own loader (web/embed.js, inlined as a
data: URL), which draws every anywidget widget of the page, the stepper among them,
from the saved state. Nothing is fetched: the page works offline, from a file.

    python -m widgets.embed lesson.ipynb lesson.html

`widget_html(widget)` is the same for one widget: an HTML fragment holding the widget's
state and the loader, which draws it wherever the fragment is put (the course site's
lesson pages, a page of its own).
"""

from __future__ import annotations

import base64
import json
import sys
import uuid
from pathlib import Path
from typing import Any

WEB = Path(__file__).resolve().parent / "web"


def loader_script() -> str:
    """The JavaScript that draws anywidget widgets from a page's saved widget state."""
    return (WEB / "embed.js").read_text(encoding="utf-8")


def loader_url() -> str:
    """`loader_script()` as a data: URL (a page's script `src`, no file beside it)."""
    encoded = base64.b64encode(loader_script().encode("utf-8")).decode("ascii")
    return f"data:text/javascript;base64,{encoded}"


STATE_TYPE = "application/vnd.jupyter.widget-state+json"
VIEW_TYPE = "application/vnd.jupyter.widget-view+json"


def widget_state(widget: Any) -> dict[str, Any]:
    """A widget's synced state as a page stores it (JSON-ready, no binary buffers)."""
    state = widget.get_state()
    return {key: value for key, value in state.items()
            if key not in ("layout", "_dom_classes", "tabbable", "tooltip", "_view_count")}


def _script(kind: str, data: Any) -> str:
    # "</" inside a <script> would end it early; JSON allows the escaped slash.
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="{kind}">{text}</script>'


def state_html(state: dict[str, Any], model_id: str | None = None) -> str:
    """An HTML fragment that draws the anywidget widget whose synced state is `state`
    (as `widget_state` returns it), with no kernel and no network: the state, a view of
    it, and the loader (which draws every such view of the page once)."""
    model_id = model_id or uuid.uuid4().hex
    saved = {"version_major": 2, "version_minor": 0, "state": {model_id: {
        "model_name": "AnyModel", "model_module": "anywidget",
        "model_module_version": str(state.get("_model_module_version", "")),
        "state": state,
    }}}
    view = {"version_major": 2, "version_minor": 0, "model_id": model_id}
    return (_script(STATE_TYPE, saved) + _script(VIEW_TYPE, view)
            + f"<script>{loader_script()}</script>")


def widget_html(widget: Any) -> str:
    """`state_html` of a live anywidget widget (e.g. a `BackwardStepper`)."""
    return state_html(widget_state(widget), widget.model_id)


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

__all__ = ["export_html", "loader_script", "loader_url", "state_html", "widget_html",
           "widget_state"]

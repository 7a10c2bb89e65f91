"""The steppers of a notebook, kept for a static page: the course site's players.

On a static web page there is no kernel, but the `BackwardStepper` needs none to step:
its whole backward pass is recorded when it is made, and the browser draws and steps
through it by itself (web/stepper.js). A page therefore shows the very same widget from
its saved state (`widgets.embed.state_html`): the graph as SVG, the slider, the buttons
and the step panel, with no kernel and no network.

`capture_steppers()` is what the course site uses: inside a kernel, it notes every
stepper the notebook displays (and the step it shows then), and `export_captured(folder)`
writes each one as an HTML fragment (`stepper_html`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .embed import state_html, widget_state

__all__ = [
    "capture_steppers",
    "captured_steppers",
    "export_captured",
    "stepper_html",
]

# Marker the capturing formatter puts in a displayed stepper's HTML output, so a build can
# find which output of the notebook shows which captured stepper.
CAPTURE_MARKER = "minigrad-stepper-capture:{n}"
# The class of the element around each exported stepper (a page counts its players by it).
PLAYER_CLASS = "minigrad-player"


def stepper_html(stepper: Any, start: int | None = None) -> str:
    """`stepper` (a `BackwardStepper`) as a self-contained HTML fragment showing step
    `start` first (default: the step it shows now): its synced state, a view of it and
    the loader that draws it, with no kernel and no network. The stepper is left as it is.
    """
    state = widget_state(stepper)
    steps = len(state["frames"])
    shown = stepper.index if start is None else int(start)
    if not 0 <= shown < steps:
        raise ValueError(f"start={shown} is not a step of this stepper (0..{steps - 1})")
    state["index"] = shown
    return (f'<div class="{PLAYER_CLASS}" data-steps="{steps}">'
            f"{state_html(state, stepper.model_id)}</div>")


# --------------------------------------------------------------------------- capture


_CAPTURED: list[tuple[Any, int]] = []


def capture_steppers() -> None:
    """In an IPython kernel: note every `BackwardStepper` the notebook displays.

    A display formatter records the stepper and the step it shows at that moment, and
    adds a marker (an HTML comment) to the output, so a build can tell which output shows
    which stepper. The state is read later (`export_captured`), after the notebook's own
    cells have run, as the notebook's reader would find it.
    """
    from IPython import get_ipython

    from .stepper import BackwardStepper

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("capture_steppers() works inside IPython (a notebook kernel)")
    html_formatter = shell.display_formatter.formatters["text/html"]
    html_formatter.enabled = True  # a kernel has it on; a plain IPython shell does not

    def note(stepper: BackwardStepper) -> str:
        for n, (seen, _) in enumerate(_CAPTURED):
            if seen is stepper:
                return f"<!-- {CAPTURE_MARKER.format(n=n)} -->"
        _CAPTURED.append((stepper, stepper.index))
        return f"<!-- {CAPTURE_MARKER.format(n=len(_CAPTURED) - 1)} -->"

    html_formatter.for_type(BackwardStepper, note)


def captured_steppers() -> list[tuple[Any, int]]:
    """The steppers noted so far, with the step each showed when displayed."""
    return list(_CAPTURED)


def export_captured(folder: str | Path) -> list[dict[str, Any]]:
    """Write `<n>.html` (a `stepper_html` fragment) for each captured stepper into
    `folder`, and return what each is: its steps, bytes and the seconds the export took."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = []
    for n, (stepper, shown) in enumerate(_CAPTURED):
        began = time.perf_counter()
        text = stepper_html(stepper, start=shown)
        (folder / f"{n}.html").write_text(text, encoding="utf-8")
        report.append({"n": n, "steps": len(stepper.frames), "bytes": len(text.encode()),
                       "seconds": round(time.perf_counter() - began, 4)})
    (folder / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report

"""A `BackwardStepper` exported as a self-contained frame player: plain HTML and JavaScript.

The live stepper is an ipywidgets app: every click calls back into the Python kernel,
which runs one more engine node and draws a new picture. Where there is no kernel (a
static web page, a notebook opened without one, front ends whose ipywidgets support is
unreliable), nothing of that can run. The player replays instead what the stepper showed:
every frame is rendered once, in advance, through the stepper's public behaviour
(`last()` to run backward to its end, `show(i)` to draw frame i, and the `image`,
`panel` and `leaf_table` widgets that hold the picture and the two text panels), and
written into one block of HTML with a slider, buttons and a few lines of JavaScript.
No kernel, no network, no ipywidgets: images are inline `data:` URLs.

    player = FramePlayer.from_stepper(stepper)   # runs the rest of backward, like "last"
    player                                       # in a notebook: displayed as HTML
    player.save("stepper.html")                  # a page of its own

`capture_steppers()` is what the course site uses: inside a kernel, it notes every
stepper the notebook displays, and `export_captured(folder)` writes their players.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FramePlayer",
    "PlayerFrame",
    "capture_steppers",
    "captured_steppers",
    "export_captured",
]

# Marker the capturing formatter puts in a displayed stepper's HTML output, so a build can
# find which output of the notebook shows which captured stepper.
CAPTURE_MARKER = "minigrad-stepper-capture:{n}"


@dataclass(frozen=True)
class PlayerFrame:
    """One pre-rendered frame: the graph as PNG bytes and the stepper's two HTML panels."""

    png: bytes
    panel_html: str
    grads_html: str


@dataclass
class FramePlayer:
    """Pre-rendered frames of a backward pass, shown with a slider and buttons.

    Parameters
    ----------
    frames: the frames, in order (frame 0 is "before backward").
    start: the frame shown first (where the live stepper was when it was exported).
    interval_ms: the pause between frames when playing.
    render_seconds: how long the stepper took to draw each frame, when known.
    """

    frames: Sequence[PlayerFrame]
    start: int = 0
    interval_ms: int = 900
    render_seconds: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.frames:
            raise ValueError("a FramePlayer needs at least one frame")
        if not 0 <= self.start < len(self.frames):
            raise ValueError(f"start={self.start} is not a frame index (0..{len(self.frames) - 1})")

    @classmethod
    def from_stepper(
        cls, stepper: Any, start: int | None = None, recompress: bool = True
    ) -> FramePlayer:
        """Render every frame of `stepper` (a `BackwardStepper`).

        This runs the engine to the end of backward (or to its error), exactly as pressing
        the stepper's "last" button would: the tensors are then as after `backward()`.
        The stepper is left showing the frame it showed before (or `start`).
        `recompress` re-encodes the PNGs with full compression: the live stepper
        favours drawing speed, a page favours size.
        """
        shown = stepper.index if start is None else int(start)
        count = len(stepper.recording.frames)
        frames, seconds = [], []
        for index in range(count):
            began = time.perf_counter()
            png = stepper.to_png(index)
            seconds.append(time.perf_counter() - began)
            view = stepper.frames[index]
            frames.append(
                PlayerFrame(
                    png=_recompress(png) if recompress else bytes(png),
                    panel_html=view["panel"],
                    grads_html=view["grads"],
                )
            )
        shown = min(max(shown, 0), count - 1)
        stepper.show(shown)
        return cls(frames, start=shown, render_seconds=seconds)

    @property
    def ident(self) -> str:
        """A stable id derived from the content: two players on one page never clash."""
        digest = hashlib.sha1()
        for frame in self.frames:
            digest.update(frame.png)
            digest.update(frame.panel_html.encode())
        return "mgp-" + digest.hexdigest()[:12]

    def to_html(self) -> str:
        """The player as one self-contained HTML fragment (styles, data and script inline)."""
        ident, last = self.ident, len(self.frames) - 1
        first = self.frames[self.start]
        data = {
            "frames": [
                {
                    "png": base64.b64encode(f.png).decode("ascii"),
                    "panel": f.panel_html,
                    "grads": f.grads_html,
                }
                for f in self.frames
            ],
            "start": self.start,
            "interval": self.interval_ms,
        }
        # "</" inside a <script> would end it early; JSON allows the escaped slash.
        payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        buttons = "".join(
            f'<button type="button" class="mgp-{name}" title="{html.escape(tip)}">'
            f"{label}</button>"
            for name, label, tip in _BUTTONS
        )
        return (
            f'<div class="minigrad-player" id="{ident}" data-frames="{last + 1}">'
            f"<style>{_CSS.replace('ROOT', '#' + ident)}</style>"
            f'<div class="mgp-controls">{buttons}'
            f'<input type="range" class="mgp-slider" min="0" max="{last}" step="1" '
            f'value="{self.start}" aria-label="backward step">'
            f'<span class="mgp-counter">step {self.start} of {last}</span></div>'
            '<div class="mgp-body">'
            f'<div class="mgp-picture"><img class="mgp-image" '
            'alt="the backward graph at this step" '
            f'src="data:image/png;base64,{data["frames"][self.start]["png"]}"></div>'
            f'<div class="mgp-side"><div class="mgp-panel">{first.panel_html}</div>'
            f'<div class="mgp-grads">{first.grads_html}</div></div></div>'
            f'<script type="application/json" class="mgp-data">{payload}</script>'
            f"<script>{_SCRIPT.replace('PLAYER_ID', ident)}</script>"
            "</div>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def save(self, path: str | Path, title: str = "Backward stepper") -> Path:
        """Write the player as a complete HTML page of its own."""
        path = Path(path)
        path.write_text(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title></head><body>{self.to_html()}</body></html>\n",
            encoding="utf-8",
        )
        return path


def _recompress(png: bytes) -> bytes:
    """A 256-colour palette PNG of an opaque frame (about a third of the size: the graphs
    are flat colours); frames with transparency are kept as they are."""
    from PIL import Image  # matplotlib's own dependency

    with Image.open(io.BytesIO(png)) as image:
        if image.mode == "RGBA" and image.getchannel("A").getextrema() != (255, 255):
            return bytes(png)
        out = io.BytesIO()
        image.convert("RGB").quantize(256).save(out, format="png", compress_level=9)
    smaller = out.getvalue()
    return smaller if len(smaller) < len(png) else bytes(png)


_BUTTONS = (
    ("first", "|&#x25C0; first", "before backward starts"),
    ("previous", "&#x25C0; previous", "one node back"),
    ("play", "&#x25B6; play", "play / pause"),
    ("next", "next &#x25B6;", "run the next node"),
    ("last", "last &#x25B6;|", "backward to the end"),
)

_CSS = """
ROOT{font-family:system-ui,sans-serif;font-size:13px;margin:.5em 0;}
ROOT .mgp-controls{display:flex;flex-wrap:wrap;align-items:center;gap:4px;margin-bottom:6px}
ROOT button{font:inherit;padding:2px 8px;cursor:pointer}
ROOT button:disabled{cursor:default;opacity:.45}
ROOT .mgp-slider{flex:1 1 160px;min-width:120px}
ROOT .mgp-counter{min-width:7em;text-align:right;color:#495057}
ROOT .mgp-body{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
ROOT .mgp-picture{flex:0 1 auto;min-width:0;max-width:100%;max-height:80vh;overflow:auto}
ROOT .mgp-image{max-width:none;display:block}
ROOT .mgp-side{min-width:260px;max-width:440px}
"""

# Written without modern syntax a notebook front end might not parse; no network, no eval.
_SCRIPT = """
(function () {
  var root = document.getElementById("PLAYER_ID");
  if (!root || root.dataset.ready) { return; }
  root.dataset.ready = "1";
  var data = JSON.parse(root.querySelector(".mgp-data").textContent);
  var frames = data.frames, last = frames.length - 1, index = data.start, timer = null;
  var q = function (s) { return root.querySelector(s); };
  var img = q(".mgp-image"), slider = q(".mgp-slider"), counter = q(".mgp-counter");
  var panel = q(".mgp-panel"), grads = q(".mgp-grads"), play = q(".mgp-play");
  function show(i) {
    index = Math.max(0, Math.min(last, i | 0));
    var began = performance.now(), frame = frames[index];
    img.src = "data:image/png;base64," + frame.png;
    panel.innerHTML = frame.panel;
    grads.innerHTML = frame.grads;
    slider.value = String(index);
    counter.textContent = "step " + index + " of " + last;
    q(".mgp-first").disabled = q(".mgp-previous").disabled = index === 0;
    q(".mgp-next").disabled = q(".mgp-last").disabled = index === last;
    root.dataset.frame = String(index);
    var done = function () {
      root.dataset.frameMs = (performance.now() - began).toFixed(1);
    };
    if (img.decode) { img.decode().then(done, done); } else { done(); }
  }
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    play.innerHTML = "&#x25B6; play";
  }
  q(".mgp-first").onclick = function () { stop(); show(0); };
  q(".mgp-previous").onclick = function () { stop(); show(index - 1); };
  q(".mgp-next").onclick = function () { stop(); show(index + 1); };
  q(".mgp-last").onclick = function () { stop(); show(last); };
  slider.addEventListener("input", function () { stop(); show(Number(slider.value)); });
  play.onclick = function () {
    if (timer !== null) { stop(); return; }
    if (index === last) { show(0); }
    play.innerHTML = "&#x275A;&#x275A; pause";
    timer = setInterval(function () {
      show(index + 1);
      if (index >= last) { stop(); }
    }, data.interval);
  };
  show(index);
})();
"""


# --------------------------------------------------------------------------- capture


_CAPTURED: list[tuple[Any, int]] = []


def capture_steppers() -> None:
    """In an IPython kernel: note every `BackwardStepper` the notebook displays.

    A display formatter records the stepper and the frame it shows at that moment, and
    adds a marker (an HTML comment) to the output, so a build can tell which output shows
    which stepper. Nothing is rendered then: exporting runs backward to the end, which
    must wait until the notebook's own cells have run (`export_captured`).
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
    """The steppers noted so far, with the frame each showed when displayed."""
    return list(_CAPTURED)


def export_captured(folder: str | Path) -> list[dict[str, Any]]:
    """Write `<n>.html` (a player fragment) for each captured stepper into `folder`, and
    return what each took: frames and the stepper's render time per frame."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = []
    for n, (stepper, shown) in enumerate(_CAPTURED):
        player = FramePlayer.from_stepper(stepper, start=shown)
        (folder / f"{n}.html").write_text(player.to_html(), encoding="utf-8")
        report.append({"n": n, "frames": len(player.frames), "render_s": player.render_seconds})
    (folder / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report

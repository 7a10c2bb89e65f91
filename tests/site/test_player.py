"""widgets.player: a BackwardStepper exported as a self-contained HTML frame player."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import minigrad as torch
from widgets import BackwardStepper
from widgets import player as player_module
from widgets.player import FramePlayer, PlayerFrame


def _graph():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    return a, b, (a * b).exp().sum()


class _Parts(HTMLParser):
    """The player's elements, and the text of its JSON data block."""

    def __init__(self):
        super().__init__()
        self.tags, self.data, self._in_data = [], None, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._in_data = tag == "script" and attrs.get("type") == "application/json"

    def handle_endtag(self, tag):
        self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.data = (self.data or "") + data


def _parts(html_text: str) -> _Parts:
    parts = _Parts()
    parts.feed(html_text)
    return parts


def test_every_frame_of_the_stepper_is_rendered_and_backward_is_complete():
    a, b, loss = _graph()
    stepper = BackwardStepper(loss, names={"a": a, "b": b})
    stepper.next()
    player = FramePlayer.from_stepper(stepper)

    frames = stepper.recording.frames
    assert len(player.frames) == len(frames) == 6  # before, Sum, Exp, Mul, two leaves
    assert player.start == 1 and stepper.index == 1  # the stepper is left where it was
    assert len(player.render_seconds) == len(frames)
    # what each frame says is the stepper's own panel for that frame
    assert "Before backward" in player.frames[0].panel_html
    for k in range(1, len(frames)):
        assert f"Step {k} of 5" in player.frames[k].panel_html
        assert frames[k].node_name in player.frames[k].panel_html
    assert "Backward finished" in player.frames[-1].panel_html
    # every frame is a real picture, and consecutive pictures differ (the highlight moves)
    from PIL import Image

    sizes = {Image.open(io.BytesIO(f.png)).size for f in player.frames}
    assert len(sizes) == 1
    pixels = [np.asarray(Image.open(io.BytesIO(f.png)).convert("RGB")) for f in player.frames]
    assert all(not np.array_equal(p, q) for p, q in zip(pixels, pixels[1:]))
    # exporting ran backward to its end, as the "last" button would
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    (x * y).exp().sum().backward()
    assert np.allclose(a.grad.numpy(), x.grad.numpy())
    assert np.allclose(b.grad.numpy(), y.grad.numpy())
    assert ".grad" in player.frames[-1].grads_html


def test_the_player_shows_the_engines_error_frame():
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.exp()
    y += 1
    stepper = BackwardStepper(y.sum(), names={"x": x})
    player = FramePlayer.from_stepper(stepper)
    assert stepper.recording.error is not None
    assert "RuntimeError" in player.frames[-1].panel_html
    assert "modified by an inplace operation" in player.frames[-1].panel_html


def test_html_is_self_contained_and_carries_every_frame():
    a, b, loss = _graph()
    player = FramePlayer.from_stepper(BackwardStepper(loss, names={"a": a, "b": b}), start=2)
    text = player.to_html()
    parts = _parts(text)
    assert "http://" not in text and "https://" not in text  # nothing fetched from anywhere
    data = json.loads(parts.data)
    assert data["start"] == 2
    assert [f["panel"] for f in data["frames"]] == [f.panel_html for f in player.frames]
    import base64

    assert [base64.b64decode(f["png"]) for f in data["frames"]] == [f.png for f in player.frames]
    tags = [t for t, _ in parts.tags]
    assert tags.count("button") == 5 and tags.count("img") == 1
    slider = next(a for t, a in parts.tags if t == "input")
    assert (slider["type"], slider["min"], slider["max"], slider["value"]) == (
        "range", "0", str(len(player.frames) - 1), "2")
    img = next(a for t, a in parts.tags if t == "img")
    assert img["src"] == "data:image/png;base64," + data["frames"][2]["png"]
    root = parts.tags[0][1]
    assert root["id"] == player.ident and root["class"] == "minigrad-player"
    assert player.ident in text.split("<script>")[-1]  # the script finds its own player


def test_a_closing_script_tag_in_a_panel_cannot_end_the_data_block():
    evil = "<b>x</b></script><script>alert(1)</script>"
    player = FramePlayer([PlayerFrame(b"\x89PNG", evil, "")])
    parts = _parts(player.to_html())
    assert json.loads(parts.data)["frames"][0]["panel"] == evil


def test_bad_start_and_empty_players_are_refused():
    with pytest.raises(ValueError, match="at least one frame"):
        FramePlayer([])
    with pytest.raises(ValueError, match="start=3"):
        FramePlayer([PlayerFrame(b"", "", "")], start=3)


def test_recompression_keeps_the_picture():
    from PIL import Image

    a, b, loss = _graph()
    stepper = BackwardStepper(loss, names={"a": a, "b": b})
    raw = FramePlayer.from_stepper(stepper, recompress=False)
    small = FramePlayer.from_stepper(stepper, recompress=True)
    for r, s in zip(raw.frames, small.frames):
        assert len(s.png) < len(r.png)
        before = np.asarray(Image.open(io.BytesIO(r.png)).convert("RGB")).astype(int)
        after = np.asarray(Image.open(io.BytesIO(s.png)).convert("RGB")).astype(int)
        assert np.abs(before - after).mean() < 2.0  # a palette, not a different picture


def test_capture_marks_displayed_steppers_and_exports_them(tmp_path, monkeypatch):
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    monkeypatch.setattr(player_module, "_CAPTURED", [])
    player_module.capture_steppers()
    a, b, loss = _graph()
    stepper = BackwardStepper(loss, names={"a": a, "b": b})
    stepper.next()
    stepper.next()
    shown, _ = shell.display_formatter.format(stepper)
    assert "application/vnd.jupyter.widget-view+json" in shown  # the live widget stays
    assert re.search(r"minigrad-stepper-capture:0\b", shown["text/html"])
    again, _ = shell.display_formatter.format(stepper)
    assert "capture:0" in again["text/html"]  # the same stepper shown twice: one player
    assert player_module.captured_steppers()[0][1] == 0  # noted at the step shown

    report = player_module.export_captured(tmp_path)
    assert [r["frames"] for r in report] == [6]
    page = (tmp_path / "0.html").read_text()
    assert json.loads(_parts(page).data)["start"] == 2
    assert a.grad is not None

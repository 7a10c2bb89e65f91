"""widgets.player: the steppers a notebook shows, exported as the stepper widget itself
(its saved state and the offline loader) for the course site."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

import minigrad as torch
from widgets import BackwardStepper
from widgets import player as player_module
from widgets.embed import STATE_TYPE, VIEW_TYPE, loader_script, widget_state
from widgets.player import stepper_html


def _graph():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    return a, b, (a * b).exp().sum()


class _Parts(HTMLParser):
    """The fragment's elements, and the text of each script by its type."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self._type = [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "script":
            self._type = attrs.get("type", "")
            self.scripts.append([self._type, ""])

    def handle_endtag(self, tag):
        self._type = None

    def handle_data(self, data):
        if self._type is not None:
            self.scripts[-1][1] += data

    def script(self, kind: str) -> str:
        found = [text for t, text in self.scripts if t == kind]
        assert len(found) == 1, (kind, len(found))
        return found[0]


def _parts(html_text: str) -> _Parts:
    parts = _Parts()
    parts.feed(html_text)
    return parts


def test_the_export_is_the_steppers_own_state_opened_at_the_step_shown():
    a, b, loss = _graph()
    stepper = BackwardStepper(loss, names={"a": a, "b": b})
    stepper.next()
    text = stepper_html(stepper)
    assert stepper.index == 1  # the stepper is left where it was

    parts = _parts(text)
    root = parts.tags[0][1]
    assert parts.tags[0][0] == "div" and root["class"] == "minigrad-player"
    assert root["data-steps"] == "6"  # before, Sum, Exp, Mul, two leaves
    saved = json.loads(parts.script(STATE_TYPE))["state"]
    view = json.loads(parts.script(VIEW_TYPE))
    assert list(saved) == [view["model_id"]] == [stepper.model_id]
    model = saved[stepper.model_id]
    assert (model["model_name"], model["model_module"]) == ("AnyModel", "anywidget")
    state = model["state"]
    assert state == {**widget_state(stepper), "index": 1}
    # every step's caption and panel are there, from "before" to "finished"
    assert [f["caption"] for f in state["frames"]][:2] == [
        "Before backward (step 0 of 5)", "Step 1 of 5: SumBackward0"]
    assert "Backward finished" in state["frames"][-1]["panel"]
    assert state["_esm"] and state["_css"]  # the widget's own code draws it
    assert parts.script("") == loader_script()  # and the loader that runs it
    # nothing fetched: no element loads anything, and no URL but the SVG namespace is named
    assert not [a for _, a in parts.tags if {"src", "href"} & set(a)]
    assert set(re.findall(r"https?://[^\\\"' ]+", text)) == {"http://www.w3.org/2000/svg"}


def test_the_export_can_open_at_another_step_and_refuses_a_missing_one():
    a, b, loss = _graph()
    stepper = BackwardStepper(loss, names={"a": a, "b": b})
    opened = json.loads(_parts(stepper_html(stepper, start=5)).script(STATE_TYPE))
    assert opened["state"][stepper.model_id]["state"]["index"] == 5
    assert stepper.index == 0
    with pytest.raises(ValueError, match=r"start=6 is not a step of this stepper \(0\.\.5\)"):
        stepper_html(stepper, start=6)
    with pytest.raises(ValueError, match="start=-1"):
        stepper_html(stepper, start=-1)


def test_the_export_shows_the_engines_error_step():
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.exp()
    y += 1
    stepper = BackwardStepper(y.sum(), names={"x": x})
    state = json.loads(_parts(stepper_html(stepper)).script(STATE_TYPE))["state"]
    last = state[stepper.model_id]["state"]["frames"][-1]["panel"]
    assert "RuntimeError" in last and "modified by an inplace operation" in last


def test_a_closing_script_tag_in_a_panel_cannot_end_the_state_block():
    a, b, loss = _graph()
    stepper = BackwardStepper(loss, names={"a": a, "b": b})
    evil = "<b>x</b></script><script>alert(1)</script>"
    stepper.frames = [dict(stepper.frames[0], panel=evil), *stepper.frames[1:]]
    parts = _parts(stepper_html(stepper))
    state = json.loads(parts.script(STATE_TYPE))["state"][stepper.model_id]["state"]
    assert state["frames"][0]["panel"] == evil
    assert sum(t == "script" for t, _ in parts.tags) == 3


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
    assert "capture:0" in again["text/html"]  # the same stepper shown twice: one export
    assert player_module.captured_steppers()[0][1] == 2  # noted at the step shown
    stepper.last()  # the notebook's later cells may move it: the page opens where it was

    report = player_module.export_captured(tmp_path)
    assert [(r["n"], r["steps"]) for r in report] == [(0, 6)]
    page = (tmp_path / "0.html").read_text()
    assert report[0]["bytes"] == len(page.encode())
    state = json.loads(_parts(page).script(STATE_TYPE))["state"][stepper.model_id]["state"]
    assert state["index"] == 2
    assert json.loads((tmp_path / "report.json").read_text()) == report

"""What a stepper says about a graph that already ran backward, and what it puts into a
saved notebook: a picture of its frame next to the widget, and a layout that wraps."""

from __future__ import annotations

import base64

from widgets import BackwardStepper


def test_a_rerun_stepper_cell_says_the_graph_was_freed_and_how_to_rebuild(mg):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (a * a).sum()
    BackwardStepper(loss, names={"a": a}).last()  # the cell, first run
    again = BackwardStepper(loss, names={"a": a})  # the same cell, run again
    assert again.index == 0
    assert any("already went through backward" in n and "MulBackward0" in n
               and "re-run the cells that build the loss" in n for n in again.notes)
    assert any("a.grad already holds" in n for n in again.notes)
    assert "already went through backward" in again.panel_html
    again.last()
    assert "second time" in str(again.error)
    assert "Re-run the cells that build the graph" in again.panel_html


def test_a_graph_that_saves_nothing_warns_that_grad_will_accumulate(mg):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (a + 1).sum()  # nothing saved: a second pass runs and doubles a.grad
    BackwardStepper(loss, names={"a": a}).last()
    again = BackwardStepper(loss, names={"a": a})
    assert again.notes == [n for n in again.notes if "a.grad already holds" in n]
    assert len(again.notes) == 1 and "gradients accumulate" in again.notes[0]
    again.last()
    assert a.grad.tolist() == [2.0, 2.0]


def test_a_fresh_graph_has_no_notes(mg):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackwardStepper((a * a).sum(), names={"a": a})
    assert stepper.notes == []
    assert "already" not in stepper.panel_html


def test_the_notebook_output_carries_a_png_of_the_current_frame(mg):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackwardStepper((a * a).sum(), names={"a": a})
    bundle = stepper._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG") and png == stepper.to_png()
    assert data["text/plain"].startswith("BackwardStepper at step 0")
    stepper.next()
    data = stepper._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert base64.b64decode(data["image/png"]) == stepper.to_png() != png


def test_rows_wrap_and_colours_follow_the_jupyterlab_theme(mg):
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackwardStepper((a * a).sum(), names={"a": a})
    css = stepper._css
    # the panel moves under the graph in a narrow output (the browser side sets the class)
    assert ".minigrad-stepper.stepper-narrow .stepper-body { flex-wrap: wrap; }" in css
    assert "stepper-narrow" in stepper._esm
    assert "var(--jp-ui-font-color1" in css and "var(--jp-ui-font-color2" in css
    stepper.last()
    assert 'class="stepper-finished"' in stepper.panel_html
    assert "var(--jp-success-color1" in css

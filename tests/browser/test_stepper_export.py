"""A notebook exported to HTML keeps a working stepper with no kernel and no network.

The demo notebook is executed by nbconvert (which stores the widget state in the
notebook), exported with `widgets.embed.export_html` (nbconvert's HTML, with the
course's own loader in place of the CDN widget renderer), and opened from a file in
Chromium with every request that is not file:, data: or blob: refused. The stepper
must draw its graph and step through it: next, previous, last and the slider.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "stepper_demo.ipynb"
STEPS = 6  # the demo's backward runs 6 nodes
LOCAL = ("file:", "data:", "blob:")

pytestmark = pytest.mark.browser


@pytest.fixture
def exported(tmp_path) -> Path:
    notebook = tmp_path / NOTEBOOK.name
    shutil.copy2(NOTEBOOK, notebook)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--inplace", str(notebook)],
        check=True, cwd=tmp_path, capture_output=True, timeout=300,
    )
    from widgets.embed import export_html

    return export_html(notebook, tmp_path / "stepper_demo.html")


def test_exported_page_steps_offline(exported, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    refused = []

    def only_local(route):
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    page.goto(exported.as_uri())
    stepper = page.locator(".minigrad-stepper")
    caption = stepper.locator(".stepper-caption")
    expect(stepper.locator("svg.stepper-graph")).to_be_visible(timeout=20_000)
    expect(caption).to_have_text(f"Before backward (step 0 of {STEPS})")
    names = []
    for n in range(1, STEPS + 1):
        stepper.locator("button.stepper-next").click()
        expect(caption).to_contain_text(f"Step {n} of {STEPS}: ")
        current = stepper.locator(".mg-node[data-status='current']")
        expect(current).to_have_count(1)
        names.append(current.get_attribute("data-name"))
        assert caption.inner_text().endswith(": " + names[-1])
        # the step's DOM update, timed by the widget itself: well inside one frame
        assert float(stepper.get_attribute("data-frame-ms")) < 16
    assert names[0] == "SumBackward0" and names[-1] == "AccumulateGrad"
    expect(stepper.locator(".stepper-panel")).to_contain_text("Backward finished")
    stepper.locator("button.stepper-previous").click()
    expect(caption).to_contain_text(f"Step {STEPS - 1} of {STEPS}: {names[-2]}")
    stepper.locator("button.stepper-first").click()
    expect(caption).to_contain_text("Before backward")
    stepper.locator("button.stepper-last").click()
    expect(caption).to_contain_text(f"Step {STEPS} of {STEPS}")
    stepper.locator("input.stepper-slider").fill("3")
    expect(caption).to_contain_text(f"Step 3 of {STEPS}: {names[2]}")
    assert stepper.locator(".mg-node[data-status='done']").count() == 2
    assert refused, "the export asks for nothing from the network? (the test would not see it)"
    assert not [e for e in page.console_errors if "widget" in e.lower()], page.console_errors


# -- several steppers on one page ------------------------------------------------------


@pytest.fixture
def page_of_steppers(tmp_path) -> Path:
    """A page of fragments (`stepper_html`, as the course site's lessons are made): two
    different steppers, the first one shown again in the same state, and the first one
    again as saved at another step (same model id, another state)."""
    import minigrad as torch
    from widgets import BackwardStepper
    from widgets.player import stepper_html

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    first = BackwardStepper((a * b).sum(), names={"a": a, "b": b})  # 4 steps
    second = BackwardStepper((a.exp() + b).sum(), names={"a": a, "b": b})  # 5 steps
    parts = [stepper_html(first, start=0), stepper_html(second, start=0),
             stepper_html(first, start=0), stepper_html(first, start=3)]
    page = tmp_path / "steppers.html"
    page.write_text("<!doctype html><html><body>" + "<hr>".join(parts) + "</body></html>",
                    encoding="utf-8")
    return page


def test_steppers_on_one_page_step_alone(page_of_steppers, chromium_page):
    """Two different steppers never move each other. Two views of one widget in one
    state share it, as two views of one widget model do in Jupyter: they move together.
    The same widget saved at another step is another widget: it keeps its own step."""
    from playwright.sync_api import expect

    page = chromium_page
    page.goto(page_of_steppers.as_uri())
    steppers = page.locator(".minigrad-stepper")
    expect(steppers).to_have_count(4, timeout=20_000)
    captions = [steppers.nth(i).locator(".stepper-caption") for i in range(4)]

    def shown() -> list[str]:
        return [c.inner_text().split(":")[0] for c in captions]

    expect(captions[3]).to_contain_text("Step 3 of 4")
    assert shown() == ["Before backward (step 0 of 4)", "Before backward (step 0 of 5)",
                       "Before backward (step 0 of 4)", "Step 3 of 4"]
    steppers.nth(0).locator("button.stepper-next").click()
    steppers.nth(0).locator("button.stepper-next").click()
    expect(captions[2]).to_contain_text("Step 2 of 4")
    assert shown() == ["Step 2 of 4", "Before backward (step 0 of 5)", "Step 2 of 4",
                       "Step 3 of 4"]
    steppers.nth(1).locator("button.stepper-next").click()
    expect(captions[1]).to_contain_text("Step 1 of 5")
    steppers.nth(3).locator("button.stepper-first").click()
    expect(captions[3]).to_contain_text("Before backward")
    assert shown() == ["Step 2 of 4", "Step 1 of 5", "Step 2 of 4",
                       "Before backward (step 0 of 4)"]
    # the highlighted node follows each one's own step
    current = [steppers.nth(i).locator(".mg-node[data-status='current']").count()
               for i in range(4)]
    assert current == [1, 1, 1, 0]
    assert not page.console_errors, page.console_errors

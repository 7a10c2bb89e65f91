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

"""The stepper on a real torch loss renders and steps in JupyterLab, like the minigrad
one: open torch_stepper_demo.ipynb, run all cells, click "next" through PyTorch's
recorded backward (6 nodes) and check that text and picture change at every click and
that the panel names PyTorch's nodes in PyTorch's order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_jupyterlab_widgets import (
    BUTTON,
    IMAGE,
    KERNEL_IDLE,
    RUN_ALL,
    RUN_MENU,
    STEP_TIMEOUT_S,
    TEXT,
    WIDGET_TIMEOUT_MS,
    _assert_no_widget_errors,
    _image_pixels,
    _wait_for_new_pixels,
)

NOTEBOOK = Path(__file__).resolve().parent / "torch_stepper_demo.ipynb"
# PyTorch's order for loss = (exp(a * b) + a).sum(), as its own engine runs it.
NODES = ["SumBackward0", "AddBackward0", "ExpBackward0", "MulBackward0",
         "AccumulateGrad", "AccumulateGrad"]

pytestmark = pytest.mark.browser


@pytest.fixture
def lab_notebook(torch) -> Path:  # the `torch` fixture skips when PyTorch is absent
    return NOTEBOOK


def test_torch_stepper_renders_and_steps(jupyter_lab, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_default_timeout(WIDGET_TIMEOUT_MS)
    page.goto(jupyter_lab.notebook_url)
    # expect() has its own 5 s default; a cold JupyterLab on 2 busy cores needs longer
    slow = {"timeout": WIDGET_TIMEOUT_MS}
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(**slow)
    expect(page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)).to_be_visible(**slow)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{RUN_MENU}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{RUN_ALL}$")).click()

    button, text, image = page.locator(BUTTON), page.locator(TEXT), page.locator(IMAGE)
    expect(button).to_be_visible(**slow)
    expect(text).to_contain_text("Before backward", **slow)
    page.set_default_timeout(STEP_TIMEOUT_S * 1000)
    _assert_no_widget_errors(page)

    pictures = [_image_pixels(page, image)]
    for n, node in enumerate(NODES, start=1):
        button.click()
        expect(text).to_contain_text(f"Step {n} of {len(NODES)}", **slow)
        expect(text).to_contain_text(node)
        pictures.append(_wait_for_new_pixels(page, image, pictures))
    expect(text).to_contain_text("Backward finished")
    expect(button).to_be_disabled()
    _assert_no_widget_errors(page)

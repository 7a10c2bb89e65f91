"""Widgets must render and respond in JupyterLab 4 in a real browser.

What this test does, as a learner would: open NOTEBOOK in JupyterLab, run every cell
from the menu (Run > Run All Cells), wait for the widget, click BUTTON CLICKS times and
check that after every click the text in TEXT and the pixels of IMAGE change (to values
never seen before), and that JupyterLab shows no widget error anywhere. Then previous,
last and the slider, checking the SVG's highlighted node and the caption, and that
Python reads the step the browser shows (`stepper.index`).

To test another notebook or widget, change only these constants. Selectors are CSS
classes the stepper's browser side (widgets/web/stepper.js) puts on its elements.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent / "stepper_demo.ipynb"
BUTTON = ".minigrad-stepper button.stepper-next"  # the stepper's "next" button
TEXT = ".minigrad-stepper .stepper-panel"  # the panel describing the current step
IMAGE = ".minigrad-stepper .stepper-picture"  # the graph (SVG), current node highlighted
CAPTION = ".minigrad-stepper .stepper-caption"  # "Step k of n: NodeName"
CURRENT = ".minigrad-stepper .mg-node[data-status='current']"  # the highlighted node
SLIDER = ".minigrad-stepper input.stepper-slider"
CLICKS = 6  # the demo's backward runs 6 nodes: click through to the end
# the click after which the README's picture is taken (when asked): the first leaf's
# AccumulateGrad, with done nodes, released buffers and a .grad filled in on screen
SCREENSHOT_AT = 5
SCREENSHOT_ENV = "MINIGRAD_STEPPER_SCREENSHOT"
TEXT_AFTER_CLICK = "Step {n} of 6"  # the panel's first words after the n-th click
TEXT_AT_END = "Backward finished"  # shown after the last click (None: no end to check)
# what JupyterLab / ipywidgets show instead of a widget that failed (8.x draws a broken
# icon with "Click to show javascript error."; older versions print the first two)
FORBIDDEN_TEXT = (
    "Error displaying widget",
    "Failed to load model class",
    "Click to show javascript error",
    "Traceback",
)
WIDGET_ERROR = ".jupyter-widgets-error-widget"

RUN_MENU = "Run"  # menubar entry
RUN_ALL = "Run All Cells"  # its item that runs the whole notebook
KERNEL_IDLE = re.compile(r"\|\s*Idle$")  # status bar text once the kernel is up
ERROR_OUTPUT = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
WIDGET_TIMEOUT_MS = 60_000  # kernel start + imports on a cold 2-core machine
STEP_TIMEOUT_S = 20.0

pytestmark = pytest.mark.browser


@pytest.fixture
def lab_notebook() -> Path:
    return NOTEBOOK


def _image_pixels(page, locator) -> bytes:
    """What the learner sees of the image: a PNG screenshot of the element, once loaded."""
    page.wait_for_function(
        "el => el.querySelector('svg') !== null && el.getBoundingClientRect().width > 0",
        arg=locator.element_handle(), timeout=int(STEP_TIMEOUT_S * 1000),
    )
    return locator.screenshot(animations="disabled")


def current_node(page) -> str:
    """The name of the node the SVG highlights as the current one."""
    return page.locator(CURRENT).get_attribute("data-name")


def run_in_new_cell(page, code: str) -> str:
    """Type `code` (which prints "python sees ...") into a new cell at the end of the
    notebook, run it, and return its output."""
    page.locator(".jp-Notebook .jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # a new cell below, in command mode
    page.keyboard.press("Enter")
    page.keyboard.type(code)
    page.keyboard.press("Shift+Enter")
    # (Shift+Enter on the last cell adds another one below it: find the output by text)
    output = page.locator(".jp-Notebook .jp-OutputArea-output", has_text="python sees")
    output.wait_for(timeout=WIDGET_TIMEOUT_MS)
    return output.inner_text()


def _wait_for_new_pixels(page, locator, seen: list[bytes]) -> bytes:
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while True:
        pixels = _image_pixels(page, locator)
        if pixels not in seen:
            return pixels
        if time.monotonic() > deadline:
            raise AssertionError(f"{IMAGE} still shows an earlier picture after a click")
        page.wait_for_timeout(100)


def _assert_no_widget_errors(page) -> None:
    body = page.locator("body").inner_text()
    for text in FORBIDDEN_TEXT:
        assert text not in body, f"JupyterLab shows {text!r}"
    broken = page.locator(WIDGET_ERROR)
    assert broken.count() == 0, "a widget failed to render: " + " | ".join(broken.all_inner_texts())
    errors = page.locator(ERROR_OUTPUT)
    assert errors.count() == 0, "a cell wrote to stderr:\n" + "\n".join(errors.all_inner_texts())
    widget_console_errors = [
        e for e in page.console_errors if re.search(r"widget|model class", e, re.IGNORECASE)
    ]
    assert not widget_console_errors, widget_console_errors


def test_widget_renders_and_responds_to_clicks(jupyter_lab, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    # (playwright's `expect` has its own timeout, 5 s unless set: a loaded machine
    # takes longer than that to start JupyterLab and the kernel.)
    page.set_default_timeout(WIDGET_TIMEOUT_MS)
    expect.set_options(timeout=WIDGET_TIMEOUT_MS)
    page.goto(jupyter_lab.notebook_url)
    # expect() has its own 5 s default: a loaded 2-core machine needs the long one here
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(
        timeout=WIDGET_TIMEOUT_MS)
    expect(page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)).to_be_visible(
        timeout=WIDGET_TIMEOUT_MS)

    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{RUN_MENU}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{RUN_ALL}$")).click()

    button, text, image = page.locator(BUTTON), page.locator(TEXT), page.locator(IMAGE)
    expect(button).to_be_visible(timeout=WIDGET_TIMEOUT_MS)
    expect(text).to_be_visible(timeout=WIDGET_TIMEOUT_MS)
    expect(image).to_be_visible(timeout=WIDGET_TIMEOUT_MS)
    page.set_default_timeout(STEP_TIMEOUT_S * 1000)
    expect.set_options(timeout=STEP_TIMEOUT_S * 1000)
    # The light theme shows the graph as drawn.
    assert image.first.evaluate("el => getComputedStyle(el).filter") == "none"
    expect(page.locator(CAPTION)).to_contain_text("Before backward")
    assert page.locator(CURRENT).count() == 0
    _assert_no_widget_errors(page)

    texts = [text.inner_text()]
    pictures = [_image_pixels(page, image)]
    for n in range(1, CLICKS + 1):
        button.click()
        if TEXT_AFTER_CLICK is not None:
            expect(text).to_contain_text(TEXT_AFTER_CLICK.format(n=n))
        else:
            expect(text).not_to_have_text(texts[-1])
        assert page.locator(CAPTION).inner_text().endswith(": " + current_node(page))
        new_text = text.inner_text()
        assert new_text not in texts, f"click {n} brought back an earlier text {new_text!r}"
        texts.append(new_text)
        pictures.append(_wait_for_new_pixels(page, image, pictures))
        if n == SCREENSHOT_AT and os.environ.get(SCREENSHOT_ENV):
            # `MINIGRAD_STEPPER_SCREENSHOT=docs/images/stepper.png` refreshes the README's
            # picture of the stepper from this very run.
            page.locator(".minigrad-stepper").screenshot(path=os.environ[SCREENSHOT_ENV])

    if TEXT_AT_END is not None:
        expect(text).to_contain_text(TEXT_AT_END)
        expect(button).to_be_disabled()  # the end: nothing more to run
    end_node = current_node(page)

    # previous, last, the slider: the caption and the SVG's highlighted node follow
    page.locator(".minigrad-stepper button.stepper-previous").click()
    expect(page.locator(CAPTION)).to_contain_text(f"Step {CLICKS - 1} of {CLICKS}")
    page.locator(".minigrad-stepper button.stepper-last").click()
    expect(page.locator(CAPTION)).to_contain_text(f"Step {CLICKS} of {CLICKS}")
    assert current_node(page) == end_node
    page.locator(SLIDER).fill("2")
    expect(page.locator(CAPTION)).to_contain_text(f"Step 2 of {CLICKS}: ")
    assert page.locator(CAPTION).inner_text().endswith(": " + current_node(page))
    assert page.locator(".minigrad-stepper .mg-node[data-status='done']").count() >= 1
    # ... and Python reads the step the browser shows, with no click sent to the kernel
    shown = run_in_new_cell(page, 'print("python sees", stepper.index, stepper.current_node_name)')
    assert f"python sees 2 {current_node(page)}" in shown, shown
    _assert_no_widget_errors(page)


# -- a projector-sized window, and the dark theme ---------------------------------------

NARROW = {"width": 1024, "height": 768}  # a common projector resolution
PANEL_LABELS = ".minigrad-stepper .stepper-panel td, .minigrad-stepper .stepper-grads td"
STEPPER_BUTTONS = ".minigrad-stepper button"


def _luminance(css_color: str) -> float:
    """Relative luminance (0 black .. 1 white) of a computed `rgb(...)`/`rgba(...)`."""
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css_color)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("lab_theme", ["JupyterLab Dark"])
def test_stepper_fits_a_narrow_window_and_follows_the_dark_theme(jupyter_lab, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_viewport_size(NARROW)
    page.set_default_timeout(WIDGET_TIMEOUT_MS)
    page.goto(jupyter_lab.notebook_url)
    expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(
        1, timeout=WIDGET_TIMEOUT_MS)
    expect(page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)).to_be_visible(
        timeout=WIDGET_TIMEOUT_MS)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{RUN_MENU}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{RUN_ALL}$")).click()
    button, text = page.locator(BUTTON), page.locator(TEXT)
    expect(text).to_be_visible(timeout=WIDGET_TIMEOUT_MS)
    page.set_default_timeout(STEP_TIMEOUT_S * 1000)
    button.click()  # step 1: the panel now has its table of gradients
    expect(text).to_contain_text(TEXT_AFTER_CLICK.format(n=1), timeout=STEP_TIMEOUT_S * 1000)

    # Nothing is cut off: every button shows its whole label, and the panel lies inside
    # the output area (beside the graph if there is room, under it if not).
    for handle in page.locator(STEPPER_BUTTONS).element_handles():
        fits = handle.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
        assert fits, f"button label cut off: {handle.inner_text()!r}"
    output = page.locator(".jp-OutputArea-output", has=page.locator(".minigrad-stepper"))
    area, panel = output.bounding_box(), text.bounding_box()
    assert panel["x"] >= area["x"] - 1
    assert panel["x"] + panel["width"] <= area["x"] + area["width"] + 1, (panel, area)
    side = page.locator(".minigrad-stepper .stepper-grads")
    clipped = side.evaluate("el => el.parentElement.scrollWidth > el.parentElement.clientWidth + 1")
    assert not clipped, "the side panel is wider than its box"

    # Dark theme: the panel's text and its row labels are light on the dark page.
    page_bg = page.evaluate(
        "getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor")
    assert _luminance(page_bg) < 0.3, page_bg
    colors = page.locator(PANEL_LABELS).evaluate_all(
        "els => els.map(el => getComputedStyle(el).color)")
    assert colors, "the panel has no table rows"
    dark = [c for c in colors if _luminance(c) < 0.5]
    assert not dark, f"panel text too dark to read on the dark theme: {dark}"
    # ... and the graph, drawn on white, is shown inverted (a dark background).
    image_filter = page.locator(IMAGE).first.evaluate("el => getComputedStyle(el).filter")
    assert "invert" in image_filter, image_filter
    _assert_no_widget_errors(page)

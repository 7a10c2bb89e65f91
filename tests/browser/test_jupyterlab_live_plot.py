"""A plot that a training loop updates (`display(fig, display_id=True)`, then
`handle.update(fig)`, as lesson 7 does) stays one figure in JupyterLab: the output area
holds a single picture while the loop runs, and it ends as the last update's.

Each update here draws a figure of another width, so the picture on screen tells which
update it is; the loop pauses between updates so the browser sees each one.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import pytest

TIMEOUT_MS = 90_000  # kernel start and imports on a loaded 2-core machine
UPDATES = 4
# update n draws a figure 2.5 + n / 2 inches wide; its SVG is sized in points, 72 an inch,
# which a browser shows at 96 CSS pixels an inch
WIDTHS = [round(96 * (2.5 + n / 2)) for n in range(UPDATES + 1)]
CODE = [
    "%matplotlib inline\n"
    "import time\n"
    "from IPython.display import display\n"
    "from widgets.figures import NotebookFigure\n"
    "def plot(n):\n"
    "    fig = NotebookFigure(figsize=(2.5 + n / 2, 2), dpi=80)\n"
    "    fig.subplots().plot(range(n + 2))\n"
    "    return fig",
    "handle = display(plot(0), display_id=True)\n"
    f"for n in range(1, {UPDATES + 1}):\n"
    "    time.sleep(1.5)\n"
    "    handle.update(plot(n))\n"
    "print('done')",
]
KERNEL_IDLE = re.compile(r"\|\s*Idle$")
# the pictures of the second cell's output area, their natural widths
WIDTHS_SHOWN = """() => {
    const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[1];
    return Array.from(cell.querySelectorAll('.jp-OutputArea-output img'))
        .map(img => img.complete ? img.naturalWidth : -1);
}"""

pytestmark = pytest.mark.browser


@pytest.fixture
def lab_notebook(tmp_path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in CODE]
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "live_plot.ipynb"
    nbformat.write(notebook, path)
    return path


def test_a_live_plot_updates_one_figure_in_place(jupyter_lab, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(jupyter_lab.notebook_url)
    expect(page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)).to_be_visible(
        timeout=TIMEOUT_MS)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()

    seen = []  # every distinct list of widths the output area showed, in order
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        shown = page.evaluate(WIDTHS_SHOWN)
        if shown and (not seen or seen[-1] != shown):
            seen.append(shown)
        if page.locator(".jp-OutputArea-output", has_text="done").count():
            break
        page.wait_for_timeout(100)
    page.wait_for_timeout(500)
    final = page.evaluate(WIDTHS_SHOWN)
    assert final == [WIDTHS[-1]], (final, seen)
    assert all(len(shown) == 1 for shown in seen), seen  # never two pictures at once
    # the picture went through the updates in order (the browser may miss one)
    widths = [shown[0] for shown in seen if shown[0] > 0]
    assert widths == sorted(widths) and len(set(widths)) >= 3, seen

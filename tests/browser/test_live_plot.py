"""A plot that a training loop updates (`display(fig, display_id=True)`, then
`handle.update(fig)`, as lesson 7 does) stays one figure: the output area holds a
single picture while the loop runs, and it ends as the last update's. In JupyterLab,
Notebook 7 and the classic Notebook 6.5 (the front ends `test_*_stepper.py` set up).

Each update here draws a figure of another width, so the picture on screen tells which
update it is; the loop pauses between updates so the browser sees each one.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import pytest
from conftest import (
    CLASSIC,
    NOTEBOOK7,
    _stop,
    notebook_server,
    open_in_notebook7,
    open_in_the_classic_notebook,
    run_all_from_the_menu,
)

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
# the widths of the pictures in the second code cell's output area: an image's natural
# width, or an SVG element's width on screen (the classic Notebook puts the SVG inline)
WIDTHS_SHOWN = """([cells, pictures]) => {
    const cell = document.querySelectorAll(cells)[1];
    return cell ? Array.from(cell.querySelectorAll(pictures)).map(el => el.tagName === "IMG"
        ? (el.complete ? el.naturalWidth : -1)
        : Math.round(el.getBoundingClientRect().width)) : [];
}"""
# (code cells, their pictures, their output areas) in each front end's page
LAB_PAGE = (".jp-Notebook .jp-CodeCell", ".jp-OutputArea-output img",
            ".jp-OutputArea-output")
CLASSIC_PAGE = (".cell.code_cell", ".output_area img, .output_area .output_svg svg",
                ".output_area")

pytestmark = pytest.mark.browser


def _write(path: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in CODE]
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def lab_notebook(tmp_path) -> Path:
    return _write(tmp_path / "live_plot.ipynb")


def _watch(page, cells: str, pictures: str, outputs: str) -> tuple[list, list]:
    """Poll the live cell's pictures until it prints "done": (each distinct list of
    widths seen, in order; the widths at the end)."""
    seen = []
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        shown = page.evaluate(WIDTHS_SHOWN, [cells, pictures])
        if shown and (not seen or seen[-1] != shown):
            seen.append(shown)
        if page.locator(outputs, has_text="done").count():
            break
        page.wait_for_timeout(100)
    page.wait_for_timeout(500)
    return seen, page.evaluate(WIDTHS_SHOWN, [cells, pictures])


def _check(seen: list, final: list) -> None:
    assert final == [WIDTHS[-1]], (final, seen)
    assert all(len(shown) == 1 for shown in seen), seen  # never two pictures at once
    # the picture went through the updates in order (the browser may miss one)
    widths = [shown[0] for shown in seen if shown[0] > 0]
    assert widths == sorted(widths) and len(set(widths)) >= 3, seen


def test_a_live_plot_updates_one_figure_in_jupyterlab(jupyter_lab, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(jupyter_lab.notebook_url)
    expect(page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)).to_be_visible(
        timeout=TIMEOUT_MS)
    run_all_from_the_menu(page)
    _check(*_watch(page, *LAB_PAGE))


def _server(frontend, tmp_path: Path):
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    notebook = _write(root / "live_plot.ipynb")
    return notebook_server(frontend, root, home, notebook.name)


def test_a_live_plot_updates_one_figure_in_notebook_7(tmp_path, chromium_page):
    url, process = _server(NOTEBOOK7, tmp_path)
    try:
        open_in_notebook7(chromium_page, url, TIMEOUT_MS)
        run_all_from_the_menu(chromium_page)
        _check(*_watch(chromium_page, *LAB_PAGE))
    finally:
        _stop(process)


def test_a_live_plot_updates_one_figure_in_the_classic_notebook(tmp_path, chromium_page):
    url, process = _server(CLASSIC, tmp_path)
    try:
        open_in_the_classic_notebook(chromium_page, url, TIMEOUT_MS)
        chromium_page.evaluate("Jupyter.notebook.execute_all_cells()")
        _check(*_watch(chromium_page, *CLASSIC_PAGE))
    finally:
        _stop(process)

"""The stepper in the classic Notebook 6.5 with ipywidgets 7.7.1 (what Colab ships).

The set-up makes a venv under build/ with `ipywidgets==7.7.1`, `notebook==6.5.7` and
`widgetsnbextension` 3.6, then installs the course into it: that second install must
leave ipywidgets 7.7.1 alone (the course admits ipywidgets 7.6 and 8). The test opens
the demo notebook there, runs it, steps with next, previous, last and the slider, and
checks the SVG's highlighted node, the caption, and what Python reads back.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import (
    CLASSIC,
    _stop,
    click_through,
    frontend_python,
    notebook_server,
    open_in_the_classic_notebook,
)

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "stepper_demo.ipynb"
STEPS = 6
TIMEOUT_MS = 90_000

pytestmark = pytest.mark.browser


@pytest.fixture
def classic_notebook(tmp_path, chromium_context):
    python = frontend_python(*CLASSIC)
    versions = subprocess.run(
        [str(python), "-c", "import ipywidgets, anywidget, notebook; "
         "print(ipywidgets.__version__, notebook.__version__)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert versions == ["7.7.1", "6.5.7"], versions  # the course left them alone
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    shutil.copy2(NOTEBOOK, root / NOTEBOOK.name)
    url, process = notebook_server(CLASSIC, root, home, NOTEBOOK.name)
    yield url
    _stop(process)


def test_stepper_steps_in_classic_notebook_with_ipywidgets_7(classic_notebook, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    open_in_the_classic_notebook(page, classic_notebook, TIMEOUT_MS)
    # (the widget manager first restores saved widget state: let it finish)
    page.wait_for_timeout(3000)
    page.evaluate("Jupyter.notebook.execute_all_cells()")
    names = click_through(page.locator(".minigrad-stepper"), STEPS)
    # Python reads the step the browser shows (ipywidgets 7 holds a state update back
    # until the kernel has acknowledged the previous one: give the updates a moment)
    page.wait_for_timeout(2000)
    page.evaluate("""() => {
        const cell = Jupyter.notebook.insert_cell_at_bottom('code');
        cell.set_text('print("python sees", stepper.index, stepper.current_node_name)');
        cell.execute();
    }""")
    expect(page.locator(".output_area", has_text="python sees")).to_contain_text(
        f"python sees 2 {names[1]}")
    body = page.locator("body").inner_text()
    assert "Error displaying widget" not in body and "Traceback" not in body

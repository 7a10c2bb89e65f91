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
from conftest import _stop, click_through, frontend_python, start_server

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "stepper_demo.ipynb"
PINS = ["ipywidgets==7.7.1", "notebook==6.5.7", "widgetsnbextension>=3.6,<3.7",
        "anywidget==0.9.21"]  # the pair Colab ships
STEPS = 6
TIMEOUT_MS = 90_000

pytestmark = pytest.mark.browser


@pytest.fixture
def classic_notebook(tmp_path, chromium_context):
    python = frontend_python("classic-ipywidgets7", PINS)
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
    url, token, process, log = start_server(
        python,
        ["notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1", "--port={port}",
         "--NotebookApp.port_retries=0", "--NotebookApp.token={token}",
         f"--NotebookApp.notebook_dir={root}"],
        root, home,
    )
    yield f"{url}/notebooks/{NOTEBOOK.name}?token={token}"
    _stop(process)


def test_stepper_steps_in_classic_notebook_with_ipywidgets_7(classic_notebook, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(classic_notebook)
    page.wait_for_function(
        "() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel "
        "&& Jupyter.notebook.kernel.is_connected()", timeout=TIMEOUT_MS)
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

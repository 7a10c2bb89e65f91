"""The stepper in Jupyter Notebook 7 (ipywidgets 8): run the demo notebook, step with
next, previous, last and the slider, and check the SVG's highlighted node and caption.
The set-up installs Notebook 7 into a venv under build/ (from PyPI, kept between runs).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import (
    NOTEBOOK7,
    _stop,
    click_through,
    notebook_server,
    open_in_notebook7,
    run_all_from_the_menu,
)

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "stepper_demo.ipynb"
STEPS = 6
TIMEOUT_MS = 90_000

pytestmark = pytest.mark.browser


@pytest.fixture
def notebook7(tmp_path, chromium_context):
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    shutil.copy2(NOTEBOOK, root / NOTEBOOK.name)
    url, process = notebook_server(NOTEBOOK7, root, home, NOTEBOOK.name)
    yield url
    _stop(process)


def test_stepper_steps_in_notebook_7(notebook7, chromium_page):
    page = chromium_page
    open_in_notebook7(page, notebook7, TIMEOUT_MS)
    run_all_from_the_menu(page)
    click_through(page.locator(".minigrad-stepper"), STEPS)
    body = page.locator("body").inner_text()
    assert "Error displaying widget" not in body and "Traceback" not in body

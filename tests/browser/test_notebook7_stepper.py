"""The stepper in Jupyter Notebook 7 (ipywidgets 8): run the demo notebook, step with
next, previous, last and the slider, and check the SVG's highlighted node and caption.
The set-up installs Notebook 7 into a venv under build/ (from PyPI, kept between runs).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import _stop, click_through, frontend_python, start_server, wait_for_idle_kernel

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "stepper_demo.ipynb"
PINS = ["notebook>=7.2,<8", "ipywidgets>=8,<9"]
STEPS = 6
TIMEOUT_MS = 90_000

pytestmark = pytest.mark.browser


@pytest.fixture
def notebook7(tmp_path, chromium_context):
    python = frontend_python("notebook7", PINS)
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    shutil.copy2(NOTEBOOK, root / NOTEBOOK.name)
    url, token, process, _ = start_server(
        python,
        ["notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1", "--port={port}",
         "--ServerApp.port_retries=0", "--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}"],
        root, home,
    )
    yield f"{url}/notebooks/{NOTEBOOK.name}?token={token}"
    _stop(process)


def test_stepper_steps_in_notebook_7(notebook7, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(notebook7)
    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_idle_kernel(notebook7)
    page.wait_for_timeout(1000)  # (the page's kernel connection follows the server's)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    click_through(page.locator(".minigrad-stepper"), STEPS)
    body = page.locator("body").inner_text()
    assert "Error displaying widget" not in body and "Traceback" not in body

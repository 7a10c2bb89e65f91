"""The stepper in marimo (`mo.ui.anywidget`), as a learner would open a lesson's
stepper cell there: next, previous, last and the slider, the SVG's highlighted node and
the caption, and a reactive cell reading the step back in Python.

The set-up installs marimo into a venv under build/ (from PyPI, kept between runs).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import _stop, click_through, frontend_python, start_server

HERE = Path(__file__).resolve().parent
APP = HERE / "marimo_stepper.py"
PINS = ["marimo>=0.9"]
STEPS = 6
TIMEOUT_MS = 90_000

pytestmark = pytest.mark.browser


@pytest.fixture
def marimo_app(tmp_path, chromium_context):
    python = frontend_python("marimo", PINS)
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    shutil.copy2(APP, root / APP.name)
    url, _, process, _ = start_server(
        python,
        ["marimo", "run", APP.name, "--headless", "--host", "127.0.0.1", "--port", "{port}"],
        root, home, jupyter=False,
    )
    yield url
    _stop(process)


def test_stepper_steps_in_marimo(marimo_app, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(marimo_app)
    click_through(page.locator(".minigrad-stepper"), STEPS)
    expect(page.get_by_text("python sees step 2: 2")).to_be_visible()

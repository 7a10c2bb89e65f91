"""The static course site in a real browser: pages load clean, images load, players play.

The site (build/site/html, `make site`) is served by Python's own static file server on
a free local port, as any web server would serve it, and opened in headless Chromium.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAYER = ".minigrad-player"
LOAD_TIMEOUT_MS = 30_000

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site_url(site_html):
    # port 0: the server binds a free port itself and says which (no probe-then-bind race
    # with the other test workers' servers)
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
         "--directory", str(site_html)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        banner = server.stdout.readline()  # Serving HTTP on 127.0.0.1 port N (...) ...
        found = re.search(r" port (\d+) ", banner)
        assert found, f"http.server did not say its port: {banner!r}"
        url = f"http://127.0.0.1:{found[1]}"
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(url + "/index.html", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _pages() -> list[str]:
    lessons = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return ["index.html", *(p.stem + ".html" for p in lessons), "instructor.html"]


def _expected_images(name: str) -> int:
    """Pictures a page must show: a lesson's stored figures and one per stepper."""
    notebook = REPO / "notebooks" / name.replace(".html", ".ipynb")
    if not notebook.exists():
        return 1 if name == "index.html" else 0  # the landing page's graph picture
    outputs = [o for c in json.loads(notebook.read_text())["cells"] for o in c.get("outputs", [])]
    widget = "application/vnd.jupyter.widget-view+json"
    # (a stepper's output carries a picture of its frame too: the frame player replaces both)
    return sum("image/png" in o.get("data", {}) and widget not in o.get("data", {})
               for o in outputs) + sum(widget in o.get("data", {}) for o in outputs)


def _open(page, url: str) -> list[str]:
    """Open `url`; return every failed request or HTTP error status seen while loading."""
    failures: list[str] = []
    page.on("requestfailed", lambda r: failures.append(f"failed: {r.url}"))
    page.on("response", lambda r: r.status >= 400 and failures.append(f"{r.status}: {r.url}"))
    page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
    page.wait_for_load_state("networkidle", timeout=LOAD_TIMEOUT_MS)
    return failures


def _broken_images(page) -> list[str]:
    return page.evaluate(
        """() => Array.from(document.images)
               .filter(img => !(img.complete && img.naturalWidth > 0))
               .map(img => img.src.slice(0, 80))"""
    )


@pytest.mark.parametrize("name", _pages())
def test_page_loads_without_errors_and_every_image_loads(site_url, chromium_page, name):
    page = chromium_page
    failures = _open(page, f"{site_url}/{name}")
    images = page.evaluate("() => document.images.length")
    assert failures == []
    assert page.console_errors == []
    assert _broken_images(page) == []
    assert images >= _expected_images(name)
    # every player's script ran: it marks its root as ready and shows its start frame
    players = page.locator(PLAYER)
    for i in range(players.count()):
        assert players.nth(i).get_attribute("data-ready") == "1"


def test_moving_a_players_slider_changes_the_frame(site_url, chromium_page):
    page = chromium_page
    _open(page, f"{site_url}/05_unbind_multi_output.html")
    player = page.locator(PLAYER).first
    player.scroll_into_view_if_needed()
    frames = int(player.get_attribute("data-frames"))
    slider = player.locator("input.mgp-slider")
    image = player.locator("img.mgp-image")
    panel = player.locator(".mgp-panel")
    assert slider.input_value() == "0" and "Before backward" in panel.inner_text()

    seen_sources, seen_pixels, frame_ms = {image.get_attribute("src")}, set(), []
    seen_pixels.add(image.screenshot())
    slider.focus()
    for step in range(1, frames):
        page.keyboard.press("ArrowRight")  # a learner moving the slider one notch
        page.wait_for_function(
            "([el, n]) => el.dataset.frame === String(n) && el.dataset.frameMs !== undefined",
            arg=[player.element_handle(), step],
        )
        assert slider.input_value() == str(step)
        assert f"step {step} of {frames - 1}" in player.locator(".mgp-counter").inner_text()
        assert f"Step {step} of" in panel.inner_text()
        source = image.get_attribute("src")
        assert source not in seen_sources, f"frame {step} shows an earlier picture"
        seen_sources.add(source)
        pixels = image.screenshot()
        assert pixels not in seen_pixels, f"frame {step} looks like an earlier one"
        seen_pixels.add(pixels)
        frame_ms.append(float(player.get_attribute("data-frame-ms")))
    assert "Backward finished" in panel.inner_text()
    assert player.locator("button.mgp-next").is_disabled()
    # the buttons drive the same frames
    player.locator("button.mgp-first").click()
    assert slider.input_value() == "0"
    player.locator("button.mgp-next").click()
    assert slider.input_value() == "1"
    assert _broken_images(page) == [] and page.console_errors == []
    print(f"\nframe player, ms from slider input to decoded picture: {frame_ms}")


def test_play_runs_to_the_end(site_url, chromium_page):
    page = chromium_page
    _open(page, f"{site_url}/00_start_here.html")
    player = page.locator(PLAYER).first
    frames = int(player.get_attribute("data-frames"))
    player.locator("button.mgp-play").click()
    page.wait_for_function(
        "([el, n]) => el.dataset.frame === String(n)",
        arg=[player.element_handle(), frames - 1], timeout=frames * 2_000,
    )
    assert "play" in player.locator("button.mgp-play").inner_text()  # stopped by itself


def test_search_finds_a_lesson(site_url, chromium_page):
    page = chromium_page
    _open(page, f"{site_url}/search.html?q=UnbindBackward0")
    results = page.locator("#search-results li a")
    results.first.wait_for(timeout=LOAD_TIMEOUT_MS)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("05_unbind_multi_output" in h for h in hrefs), hrefs
    assert page.console_errors == []

"""The static course site in a real browser: pages load clean, images load, steppers step.

The site (build/site/html, `make site`) is served by Python's own static file server on
a free local port, as any web server would serve it, and opened in headless Chromium,
which is refused every request that does not go to that server: the site works offline.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAYER = ".minigrad-player"
STEPPER = ".minigrad-stepper"
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
    """Pictures a page must show: a lesson's stored figures (a stepper's output carries a
    picture of its step too, which the page's stepper, drawn as SVG, replaces)."""
    notebook = REPO / "notebooks" / name.replace(".html", ".ipynb")
    if not notebook.exists():
        return 0
    outputs = [o for c in json.loads(notebook.read_text())["cells"] for o in c.get("outputs", [])]
    widget = "application/vnd.jupyter.widget-view+json"
    return sum("image/png" in o.get("data", {}) and widget not in o.get("data", {})
               for o in outputs)


def _open(page, url: str) -> list[str]:
    """Open `url`, refusing every request that does not go to the local site (or to a
    data: or blob: URL); return the refused and failed requests and HTTP errors seen."""
    failures: list[str] = []
    parts = urlsplit(url)
    local = (f"{parts.scheme}://{parts.netloc}/", "data:", "blob:")

    def only_local(route):
        if route.request.url.startswith(local):
            route.continue_()
        else:
            failures.append(f"refused: {route.request.url}")
            route.abort()

    page.route("**/*", only_local)
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
    from playwright.sync_api import expect

    page = chromium_page
    failures = _open(page, f"{site_url}/{name}")
    images = page.evaluate("() => document.images.length")
    # every player draws its stepper: the graph as SVG, opened at its step
    players = page.locator(PLAYER)
    for i in range(players.count()):
        player = players.nth(i)
        expect(player.locator(f"{STEPPER} svg.stepper-graph")).to_be_visible(timeout=20_000)
        steps = int(player.get_attribute("data-steps"))
        index = int(player.locator(STEPPER).get_attribute("data-index"))
        assert 0 <= index < steps
        assert player.locator(".stepper-caption").inner_text().strip()
    assert failures == []
    assert page.console_errors == []
    assert _broken_images(page) == []
    assert images >= _expected_images(name)


def test_a_lessons_stepper_steps_on_the_page(site_url, chromium_page):
    """Lesson 5's stepper, on its page with no kernel and no network: next, previous,
    last and the slider move the caption and the highlighted node together."""
    from playwright.sync_api import expect

    page = chromium_page
    assert _open(page, f"{site_url}/05_unbind_multi_output.html") == []
    player = page.locator(PLAYER).first
    stepper = player.locator(STEPPER)
    caption = stepper.locator(".stepper-caption")
    current = stepper.locator(".mg-node[data-status='current']")
    expect(stepper.locator("svg.stepper-graph")).to_be_visible(timeout=20_000)
    stepper.scroll_into_view_if_needed()
    nodes = int(player.get_attribute("data-steps")) - 1
    expect(caption).to_have_text(f"Before backward (step 0 of {nodes})")
    expect(current).to_have_count(0)

    names = []
    for n in range(1, nodes + 1):
        stepper.locator("button.stepper-next").click()
        expect(caption).to_contain_text(f"Step {n} of {nodes}: ")
        expect(current).to_have_count(1)
        names.append(current.get_attribute("data-name"))
        assert caption.inner_text().endswith(": " + names[-1])
        assert stepper.locator(".mg-node[data-status='done']").count() == n - 1
    assert "UnbindBackward0" in names and names[-1] == "AccumulateGrad"
    expect(stepper.locator(".stepper-panel")).to_contain_text("Backward finished")
    assert stepper.locator("button.stepper-next").is_disabled()

    stepper.locator("button.stepper-previous").click()
    expect(caption).to_contain_text(f"Step {nodes - 1} of {nodes}: {names[-2]}")
    expect(current).to_have_attribute("data-name", names[-2])
    stepper.locator("button.stepper-first").click()
    expect(caption).to_contain_text("Before backward")
    stepper.locator("button.stepper-last").click()
    expect(caption).to_contain_text(f"Step {nodes} of {nodes}: {names[-1]}")
    stepper.locator("input.stepper-slider").fill("2")
    expect(caption).to_have_text(f"Step 2 of {nodes}: {names[1]}")
    expect(current).to_have_attribute("data-name", names[1])
    assert stepper.locator(".mg-node[data-status='done']").count() == 1
    assert page.console_errors == []


def test_play_runs_to_the_end(site_url, chromium_page):
    from playwright.sync_api import expect

    page = chromium_page
    _open(page, f"{site_url}/00_start_here.html")
    player = page.locator(PLAYER).first
    stepper = player.locator(STEPPER)
    expect(stepper.locator("svg.stepper-graph")).to_be_visible(timeout=20_000)
    last = int(player.get_attribute("data-steps")) - 1
    stepper.locator("button.stepper-play").click()
    expect(stepper).to_have_attribute("data-index", str(last), timeout=last * 2_000 + 5_000)
    expect(stepper.locator("button.stepper-play")).to_contain_text("play")  # stopped itself


def test_search_finds_a_lesson(site_url, chromium_page):
    page = chromium_page
    _open(page, f"{site_url}/search.html?q=UnbindBackward0")
    results = page.locator("#search-results li a")
    results.first.wait_for(timeout=LOAD_TIMEOUT_MS)
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any("05_unbind_multi_output" in h for h in hrefs), hrefs
    assert page.console_errors == []

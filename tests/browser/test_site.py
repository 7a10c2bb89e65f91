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


# -- light and dark mode -------------------------------------------------------------------

# Every colour an element's text sits on: its own background over its ancestors', back to
# the page; computed colours come as rgb(), rgba() or color(srgb ...) (color-mix).
CONTRASTS_JS = """
(selector) => {
  const parse = (text) => {
    const nums = (text.match(/[\\d.]+/g) || []).map(Number);
    if (text.startsWith("color(")) {
      return { rgb: nums.slice(0, 3).map((v) => v * 255), a: nums.length > 3 ? nums[3] : 1 };
    }
    return { rgb: nums.slice(0, 3), a: nums.length > 3 ? nums[3] : 1 };
  };
  const over = (top, under) => top.rgb.map((v, i) => v * top.a + under[i] * (1 - top.a));
  const background = (el) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      layers.push(parse(getComputedStyle(node).backgroundColor));
    }
    let colour = [255, 255, 255];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  return Array.from(document.querySelectorAll(selector))
    .filter((el) => el.textContent.trim() && el.getClientRects().length)
    .map((el) => {
      const bg = background(el);
      const fg = over(parse(getComputedStyle(el).color), bg);
      const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
      return [el.textContent.trim().slice(0, 30), (hi + 0.05) / (lo + 0.05), luminance(bg)];
    });
}
"""
STEPPER_TEXT = ", ".join(f"{STEPPER} {part}" for part in (
    ".stepper-caption", "button", ".stepper-zoom-level", ".stepper-side td",
    ".stepper-side code", ".stepper-side b"))


def _ratio(a, b) -> float:
    """WCAG contrast ratio of two RGB colours (0-255)."""
    def lum(rgb):
        c = [v / 255 for v in rgb[:3]]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _strongest(image, x: float, y: float, against, radius: int = 3) -> float:
    """The highest contrast against `against` of a pixel near (x, y) (a line or a glyph
    is a pixel or two wide and blended into its neighbours at its edges)."""
    best = 1.0
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            px, py = int(x) + dx, int(y) + dy
            if 0 <= px < image.width and 0 <= py < image.height:
                best = max(best, _ratio(image.getpixel((px, py)), against))
    return best


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_stepper_reads_in_light_and_dark_mode(site_url, chromium_page, mode):
    """The theme's light and dark modes: the stepper's text (caption, buttons, step panel)
    has a contrast of at least 4.5 against what it sits on; the graph's background
    follows the mode, and its edges stand out from it (3:1, as WCAG asks of graphics),
    its box labels from their boxes and the gradients written on edges from the
    background (4.5:1)."""
    import io

    from PIL import Image
    from playwright.sync_api import expect

    page = chromium_page
    page.add_init_script(f"localStorage.setItem('mode', '{mode}');"
                         f"localStorage.setItem('theme', '{mode}');")
    page.set_viewport_size({"width": 1400, "height": 900})
    assert _open(page, f"{site_url}/01_backward_graph.html") == []
    expect(page.locator(f"html[data-theme='{mode}']")).to_have_count(1)
    stepper = page.locator(STEPPER).first
    expect(stepper.locator("svg.stepper-graph")).to_be_visible(timeout=20_000)
    for _ in range(3):
        stepper.locator("button.stepper-next").click()
    expect(stepper.locator(".stepper-caption")).to_contain_text("Step 3 of")
    stepper.scroll_into_view_if_needed()

    texts = page.evaluate(CONTRASTS_JS, STEPPER_TEXT)
    assert len(texts) > 10, texts
    faint = [t for t in texts if t[1] < 4.5]
    assert not faint, f"text without contrast in {mode} mode: {faint}"

    picture = stepper.locator(".stepper-picture")
    shot = Image.open(io.BytesIO(picture.screenshot())).convert("RGB")
    box = picture.bounding_box()
    background = shot.getpixel((4, 4))
    dark = _ratio(background, (0, 0, 0)) < _ratio(background, (255, 255, 255))
    assert dark == (mode == "dark"), (mode, background)

    def local(points):
        return [(x - box["x"], y - box["y"]) for x, y in points
                if 2 < x - box["x"] < box["width"] - 2 and 2 < y - box["y"] < box["height"] - 2]

    edge_points = local(page.evaluate(
        """(sel) => Array.from(document.querySelector(sel).querySelectorAll(
               '.mg-edge polyline')).map((line) => {
             const pts = line.points, m = line.getScreenCTM();
             let best = [0, 0, 0];  // the middle of the edge's longest segment
             for (let i = 1; i < pts.numberOfItems; i++) {
               const a = pts.getItem(i - 1), b = pts.getItem(i);
               const len = Math.hypot(b.x - a.x, b.y - a.y);
               if (len > best[2]) best = [(a.x + b.x) / 2, (a.y + b.y) / 2, len];
             }
             const p = new DOMPoint(best[0], best[1]).matrixTransform(m);
             return [p.x, p.y];
           })""", f"{STEPPER} .stepper-picture"))
    assert len(edge_points) >= 3, edge_points
    edges = [_strongest(shot, x, y, background) for x, y in edge_points]
    assert min(edges) >= 3, f"edges fade into the {mode} background: {edges}"

    def text_centres(selector):
        return local(page.evaluate(
            """(sel) => Array.from(document.querySelectorAll(sel)).map((el) => {
                 const r = el.getBoundingClientRect();
                 return [r.x + r.width / 2, r.y + r.height / 2];
               })""", selector))

    labels = text_centres(f"{STEPPER} .stepper-edge-labels text")
    assert labels, "no gradient written on an edge at step 3"
    written = [max(_strongest(shot, x + dx, y, background, 2) for dx in range(-12, 13, 4))
               for x, y in labels]
    assert min(written) >= 4.5, f"gradients on edges hard to read in {mode} mode: {written}"
    # a box's label against the box: the box's own colour is read beside the text
    boxes = page.evaluate(
        """(sel) => Array.from(document.querySelectorAll(sel)).map((g) => {
             const r = g.querySelector('rect').getBoundingClientRect();
             const t = g.querySelector('text').getBoundingClientRect();
             return [t.x + t.width / 2, t.y + t.height / 2, r.x + 7];
           })""", f"{STEPPER} .mg-node")
    seen = 0
    for tx, ty, fx in boxes:
        inside = local([(tx, ty), (fx, ty)])
        if len(inside) < 2:
            continue  # scrolled out of the picture's box
        (tx, ty), (fx, fy) = inside
        face = shot.getpixel((int(fx), int(fy)))
        contrast = max(_strongest(shot, tx + dx, ty, face, 2) for dx in range(-16, 17, 4))
        assert contrast >= 4.5, f"a box label hard to read in {mode} mode: {contrast}"
        seen += 1
    assert seen >= 3
    assert page.console_errors == []


# -- room for the graph ------------------------------------------------------------------

WIDE = {"width": 1400, "height": 900}


def test_lessons_give_the_stepper_the_pages_width(site_url, chromium_page):
    """At 1400x900 a lesson page has no right sidebar (its contents are in the left one),
    so the lesson is over 1000 px wide (848 px with three columns): lesson 1's and 5's
    graphs show whole, with the step panel beside them, no dragging needed. The landing
    page keeps its right sidebar."""
    from playwright.sync_api import expect

    page = chromium_page
    page.set_viewport_size(WIDE)
    for name in ("01_backward_graph", "05_unbind_multi_output"):
        assert _open(page, f"{site_url}/{name}.html") == []
        assert page.locator(".bd-sidebar-secondary").count() == 0
        expect(page.locator(".bd-sidebar-primary nav.page-toc").first).to_contain_text("Recap")
        article = page.locator(".bd-article-container").bounding_box()
        assert article["width"] > 1000, article
        pictures = page.locator(f"{STEPPER} .stepper-picture")
        assert pictures.count() >= 1
        for i in range(pictures.count()):
            picture = pictures.nth(i)
            expect(picture.locator("svg")).to_be_visible(timeout=20_000)
            scroll, client = picture.evaluate("el => [el.scrollWidth, el.clientWidth]")
            assert scroll <= client + 1, f"{name}: the graph needs dragging ({scroll} > {client})"
            side = page.locator(f"{STEPPER} .stepper-side").nth(i).bounding_box()
            box = picture.bounding_box()
            assert side["x"] >= box["x"] + box["width"], "the panel is not beside the graph"
    assert _open(page, f"{site_url}/index.html") == []
    expect(page.locator(".bd-sidebar-secondary nav.page-toc").first).to_be_visible()

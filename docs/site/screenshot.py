"""Take the README's picture of the course site: `python docs/site/screenshot.py`.

Serves build/site/html (build it first with `make site`) on a free local port, opens
lesson 5 in headless Debian Chromium, steps its frame player three frames forward with
the "next" button, and writes docs/images/site.png.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HTML = REPO / "build" / "site" / "html"
PAGE = "05_unbind_multi_output.html"
OUT = REPO / "docs" / "images" / "site.png"
STEPS = 3


def main() -> int:
    if not (HTML / PAGE).exists():
        print("build the site first: make site", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(HTML)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/{PAGE}"
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless=new", "--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(url, wait_until="networkidle")
            player = page.locator(".minigrad-player").first
            for _ in range(STEPS):
                player.locator("button.mgp-next").click()
            page.wait_for_function(
                "([el, n]) => el.dataset.frame === String(n) && el.dataset.frameMs",
                arg=[player.element_handle(), STEPS],
            )
            # the lesson text just above the player, then the player itself
            page.evaluate(
                "el => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 150)",
                player.element_handle(),
            )
            page.screenshot(path=str(OUT))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

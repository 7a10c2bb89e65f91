"""Take the README's picture of the course site: `python docs/site/screenshot.py`.

Serves build/site/html (build it first with `make site`) on a free local port, opens
lesson 5 in headless Debian Chromium at 1400x900, steps its stepper three nodes forward
with the "next" button, and writes docs/images/site.png; `--landing PATH` also writes a
picture of the landing page.
"""

from __future__ import annotations

import argparse
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
VIEWPORT = {"width": 1400, "height": 900}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--landing", type=Path, help="also take the landing page, here")
    args = parser.parse_args(argv)
    if not (HTML / PAGE).exists():
        print("build the site first: make site", file=sys.stderr)
        return 1
    from playwright.sync_api import expect, sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(HTML)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/{PAGE}", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless=new", "--no-sandbox"]
            )
            page = browser.new_page(viewport=VIEWPORT)
            if args.landing:
                page.goto(f"{base}/index.html", wait_until="networkidle")
                page.screenshot(path=str(args.landing))
                print(f"wrote {args.landing}")
            page.goto(f"{base}/{PAGE}", wait_until="networkidle")
            stepper = page.locator(".minigrad-player .minigrad-stepper").first
            expect(stepper.locator("svg.stepper-graph")).to_be_visible(timeout=20_000)
            for _ in range(STEPS):
                stepper.locator("button.stepper-next").click()
            expect(stepper).to_have_attribute("data-index", str(STEPS))
            # the lesson text just above the stepper, then the stepper itself
            page.evaluate(
                "el => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 150)",
                stepper.element_handle(),
            )
            page.screenshot(path=str(args.output))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate the README's picture of the BackwardStepper (docs/images/stepper.png).

The picture is taken by the real-browser test itself: it opens
tests/browser/stepper_demo.ipynb in JupyterLab in headless Debian Chromium, clicks
"next" through backward, and screenshots the widget half-way (after
`SCREENSHOT_AT` clicks). Reusing the test means the README shows exactly what the
test checked, rendered by JupyterLab, not a re-creation.

    .venv/bin/python scripts/screenshot_stepper.py [--output PATH]

Needs /usr/bin/chromium and playwright (no browser is downloaded). Exits non-zero if
the browser test fails or the picture was not written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "docs" / "images" / "stepper.png"
BROWSER_TEST = REPO / "tests" / "browser" / "test_jupyterlab_widgets.py"
SCREENSHOT_ENV = "MINIGRAD_STEPPER_SCREENSHOT"  # read by the browser test
REQUIRE_ENV = "MINIGRAD_REQUIRE_BROWSER"  # a missing chromium fails instead of skipping


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="PNG to write")
    args = parser.parse_args(argv)
    output = args.output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    before = output.stat().st_mtime_ns if output.exists() else None

    import pytest

    os.environ[SCREENSHOT_ENV] = str(output)
    os.environ[REQUIRE_ENV] = "1"
    status = pytest.main(["-q", "-p", "no:cacheprovider", str(BROWSER_TEST)])
    if status != 0:
        print(f"the browser test failed (pytest exit {status}); {output} not updated")
        return int(status)
    if not output.exists() or output.stat().st_mtime_ns == before:
        print(f"the browser test passed but did not write {output}")
        return 1
    print(f"wrote {output.relative_to(REPO) if output.is_relative_to(REPO) else output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

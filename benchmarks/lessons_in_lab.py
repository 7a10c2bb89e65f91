"""A warm lesson as a learner runs it: JupyterLab in a browser, Run > Run All Cells.

    python -m benchmarks.lessons_in_lab [--lessons 4 7 12] [--rounds 2] [--screenshots DIR]

`coldstart` times Run All through nbclient, which also counts the kernel's start and
nbclient's own handling of the outputs. Here each lesson opens in JupyterLab in
headless Chromium (Debian's `chromium`, driven by Playwright, as the browser tests
drive it); once its kernel is idle, the menu's Run All Cells is clicked, and the time
runs until every code cell shows its execution count and the kernel is idle again,
the outputs drawn by the browser. The numba cache is the install's (warm after
`make lab`); the kernel's start is not counted, as a learner opens a lesson before
running it. Each lesson runs `--rounds` times in a fresh kernel; all rounds print.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from .coldstart import lesson_path

CHROMIUM = Path(os.environ.get("MINIGRAD_CHROMIUM", "/usr/bin/chromium"))
TIMEOUT_S = 300
# every code cell's prompt once it ran ("[12]:"), and whether any still runs ("[*]:")
PROMPTS = """() => Array.from(document.querySelectorAll(
    '.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')).map(p => p.textContent.trim())"""


def _copy_without_outputs(notebook: Path, folder: Path) -> None:
    """The lesson as a learner opens it: no outputs and no execution counts (which also
    tells a cell that ran from one that has not yet)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, folder / notebook.name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_lab(root: Path, home: Path) -> tuple[str, str, subprocess.Popen]:
    token, port = secrets.token_hex(16), _free_port()
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)  # (no news or update toasts over the notebook)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"checkForUpdates": False, "fetchNews": "false", "doNotDisturbMode": True}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "run"),
           "IPYTHONDIR": str(home / "ipython"), "MINIGRAD_COURSE_PROGRESS": "off"}
    env.pop("MPLBACKEND", None)
    # (a learner's Python keeps the modules' bytecode, which some hosts turn off: then
    # every kernel would compile minigrad's modules from source again)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
         "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         f"--LabApp.user_settings_dir={home / 'settings'}",
         f"--LabApp.workspaces_dir={home / 'workspaces'}", "--LabApp.news_url=None"],
        cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
            return url, token, process
        except OSError:
            time.sleep(0.25)
    process.kill()
    raise RuntimeError("jupyter lab did not start")


def _idle_kernels(url: str, token: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=5) as response:
            sessions = json.load(response)
    except OSError:  # (the server may answer 500 while a kernel starts)
        return False
    return bool(sessions) and all(s["kernel"]["execution_state"] == "idle" for s in sessions)


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {TIMEOUT_S} s")
        time.sleep(0.05)


def run_all_in_lab(page, url: str, token: str, notebook: str) -> float:
    """Open `notebook`, wait for its kernel, Run All; seconds until every cell ran."""
    import re

    # (`reset`: an empty workspace, not the previous lesson's tab restored beside it)
    page.goto(f"{url}/lab/tree/{notebook}?token={token}&reset")
    # (the cells are in the page, though JupyterLab hides those outside the view)
    page.locator(".jp-Notebook .jp-CodeCell").first.wait_for(state="attached",
                                                             timeout=TIMEOUT_S * 1000)
    _wait(lambda: _idle_kernels(url, token), "the kernel was not idle")
    page.wait_for_timeout(1000)  # (the page's kernel connection follows the server's)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    start = time.perf_counter()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()

    def finished() -> bool:
        prompts = page.evaluate(PROMPTS)
        return all(re.fullmatch(r"\[\d+\]:", p) for p in prompts)

    _wait(finished, "Run All did not finish")
    elapsed = time.perf_counter() - start
    _wait(lambda: _idle_kernels(url, token), "the kernel was not idle after Run All")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", type=int, nargs="+", default=list(range(13)))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--screenshots", type=Path,
                        help="save each lesson's page after its last round here")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "root", Path(tmp) / "home"
        root.mkdir()
        for number in args.lessons:
            _copy_without_outputs(lesson_path(number), root)
        url, token, process = _start_lab(root, home)
        print("| lesson | Run All in JupyterLab, warm (s) |\n| --- | --- |")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox"])
                for number in args.lessons:
                    times = []
                    for _ in range(args.rounds):
                        page = browser.new_page(viewport={"width": 1280, "height": 900})
                        times.append(run_all_in_lab(page, url, token, lesson_path(number).name))
                        if args.screenshots:
                            args.screenshots.mkdir(parents=True, exist_ok=True)
                            page.screenshot(path=args.screenshots / f"{number:02d}.png")
                        page.close()
                        _shut_kernels(url, token)
                    shown = ", ".join(f"{t:.1f}" for t in times)
                    print(f"| {lesson_path(number).stem} | {shown} |", flush=True)
                browser.close()
        finally:
            process.kill()
    return 0


def _shut_kernels(url: str, token: str) -> None:
    """Shut the sessions down, so that the next round starts a fresh kernel."""
    with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=5) as response:
        sessions = json.load(response)
    for session in sessions:
        request = urllib.request.Request(f"{url}/api/sessions/{session['id']}?token={token}",
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


if __name__ == "__main__":
    sys.exit(main())

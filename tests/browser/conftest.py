"""Fixtures that drive a real JupyterLab in a real (headless Debian) Chromium.

Fixtures:
  lab_notebook      path of the notebook to open; override it in a test module to
                    test another notebook (default: stepper_demo.ipynb beside this file).
  lab_theme         JupyterLab theme name for the server (default None: the light theme).
  jupyter_lab       a running `jupyter lab` (the venv's), in a fresh temporary root dir
                    holding a copy of `lab_notebook`; yields a LabServer (url, token,
                    notebook_url, ...). Teardown stops the server and its kernels.
  chromium_context  a Playwright persistent context of /usr/bin/chromium (headless, fresh
                    user data dir). Skips when Chromium or Playwright is missing, fails
                    instead under MINIGRAD_REQUIRE_BROWSER=1.
  chromium_page     a page of that context; on test failure a screenshot and the server
                    log are kept in the test's tmp_path (the path is printed).

Playwright never downloads a browser here: it is pointed at Debian's chromium.
Every test in this folder is marked `browser` (`pytest -m "not browser"` skips them).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHROMIUM = Path(os.environ.get("MINIGRAD_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT = 60.0
REQUIRE = "MINIGRAD_REQUIRE_BROWSER"

# The notebooks in this folder are driven through the browser, not by nbval.
collect_ignore_glob = ["*.ipynb"]


def _required() -> bool:
    return os.environ.get(REQUIRE, "").strip().lower() in {"1", "true", "yes", "on"}


def _skip_or_fail(reason: str) -> None:
    if _required():
        pytest.fail(f"{reason} (and {REQUIRE} is set, so this is an error)", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).is_relative_to(HERE):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"_report_{report.when}", report)
    return report


def _failed(request) -> bool:
    report = getattr(request.node, "_report_call", None)
    return report is not None and report.failed


# --------------------------------------------------------------------------- server


@dataclass
class LabServer:
    url: str  # http://127.0.0.1:PORT (no trailing slash)
    token: str
    root: Path  # the server's root dir (holds the copied notebook)
    notebook: str  # the notebook's name inside root
    log: Path
    process: subprocess.Popen

    @property
    def notebook_url(self) -> str:
        """Open the notebook in JupyterLab (the token logs the browser in)."""
        return f"{self.url}/lab/tree/{self.notebook}?token={self.token}&reset"

    def log_tail(self, lines: int = 60) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str, token: str) -> bool:
    request = urllib.request.Request(
        f"{url}/api/status", headers={"Authorization": f"token {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen) -> None:
    """Stop the server, its process group and every descendant (kernels run in their
    own sessions, so the group alone is not enough)."""
    try:
        import psutil

        descendants = psutil.Process(process.pid).children(recursive=True)
    except Exception:  # psutil missing, or the server already gone
        descendants = []
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    for child in descendants:
        try:
            child.wait(timeout=5)
        except Exception:
            try:
                child.kill()
            except Exception:
                pass


def _write_lab_settings(settings: Path, theme: str | None = None) -> None:
    # No news/update toasts over the notebook (and no attempts to reach the network).
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"checkForUpdates": False, "fetchNews": "false", "doNotDisturbMode": True})
    )
    if theme is not None:  # e.g. "JupyterLab Dark"
        (notification / "themes.jupyterlab-settings").write_text(json.dumps({"theme": theme}))


def _start(root: Path, home: Path, notebook: str, theme: str | None = None) -> LabServer:
    token = secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=str(home / "ipython"),
        # the kernel imports this checkout's packages even without `make install`
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    env.pop("MPLBACKEND", None)
    settings, workspaces = home / "settings", home / "workspaces"
    if not settings.exists():
        _write_lab_settings(settings, theme)
    workspaces.mkdir(exist_ok=True)

    last_error = ""
    for _attempt in range(3):  # the free port can be taken between probe and bind
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        log = home / f"jupyter-lab-{port}.log"
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={workspaces}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        with open(log, "wb") as out:
            process = subprocess.Popen(
                cmd, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        server = LabServer(url, token, root, notebook, log, process)
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            if _answers(url, token):
                return server
            time.sleep(0.25)
        last_error = server.log_tail()
        _stop(process)
        if "already in use" not in last_error:
            break
    raise RuntimeError(f"jupyter lab did not start; its log ends with:\n{last_error}")


@pytest.fixture
def lab_notebook() -> Path:
    """The notebook `jupyter_lab` serves. Override in a test module to change it."""
    return HERE / "stepper_demo.ipynb"


@pytest.fixture
def lab_theme() -> str | None:
    """JupyterLab's theme for `jupyter_lab` (None: the default light one). Override it
    (or parametrize it indirectly) to test e.g. "JupyterLab Dark"."""
    return None


@pytest.fixture
def jupyter_lab(lab_notebook, lab_theme, tmp_path, request):
    """A running JupyterLab whose root dir holds a copy of `lab_notebook`."""
    lab_notebook = Path(lab_notebook)
    if not lab_notebook.is_file():
        raise FileNotFoundError(f"lab_notebook {lab_notebook} does not exist")
    root = tmp_path / "root"
    home = tmp_path / "jupyter-home"
    root.mkdir()
    home.mkdir()
    shutil.copy2(lab_notebook, root / lab_notebook.name)
    server = _start(root, home, lab_notebook.name, lab_theme)
    yield server
    _stop(server.process)
    if _failed(request):
        print(f"\n--- jupyter lab log ({server.log}) ---\n{server.log_tail()}")


# --------------------------------------------------------------------------- browser


@pytest.fixture
def chromium_context(tmp_path):
    """A fresh headless Chromium (Debian's) as a Playwright persistent context."""
    if not CHROMIUM.exists():
        _skip_or_fail(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _skip_or_fail(f"playwright is not installed ({exc})")

    profile = tmp_path / "chromium-profile"
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def chromium_page(chromium_context, tmp_path, request):
    """A page in `chromium_context`; browser console errors are kept in page.console_errors."""
    page = chromium_context.pages[0] if chromium_context.pages else chromium_context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    yield page
    if _failed(request):
        shot = tmp_path / "failure.png"
        try:
            page.screenshot(path=str(shot), full_page=True)
            print(f"\nscreenshot of the failing page: {shot}")
        except Exception as exc:  # the browser may be what failed
            print(f"\n(no screenshot: {exc})")
        if page.console_errors:
            print("browser console errors:\n  " + "\n  ".join(page.console_errors))


# --------------------------------------------------------------------------- other front ends

# Front ends other than the course's own JupyterLab get a venv each under build/, made
# by the test's set-up from PyPI and kept (a stamp names what was installed).
ENVS = REPO / "build" / "browser-envs"
PIP_TIMEOUT = 900


def frontend_python(name: str, pins: list[str]) -> Path:
    """The python of venv `build/browser-envs/<name>`: `pins` installed first, then the
    course (`-e .[course]`) and ipykernel, in a second pip run that must leave the pins
    alone. Skips (or fails under MINIGRAD_REQUIRE_BROWSER=1) when pip cannot install."""
    import fcntl
    import hashlib

    env = ENVS / name
    python = env / "bin" / "python"
    key = hashlib.sha1(
        ("\n".join(pins) + (REPO / "pyproject.toml").read_text()).encode()
    ).hexdigest()[:12]
    stamp = env / f".ready-{key}"
    ENVS.mkdir(parents=True, exist_ok=True)
    # Two test workers may want one front end at once (the classic Notebook serves two
    # test files): one installs while the other waits, then finds the stamp.
    with open(ENVS / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists():
            return python
        # (a venv whose making was cut short has a python but no pip: made again)
        fresh = not (env / "bin" / "pip").exists()
        steps = [[sys.executable, "-m", "venv", "--clear", str(env)]] if fresh else []
        pip = [str(python), "-m", "pip", "install", "-qq", "--disable-pip-version-check"]
        steps += [pip + pins, pip + ["-e", f"{REPO}[course]", "ipykernel"]]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True,
                                      timeout=PIP_TIMEOUT)
            except subprocess.TimeoutExpired:
                _skip_or_fail(f"installing the {name} front end took over {PIP_TIMEOUT} s")
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).splitlines()[-5:])
                _skip_or_fail(f"could not install the {name} front end from PyPI: {tail}")
        for old in env.glob(".ready-*"):
            old.unlink()
        stamp.touch()
    return python


def _page_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(python: Path, args: list[str], root: Path, home: Path,
                 jupyter: bool = True) -> tuple[str, str, subprocess.Popen, Path]:
    """Start a notebook server `python -m <args>` on a free port in `root` (Jupyter's
    config, data and runtime dirs under `home`); return (url, token, process, log). The
    arguments may use {port} and {token}. A Jupyter server is up when its /api/status
    answers; another (`jupyter=False`) when its front page does."""
    token = secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=str(home / "ipython"),
    )
    env.pop("MPLBACKEND", None)
    env.pop("PYTHONPATH", None)  # the front end's venv has the course installed
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = home / f"server-{port}.log"
    cmd = [str(python), "-m", *(a.format(port=port, token=token) for a in args)]
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        if _answers(url, token) if jupyter else _page_answers(url):
            return url, token, process, log
        time.sleep(0.25)
    _stop(process)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    raise RuntimeError(f"{' '.join(cmd)} did not start; its log ends with:\n{tail}")


def wait_for_idle_kernel(notebook_url: str, timeout_s: float = 120.0) -> None:
    """Wait until the kernel of the notebook open at `notebook_url` (a Jupyter server's
    `.../notebooks/<path>?token=...` or `.../lab/tree/<path>?token=...`) has started and
    is idle, read from the server's sessions API: a fixed pause is too short on a busy
    machine, and cells run before the kernel is ready can be lost."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(notebook_url)
    token = parse_qs(parts.query)["token"][0]
    path = parts.path.split("/notebooks/", 1)[-1].split("/tree/", 1)[-1]
    request = urllib.request.Request(f"{parts.scheme}://{parts.netloc}/api/sessions",
                                     headers={"Authorization": f"token {token}"})
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(request, timeout=5) as response:
            sessions = json.load(response)
        states = [s["kernel"]["execution_state"] for s in sessions if s["path"] == path]
        if states == ["idle"]:
            return
        time.sleep(0.5)
    raise AssertionError(f"the kernel of {path} was not idle within {timeout_s:.0f} s")


# The other front ends (`frontend_python`): Notebook 7 with ipywidgets 8, and the
# classic Notebook 6.5 with ipywidgets 7.7.1, the pair Colab ships.
NOTEBOOK7 = ("notebook7", ["notebook>=7.2,<8", "ipywidgets>=8,<9"])
CLASSIC = ("classic-ipywidgets7", ["ipywidgets==7.7.1", "notebook==6.5.7",
                                   "widgetsnbextension>=3.6,<3.7", "anywidget==0.9.21"])


def notebook_server(frontend: tuple[str, list[str]], root: Path, home: Path,
                    notebook: str) -> tuple[str, subprocess.Popen]:
    """Serve `root` with Notebook 7 or the classic Notebook (`NOTEBOOK7`, `CLASSIC`);
    return the URL that opens `notebook` there, and the server's process."""
    classic = frontend is CLASSIC
    app = "NotebookApp" if classic else "ServerApp"
    login = "--NotebookApp.token={token}" if classic else "--IdentityProvider.token={token}"
    where = f"--NotebookApp.notebook_dir={root}" if classic else f"--ServerApp.root_dir={root}"
    url, token, process, _ = start_server(
        frontend_python(*frontend),
        ["notebook", "--no-browser", "--allow-root", "--ip=127.0.0.1", "--port={port}",
         f"--{app}.port_retries=0", login, where], root, home)
    return f"{url}/notebooks/{notebook}?token={token}", process


def open_in_notebook7(page, url: str, timeout_ms: float) -> None:
    """Open a Notebook 7 page and wait until its kernel is idle and the page is
    connected to it."""
    from playwright.sync_api import expect

    page.set_default_timeout(timeout_ms)
    page.goto(url)
    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=timeout_ms)
    wait_for_idle_kernel(url)
    page.wait_for_timeout(1000)  # (the page's kernel connection follows the server's)


def run_all_from_the_menu(page) -> None:
    """Run > Run All Cells, in JupyterLab or Notebook 7."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()


def open_in_the_classic_notebook(page, url: str, timeout_ms: float) -> None:
    """Open a classic Notebook page and wait until its kernel is connected."""
    page.set_default_timeout(timeout_ms)
    page.goto(url)
    page.wait_for_function(
        "() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel "
        "&& Jupyter.notebook.kernel.is_connected()", timeout=timeout_ms)


def click_through(stepper, steps: int, timeout_ms: float = 90_000) -> list[str]:
    """Step a displayed stepper (a Playwright locator of `.minigrad-stepper`) the way a
    learner does: next to the end, checking at each step that the caption names the
    highlighted node; then previous, last, and the slider to step 2. Returns the nodes'
    names in the order they ran. `timeout_ms`: how long the stepper may take to appear
    (its cell runs first)."""
    from playwright.sync_api import expect

    caption = stepper.locator(".stepper-caption")
    expect(stepper.locator("svg.stepper-graph")).to_be_visible(timeout=timeout_ms)
    expect(caption).to_contain_text(f"Before backward (step 0 of {steps})")
    names = []
    for n in range(1, steps + 1):
        stepper.locator("button.stepper-next").click()
        expect(caption).to_contain_text(f"Step {n} of {steps}: ")
        current = stepper.locator(".mg-node[data-status='current']")
        expect(current).to_have_count(1)
        names.append(current.get_attribute("data-name"))
        assert caption.inner_text().endswith(": " + names[-1])
    expect(stepper.locator(".stepper-panel")).to_contain_text("Backward finished")
    stepper.locator("button.stepper-previous").click()
    expect(caption).to_contain_text(f"Step {steps - 1} of {steps}: {names[-2]}")
    stepper.locator("button.stepper-last").click()
    expect(caption).to_contain_text(f"Step {steps} of {steps}: {names[-1]}")
    stepper.locator("input.stepper-slider").fill("2")
    expect(caption).to_contain_text(f"Step 2 of {steps}: {names[1]}")
    return names

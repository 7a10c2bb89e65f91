"""`make lab` opens clean: the project's JupyterLab settings are the ones loaded, JupyterLab
asks nothing about news, the learner's own copy of the start notebook is open, and
working in a lesson changes nothing git tracks. As root (containers, cloud machines) it
starts all the same.

The server is started through the real `make lab` (so the Makefile's options are what is
tested), with `LAB_ARGS` adding only what a test needs (no browser, a port, a token) and
Jupyter's config/data/runtime folders moved into a temporary directory, so no settings of
the person running the tests can make it pass.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START_NOTEBOOK = "00_start_here.ipynb"
LEARNER_DIR = REPO / "my-lessons"  # make lab's LAB_DIR: the learner's copies
NOTIFICATION_PLUGIN = "@jupyterlab/apputils-extension:notification"
START_TIMEOUT_S = 90.0
# How long the page stays open to give JupyterLab the time to ask about news: in a fresh
# profile it asks a moment after the application has started.
QUIET_PERIOD_MS = 6_000

pytestmark = pytest.mark.browser


@dataclass
class Lab:
    url: str
    token: str
    log: Path

    def get(self, path: str) -> urllib.request.Request:
        return urllib.request.Request(
            f"{self.url}{path}", headers={"Authorization": f"token {self.token}"}
        )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """Stop `make` and the JupyterLab it started (one process group); the server shuts
    its kernels down on SIGTERM."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def _start(home: Path, env: dict[str, str], token: str) -> tuple[subprocess.Popen, Lab]:
    """Start `make lab` on a free port and wait until its server answers."""
    for _attempt in range(3):  # the free port can be taken between probe and bind
        port = _free_port()
        lab_args = " ".join([
            "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        ])
        log = home / f"make-lab-{port}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                ["make", "--no-print-directory", "lab", f"LAB_ARGS={lab_args}"],
                cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        lab = Lab(f"http://127.0.0.1:{port}", token, log)
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while process.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(lab.get("/api/status"), timeout=2):
                        return process, lab
                except (urllib.error.URLError, OSError):
                    time.sleep(0.5)
        except BaseException:  # e.g. ^C: leave no server behind
            _stop(process)
            raise
        _stop(process)
        failure = log.read_text(errors="replace")
        if "already in use" not in failure:
            break
    raise RuntimeError(f"make lab did not start a server:\n{failure}")


@pytest.fixture(scope="module")
def make_lab(tmp_path_factory):
    """`make lab` running on a free local port; yields a Lab."""
    home = tmp_path_factory.mktemp("make-lab")
    token = secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=str(home / "ipython"),
    )
    env.pop("MAKEFLAGS", None)
    process, lab = _start(home, env, token)
    try:
        yield lab
    finally:
        _stop(process)


def test_the_projects_settings_are_loaded(make_lab):
    """The settings API serves the notification plugin with the project's defaults: news
    never fetched (so never asked about), no update checks; the user's own settings are
    empty, so these come from lab-settings/, not from a profile."""
    with urllib.request.urlopen(make_lab.get(f"/lab/api/settings/{NOTIFICATION_PLUGIN}")) as r:
        served = json.load(r)
    defaults = {k: v.get("default") for k, v in served["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false"
    assert defaults["checkForUpdates"] is False
    assert json.loads(served["raw"] or "{}") == {}
    overrides = json.loads((REPO / "lab-settings" / "overrides.json").read_text())
    for key, value in overrides[NOTIFICATION_PLUGIN].items():
        assert defaults[key] == value


def test_the_start_page_is_the_start_notebook(make_lab):
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(make_lab.get("/"))
    assert redirect.value.code == 302
    location = redirect.value.headers["Location"].split("?")[0]
    assert location.endswith(f"/lab/tree/{START_NOTEBOOK}")


def test_lab_opens_clean_in_a_browser(make_lab, chromium_page):
    """What a learner sees after `make lab`: the start notebook open and active, and no
    toast or dialog asking anything."""
    page = chromium_page
    page.goto(f"{make_lab.url}/?token={make_lab.token}")
    tab = page.locator(f".lm-TabBar-tab.lm-mod-current >> text={Path(START_NOTEBOOK).name}")
    tab.first.wait_for(timeout=60_000)
    # the notebook's own first heading, rendered (not an empty "untitled" notebook)
    page.locator(".jp-Notebook .jp-RenderedMarkdown h1", has_text="Start here").first.wait_for(
        timeout=60_000
    )
    page.wait_for_timeout(QUIET_PERIOD_MS)
    toasts = page.locator(".Toastify__toast")
    texts = [toasts.nth(i).inner_text() for i in range(toasts.count())]
    assert texts == [], f"JupyterLab showed notifications: {texts}"
    assert page.locator(".jp-Dialog").count() == 0
    assert "Jupyter news" not in page.locator("body").inner_text()


def _kernel_state(lab: Lab, notebook: str) -> str | None:
    with urllib.request.urlopen(lab.get("/api/sessions")) as r:
        sessions = json.load(r)
    for session in sessions:
        if session["path"] == notebook:
            return session["kernel"]["execution_state"]
    return None


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=REPO, capture_output=True, text=True, check=True).stdout


def test_working_in_a_lesson_changes_nothing_git_tracks(make_lab, chromium_page):
    """The lesson open is the learner's copy (my-lessons/, ignored by git), made from the
    learner version: JupyterLab writing the running Python's version into it, or the
    learner's answers saved into it, leave the repository as it was."""
    page = chromium_page
    before = _git_status()
    copy = json.loads((LEARNER_DIR / START_NOTEBOOK).read_text())  # (maybe worked in)
    learner = json.loads((REPO / "notebooks" / "learner" / START_NOTEBOOK).read_text())
    assert copy["cells"][0]["source"] == learner["cells"][0]["source"]
    page.goto(f"{make_lab.url}/?token={make_lab.token}")
    tab = page.locator(f".lm-TabBar-tab.lm-mod-current >> text={START_NOTEBOOK}")
    tab.first.wait_for(timeout=60_000)
    deadline = time.monotonic() + 60
    while _kernel_state(make_lab, START_NOTEBOOK) != "idle":
        assert time.monotonic() < deadline, "the start notebook's kernel never became idle"
        time.sleep(0.5)
    page.locator(".jp-Notebook").first.click()
    page.keyboard.press("Control+s")
    page.locator(".jp-mod-dirty").first.wait_for(state="detached", timeout=30_000)
    assert _git_status() == before

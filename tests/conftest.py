"""Shared pytest fixtures.

Nothing here imports minigrad or widgets at module level: collection must work while
those packages are incomplete, and a broken import should fail the tests that need it,
not every test.

Environment switches (set by .ci/run, so CI never skips silently):
  MINIGRAD_REQUIRE_TORCH=1    the `torch` fixture fails instead of skipping when the
                              reference PyTorch is not importable or is the wrong version.
  MINIGRAD_REQUIRE_BROWSER=1  browser tests fail instead of skipping (tests/browser).
  MINIGRAD_REQUIRE_NBGRADER=1 the `nbgrader` fixture fails instead of skipping when the
                              `nbgrader` extra is not installed (or not its version).
  MINIGRAD_REQUIRE_HUB=1      the `hub_machine` fixture (tests/hub) fails instead of skipping
                              when the machine cannot run a JupyterHub with local accounts
                              (not root, or npm, git, useradd or a shared Python missing).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TORCH_VERSION = "2.13.0"
NBGRADER_VERSION = "0.9.6"  # the `nbgrader` extra's pin (pyproject.toml)


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def skip_or_fail(reason: str, require_var: str) -> None:
    """Skip the current test, or fail it if `require_var` is set."""
    if env_flag(require_var):
        pytest.fail(f"{reason} (and {require_var} is set, so this is an error)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def torch():
    """The real PyTorch, the reference minigrad is compared with.

    Skips when torch is absent (or not version 2.13.0); fails instead under
    MINIGRAD_REQUIRE_TORCH=1. Install it with `.venv/bin/pip install torch==2.13.0`.
    """
    try:
        import torch as real_torch
    except ImportError as exc:
        skip_or_fail(f"PyTorch is not installed ({exc})", "MINIGRAD_REQUIRE_TORCH")
    version = real_torch.__version__.split("+")[0]
    if version != TORCH_VERSION:
        skip_or_fail(
            f"parity is defined against torch=={TORCH_VERSION}, found {real_torch.__version__}",
            "MINIGRAD_REQUIRE_TORCH",
        )
    return real_torch


@pytest.fixture(scope="session")
def nbgrader():
    """The nbgrader package, for the tests that run the real nbgrader on the course.

    Skips when it is absent (or not the pinned version); fails instead under
    MINIGRAD_REQUIRE_NBGRADER=1. Install it with `.venv/bin/pip install -e ".[nbgrader]"`.
    """
    try:
        import nbgrader as module
    except ImportError as exc:
        skip_or_fail(f"nbgrader is not installed ({exc})", "MINIGRAD_REQUIRE_NBGRADER")
    if module.__version__ != NBGRADER_VERSION:
        skip_or_fail(
            f"the course is graded with nbgrader=={NBGRADER_VERSION}, found "
            f"{module.__version__}", "MINIGRAD_REQUIRE_NBGRADER",
        )
    return module


# the Python the hub's course environment is made from: every account must be able to run
# it (not a pyenv under /root); MINIGRAD_HUB_PYTHON overrides it
HUB_PYTHON = os.environ.get("MINIGRAD_HUB_PYTHON", "/usr/bin/python3")


def hub_problem() -> str | None:
    """Why this machine cannot run the hub test (tests/hub), or None."""
    if os.geteuid() != 0:
        return "root is missing (needed for the hub test: it creates local accounts)"
    for tool in ("npm", "git", "useradd", "userdel", "chpasswd"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (needed for the hub test)"
    if not os.access(HUB_PYTHON, os.X_OK):
        return f"{HUB_PYTHON} is missing (needed for the hub test; set MINIGRAD_HUB_PYTHON)"
    return None


@pytest.fixture(scope="session")
def hub_machine() -> str:
    """This machine can run a JupyterHub with local accounts: returns the Python to make
    the course's environment from. Skips otherwise; fails under MINIGRAD_REQUIRE_HUB=1."""
    problem = hub_problem()
    if problem:
        skip_or_fail(problem, "MINIGRAD_REQUIRE_HUB")
    return HUB_PYTHON


def load_site_builder():
    """docs/site/build.py as a module (it is a script, not part of a package)."""
    if "minigrad_site_build" in sys.modules:
        return sys.modules["minigrad_site_build"]
    spec = importlib.util.spec_from_file_location(
        "minigrad_site_build", REPO / "docs" / "site" / "build.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def site_builder():
    return load_site_builder()


@pytest.fixture(scope="session")
def site_html(site_builder) -> Path:
    """The static course site's HTML folder (build/site/html).

    `make test` runs `make site` first; a focused pytest run builds it here when the build
    is missing or older than the notebooks, README, guide or site code it is made from.
    Under pytest-xdist every worker has its own session, so the build holds a lock file:
    the first worker builds, the others wait and then find the build up to date (a
    second build would delete the HTML folder under the first one's readers).
    """
    lock_path = site_builder.OUT.parent / ".site-build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if site_builder.is_stale():
                try:
                    import myst_nb  # noqa: F401
                except ImportError:
                    pytest.fail("the site is not built and myst-nb is missing: run `make site`")
                assert site_builder.main([]) == 0
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return site_builder.HTML


def pytest_collection_modifyitems(config, items):
    # Tests comparing against real PyTorch get the `parity` marker (`-m "not parity"`),
    # tests running nbgrader the `nbgrader` marker, the hub test the `hub` marker.
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "torch" in fixtures:
            item.add_marker(pytest.mark.parity)
        if "nbgrader" in fixtures:
            item.add_marker(pytest.mark.nbgrader)
        if "hub_machine" in fixtures:
            item.add_marker(pytest.mark.hub)

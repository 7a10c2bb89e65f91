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
"""

from __future__ import annotations

import os

import pytest

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


def pytest_collection_modifyitems(config, items):
    # Tests comparing against real PyTorch get the `parity` marker (`-m "not parity"`),
    # tests running nbgrader the `nbgrader` marker.
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "torch" in fixtures:
            item.add_marker(pytest.mark.parity)
        if "nbgrader" in fixtures:
            item.add_marker(pytest.mark.nbgrader)

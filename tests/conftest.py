"""Shared pytest fixtures.

Nothing here imports minigrad or widgets at module level: collection must work while
those packages are incomplete, and a broken import should fail the tests that need it,
not every test.

Environment switches (set by .ci/run, so CI never skips silently):
  MINIGRAD_REQUIRE_TORCH=1    the `torch` fixture fails instead of skipping when the
                              reference PyTorch is not importable or is the wrong version.
  MINIGRAD_REQUIRE_BROWSER=1  browser tests fail instead of skipping (tests/browser).
"""

from __future__ import annotations

import os

import pytest

TORCH_VERSION = "2.13.0"


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


def pytest_collection_modifyitems(config, items):
    # Tests comparing against real PyTorch get the `parity` marker (`-m "not parity"`).
    for item in items:
        if "torch" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.parity)

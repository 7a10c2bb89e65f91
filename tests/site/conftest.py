"""The static course site (docs/site/build.py): `site_html` is its built HTML folder.

`make test` runs `make site` first; a focused pytest run builds it here when the build is
missing or older than the notebooks, README, guide or site code it is made from.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


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
    if site_builder.is_stale():
        try:
            import myst_nb  # noqa: F401
        except ImportError:
            pytest.fail("the site is not built and myst-nb is missing: run `make site`")
        assert site_builder.main([]) == 0
    return site_builder.HTML

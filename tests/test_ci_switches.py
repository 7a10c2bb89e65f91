"""The MINIGRAD_REQUIRE_* switches turn skips into failures (so CI never skips silently).

`make test` runs pytest in pytest-xdist workers, so each switch is checked both in a
plain run and in one spread over workers: a failure in a worker must reach the exit
status of the run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent

USES_TORCH = """
import sys
sys.modules["torch"] = None  # make `import torch` fail, as if it were not installed

def test_parity(torch):
    assert False, "must not run without torch"
"""

USES_NBGRADER = """
import sys
sys.modules["nbgrader"] = None  # make `import nbgrader` fail, as if it were not installed

def test_round_trip(nbgrader):
    assert False, "must not run without nbgrader"
"""

USES_HUB = """
import os
os.environ["PATH"] = "/no-tools-here"  # as if npm, git and useradd were not installed

def test_class(hub_machine):
    assert False, "must not run without the hub's tools"
"""

# the inner runs load no plugin by themselves (see below): xdist is named
RUNS = {"serial": (), "xdist": ("-p", "xdist.plugin", "-n", "2")}

USES_BROWSER = """
def test_page(chromium_context):
    assert False, "must not run without chromium"
"""


@pytest.fixture(autouse=True)
def _fast_inner_pytest(monkeypatch):
    # the inner runs need no third-party plugin; loading nbval & co costs seconds
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.delenv("MINIGRAD_REQUIRE_TORCH", raising=False)
    monkeypatch.delenv("MINIGRAD_REQUIRE_BROWSER", raising=False)
    monkeypatch.delenv("MINIGRAD_REQUIRE_NBGRADER", raising=False)
    monkeypatch.delenv("MINIGRAD_REQUIRE_HUB", raising=False)
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    parity: x\n    browser: x\n    nbgrader: x\n"
                     "    hub: x\n")
    return pytester


# (test file, the switch, what the skip says, the marker its fixture adds)
FIXTURES = {
    "torch": (USES_TORCH, "MINIGRAD_REQUIRE_TORCH", "PyTorch is not installed", "parity"),
    "nbgrader": (USES_NBGRADER, "MINIGRAD_REQUIRE_NBGRADER", "nbgrader is not installed",
                 "nbgrader"),
    # not root, or root without the tools: either way the hub test says what is missing
    "hub": (USES_HUB, "MINIGRAD_REQUIRE_HUB", "is missing (needed for the hub test", "hub"),
}


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("required", [False, True])
@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_missing_package_skips_or_fails(project, monkeypatch, fixture, required, run):
    source, switch, reason, _ = FIXTURES[fixture]
    if required:
        monkeypatch.setenv(switch, "1")
    project.makepyfile(test_needs_it=source)
    result = project.runpytest_subprocess("-rs", *RUNS[run])
    if required:
        result.assert_outcomes(errors=1)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines([f"*{reason}*{switch} is set*"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines([f"*{reason}*"])


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_the_fixture_marks_its_tests(project, fixture):
    source, _, _, marker = FIXTURES[fixture]
    project.makepyfile(test_needs_it=source)
    result = project.runpytest_subprocess("-m", f"not {marker}")
    result.assert_outcomes(deselected=1)


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("required", [False, True])
def test_missing_chromium_skips_or_fails(pytester, monkeypatch, required, run):
    monkeypatch.setenv("MINIGRAD_CHROMIUM", str(pytester.path / "no-chromium-here"))
    if required:
        monkeypatch.setenv("MINIGRAD_REQUIRE_BROWSER", "1")
    else:
        monkeypatch.delenv("MINIGRAD_REQUIRE_BROWSER", raising=False)
    pytester.makeconftest((TESTS / "browser" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    browser: x\n")
    pytester.makepyfile(test_page=USES_BROWSER)
    result = pytester.runpytest_subprocess("-rs", *RUNS[run])
    if required:
        result.assert_outcomes(errors=1)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(["*no-chromium-here is missing*MINIGRAD_REQUIRE_BROWSER*"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["*no-chromium-here is missing*"])


def test_a_run_over_workers_that_collects_nothing_exits_5(project):
    # `make test` turns exit status 5 into "pytest collected no tests", a failure
    project.makepyfile(test_nothing="")
    result = project.runpytest_subprocess(*RUNS["xdist"])
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED

"""Where numba keeps minigrad's compiled kernels, and that a later run finds them.

Each check runs minigrad in fresh processes (numba reads its cache settings at start):
an install of one's own caches next to the kernels, a read-only install (a hub's shared
environment) in the user's numba folder, and a read-only install whose owner compiled
the kernels ahead (`python -m minigrad.warmup` when building an image) hands them to
each user at the first import, so the user's first run compiles nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad

PACKAGE = Path(minigrad.__file__).resolve().parent
# root may write anywhere: as root, the learner runs without root's capabilities, so
# the folder's permissions apply to it as to anyone
AS_LEARNER = (["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"]
              if os.geteuid() == 0 and shutil.which("setpriv") else [])

# a first backward, reporting the minigrad kernels numba compiled (its compile events
# fire only on a cache miss) and where minigrad says the cache is
PROGRAM = """
import json
from numba.core import event
compiled = []
class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__module__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Compiles())
import minigrad
from minigrad.kernels.cache import cache_dir
x = minigrad.tensor([1.0, 2.0], requires_grad=True)
(x.exp() * x).sum().backward()
print(json.dumps({"package": minigrad.__file__, "cache": str(cache_dir()),
                  "compiled": [m for m in compiled if m.startswith("minigrad.")]}))
"""


def _install(tmp_path: Path) -> Path:
    """A copy of the minigrad package (no compiled kernels) in its own folder."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "minigrad",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return site


def _run(site: Path, home: Path, learner: bool = False, env: dict | None = None) -> dict:
    """PROGRAM run against the copy at `site`, for a user whose home is `home`."""
    full = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    full.update({"PYTHONPATH": str(site), "HOME": str(home), "MINIGRAD_COMPILE_NOTICE": "off",
                 **(env or {})})
    home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([*(AS_LEARNER if learner else []), sys.executable, "-c", PROGRAM],
                          env=full, capture_output=True, text=True, cwd=home)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["package"].startswith(str(site))
    return result


@pytest.fixture
def read_only():
    """Takes away write permission from an install's folders (given back after)."""
    if os.geteuid() == 0 and not AS_LEARNER:
        pytest.skip("running as root without setpriv: cannot make a folder read-only")
    folders: list[Path] = []

    def make(site: Path) -> None:
        for root, dirs, _ in os.walk(site):
            folders.extend(Path(root, d) for d in dirs)
        for folder in folders:
            folder.chmod(0o555)

    yield make
    for folder in folders:
        folder.chmod(0o755)


@pytest.mark.slow
def test_an_own_install_caches_next_to_the_kernels_and_a_second_run_compiles_nothing(
        tmp_path):
    site = _install(tmp_path)
    first = _run(site, tmp_path)
    assert first["cache"] == str(site / "minigrad" / "kernels" / "__pycache__")
    assert first["compiled"]  # (an empty cache: the kernels compile)
    assert any(f.suffix == ".nbi" for f in (site / "minigrad/kernels/__pycache__").iterdir())
    assert _run(site, tmp_path)["compiled"] == []


@pytest.mark.slow
def test_a_read_only_install_caches_in_the_users_numba_folder(tmp_path, read_only):
    site, home = _install(tmp_path), tmp_path / "learner"
    read_only(site)
    first = _run(site, home, learner=True)
    assert first["cache"].startswith(str(home / ".cache" / "numba"))
    assert first["compiled"]
    assert any(Path(first["cache"]).glob("*.nbi"))
    assert not (site / "minigrad" / "kernels" / "__pycache__").exists()
    assert _run(site, home, learner=True)["compiled"] == []


@pytest.mark.slow
def test_kernels_compiled_ahead_reach_a_read_only_installs_new_user(tmp_path, read_only):
    # the image builder (the install's owner) runs the kernels once ...
    site, home = _install(tmp_path), tmp_path / "learner"
    assert _run(site, tmp_path)["compiled"]
    # ... then a learner, who may not write there, compiles nothing in a first run
    read_only(site)
    first = _run(site, home, learner=True)
    assert first["cache"].startswith(str(home / ".cache" / "numba"))
    assert first["compiled"] == []


def test_the_first_compile_says_so_once_and_a_warm_cache_says_nothing(tmp_path):
    code = ("import minigrad\n"
            "for dt in (minigrad.float32, minigrad.float64):\n"
            "    (minigrad.ones(3, dtype=dt) * minigrad.ones(3, dtype=dt)).neg()\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop("MINIGRAD_COMPILE_NOTICE", None)

    def notices(**extra) -> list[str]:
        done = subprocess.run([sys.executable, "-c", code], env={**env, **extra},
                              capture_output=True, text=True, check=True)
        return [line for line in done.stderr.splitlines() if line.startswith("minigrad:")]

    first = notices()
    assert len(first) == 1 and "compiling kernels" in first[0] and str(tmp_path) in first[0]
    assert notices() == []  # (cached now)
    shutil.rmtree(tmp_path)
    assert notices(MINIGRAD_COMPILE_NOTICE="off") == []


def test_the_warmup_programs_run(monkeypatch):
    """Every program `python -m minigrad.warmup` runs works in both dtypes (in this
    process: the kernels are this worktree's, compiled or loaded as usual)."""
    from minigrad import warmup

    for task in warmup.TASKS:
        name, dt, seconds = warmup.run_task(task)
        assert (name, dt) == task and seconds >= 0
    # every kernel a lesson calls has run (so after `make lab` no lesson starts a helper
    # compiling ahead: `kernels.ahead`)
    from importlib import import_module

    from minigrad.kernels import ahead

    for module, kernel, _ in ahead.kernels_for(None):
        assert getattr(import_module(module), kernel).signatures, kernel

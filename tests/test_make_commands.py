"""The README's two commands as a newcomer runs them, read from the Makefile itself."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_lab_adds_allow_root_only_for_root():
    """Jupyter refuses root without --allow-root; `make lab` adds it for root only."""
    def dry_run(*prefix: str) -> str:
        """The command `make lab` would run (its recipe's lines joined)."""
        done = subprocess.run([*prefix, "make", "--no-print-directory", "-n", "lab"],
                              cwd=REPO, capture_output=True, text=True, check=True)
        commands = done.stdout.replace("\\\n", " ").splitlines()
        return next(line for line in commands if "jupyter lab" in line)

    if os.getuid() != 0:
        assert "--allow-root" not in dry_run()
        pytest.skip("the root half needs root")
    assert "--allow-root" in dry_run()
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    assert "--allow-root" not in dry_run(*nobody)


def test_every_notebook_stores_the_kernelspec_make_installs():
    """JupyterLab writes the running kernel's spec into a notebook it opens: a stored spec
    that differs marks the lesson modified, and autosave rewrites a tracked file."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    installed = {"name": "python3", "display_name": spec.display_name,
                 "language": spec.language}
    notebooks = sorted((REPO / "notebooks").rglob("*.ipynb"))
    assert len(notebooks) >= 26
    for path in notebooks:
        stored = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
        assert stored == installed, path.relative_to(REPO)


def test_lab_copies_the_learner_lessons_and_keeps_a_learners_work(tmp_path):
    """`make lab` opens the learner's own copies: missing ones are copied from
    notebooks/learner/, a copy already there (the learner's answers) is left alone."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lab_workspace",
                                                  REPO / "scripts" / "lab_workspace.py")
    workspace = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(workspace)
    lessons = sorted(p.name for p in (REPO / "notebooks" / "learner").glob("*.ipynb"))
    mine = tmp_path / "my-lessons"
    assert workspace.copy_lessons(mine) == lessons
    worked = mine / lessons[0]
    worked.write_text('{"my": "answers"}')
    (mine / lessons[1]).unlink()
    assert workspace.copy_lessons(mine) == [lessons[1]]
    assert worked.read_text() == '{"my": "answers"}'
    for name in lessons[1:]:
        assert (mine / name).read_bytes() == (REPO / "notebooks" / "learner" / name).read_bytes()


def test_git_ignores_the_learners_lessons():
    done = subprocess.run(["git", "check-ignore", "-q", "my-lessons/00_start_here.ipynb"],
                          cwd=REPO)
    assert done.returncode == 0

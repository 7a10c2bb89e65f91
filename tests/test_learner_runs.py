"""The generated learner notebooks are stored without outputs, and run top to bottom:
every exercise says "Not yet solved" and Run All carries on to the end of the lesson (a
stub is no error). The run happens here, in memory; nothing of it is stored."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
LEARNER = sorted((ROOT / "notebooks" / "learner").glob("*.ipynb"))
NOT_SOLVED = "Not yet solved: exercise '{name}'. Replace the stub"


def _check_cells(nb):
    """(exercise name, cell) for every cell that calls check("name", ...)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and 'check("' in cell.source:
            yield cell.source.split('check("', 1)[1].split('"', 1)[0], cell


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_stored_learner_notebooks_keep_no_outputs():
    # as nbgrader releases them: an output would give away a "predict" exercise's answer
    for path in LEARNER:
        nb = nbformat.read(path, as_version=4)
        assert list(_check_cells(nb)), path.name
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, (
                    path.name, cell.source[:60])


def test_every_lesson_has_a_learner_version():
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert [p.name for p in LEARNER] == lessons and len(lessons) >= 11


@pytest.mark.slow
@pytest.mark.parametrize("path", LEARNER, ids=lambda p: p.stem)
def test_learner_notebook_runs_all_cells_past_its_unsolved_exercises(path, tmp_path,
                                                                     monkeypatch):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # forget the stored run: this one starts from scratch
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = None, []
    client = NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    # the kernel inherits this: its checks must not touch the learner's own progress
    monkeypatch.setenv("MINIGRAD_COURSE_PROGRESS", str(tmp_path / "progress.json"))
    client.execute()  # raises CellExecutionError at the first failing cell: none expected
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)  # every cell ran, to the last one
    for name, cell in _check_cells(nb):
        assert NOT_SOLVED.format(name=name) in _text(cell)

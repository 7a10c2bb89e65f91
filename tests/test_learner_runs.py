"""The generated learner notebooks open and run, top to bottom, up to their first
exercise, and stop there with the clear "not yet solved" message."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
LEARNER = sorted((ROOT / "notebooks" / "learner").glob("*.ipynb"))


def test_stored_learner_notebooks_show_not_yet_solved_at_every_exercise():
    for path in LEARNER:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code" or "check(" not in cell.source:
                continue
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert [e.ename for e in errors] == ["NotSolvedYet"], (path.name, cell.source)
            assert errors[0].traceback == [f"NotSolvedYet: {errors[0].evalue}"]


def test_every_lesson_has_a_learner_version():
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert [p.name for p in LEARNER] == lessons and len(lessons) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("path", LEARNER, ids=lambda p: p.stem)
def test_learner_notebook_stops_at_its_first_exercise(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # forget the stored run: this one starts from scratch
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = None, []
    first_stub = next(i for i, cell in enumerate(nb.cells)
                      if cell.cell_type == "code" and "not yet solved" in cell.source)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    with pytest.raises(CellExecutionError) as stopped:
        client.execute()
    assert "NotSolvedYet" in str(stopped.value)
    assert "is not yet solved: replace the stub" in str(stopped.value)
    ran = [i for i, cell in enumerate(nb.cells)
           if cell.cell_type == "code" and cell.get("execution_count")]
    assert max(ran) == first_stub  # everything before the exercise ran; it stopped there
    errors = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
              and any(o.get("output_type") == "error" for o in cell.get("outputs", []))]
    assert errors == [first_stub]

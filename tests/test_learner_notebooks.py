"""scripts/make_learner_notebooks.py: solution stripping, determinism and --check."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "make_learner_notebooks.py"


@pytest.fixture(scope="module")
def mln():
    spec = importlib.util.spec_from_file_location("make_learner_notebooks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


EXERCISE = """\
import math

def grad_of_square(x):
    \"\"\"d(x**2)/dx\"\"\"
    ### BEGIN SOLUTION
    y = 2 * x
    return y
    ### END SOLUTION

class Checker:
    def run(self):
        for i in range(3):
            ### BEGIN SOLUTION
            print(i * 1234567)
            ### END SOLUTION
        return math.pi"""

INTRO = "# Lesson 1\n\nWhat does `grad_fn` hold?"
PLAIN_CODE = "a = 1\nb = a + 1\nprint(b)"


def write_course(folder: Path, name: str = "01_tour.ipynb", cells=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if cells is None:
        solved = new_code_cell(EXERCISE, execution_count=7)
        solved.outputs = [new_output("stream", name="stdout", text="SECRET-ANSWER-2469134\n")]
        plain = new_code_cell(PLAIN_CODE, execution_count=8)
        plain.outputs = [new_output("stream", name="stdout", text="2\n")]
        plain.metadata["tags"] = ["keep-me"]
        cells = [new_markdown_cell(INTRO), solved, plain]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    path = folder / name
    nbformat.write(nb, path)
    return path


def learner_cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def test_solution_blocks_become_stubs_with_their_indentation(mln, tmp_path):
    src = write_course(tmp_path / "nb")
    assert mln.main(["--notebooks", str(src.parent)]) == 0

    out = src.parent / "learner" / src.name
    code = learner_cells(out)[1].source
    assert code.splitlines() == [
        "import math",
        "",
        "def grad_of_square(x):",
        '    """d(x**2)/dx"""',
        '    raise NotImplementedError("not yet solved: write your code here")',
        "",
        "class Checker:",
        "    def run(self):",
        "        for i in range(3):",
        '            raise NotImplementedError("not yet solved: write your code here")',
        "        return math.pi",
    ]
    text = out.read_text()
    assert "SOLUTION" not in text
    assert "2 * x" not in text and "1234567" not in text


def test_stubbed_function_raises_not_yet_solved(mln):
    learner = mln.strip_solutions(EXERCISE)
    namespace: dict = {}
    exec(learner, namespace)  # the stubbed cell itself still runs
    with pytest.raises(NotImplementedError, match="^not yet solved"):
        namespace["grad_of_square"](3.0)


def test_named_stub_assigns_not_implemented_and_keeps_running(mln):
    source = "x = 3\nif True:\n    ### BEGIN SOLUTION: answer, grads\n    answer = x * 2\n" \
             "    grads = [1, 2]\n    ### END SOLUTION\nafter = 'ran'"
    learner = mln.strip_solutions(source)
    assert learner.splitlines()[2:4] == [
        "    answer = NotImplemented  # not yet solved: write your code here",
        "    grads = NotImplemented  # not yet solved: write your code here",
    ]
    namespace: dict = {}
    exec(learner, namespace)
    assert namespace["answer"] is NotImplemented
    assert namespace["grads"] is NotImplemented
    assert namespace["after"] == "ran"


def test_markdown_solution_is_replaced(mln):
    source = "Why does this fail?\n\n### BEGIN SOLUTION\nBecause mul saved x.\n" \
             "### END SOLUTION\n\nNext part."
    learner = mln.strip_solutions(source, cell_type="markdown")
    assert learner == ("Why does this fail?\n\n*Not yet solved: write your answer here.*\n"
                       "\nNext part.")


def test_hidden_tests_are_removed_without_a_stub(mln):
    # an nbgrader grade cell: the learner keeps the comment, not the test
    source = ('# nbgrader grades exercise "l0_x" here\n### BEGIN HIDDEN TESTS\n'
              'grade("l0_x", answer_0_1)\n### END HIDDEN TESTS\nafter = 1')
    assert mln.strip_solutions(source) == '# nbgrader grades exercise "l0_x" here\nafter = 1'
    # nbgrader's ClearSolutions step leaves them for its own ClearHiddenTests step
    kept = mln.strip_solutions("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n" + source,
                               remove_hidden_tests=False)
    assert kept == 'raise NotImplementedError("not yet solved: write your code here")\n' + source


@pytest.mark.parametrize(
    ("source", "cell_type", "message"),
    [
        ("### BEGIN HIDDEN TESTS\nx = 2", "code",
         r"line 1: '### BEGIN HIDDEN TESTS' is never closed by '### END HIDDEN TESTS'"),
        ("### BEGIN HIDDEN TESTS\nx = 2\n### END SOLUTION", "code",
         r"line 3: '### END SOLUTION' without a matching '### BEGIN SOLUTION'"),
        ("### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS", "code",
         r"line 2: '### BEGIN HIDDEN TESTS' inside the block opened at line 1 .*"
         r"'### END SOLUTION' missing"),
        ("# BEGIN HIDDEN TESTS\nx = 2\n### END HIDDEN TESTS", "code",
         r"line 1: malformed hidden-tests marker"),
        ("### BEGIN HIDDEN TESTS\nx\n### END HIDDEN TESTS", "markdown",
         r"line 1: hidden tests belong in a code cell"),
    ],
)
def test_bad_hidden_test_markers_raise_a_clear_error(mln, source, cell_type, message):
    with pytest.raises(mln.SolutionMarkerError, match=message):
        mln.strip_solutions(source, cell_type=cell_type, where="lesson.ipynb: cell 3")


def test_outputs_cleared_and_other_cells_untouched(mln, tmp_path):
    src = write_course(tmp_path / "nb")
    mln.main(["--notebooks", str(src.parent)])
    course = nbformat.read(src, as_version=4)
    learner = nbformat.read(src.parent / "learner" / src.name, as_version=4)

    assert [c.id for c in learner.cells] == [c.id for c in course.cells]
    assert [c.cell_type for c in learner.cells] == ["markdown", "code", "code"]
    md, solved, plain = learner.cells
    assert md.source == INTRO and md.metadata == course.cells[0].metadata
    assert plain.source == PLAIN_CODE
    assert plain.metadata == {"tags": ["keep-me"]}
    for cell in (solved, plain):
        assert cell.outputs == [] and cell.execution_count is None
    assert "SECRET-ANSWER" not in (src.parent / "learner" / src.name).read_text()
    assert "widgets" not in learner.metadata
    assert learner.metadata["kernelspec"]["name"] == "python3"
    assert learner.metadata["minigrad_course"]["generated_from"] == src.name


def test_output_is_deterministic_and_ids_are_stable(mln, tmp_path):
    folder = tmp_path / "nb"
    folder.mkdir()
    # an nbformat 4.4 notebook has no cell ids: the learner copy gets derived ones
    raw = {"nbformat": 4, "nbformat_minor": 4, "metadata": {},
           "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                      "outputs": [], "source": ["### BEGIN SOLUTION\n", "x = 1\n",
                                                "### END SOLUTION\n"]}]}
    (folder / "old.ipynb").write_text(json.dumps(raw))
    learner = folder / "learner" / "old.ipynb"

    mln.main(["--notebooks", str(folder)])
    first = learner.read_bytes()
    learner.unlink()
    mln.main(["--notebooks", str(folder)])
    assert learner.read_bytes() == first
    data = json.loads(first)
    assert list(data) == sorted(data)
    cell = data["cells"][0]
    assert len(cell["id"]) == 12
    assert "".join(cell["source"]) == 'raise NotImplementedError("not yet solved: write ' \
                                      'your code here")\n'
    assert first.endswith(b"}\n")


def test_check_passes_when_up_to_date(mln, tmp_path, capsys):
    src = write_course(tmp_path / "nb")
    mln.main(["--notebooks", str(src.parent)])
    assert mln.main(["--check", "--notebooks", str(src.parent)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_detects_changed_missing_and_stale_learner_notebooks(mln, tmp_path, capsys):
    folder = tmp_path / "nb"
    src = write_course(folder)
    write_course(folder, "02_inplace.ipynb")
    mln.main(["--notebooks", str(folder)])
    learner = folder / "learner"
    before = {p: p.read_bytes() for p in learner.glob("*.ipynb")}

    # the author edits a course notebook but forgets `make learner`
    nb = nbformat.read(src, as_version=4)
    nb.cells[2].source = "a = 2"
    nbformat.write(nb, src)
    (learner / "02_inplace.ipynb").unlink()
    (learner / "99_removed.ipynb").write_text(mln.render(new_notebook()))
    capsys.readouterr()

    assert mln.main(["--check", "--notebooks", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "Learner notebooks are out of date" in err
    assert "01_tour.ipynb: differs from its course notebook" in err
    assert "02_inplace.ipynb: missing" in err
    assert "99_removed.ipynb: has no course notebook (stale)" in err
    assert "make learner" in err
    # --check never writes
    assert (learner / "01_tour.ipynb").read_bytes() == before[learner / "01_tour.ipynb"]

    # regenerating fixes all three
    mln.main(["--notebooks", str(folder)])
    assert not (learner / "99_removed.ipynb").exists()
    assert mln.main(["--check", "--notebooks", str(folder)]) == 0


def test_check_with_no_notebooks_folder_passes(mln, tmp_path, capsys):
    assert mln.main(["--check", "--notebooks", str(tmp_path / "absent")]) == 0
    assert "0 checked" in capsys.readouterr().out


def test_checkpoints_are_not_course_notebooks(mln, tmp_path):
    folder = tmp_path / "nb"
    write_course(folder)
    write_course(folder / ".ipynb_checkpoints", "01_tour-checkpoint.ipynb")
    mln.main(["--notebooks", str(folder)])
    assert sorted(p.name for p in (folder / "learner").rglob("*.ipynb")) == ["01_tour.ipynb"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\n### BEGIN SOLUTION\nx = 2", r"line 2: '### BEGIN SOLUTION' is never closed"),
        ("x = 1\n### END SOLUTION", r"line 2: '### END SOLUTION' without a matching"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
         r"line 2: '### BEGIN SOLUTION' inside the block opened at line 1"),
        ("## BEGIN SOLUTION\nx = 2\n### END SOLUTION", r"line 1: malformed solution marker"),
        ("### BEGIN SOLUTION x\nx = 2\n### END SOLUTION", r"line 1: malformed solution marker"),
        ("### BEGIN SOLUTION: 2x\nx = 2\n### END SOLUTION", r"must list Python names"),
    ],
)
def test_bad_markers_raise_a_clear_error(mln, source, message):
    with pytest.raises(mln.SolutionMarkerError, match=message):
        mln.strip_solutions(source, where="lesson.ipynb: cell 3")


def test_bad_markers_fail_the_script_naming_notebook_and_cell(mln, tmp_path, capsys):
    folder = tmp_path / "nb"
    write_course(folder, cells=[new_markdown_cell(INTRO),
                                new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1")])
    assert mln.main(["--notebooks", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "01_tour.ipynb: cell 1, line 2: '### BEGIN SOLUTION' is never closed" in err
    assert not (folder / "learner").exists()


def test_execute_runs_every_learner_notebook_and_stores_nothing(mln, tmp_path,
                                                                 monkeypatch, capsys):
    # Learner notebooks keep no outputs (an output would answer a "predict" exercise);
    # --execute only shows that each one runs to the end.
    ran = []
    monkeypatch.setattr(mln, "run_problems", lambda path: ran.append(path.name) or [])
    folder = tmp_path / "nb"
    write_course(folder)
    write_course(folder, "02_inplace.ipynb")
    assert mln.main(["--notebooks", str(folder), "--execute"]) == 0
    assert sorted(ran) == ["01_tour.ipynb", "02_inplace.ipynb"]
    for path in (folder / "learner").glob("*.ipynb"):
        cells = [c for c in learner_cells(path) if c.cell_type == "code"]
        assert all(c.outputs == [] and c.execution_count is None for c in cells)
    ran.clear()
    assert mln.main(["--check", "--execute", "--notebooks", str(folder)]) == 0
    assert sorted(ran) == ["01_tour.ipynb", "02_inplace.ipynb"]

    monkeypatch.setattr(mln, "run_problems", lambda path: ["a cell raised: ValueError: x"])
    capsys.readouterr()
    assert mln.main(["--check", "--execute", "--notebooks", str(folder)]) == 1
    assert "01_tour.ipynb: a cell raised: ValueError: x" in capsys.readouterr().err


def test_a_learner_notebook_with_outputs_is_out_of_date(mln, tmp_path, capsys):
    folder = tmp_path / "nb"
    src = write_course(folder)
    mln.main(["--notebooks", str(folder)])
    learner = folder / "learner" / src.name
    nb = nbformat.read(learner, as_version=4)
    nb.cells[2].outputs = [new_output("stream", name="stdout", text="2\n")]
    nb.cells[2].execution_count = 1
    learner.write_text(mln.render(nb), encoding="utf-8")
    assert mln.main(["--check", "--notebooks", str(folder)]) == 1
    assert "differs from its course notebook" in capsys.readouterr().err


LESSONS = sorted((SCRIPT.parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_asks_a_prediction_a_transfer_and_a_why(path):
    """Exercises that test understanding: a prediction asked before the cell that
    reveals it, a transfer to new values or ops, and a multiple-choice 'why'."""
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert "(predict" in text and "(transfer)" in text, path.name
    assert any(c.cell_type == "code" and "show_choices(" in c.source for c in cells), path.name
    # every prediction is answered (its check cell) right where it is asked, before the
    # cells that follow reveal it
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and "(predict" in cell.source:
            assert cells[i + 1].cell_type == "code" and "check(" in cells[i + 1].source, (
                path.name, i)
    # ... and the first one comes inside the lesson: before its "Same code, real PyTorch"
    # section (the error clinic, which shows PyTorch throughout, has none: its summary)
    first_predict = next(i for i, c in enumerate(cells)
                         if c.cell_type == "markdown" and "(predict" in c.source)
    torch_section = next(i for i, c in enumerate(cells)
                         if c.cell_type == "markdown" and ("Same code, real PyTorch" in c.source
                                                           or c.source.startswith("## Summary")))
    assert first_predict < torch_section, path.name

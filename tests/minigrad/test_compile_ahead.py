"""Compiling a lesson's kernels ahead on a second core (`minigrad.kernels.ahead`): the
recorded lists name real kernels, the helper's kernels are found by the lesson's
process, a first compile in a Jupyter kernel starts the helper for its lesson, and
nothing starts in a script, in tests or when turned off."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import nbformat
import pytest
from numba import types
from numba.core.registry import CPUDispatcher
from test_compile_count import compiled_by  # (a program's compiles, in a process of its own)

from minigrad.kernels import ahead, cache


def _env(cache_dir, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "MINIGRAD_COMPILE_AHEAD"}
    return {**env, "NUMBA_CACHE_DIR": str(cache_dir), "MINIGRAD_COMPILE_NOTICE": "off", **extra}


def test_every_recorded_kernel_exists_with_types_numba_reads():
    recorded = json.loads(ahead.COURSE_KERNELS.read_text())["lessons"]
    assert sorted(recorded) == [f"{n:02d}" for n in range(13)]
    for lesson, kernels in recorded.items():
        assert kernels, lesson
        for module, name, args in kernels:
            kernel = getattr(__import__(module, fromlist=[name]), name)
            assert isinstance(kernel, CPUDispatcher), (module, name)
            assert all(isinstance(ahead.argument_type(a), types.Type) for a in args)


def test_the_helper_compiles_the_kernels_this_machine_runs():
    """The lists were recorded where PyTorch's kernels fuse a * b + c; under its
    portable kernels (no AVX2, or ATEN_CPU_CAPABILITY=default) tanh's backward and the
    optimizers' steps run the kernels that round twice, and those are the ones the
    helper compiles (and the ones `make lab`'s warm-up leaves in the cache)."""
    code = ("from minigrad.kernels import ahead; "
            "print(sorted({(m, k) for m, k, _ in ahead.kernels_for(None)}))")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    listed = ast.literal_eval(done.stdout)
    names = {name for _, name in listed}
    assert "tanh_backward_rounded_twice" in names and "_adam_common" in names
    assert not {"tanh_backward", "_sgd_common_fused", "_adam_common_fused"} & names
    for module, name in listed:
        assert isinstance(getattr(__import__(module, fromlist=[name]), name), CPUDispatcher)


def test_argument_types_are_read_as_numba_prints_them():
    for t in (types.Array(types.float32, 1, "C"), types.Array(types.int64, 2, "C"),
              types.Array(types.float64, 1, "A", readonly=True),
              types.Array(types.boolean, 1, "C"), types.float64, types.int64, types.boolean):
        assert ahead.argument_type(str(t)) == t


def test_a_lessons_kernels_come_last_used_first():
    recorded = json.loads(ahead.COURSE_KERNELS.read_text())["lessons"]["03"]
    order = ahead.kernels_for("03")
    assert order[0] == tuple(recorded[-1][:2]) + (tuple(recorded[-1][2]),)
    assert len(order) == len(set(order)) == len({(m, n, tuple(a)) for m, n, a in recorded})


def test_an_unknown_lesson_gets_every_lessons_kernels_once_the_commonest_first():
    every = ahead.kernels_for(None)
    assert len(every) == len(set(every))
    assert set(ahead.kernels_for("03")) < set(every)
    lessons = [set(ahead.kernels_for(f"{n:02d}")) for n in range(13)]
    uses = [sum(entry in kernels for kernels in lessons) for entry in every]
    assert uses == sorted(uses, reverse=True) and uses[0] >= 10


@pytest.mark.parametrize("name, lesson", [
    ("/home/learner/my-lessons/03_retain_graph.ipynb", "03"),
    ("notebooks/12_what_backward_keeps.ipynb", "12"),
    ("Untitled.ipynb", None), ("", None), ("03_retain_graph.py", None)])
def test_the_lesson_is_read_from_the_notebooks_name(monkeypatch, name, lesson):
    monkeypatch.setenv("JPY_SESSION_NAME", name)
    assert ahead.lesson_of_this_notebook() == lesson


def _first_cell(lesson: int) -> str:
    from benchmarks.coldstart import lesson_path

    cells = nbformat.read(lesson_path(lesson), as_version=4).cells
    return next(c.source for c in cells if c.cell_type == "code")


class _Shell:
    """What `lesson_of_this_notebook` reads of IPython's shell."""

    def __init__(self, running: str):
        self.user_ns = {}
        self.history_manager = type("History", (), {"input_hist_raw": ["", running]})()


@pytest.mark.parametrize("cell, lesson", [
    (_first_cell(3), "03"), (_first_cell(12) + "\n", "12"), (_first_cell(1), "01+05"),
    ("import minigrad as torch", None), (_first_cell(3) + "\nx = 1", None)])
def test_unnamed_the_lesson_is_read_from_its_first_cell(monkeypatch, cell, lesson):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    ipython = type("IPython", (), {"get_ipython": staticmethod(lambda: _Shell(cell))})
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    assert ahead.lesson_of_this_notebook() == lesson


def test_the_recorded_first_cells_are_the_lessons_and_their_learner_copies():
    from benchmarks.coldstart import lesson_path

    recorded = json.loads(ahead.COURSE_KERNELS.read_text())["first_cells"]
    for n in range(13):  # (else: python scripts/record_course_kernels.py --lessons n)
        assert recorded[f"{n:02d}"] == ahead.fingerprint(_first_cell(n)), n
        learner = lesson_path(n).parent / "learner" / lesson_path(n).name
        first = next(c for c in nbformat.read(learner, as_version=4).cells
                     if c.cell_type == "code")
        assert ahead.fingerprint(first.source) == recorded[f"{n:02d}"], n


def test_two_lessons_that_begin_alike_get_both_lessons_kernels():
    both = ahead.kernels_for("01+05")
    assert set(both) == set(ahead.kernels_for("01")) | set(ahead.kernels_for("05"))
    assert len(both) == len(set(both))


def test_the_helpers_kernels_are_found_by_the_lessons_process(tmp_path, monkeypatch):
    """The helper compiles lesson 0's kernels into an empty cache; a process that then
    compiles every one of them finds them all there and compiles nothing."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not ahead._done("00")
    helper = subprocess.run([sys.executable, "-m", "minigrad.kernels.ahead", "00",
                             str(os.getpid())], env=_env(tmp_path), timeout=300)
    assert helper.returncode == 0
    assert ahead._done("00") and not ahead._done("10")  # (the next import knows)
    program = ("from minigrad.kernels import ahead\n"
               "from importlib import import_module\n"
               "for module, name, args in ahead.kernels_for('00'):\n"
               "    getattr(import_module(module), name).compile(\n"
               "        tuple(ahead.argument_type(a) for a in args))\n")
    assert compiled_by("", program, tmp_path) == []


def test_the_helper_stops_when_its_lesson_has_gone(tmp_path):
    # (a parent that is not this process's parent: gone, as far as the helper can tell)
    assert ahead.compile_ahead("03", parent=os.getppid() + 1) == 0


def _notebook(path, source: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(nb, path)


def _run_in_a_kernel(path, env) -> None:
    """Run the notebook at `path` in a Jupyter kernel (nbclient's) started with `env`."""
    run = ("import sys, nbformat\n"
           "from nbclient import NotebookClient\n"
           "nb = nbformat.read(sys.argv[1], as_version=4)\n"
           "NotebookClient(nb, timeout=120, kernel_name='python3').execute()\n"
           "nbformat.write(nb, sys.argv[1])\n")
    subprocess.run([sys.executable, "-c", run, str(path)], env=env, check=True, timeout=300)


def _cached_kernels(cache_dir) -> set[str]:
    return {p.name.split(".")[1].split("-")[0] for p in cache_dir.rglob("*.nbi")}


def test_importing_minigrad_in_a_lessons_notebook_starts_the_helper(tmp_path):
    """A notebook named as lesson 11 imports minigrad and compiles nothing itself;
    meanwhile the helper compiles lesson 11's kernels."""
    path = tmp_path / "11_backward_graph_too.ipynb"
    _notebook(path, "import minigrad\nimport time\ntime.sleep(20)")
    cache_dir = tmp_path / "cache"
    _run_in_a_kernel(path, _env(cache_dir, JPY_SESSION_NAME=str(path)))
    assert _cached_kernels(cache_dir) & {name for _, name, _ in ahead.kernels_for("11")}


def test_the_first_compile_says_the_helper_is_at_work(tmp_path):
    path = tmp_path / "03_retain_graph.ipynb"
    _notebook(path, "import minigrad\nminigrad.ones(3, dtype=minigrad.float64).neg()")
    env = _env(tmp_path / "cache", JPY_SESSION_NAME=str(path))
    del env["MINIGRAD_COMPILE_NOTICE"]
    _run_in_a_kernel(path, env)
    said = "".join(out.text for out in nbformat.read(path, as_version=4).cells[0].outputs
                   if out.get("name") == "stderr")
    assert said.count("minigrad: compiling kernels") == 1
    assert "on a second core meanwhile" in said  # (started at import, named here)


def test_a_lessons_first_cell_starts_the_helper_where_the_notebook_is_not_named(tmp_path):
    """As on Colab: the kernel is not told the notebook's name; lesson 11's first cell
    is recognised, and the helper compiles lesson 11's kernels."""
    path = tmp_path / "Untitled.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells += [nbformat.v4.new_code_cell(_first_cell(11)),
                 nbformat.v4.new_code_cell("import time\ntime.sleep(20)")]
    nbformat.write(nb, path)
    env = _env(tmp_path / "cache")
    env.pop("JPY_SESSION_NAME", None)
    _run_in_a_kernel(path, env)
    lesson_only = {name for _, name, _ in ahead.kernels_for("11")} - {
        name for _, name, _ in ahead.kernels_for("00")}
    assert _cached_kernels(tmp_path / "cache") & lesson_only


def test_elsewhere_a_first_compile_starts_the_helper_for_every_lesson(tmp_path):
    """An untitled notebook (or one whose name the kernel is not told) starts nothing at
    import; its first compile starts the helper, with every lesson's kernels."""
    quiet, compiling = tmp_path / "quiet" / "Untitled.ipynb", tmp_path / "Untitled.ipynb"
    quiet.parent.mkdir()
    _notebook(quiet, "import minigrad\nimport time\ntime.sleep(5)")
    _notebook(compiling, "import minigrad\nminigrad.ones(3, dtype=minigrad.float64).neg()\n"
                         "import time\ntime.sleep(20)")
    _run_in_a_kernel(quiet, _env(tmp_path / "cache-quiet", JPY_SESSION_NAME=str(quiet)))
    assert _cached_kernels(tmp_path / "cache-quiet") == set()
    _run_in_a_kernel(compiling, _env(tmp_path / "cache", JPY_SESSION_NAME=str(compiling)))
    assert _cached_kernels(tmp_path / "cache") - {"neg"}


def test_nothing_starts_when_turned_off_or_outside_a_kernel(tmp_path, monkeypatch):
    path = tmp_path / "00_start_here.ipynb"
    _notebook(path, "import minigrad\nminigrad.ones(3, dtype=minigrad.float64).neg()\n"
                    "import time\ntime.sleep(5)")
    cache_dir = tmp_path / "cache"
    _run_in_a_kernel(path, _env(cache_dir, JPY_SESSION_NAME=str(path),
                                MINIGRAD_COMPILE_AHEAD="off"))
    assert _cached_kernels(cache_dir) == {"neg"}
    # a script: no Jupyter kernel, no helper
    script = "import minigrad, time\nminigrad.ones(3, dtype=minigrad.float64).neg()\n" \
             "time.sleep(5)\n"
    subprocess.run([sys.executable, "-c", script], env=_env(tmp_path / "script",
                   JPY_SESSION_NAME=str(path)), check=True, timeout=120)
    assert _cached_kernels(tmp_path / "script") == {"neg"}


def test_start_passes_the_lesson_and_its_own_process(monkeypatch):
    started = []

    class FakeProcess:
        def __init__(self, command, **kwargs):
            started.append((command, kwargs["env"]))

        def wait(self):
            return 0

    monkeypatch.setattr(ahead, "_started", False)
    monkeypatch.setattr(ahead.subprocess, "Popen", FakeProcess)
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel", object()))
    monkeypatch.setenv("JPY_SESSION_NAME", "/x/07_training_loops.ipynb")
    monkeypatch.delenv("MINIGRAD_COMPILE_AHEAD", raising=False)
    monkeypatch.setattr(ahead, "_done", lambda lesson: False)
    assert ahead.start_for_this_lesson() and not ahead.start("07")  # (once per process)
    (command, env), = started
    assert command[-3:] == ["minigrad.kernels.ahead", "07", str(os.getpid())]
    assert env["MINIGRAD_COMPILE_AHEAD"] == "off"  # (the helper starts no helper)
    monkeypatch.setattr(ahead, "_started", False)
    monkeypatch.setenv("MINIGRAD_COMPILE_AHEAD", "off")
    assert not ahead.start("07")
    # a lesson whose kernels a finished helper (or `make lab`'s warm-up) compiled
    monkeypatch.setattr(ahead, "_done", lambda lesson: lesson == "07")
    monkeypatch.delenv("MINIGRAD_COMPILE_AHEAD")
    assert not ahead.start_for_this_lesson()
    monkeypatch.setenv("JPY_SESSION_NAME", "/x/Untitled.ipynb")  # (no lesson: at import,
    assert not ahead.start_for_this_lesson()                     # nothing starts)
    assert started == [started[0]]


def test_cache_saves_take_a_lock_beside_the_cache(tmp_path):
    from numba.core.caching import Cache

    wrapped = Cache.save_overload
    assert getattr(wrapped, "serialised", False)
    cache.serialise_cache_writes()
    assert Cache.save_overload is wrapped  # (wrapped once, however often it is asked)
    program = "import minigrad\nminigrad.ones(3, dtype=minigrad.float64).neg()\n"
    subprocess.run([sys.executable, "-c", program], env=_env(tmp_path), check=True)
    assert list(tmp_path.rglob(".minigrad-save.lock"))

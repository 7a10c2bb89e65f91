"""What a fresh runtime costs: a lesson run top to bottom with the numba cache empty
(Colab, Binder, a new hub user, a CI run) and warm, and what compiles meanwhile.

    python -m benchmarks.coldstart [--lessons 1 7] [--compiles] [--no-ahead] [--unnamed]

prints, for each lesson, Run All's seconds in a fresh kernel with an empty numba
cache (`NUMBA_CACHE_DIR` pointed at a new temporary directory) and again with the
cache that run filled, in wall time and in the kernel process's CPU time (which a
busy shared host inflates far less), and the CPU time of the helper that compiled the
lesson's kernels ahead meanwhile (`minigrad.kernels.ahead`; `--no-ahead` runs the lesson
alone, `--unnamed` as Colab runs it, not naming the notebook to the kernel); with
`--compiles`, a table of the kernels a cold lesson compiles (kernel, signatures,
seconds), from numba's compile events.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def lesson_path(number: int) -> Path:
    (path,) = NOTEBOOKS.glob(f"{number:02d}_*.ipynb")
    return path


def _env(cache: str, ahead: bool = True) -> dict:
    # (without PYTHONDONTWRITEBYTECODE, which some hosts set: a learner's Python keeps
    # the modules' compiled bytecode, so a warm run does not compile them again)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("MINIGRAD_COMPILE_AHEAD", None)
    if not ahead:  # (the lesson alone: no helper compiling its kernels meanwhile)
        env["MINIGRAD_COMPILE_AHEAD"] = "off"
    return {**env, "NUMBA_CACHE_DIR": cache, "MPLBACKEND": "Agg"}


_RUN_ALL = """
import sys, time, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
# a last cell reports the CPU seconds the kernel's process used (on a shared host the
# wall time grows with the load, the CPU time much less), and those of the processes it
# started that have ended (the helper compiling kernels ahead: see minigrad.kernels.ahead)
nb.cells.append(nbformat.v4.new_code_cell(
    "import resource as _r\\n"
    "_u, _c = _r.getrusage(_r.RUSAGE_SELF), _r.getrusage(_r.RUSAGE_CHILDREN)\\n"
    "print(_u.ru_utime + _u.ru_stime, _c.ru_utime + _c.ru_stime)"))
start = time.perf_counter()
NotebookClient(nb, timeout=600, kernel_name="python3",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
print(time.perf_counter() - start, nb.cells[-1].outputs[0]["text"].strip())
"""


def run_all(notebook: Path, cache: str, ahead: bool = True,
            named: bool = True) -> tuple[float, float, float]:
    """(wall seconds, the kernel's CPU seconds, its helper's CPU seconds) of Run All in a
    fresh kernel (its start included) with the numba cache `cache`, as JupyterLab runs
    it (the server names the notebook to its kernel: `JPY_SESSION_NAME`; not `named`:
    as Colab runs it, unnamed). `ahead`: let minigrad start the helper that compiles
    the lesson's kernels ahead."""
    env = _env(cache, ahead)
    env.pop("JPY_SESSION_NAME", None)
    if named:
        env["JPY_SESSION_NAME"] = str(notebook)
    done = subprocess.run([sys.executable, "-c", _RUN_ALL, str(notebook), str(notebook.parent)],
                          env=env, capture_output=True, text=True, check=True)
    wall, cpu, helper = done.stdout.split()[-3:]
    return float(wall), float(cpu), float(helper)


def cold_and_warm(notebook: Path, ahead: bool = True, named: bool = True) -> tuple[tuple, tuple]:
    """Run All on an empty numba cache, then again on the cache it filled: (wall, CPU,
    helper CPU) seconds each (see `run_all`)."""
    with tempfile.TemporaryDirectory() as cache:
        cold = run_all(notebook, cache, ahead, named)
        time.sleep(1.0)  # (a helper still compiling stops once its kernel has gone)
        warm = run_all(notebook, cache, ahead, named)
    return cold, warm


# In a process of its own: run the lesson's code cells in IPython (magics and all) and
# record numba's compile events; each kernel's seconds exclude the kernels it compiled
# on the way (a kernel calling another compiles the callee inside its own compile).
_RECORD = """
import json, sys, time
import nbformat
from IPython.core.interactiveshell import InteractiveShell
from numba.core import event

stack, found, order = [], {}, []

class Recorder(event.Listener):
    def on_start(self, ev):
        if not stack:  # (a kernel the lesson calls, not one compiled inside another)
            d = ev.data["dispatcher"]
            order.append([d.py_func.__module__, d.py_func.__qualname__,
                          [str(a) for a in ev.data["args"]]])
        stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        start, inner = stack.pop()
        took = time.perf_counter() - start
        if stack:
            stack[-1][1] += took
        d = ev.data["dispatcher"]
        key = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
        sig = ", ".join(str(a) for a in ev.data["args"])
        entry = found.setdefault(key, {"signatures": [], "seconds": 0.0})
        entry["signatures"].append(sig)
        entry["seconds"] += took - inner

event.register("numba:compile", Recorder())
nb = nbformat.read(sys.argv[1], as_version=4)
shell = InteractiveShell.instance()
shell.enable_gui = lambda gui=None: None  # (`%matplotlib inline` needs a kernel's shell)
start = time.perf_counter()
for number, cell in enumerate(nb.cells):
    if cell.cell_type == "code":
        result = shell.run_cell(cell.source, silent=True)
        expected = "raises-exception" in cell.metadata.get("tags", [])
        if not (result.success or expected):  # (the rest of the lesson would not run)
            raise SystemExit(f"cell {number} failed: {result.error_in_exec!r}")
total = time.perf_counter() - start
print(json.dumps({"total": total, "kernels": found, "order": order}))
"""


def compiles(notebook: Path, cache: str | None = None) -> dict:
    """{"total": seconds, "kernels": {name: {"signatures", "seconds"}}, "order":
    [[module, function, [argument types]], ...]} for a run with the numba cache `cache`
    (by default a new, empty one); "order" lists the kernels the lesson itself called,
    in the order they first compiled."""
    if cache is None:
        with tempfile.TemporaryDirectory() as empty:
            return compiles(notebook, empty)
    done = subprocess.run([sys.executable, "-c", _RECORD, str(notebook)],
                          env=_env(cache, ahead=False),
                          capture_output=True, text=True, check=True, cwd=notebook.parent)
    return json.loads(done.stdout.splitlines()[-1])


def compile_table(found: dict, top: int = 25) -> str:
    kernels = sorted(found["kernels"].items(), key=lambda kv: -kv[1]["seconds"])
    total = sum(k["seconds"] for _, k in kernels)
    count = sum(len(k["signatures"]) for _, k in kernels)
    lines = [f"{count} compilations, {total:.1f} s compiling, "
             f"{found['total']:.1f} s for the lesson's cells",
             "| kernel | signatures | s |", "| --- | --- | --- |"]
    for name, k in kernels[:top]:
        sigs = "; ".join(sorted(set(k["signatures"])))
        if len(sigs) > 90:
            sigs = sigs[:87] + "..."
        lines.append(f"| {name.removeprefix('minigrad.')} | {len(k['signatures'])}: {sigs} "
                     f"| {k['seconds']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coldstart",
                                     description=__doc__)
    parser.add_argument("--lessons", nargs="+", type=int, default=list(range(13)))
    parser.add_argument("--compiles", action="store_true",
                        help="also list what the first lesson given compiles")
    parser.add_argument("--no-ahead", action="store_true",
                        help="no helper compiling the lesson's kernels ahead")
    parser.add_argument("--unnamed", action="store_true",
                        help="the kernel is not told the notebook's name (as on Colab)")
    args = parser.parse_args(argv)
    print("| lesson | Run All, empty cache (s) | warm (s) | cold/warm "
          "| kernel CPU, empty cache (s) | warm (s) | cold/warm | helper CPU (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in args.lessons:
        (cold, cold_cpu, helper), (warm, warm_cpu, _) = cold_and_warm(lesson_path(n),
                                                                     not args.no_ahead,
                                                                     not args.unnamed)
        print(f"| {lesson_path(n).stem} | {cold:.1f} | {warm:.1f} | {cold / warm:.2f} "
              f"| {cold_cpu:.1f} | {warm_cpu:.1f} | {cold_cpu / warm_cpu:.2f} "
              f"| {helper:.1f} |", flush=True)
    if args.compiles:
        print()
        print(compile_table(compiles(lesson_path(args.lessons[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

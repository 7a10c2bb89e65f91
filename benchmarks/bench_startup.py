"""Cold start: a fresh Python process importing the library and running one small
backward, with the numba cache warm and with it empty; `import torch` alongside; and a
fresh runtime's first lesson, Run All in a new kernel with the numba cache empty and
warm (`benchmarks/coldstart.py` does every lesson, and lists what compiles)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from ._common import Row

SMALL_BACKWARD = (
    "import {lib} as t\n"
    "x = t.tensor([1.0, 2.0], requires_grad=True)\n"
    "(x.exp() * x).sum().backward()\n"
    "assert x.grad is not None\n"
)


def _run(code: str, env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _median(code: str, times: int, env: dict | None = None) -> float:
    return statistics.median(_run(code, env) for _ in range(times))


def _torch_installed() -> bool:
    try:
        _run("import torch")
    except subprocess.CalledProcessError:
        return False
    return True


def run(quick: bool) -> list[Row]:
    repeat = 2 if quick else 5
    bare = _median("pass", repeat)
    _run(SMALL_BACKWARD.format(lib="minigrad"))  # make sure the numba cache is filled
    rows = []
    warm = {"minigrad": _median(SMALL_BACKWARD.format(lib="minigrad"), repeat)}
    has_torch = _torch_installed()
    if has_torch:
        warm["torch"] = _median(SMALL_BACKWARD.format(lib="torch"), repeat)
    rows.append(Row("cold start", "import + small backward, numba cache warm", "s", warm,
                    note=f"a bare `python -c pass` takes {bare:.2f} s"))
    if has_torch:
        rows.append(Row("cold start", "import torch", "s",
                        {"torch": _median("import torch", repeat)}))
    if quick:
        rows.append(Row("cold start", "import + small backward, numba cache empty", "s", {},
                        note="skipped with --quick (compiles every kernel)"))
    else:
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            empty = _run(SMALL_BACKWARD.format(lib="minigrad"), env)
        rows.append(Row("cold start", "import + small backward, numba cache empty", "s",
                        {"minigrad": empty}))
    rows.extend(_lesson_rows(quick))
    return rows


def _lesson_rows(quick: bool) -> list[Row]:
    case = "fresh runtime: lesson 1 top to bottom, numba cache {}"
    if quick:
        return [Row("cold start", case.format("empty"), "s", {},
                    note="skipped with --quick (runs the lesson twice)"),
                Row("cold start", case.format("warm"), "s", {}, note="skipped with --quick")]
    from .coldstart import cold_and_warm, lesson_path

    (cold, *_), (warm, *_) = cold_and_warm(lesson_path(1))  # (wall seconds)
    return [Row("cold start", case.format("empty"), "s", {"minigrad": cold},
                note=f"{cold / warm:.2f}x warm"),
            Row("cold start", case.format("warm"), "s", {"minigrad": warm})]

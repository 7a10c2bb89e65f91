"""A class starting lesson 1 at the same moment: 1, 2, 5 and 10 learners, each with a
kernel of their own (as on a JupyterHub: one kernel per learner and lesson), with the
numba cache warm (compiled beforehand, as docs/hub/install.sh does for a hub) and empty
(every learner compiles minigrad's kernels for themselves).

All kernels are asked to start at once; each then runs the learner notebook of lesson 1
cell by cell, as *Run All* does. Measured per learner, from the start request: the
seconds to the lesson's first output and to its end, and the kernel's peak memory
(VmHWM: resident set at its highest). The rows give the slowest learner's times (the
one a teacher waits for) and the mean peak memory per learner.

Opt-in (`python -m benchmarks --only class`): a full run takes several minutes.
"""

from __future__ import annotations

import os
import queue
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from ._common import Row

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "notebooks" / "learner" / "01_backward_graph.ipynb"
CLASS_SIZES = (1, 2, 5, 10)


def _code_cells(path: Path = LESSON) -> list[str]:
    import nbformat

    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _learner(cells: list[str], cache: Path, go: threading.Event, out: queue.Queue) -> None:
    """One learner: start a kernel when `go` is set, run the lesson, report."""
    from jupyter_client.manager import KernelManager

    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), MINIGRAD_COURSE_PROGRESS="off",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get(
                   "PYTHONPATH")])))
    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable  # this environment's Python
    go.wait()
    start = time.perf_counter()
    first = None
    manager.start_kernel(env=env, cwd=str(LESSON.parent))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=300)
        for code in cells:
            def seen(msg):
                nonlocal first
                if first is None and msg["msg_type"] in (
                        "stream", "display_data", "execute_result", "error"):
                    first = time.perf_counter() - start
            reply = client.execute_interactive(code, timeout=600, output_hook=seen)
            if reply["content"]["status"] == "error":
                raise RuntimeError(f"lesson 1 failed: {reply['content']['ename']}")
        end = time.perf_counter() - start
        peak = _peak_mb(manager.provisioner.process.pid)
        out.put((first, end, peak))
    except Exception as exc:  # reported by the caller
        out.put(exc)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def class_of(n: int, seed: Path | None, cells: list[str], work: Path) -> list[tuple]:
    """`n` learners starting lesson 1 at once, each with a copy of `seed` as their numba
    cache (None: an empty cache). Returns (first output s, end s, peak MB) per learner."""
    go, out = threading.Event(), queue.Queue()
    threads = []
    for i in range(n):
        cache = work / f"learner{i}"
        shutil.rmtree(cache, ignore_errors=True)
        if seed is not None:
            shutil.copytree(seed, cache)
        threads.append(threading.Thread(target=_learner, args=(cells, cache, go, out)))
    for thread in threads:
        thread.start()
    go.set()
    for thread in threads:
        thread.join()
    results = [out.get() for _ in range(n)]
    for result in results:
        if isinstance(result, Exception):
            raise result
    return results


def run(quick: bool) -> list[Row]:
    cells = _code_cells()
    sizes = (1, 2) if quick else CLASS_SIZES
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        seed = work / "seed"
        class_of(1, None, cells, work)  # compiles lesson 1's kernels into learner0
        shutil.copytree(work / "learner0", seed)
        for cache, label in [(seed, "warm"), (None, "empty")]:
            if quick and cache is None:
                continue
            for n in sizes:
                results = class_of(n, cache, cells, work)
                first = max(r[0] for r in results)
                end = max(r[1] for r in results)
                peak = statistics.mean(r[2] for r in results)
                who = "1 learner" if n == 1 else f"{n} learners at once"
                case = f"lesson 1, {who}, numba cache {label}"
                rows.append(Row("class", f"{case}: first output (slowest)", "s",
                                {"minigrad": first}))
                rows.append(Row("class", f"{case}: lesson run (slowest)", "s",
                                {"minigrad": end}))
                rows.append(Row("class", f"{case}: kernel peak per learner", "MB",
                                {"minigrad": peak}))
    return rows

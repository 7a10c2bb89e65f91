"""`python -m benchmarks --quick` runs every benchmark and prints every row (speed is
measured there, never asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EXPECTED_ROWS = [
    "per-op overhead",
    "MLP training step   256x64 -> 128 -> 10, float64",
    "MLP training step   256x64 -> 128 -> 10, float32",
    "higher-order        Hessian-vector product, MLP 256x64 -> 32 -> 1 tanh",
    "checkpointing       MLP training step 256x64 -> 128 -> 10, float64",
    "large element-wise",
    "convolution         conv2d fwd+bwd",
    "cold start          import + small backward, numba cache warm",
    "cold start          import + small backward, numba cache empty",
    "cold start          fresh runtime: lesson 1 top to bottom, numba cache empty",
    "cold start          fresh runtime: lesson 1 top to bottom, numba cache warm",
    "memory              MLP step peak",
    "memory              growth over",
    "widgets             BackwardStepper made and shown",
    "widgets             a step drawn in Chromium",  # (a row saying "skipped" without one)
    "widgets             draw_graph",
]


def test_quick_run_prints_every_benchmark():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick"], cwd=ROOT, capture_output=True,
        text=True, timeout=600, check=True,
    )
    lines = done.stdout.splitlines()
    assert "numpy" in lines[0] and "cores" in lines[0]  # machine and versions first
    for row in EXPECTED_ROWS:
        assert any(line.startswith(row) for line in lines), f"missing row {row!r}"
    minigrad_col = lines[1].index("minigrad")
    for line in lines[2:]:
        if "skipped" not in line and "import torch" not in line:
            assert line[minigrad_col:].split()[0] != "-", f"no minigrad figure in {line!r}"


def test_only_runs_the_named_benchmark():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "overhead"], cwd=ROOT,
        capture_output=True, text=True, timeout=300, check=True,
    )
    body = done.stdout.splitlines()[2:]
    assert len(body) == 1 and body[0].startswith("per-op overhead")

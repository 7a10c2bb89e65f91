"""`python -m benchmarks [--quick] [--only NAME ...]`: run and print the table."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time

from ._common import Row

BENCHMARKS = ["overhead", "mlp", "classify", "higher", "elementwise", "conv", "startup",
              "memory", "widgets"]
# run only when named with --only: they take minutes
OPT_IN = ["class"]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = [f"python {platform.python_version()}"]
    for name in ("numpy", "numba", "torch"):
        try:
            versions.append(f"{name} {importlib.import_module(name).__version__}")
        except ImportError:
            versions.append(f"{name} not installed")
    return f"{cpu}, {os.cpu_count()} cores; " + ", ".join(versions)


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if unit in ("s", "MB") or value < 10 else f"{value:.1f}"


def table(rows: list[Row]) -> str:
    head = ("benchmark", "case", "unit", "minigrad", "torch", "numpy", "mg/torch", "mg/numpy")
    lines = [head]
    for r in rows:
        t = r.times
        ratio_t, ratio_n = r.ratio("torch"), r.ratio("numpy")
        lines.append((
            r.benchmark, r.case + (f"  [{r.note}]" if r.note else ""), r.unit,
            _fmt(t.get("minigrad"), r.unit), _fmt(t.get("torch"), r.unit),
            _fmt(t.get("numpy"), r.unit),
            "-" if ratio_t is None else f"{ratio_t:.2f}",
            "-" if ratio_n is None else f"{ratio_n:.2f}",
        ))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS + OPT_IN,
                        help=f"run only these ({', '.join(OPT_IN)} only this way)")
    args = parser.parse_args(argv)
    print(machine())
    rows: list[Row] = []
    for name in args.only or BENCHMARKS:
        start = time.perf_counter()
        try:
            module = importlib.import_module(f"benchmarks.bench_{name}")
        except ModuleNotFoundError as error:
            if error.name != f"benchmarks.bench_{name}":
                raise
            # bench_widgets is contributed separately; run without it if it is absent.
            print(f"  {name}: no benchmarks/bench_{name}.py, skipped", file=sys.stderr)
            continue
        rows.extend(module.run(args.quick))
        print(f"  {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

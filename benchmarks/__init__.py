"""Speed and memory of minigrad, side by side with PyTorch CPU and plain numpy.

Run everything with `make bench` (or `python -m benchmarks`; `--quick` for a short
smoke run, `--only NAME` for one benchmark). Every benchmark module exposes
`run(quick: bool) -> list[Row]`; the runner prints one table with ratios, so all
libraries are measured in the same process, on the same machine, under the same load.

A `Row` (`from ._common import Row`) is one measured case, one table line:

* `benchmark`: the group shown in the first column ("per-op overhead", "widgets", ...);
* `case`: what exactly was measured (sizes, dtype);
* `unit`: "us", "ms", "s" or "MB";
* `times`: implementation ("minigrad", "torch", "numpy") -> figure in `unit`;
  implementations that are not installed or do not apply are left out (shown as "-");
* `note`: optional, printed in brackets after the case (e.g. why a figure is missing).

Ratios are minigrad / torch and minigrad / numpy: below 1.0 means minigrad is faster.
The runner imports `benchmarks.bench_<name>` for each name in `__main__.BENCHMARKS`;
`bench_widgets` is optional and skipped when the file is absent.
"""

import os

# One thread everywhere, so the comparison measures the libraries, not the cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

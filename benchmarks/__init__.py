"""Speed and memory of minigrad, side by side with PyTorch CPU and plain numpy.

Run everything with `make bench` (or `python -m benchmarks`; `--quick` for a short
smoke run, `--only NAME` for one benchmark). Every benchmark module exposes
`run(quick: bool) -> list[Row]`; the runner prints one table with ratios, so all
libraries are measured in the same process, on the same machine, under the same load.

A `Row` is one measured case: `times` maps an implementation ("minigrad", "torch",
"numpy") to its figure in `unit`; implementations that are not installed are left out.
Ratios are minigrad / torch and minigrad / numpy: below 1.0 means minigrad is faster.
"""

import os

# One thread everywhere, so the comparison measures the libraries, not the cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

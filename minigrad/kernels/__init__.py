"""Numerical kernels, jitted with numba.

`elementwise` holds plain loops over flat arrays, one per formula (forward ones and
fused backward ones such as sigmoid's `grad * y * (1 - y)`); `reductions` the
whole-tensor sum and arg-max/min; `optim` the optimizers' fused updates. numba
compiles one version per dtype on first use and caches it on disk (`cache=True`), so
only the very first run on a machine pays for compilation. The element-wise kernels
release the GIL (`nogil=True`), so `arrays.dispatch.run_kernel` can split a large array
across the cores.

Reductions along dimensions use numpy's reduction loops and matrix products use
numpy's BLAS; a hand-written loop would be slower, and no clearer. For the same reason
`exp`, `log`, `sin`, `cos`, `tanh` and `sigmoid` of long float arrays (4096 values or
more), and the backward passes of `sin` and `cos`, use numpy's vectorised ufuncs
(`arrays.dispatch.VECTORISED`): numba calls the C library once per element for them,
several times slower.
"""

from . import elementwise, optim, reductions

__all__ = ["elementwise", "optim", "reductions"]

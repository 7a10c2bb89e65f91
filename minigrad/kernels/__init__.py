"""Numerical kernels, jitted with numba.

Each kernel in `elementwise` is written as the formula for ONE element; numba's
`vectorize` turns it into a numpy ufunc with a compiled loop, so it broadcasts,
accepts Python scalars, and writes into `out=` for in-place ops. Backward formulas
are fused into single kernels (sigmoid's `grad * y * (1 - y)` is one pass over memory,
not three). Kernels are cached on disk (`cache=True`), so only the very first import
on a machine pays for compilation.

Reductions along dimensions use numpy's reduction loops and matrix products use
numpy's BLAS; a hand-written loop would be slower, and no clearer.
"""

from . import elementwise, reductions

__all__ = ["elementwise", "reductions"]

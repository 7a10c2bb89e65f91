"""exp2, log2 and log10: the exponential and the logarithms in bases 2 and 10.

Each is exp or log with a constant factor: 2**x = e**(x ln 2), so exp2's derivative
is its own result times ln 2 (it saves its OUTPUT, as exp does); log2(x) = ln(x) / ln 2,
so log2's derivative 1 / (x ln 2) needs the INPUT.

Forwards are numpy's ufuncs computed in double; fused backwards are numpy passes in
PyTorch's order of roundings (`kernels/passes.py`).
"""

from __future__ import annotations

import numpy as np

from ..kernels.passes import in_double
from .declaration import unary_op

# ln 2 and ln 10, the constants PyTorch's formulas write out
_LN2 = 0.6931471805599453
_LN10 = 2.3025850929940456


def _over_times(factor: float):
    """grad / (x * factor), the fused backward of a logarithm in another base."""
    def fused(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            np.multiply(x, x.dtype.type(factor), out=out)
            np.divide(grad, out, out=out)
    return fused


def exp2_backward(grad: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """grad * result * ln 2."""
    with np.errstate(all="ignore"):
        np.multiply(grad, y, out=out)
        np.multiply(out, out.dtype.type(_LN2), out=out)


unary_op("exp2", node="Exp2Backward0", kernel=in_double(np.exp2),
         formula="grad * result * 0.6931471805599453", fused=exp2_backward,
         doc="2 to the power of each element. Its derivative 2**x ln 2 is its own result "
             "times a constant, so it saves its output.")

unary_op("log2", node="Log2Backward0", kernel=in_double(np.log2),
         formula="grad / (self * 0.6931471805599453)", fused=_over_times(_LN2),
         doc="The base-2 logarithm (-inf at 0, nan below). Its derivative 1 / (x ln 2) "
             "needs the input, so it saves its input.")

unary_op("log10", node="Log10Backward0", kernel=in_double(np.log10),
         formula="grad / (self * 2.3025850929940456)", fused=_over_times(_LN10),
         doc="The base-10 logarithm (-inf at 0, nan below). Its derivative 1 / (x ln 10) "
             "needs the input, so it saves its input.")

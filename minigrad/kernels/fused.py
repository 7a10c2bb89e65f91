"""`fma(a, b, c)`: a * b + c rounded once, as C's fma and the FMA instruction compute it.

PyTorch's CPU kernels for AVX2 and AVX512 machines are compiled so that a product whose
only use is an addition becomes one fused multiply-add; its portable kernels (no AVX2)
round twice. minigrad's kernels that must match PyTorch bit for bit take a `fused`
flag and call `mul_add`; `minigrad._cpu.FUSED_MULTIPLY_ADD` says which this
machine's PyTorch does.
"""

import math

from numba import config, njit
from numba.extending import intrinsic

if not config.DISABLE_JIT:

    @intrinsic
    def fma(typingctx, a, b, c):
        """a * b + c rounded once, for three float32 or three float64 operands."""
        sig = a(a, a, a)

        def codegen(context, builder, signature, args):
            return builder.fma(*args)

        return sig, codegen

else:  # the kernels run as plain Python (NUMBA_DISABLE_JIT=1, to step through them)
    from fractions import Fraction

    def fma(a, b, c):
        """a * b + c computed exactly with fractions, then rounded (to float64, and
        then to a float32 operand's type: in rare ties one rounding too many)."""
        if not all(math.isfinite(v) for v in (a, b, c)):
            return a * b + c
        exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
        return type(a)(float(exact))


@njit(cache=True, inline="always")
def mul_add(a, b, c, fused):
    """a * b + c, rounded once (`fused`) or twice."""
    return fma(a, b, c) if fused else a * b + c

"""`fma(a, b, c)`: a * b + c rounded once, as C's fma and the FMA instruction compute it.

PyTorch's CPU kernels for AVX2 and AVX512 machines are compiled so that a product whose
only use is an addition becomes one fused multiply-add; its portable kernels (no AVX2)
round twice. minigrad's kernels that must match PyTorch bit for bit take a `fused`
flag and call `mul_add`; `minigrad._cpu.FUSED_MULTIPLY_ADD` says which this
machine's PyTorch does.
"""

from numba import njit
from numba.extending import intrinsic


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once, for three float32 or three float64 operands."""
    sig = a(a, a, a)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@njit(cache=True)
def mul_add(a, b, c, fused):
    """a * b + c, rounded once (`fused`) or twice."""
    return fma(a, b, c) if fused else a * b + c

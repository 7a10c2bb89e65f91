"""A kernel's compiled code, called without numba's dispatcher, for short vectors.

Called from Python, a numba kernel first works out the type of every argument to
pick the machine code compiled for those types. On a 10-element vector that is
about 0.15 us of a 0.35 us call, and a long chain of small ops pays it at every
op. The commonest call sites of `dispatch.py` have already checked what those types
are (a row-major, writable, aligned float64 vector, and perhaps a Python float), so
they can call that machine code's entry point directly.

numba does not check the arguments of an entry point: given an array of another
dtype or layout, it would read the memory wrongly. So a `DirectCalls` table is
used only where the caller has checked the types named in its signature.
"""

from __future__ import annotations

from collections.abc import Callable

from numba import types

# A row-major, writable, aligned float64 vector, as numba types it; and a Python float.
VECTOR64 = types.Array(types.float64, 1, "C")
FLOAT64 = types.float64

# numpy's flags of a row-major (C_CONTIGUOUS 0x1), aligned (0x100), writable (0x400)
# array, as `array.flags.num` gives them: checked in one go, `num & PLAIN == PLAIN`.
PLAIN = 0x0001 | 0x0100 | 0x0400


class DirectCalls(dict):
    """kernel -> the entry point of its machine code for one signature.

    Looking a kernel up the first time (`table[kernel]`) has numba load that code
    from its cache, or compile it, as a first call would; a kernel running as plain
    Python (under `NUMBA_DISABLE_JIT=1`) stands for itself."""

    def __init__(self, *signature: types.Type) -> None:
        super().__init__()
        self.signature = signature

    def __missing__(self, kernel: Callable) -> Callable:
        compile_for = getattr(kernel, "compile", None)  # (a numba dispatcher's)
        entry = kernel if compile_for is None else compile_for(self.signature)
        self[kernel] = entry
        return entry


# The signatures the short-vector paths call.
VECTOR_SCALAR = DirectCalls(VECTOR64, FLOAT64, VECTOR64)  # scalar_op: (x, s, out)
VECTOR_VECTOR = DirectCalls(VECTOR64, VECTOR64)  # unary: (x, out)
THREE_VECTORS = DirectCalls(VECTOR64, VECTOR64, VECTOR64)  # backward2: (grad, x, out)

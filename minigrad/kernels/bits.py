"""A float's bits as the signed integer of its width, and back: float64 <-> int64,
float32 <-> int32. SLEEF's functions (`sleef.py`, `sleef_float.py`) read a float's
exponent from its bits and build powers of two by writing them."""

import struct

import numpy as np
from numba import config
from numba.core import types
from numba.extending import intrinsic

_INTEGER_OF = {types.float64: types.int64, types.float32: types.int32}
_FLOAT_OF = {integer: real for real, integer in _INTEGER_OF.items()}

if not config.DISABLE_JIT:

    def _bitcast(target):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return codegen

    @intrinsic
    def bits(typingctx, x):
        """The bits of a float64 as an int64, of a float32 as an int32."""
        target = _INTEGER_OF.get(x)
        return None if target is None else (target(x), _bitcast(target))

    @intrinsic
    def from_bits(typingctx, i):
        """The float64 whose bits are the int64 `i`, the float32 of an int32."""
        target = _FLOAT_OF.get(i)
        return None if target is None else (target(i), _bitcast(target))

else:  # plain Python (NUMBA_DISABLE_JIT=1)

    def bits(x):
        """The bits of a float64 as an int64, of a float32 as an int32."""
        if isinstance(x, np.float32):
            return np.int32(struct.unpack("<i", struct.pack("<f", x))[0])
        return struct.unpack("<q", struct.pack("<d", x))[0]

    def from_bits(i):
        """The float64 whose bits are the int64 `i`, the float32 of an int32."""
        if isinstance(i, np.int32):
            return np.float32(struct.unpack("<f", struct.pack("<i", int(i)))[0])
        return struct.unpack("<d", struct.pack("<q", i))[0]

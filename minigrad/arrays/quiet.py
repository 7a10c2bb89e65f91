"""numpy calls without numpy's floating-point warnings, cheaply (`quietly`).

PyTorch multiplies `inf` by 0 into `nan` silently, where numpy warns ("invalid value
encountered in matmul"). `np.errstate(all="ignore")` silences numpy, but builds its
settings anew each time it is entered (about 0.6 us, on a path a training step takes
half a dozen times). numpy 2 keeps those settings in a context variable, so
`quietly(np.matmul, a, b)` sets it to settings made once, for the one call, and
back. (Only this thread and this context see the change, as with `np.errstate`.) A
numpy without that variable gets `np.errstate`.
"""

from __future__ import annotations

import numpy as np

try:  # (numpy's own internals: present in numpy 2.0 to 2.4, which pyproject allows)
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - numpy 1.x
    _extobj_contextvar = None

if _extobj_contextvar is not None:
    _IGNORE_ALL = _make_extobj(all="ignore")
    _set, _reset = _extobj_contextvar.set, _extobj_contextvar.reset

    def quietly(fn, *args, **kwargs):
        """`fn(*args, **kwargs)` (a numpy function), with its warnings off."""
        token = _set(_IGNORE_ALL)
        try:
            return fn(*args, **kwargs)
        finally:
            _reset(token)

else:  # pragma: no cover - numpy 1.x

    def quietly(fn, *args, **kwargs):
        """`fn(*args, **kwargs)` (a numpy function), with its warnings off."""
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

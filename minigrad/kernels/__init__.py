"""Numerical kernels, jitted with numba.

`elementwise` holds plain loops over flat arrays, one per formula (forward ones and
fused backward ones such as sigmoid's `grad * y * (1 - y)`); `sums` float sums (rows
or columns, in runs); `reductions` a whole tensor's arg-max/min; `optim` the optimizers'
fused updates. numba compiles one version per dtype on first use and caches it on
disk (`cache=True`), so only the very first run on a machine pays for compilation.
The element-wise kernels release the GIL (`nogil=True`), so
`arrays.dispatch.run_kernel` can split a large array across the cores.

Matrix products use numpy's BLAS: a hand-written loop would be slower, and no
clearer. For the same reason `exp`, `log`, `sin`, `cos` and `tanh` of long float
arrays (4096 values or more), and the backward passes of `sin` and `cos`, use numpy's
vectorised ufuncs (`arrays.dispatch.VECTORISED`): numba calls the C library once per
element for them, several times slower. `softmax` holds plain loops along one dim for
softmax and log_softmax. PyTorch computes these with a vector math library (SLEEF), whose
last bits no port is kept for: the float policy (README, "How alike, exactly") allows
them to differ by a few units in the last place.
"""

import importlib.util
import sys
from types import ModuleType

from . import ahead, cache, elementwise, optim, reductions

cache.seed_user_cache()  # (a read-only install with kernels compiled ahead: see `cache`)
ahead.watch_first_compile()  # (the one line a first compile prints, and the helper)
cache.serialise_cache_writes()
ahead.start_for_this_lesson()  # (in a lesson's notebook, on a fresh runtime: see `ahead`)

__all__ = ["ahead", "cache", "elementwise", "on_demand", "optim", "reductions"]


def on_demand(name: str) -> ModuleType:
    """Kernel module `name` ("softmax", "convolution", ...), loaded when one of its kernels
    is first used rather than at `import minigrad`: most programs never call them, and
    making their numba dispatchers would add milliseconds to every start."""
    full = f"{__name__}.{name}"
    module = sys.modules.get(full)
    if module is None:
        spec = importlib.util.find_spec(full)
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
        setattr(sys.modules[__name__], name, module)
    return module

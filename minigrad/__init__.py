"""minigrad: a small autograd library that behaves like PyTorch.

`import minigrad as torch` and forum snippets about autograd run unchanged: the same
values and gradients, `grad_fn` names, `next_functions`, `_saved_*` attributes,
`_version` numbers and error messages (with "minigrad" where PyTorch says "torch").
"""

from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys

from . import _dtype, _registry
from . import ops as _ops
from ._creation import (
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    LongTensor,
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,  # noqa: F401 - the namespace's
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._device import get_default_device, set_default_device
from ._dtype import dtype, get_default_dtype
from ._generator import Generator, default_generator
from ._memory_format import contiguous_format, memory_format, preserve_format
from ._random import (
    get_rng_state,
    initial_seed,
    manual_seed,
    normal_,  # noqa: F401 - the namespace's
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    uniform_,  # noqa: F401 - the namespace's
)
from ._warn import is_warn_always_enabled, set_warn_always
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import declaration as _declared
from .tensor import Size, Tensor, device, is_tensor, numel  # noqa: F401

# The layers below call what only the namespace has through `_registry` (never by
# looking the package up): gradcheck's `allclose`, the names a formula's text uses.
_registry.register_namespace(_sys.modules[__name__])

float32 = float = _dtype.float32
float64 = double = _dtype.float64
int64 = long = _dtype.int64
bool = _dtype.bool_  # noqa: A001 - mirrors torch.bool

__version__ = "0.1.0"


# -- the ops ----------------------------------------------------------------------------
# Every op is declared once, in its family's module (`ops/declaration.py`): its
# function, its Tensor methods, in-place variants, aliases and operators come from there.

# Importing the family modules runs their declarations. (A directory listing, not
# pkgutil: importing pkgutil costs more than reading the directory.)
for _module in sorted(_os.listdir(_os.path.dirname(_ops.__file__))):
    if _module.endswith(".py") and _module != "__init__.py":
        _importlib.import_module(f"{_ops.__name__}.{_module[:-3]}")
del _module
globals().update(_declared.namespace())


def _attach_methods() -> None:
    for name, fn in _declared.methods().items():
        _registry.attach(Tensor, name, fn)
    _registry.attach(Tensor, "__getattr__", _missing_tensor_attribute)


def _missing_tensor_attribute(self: Tensor, name: str):
    """Only reached when a Tensor has no attribute `name` (`t.floor_()`)."""
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'"
                         f"{_subset_hint(name)}")


_attach_methods()

_UNSUPPORTED_DTYPES = {
    "float16", "half", "bfloat16", "int32", "int", "int16", "short", "int8", "uint8",
    "complex64", "complex128", "cfloat", "cdouble",
}


def __getattr__(name: str):
    # A clear refusal for the dtypes PyTorch has and minigrad deliberately lacks.
    if name in _UNSUPPORTED_DTYPES:
        raise NotImplementedError(
            f"minigrad supports the dtypes float32, float64, int64 and bool; "
            f"'{name}' is not available"
        )
    raise AttributeError(f"module 'minigrad' has no attribute '{name}'{_subset_hint(name)}")


def _subset_hint(name: str) -> str:
    """What an AttributeError adds for a public name: a PyTorch name minigrad lacks is
    not a typo on the learner's part."""
    if name.startswith("_"):  # (Python, numpy and IPython probe for those)
        return ""
    return " (minigrad has part of PyTorch's API: see the README's list)"


from . import (  # noqa: E402,F401
    accelerator,
    autograd,
    backends,
    cuda,
    linalg,
    nn,
    optim,
    serialization,
    utils,
)
from .serialization import load, save  # noqa: E402
from .utils import checkpoint as _checkpoint  # noqa: E402,F401 - `minigrad.utils.checkpoint`

__all__ = [
    "Size", "Tensor", "device", "dtype", "float32", "float64", "int64", "bool", "float",
    "double", "long",
    "tensor", "zeros", "ones", "full", "eye", "arange", "randn", "rand", "randint", "empty",
    "linspace", "zeros_like", "ones_like", "full_like", "empty_like", "randn_like",
    "rand_like", "manual_seed", "randperm", "initial_seed", "seed", "get_rng_state",
    "set_rng_state", "Generator", "default_generator", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "autograd", "nn", "optim",
    "get_default_dtype", "FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor", "cuda",
    "get_default_device", "set_default_device", "set_warn_always", "is_warn_always_enabled",
    "memory_format", "contiguous_format", "preserve_format",
    "accelerator", "backends", "save", "load", "serialization", "linalg",
]

del annotations  # (the __future__ switch above; not part of the namespace)

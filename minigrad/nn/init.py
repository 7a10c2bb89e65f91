"""Weight initialisation, done in place without recording (each call is one
in-place op, so it bumps the tensor's version by one, as in PyTorch)."""

from __future__ import annotations

import math
import warnings

from .. import _random
from ..grad_mode import no_grad
from ..tensor import Tensor


def _fans(t: Tensor) -> tuple[int, int]:
    if t.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in t.shape[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples from U(a, b)."""
    with no_grad():
        return _random.uniform_(t, a, b, generator=generator)


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples from N(mean, std**2)."""
    with no_grad():
        return _random.normal_(t, mean, std, generator=generator)


def zeros_(t: Tensor) -> Tensor:
    with no_grad():
        return t.zero_()


def ones_(t: Tensor) -> Tensor:
    with no_grad():
        return t.fill_(1.0)


def constant_(t: Tensor, value: float) -> Tensor:
    with no_grad():
        return t.fill_(value)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The scale that keeps activations' variance steady through a layer."""
    if nonlinearity in ("linear", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, float) or (isinstance(param, int) and not isinstance(param, bool)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fan(t: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _fans(t)
    return fan_in if mode == "fan_in" else fan_out


def _empty_is_no_op(t: Tensor) -> bool:
    """PyTorch's kaiming initialisers leave a tensor with no elements alone (its version
    too) and say so."""
    if 0 in t.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


# The bounds below are computed in PyTorch's order (std first, then sqrt(3) * std):
# gain * sqrt(3 / fan) can differ in its last bit, and then so would every sample.


def kaiming_uniform_(t: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan): He initialisation."""
    if _empty_is_no_op(t):
        return t
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(t, -bound, bound, generator)


def kaiming_normal_(t: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan)."""
    if _empty_is_no_op(t):
        return t
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(t, mode))
    return normal_(t, 0, std, generator)


def xavier_uniform_(t: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(t)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(t, -bound, bound, generator)


def xavier_normal_(t: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(t)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(t, 0.0, std, generator)

"""`nn.utils`: clipping gradients before an optimizer step, as in
`torch.nn.utils.clip_grad_norm_` / `clip_grad_value_`."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .. import _creation
from ..grad_mode import no_grad
from ..tensor import Tensor


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient into [-clip_value, clip_value], in place: as PyTorch's
    foreach kernels do it, the lower bound then the upper, two in-place ops (each
    `.grad`'s version goes up by two)."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value)
            g.clamp_(max=clip_value)


def _norm(values: np.ndarray, norm_type: float):
    """The vector norm of all the values, in their dtype."""
    if norm_type == math.inf:
        return np.abs(values).max(initial=0).astype(values.dtype)
    if norm_type == 2:
        return np.sqrt(np.sum(values * values, dtype=values.dtype))
    return np.sum(np.abs(values) ** norm_type, dtype=values.dtype) ** (1 / norm_type)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so that their joint norm (the norm of each
    gradient's norm) is at most `max_norm`; returns that norm before clipping. As in
    PyTorch, every gradient is multiplied in place by min(1, max_norm / (norm + 1e-6)),
    even when that is 1."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return _creation.tensor(0.0)
    norms = np.array([_norm(g._data.reshape(-1), norm_type) for g in grads])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    total_norm = _creation.tensor(total)
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)
    return total_norm

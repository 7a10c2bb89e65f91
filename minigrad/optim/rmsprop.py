"""RMSprop: the gradient divided by the root of a running average of its square."""

from __future__ import annotations

import numpy as np

from .._cpu import FUSED_MULTIPLY_ADD
from ..kernels import ahead
from ..kernels import optim as K
from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _as_param_scalar,
    _bump,
    _check_at_least_zero,
    _count_step,
    _new_step,
    _only_defaults,
)

if not FUSED_MULTIPLY_ADD:  # (the kernel the lessons' steps run here: `kernels.ahead`)
    ahead.HOST_CHOICE["_rmsprop_common_fused"] = "_rmsprop_common"


class RMSprop(Optimizer):
    """RMSprop (Hinton): p -= lr * grad / (sqrt(square_avg) + eps), where square_avg
    is a running average of grad**2 with weight `alpha` on the past; with `centered`,
    the square of a running average of the gradient is taken off square_avg first;
    with `momentum`, the quotient goes through a momentum buffer.

    `foreach`, `capturable` and `differentiable` are PyTorch's options for other
    kernels; minigrad accepts them only at their defaults.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_at_least_zero("RMSprop", ("learning rate", lr), ("epsilon value", eps),
                             ("momentum value", momentum), ("weight_decay value", weight_decay),
                             ("alpha value", alpha))
        _only_defaults("RMSprop", capturable=capturable, foreach=foreach,
                       differentiable=differentiable)
        # Same keys, in the same order (and so the same repr and state_dict), as PyTorch's.
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    _ADDED_SETTINGS = dict(momentum=0, centered=False, foreach=None, maximize=False,
                           differentiable=False, capturable=False)
    _COUNTS_STEPS = True

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        momentum, centered = group["momentum"], group["centered"]
        if not state:  # new tensors, version 0
            state["step"] = _new_step()
            state["square_avg"] = Tensor._make(np.zeros_like(p._data))
            if momentum > 0:
                state["momentum_buffer"] = Tensor._make(np.zeros_like(p._data))
            if centered:
                state["grad_avg"] = Tensor._make(np.zeros_like(p._data))
        # Versions, one per in-place op PyTorch runs: step += 1,
        # square_avg.mul_().addcmul_(), grad_avg.lerp_(), buf.mul_().addcdiv_().
        _count_step(state["step"])
        _bump(state["square_avg"], 2)
        data, grad = self._flat(p)
        grad_avg = buf = data  # (unused unless centered, or with momentum)
        if centered:
            _bump(state["grad_avg"])
            grad_avg = state["grad_avg"]._data.reshape(-1)
        if momentum > 0:
            _bump(state["momentum_buffer"], 2)
            buf = state["momentum_buffer"]._data.reshape(-1)
        # Python numbers rounded to the parameter's dtype, as PyTorch hands them over.
        scalar = _as_param_scalar(data.dtype)
        weight = scalar(1 - group["alpha"])
        K.rmsprop_step(data, grad, state["square_avg"]._data.reshape(-1), grad_avg, buf,
                       scalar(-group["lr"]), scalar(group["alpha"]), weight, weight - 1,
                       scalar(group["eps"]), scalar(group["weight_decay"]), scalar(momentum),
                       centered, group["maximize"], FUSED_MULTIPLY_ADD)

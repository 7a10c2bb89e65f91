"""Stochastic gradient descent, with momentum and weight decay."""

from __future__ import annotations

import numpy as np

from .._cpu import FUSED_MULTIPLY_ADD
from ..kernels import ahead
from ..kernels import optim as K
from ..tensor import Tensor
from .optimizer import Optimizer, _as_param_scalar, _bump, _only_defaults

if not FUSED_MULTIPLY_ADD:  # (the kernel the lessons' steps run here: `kernels.ahead`)
    ahead.HOST_CHOICE["_sgd_common_fused"] = "_sgd_common"


class SGD(Optimizer):
    """p -= lr * (grad + weight_decay * p), through a momentum buffer if momentum > 0.

    `foreach`, `fused` and `differentiable` are PyTorch's options for other kernels;
    minigrad accepts them only at their defaults.
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        # (`< 0.0`, as PyTorch's SGD writes it: a nan learning rate passes, unlike Adam's)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _only_defaults("SGD", foreach=foreach, differentiable=differentiable, fused=fused)
        # Same keys (and so the same repr) as PyTorch's parameter groups.
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    _ADDED_SETTINGS = dict(nesterov=False, maximize=False, foreach=None, differentiable=False,
                           fused=False)

    def _update(self, p: Tensor, group: dict) -> None:
        data, grad = self._flat(p)
        first = False
        buf = data  # unused without momentum (and then no state is kept, as in PyTorch)
        if group["momentum"] != 0:
            state = self.state[p]
            first = "momentum_buffer" not in state
            if first:  # a copy of the (decayed) gradient: a new tensor, version 0
                state["momentum_buffer"] = Tensor._make(np.empty_like(p._data))
            else:  # buf.mul_(momentum).add_(grad, ...): two in-place ops
                _bump(state["momentum_buffer"], 2)
            buf = state["momentum_buffer"]._data.reshape(-1)
        scalar = _as_param_scalar(data.dtype)
        K.sgd_step(data, grad, buf, scalar(group["lr"]),
                   scalar(group["momentum"]), scalar(1 - group["dampening"]),
                   scalar(group["weight_decay"]), group["nesterov"], group["maximize"], first,
                   FUSED_MULTIPLY_ADD)

"""Stochastic gradient descent, with momentum and weight decay."""

from __future__ import annotations

import numpy as np

from ..kernels import optim as K
from ..tensor import Tensor
from .optimizer import Optimizer, _as_param_scalar


class SGD(Optimizer):
    """p -= lr * (grad + weight_decay * p), through a momentum buffer if momentum > 0."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, p: Tensor, group: dict, state: dict) -> None:
        data, grad = self._flat(p)
        first = "momentum_buffer" not in state
        if group["momentum"] != 0 and first:
            state["momentum_buffer"] = Tensor._make(np.empty_like(p._data))
        buf = state["momentum_buffer"]._data.reshape(-1) if "momentum_buffer" in state else data
        scalar = _as_param_scalar(data.dtype)
        K.sgd_step(data, grad, buf, np.empty_like(data), scalar(group["lr"]),
                   scalar(group["momentum"]), scalar(1 - group["dampening"]),
                   scalar(group["weight_decay"]), group["nesterov"], group["maximize"], first)

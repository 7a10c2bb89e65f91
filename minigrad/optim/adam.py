"""Adam: per-parameter step sizes from running averages of the gradient."""

from __future__ import annotations

import math

import numpy as np

from ..kernels import optim as K
from ..tensor import Tensor
from .optimizer import Optimizer, _as_param_scalar


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally with AMSGrad and (L2) weight decay."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, p: Tensor, group: dict, state: dict) -> None:
        if not state:
            state["step"] = Tensor._make(np.array(0.0, np.float32))
            state["exp_avg"] = Tensor._make(np.zeros_like(p._data))
            state["exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
        state["step"]._data[...] += 1
        data, grad = self._flat(p)
        max_sq = state["max_exp_avg_sq"]._data.reshape(-1) if group["amsgrad"] else data
        beta1, beta2 = group["betas"]
        step = float(state["step"]._data)
        scalar = _as_param_scalar(data.dtype)
        K.adam_step(data, grad, state["exp_avg"]._data.reshape(-1),
                    state["exp_avg_sq"]._data.reshape(-1), max_sq,
                    np.empty_like(data), np.empty_like(data),
                    scalar(group["lr"] / (1 - beta1**step)),
                    scalar(math.sqrt(1 - beta2**step)), scalar(1 - beta1), scalar(beta2),
                    scalar(1 - beta2), scalar(group["eps"]), scalar(group["weight_decay"]),
                    group["amsgrad"], group["maximize"])

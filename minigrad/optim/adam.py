"""Adam: per-parameter step sizes from running averages of the gradient."""

from __future__ import annotations

import numpy as np

from .._cpu import FUSED_MULTIPLY_ADD
from ..kernels import optim as K
from ..tensor import Tensor
from .optimizer import Optimizer, _as_param_scalar, _bump, _only_defaults


class Adam(Optimizer):
    """Adam (Kingma & Ba), optionally with AMSGrad and weight decay: L2 (added to the
    gradient) or, with `decoupled_weight_decay=True`, AdamW's (shrinking the weights).

    `foreach`, `fused`, `capturable` and `differentiable` are PyTorch's options for
    other kernels; minigrad accepts them only at their defaults.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
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
        _only_defaults("Adam", foreach=foreach, capturable=capturable,
                       differentiable=differentiable, fused=fused)
        # Same keys (and so the same repr) as PyTorch's parameter groups.
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused, decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:  # new tensors, version 0
            state["step"] = Tensor._make(np.array(0.0, np.float32))
            state["exp_avg"] = Tensor._make(np.zeros_like(p._data))
            state["exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
        # Versions, one per in-place op PyTorch runs: step += 1, exp_avg.lerp_,
        # exp_avg_sq.mul_().addcmul_(), maximum(..., out=max_exp_avg_sq).
        state["step"]._data[...] += 1
        _bump(state["step"])
        _bump(state["exp_avg"])
        _bump(state["exp_avg_sq"], 2)
        if group["amsgrad"]:
            _bump(state["max_exp_avg_sq"])
        data, grad = self._flat(p)
        max_sq = state["max_exp_avg_sq"]._data.reshape(-1) if group["amsgrad"] else data
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        decay = 1.0  # AdamW's factor for the weights, applied by p.mul_(decay)
        if group["decoupled_weight_decay"] and weight_decay != 0:
            decay, weight_decay = 1 - lr * weight_decay, 0
            _bump(p)  # the extra in-place op on the parameter
        # The scalars are computed in Python floats, as PyTorch does, then rounded to the
        # parameter's dtype; `bias_correction2 ** 0.5` rather than math.sqrt, as PyTorch.
        step = float(state["step"]._data)
        scalar = _as_param_scalar(data.dtype)
        K.adam_step(data, grad, state["exp_avg"]._data.reshape(-1),
                    state["exp_avg_sq"]._data.reshape(-1), max_sq, np.empty_like(data),
                    scalar(-(lr / (1 - beta1**step))), scalar((1 - beta2**step) ** 0.5),
                    scalar(1 - beta1), scalar(1 - beta1) - 1, scalar(beta2), scalar(1 - beta2),
                    scalar(group["eps"]), scalar(weight_decay), scalar(decay),
                    group["amsgrad"], group["maximize"], FUSED_MULTIPLY_ADD)

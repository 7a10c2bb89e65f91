"""Adam and AdamW: per-parameter step sizes from running averages of the gradient."""

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
    ahead.HOST_CHOICE["_adam_common_fused"] = "_adam_common"


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
        name = type(self).__name__
        _check_at_least_zero(name, ("learning rate", lr), ("epsilon value", eps))
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                raise NotImplementedError(f"minigrad's {name} takes Python numbers as its "
                                          "betas, not Tensors")
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        _check_at_least_zero(name, ("weight_decay value", weight_decay))
        if not all(isinstance(beta, float) for beta in betas):
            raise ValueError("betas must be either both floats or both Tensors")
        _only_defaults(name, foreach=foreach, capturable=capturable,
                       differentiable=differentiable, fused=fused)
        # Same keys (and so the same repr) as PyTorch's parameter groups.
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    _ADDED_SETTINGS = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                           differentiable=False, decoupled_weight_decay=False, fused=None)
    _COUNTS_STEPS = True

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:  # new tensors, version 0
            state["step"] = _new_step()
            state["exp_avg"] = Tensor._make(np.zeros_like(p._data))
            state["exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._make(np.zeros_like(p._data))
        # Versions, one per in-place op PyTorch runs: step += 1, exp_avg.lerp_,
        # exp_avg_sq.mul_().addcmul_(), maximum(..., out=max_exp_avg_sq).
        step = _count_step(state["step"])
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
        scalar = _as_param_scalar(data.dtype)
        K.adam_step(data, grad, state["exp_avg"]._data.reshape(-1),
                    state["exp_avg_sq"]._data.reshape(-1), max_sq,
                    scalar(-(lr / (1 - beta1**step))), scalar((1 - beta2**step) ** 0.5),
                    scalar(1 - beta1), scalar(1 - beta1) - 1, scalar(beta2), scalar(1 - beta2),
                    scalar(group["eps"]), scalar(weight_decay), scalar(decay),
                    group["amsgrad"], group["maximize"], FUSED_MULTIPLY_ADD)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks
    the weights by `1 - lr * weight_decay`, instead of adding `weight_decay * p` to the
    gradient. PyTorch's AdamW is exactly `Adam(..., decoupled_weight_decay=True)`, with
    a weight decay of 0.01 unless told otherwise.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def _fill_in_old_groups(self) -> None:
        super()._fill_in_old_groups()
        for group in self.param_groups:  # whatever was loaded, AdamW decouples
            group["decoupled_weight_decay"] = True

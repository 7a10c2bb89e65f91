"""Automatic differentiation: the engine, grad modes, anomaly mode and custom Functions."""

from .. import grad_mode  # (PyTorch spells it torch.autograd.grad_mode)
from ..grad_mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from . import events, forward_ad, functional, graph
from .entry_points import backward, backward_events, grad
from .function import Function, FunctionCtx
from .gradcheck import gradcheck, gradgradcheck


def __getattr__(name: str):
    # `autograd.profiler` is imported when first used: most programs never profile.
    if name == "profiler":
        import importlib

        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def Variable(data, requires_grad: bool = False, volatile: bool = False):  # noqa: N802
    """The pre-2018 wrapper, kept for old code: `Variable(t, requires_grad=True)` is a
    new leaf sharing `t`'s memory, as in PyTorch (where Variable and Tensor merged)."""
    if volatile:
        raise NotImplementedError("minigrad does not implement volatile=True; use "
                                  "minigrad.no_grad()")
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


__all__ = [
    "Function", "FunctionCtx", "Variable",
    "backward", "backward_events", "grad", "events", "forward_ad", "functional", "graph",
    "profiler",
    "grad_mode",
    "gradcheck", "gradgradcheck",
    "no_grad",
    "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "set_detect_anomaly",
    "detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
]

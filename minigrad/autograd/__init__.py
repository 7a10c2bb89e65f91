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
from . import events, graph
from .engine import backward, backward_events, grad
from .function import Function, FunctionCtx

__all__ = [
    "Function", "FunctionCtx",
    "backward", "backward_events", "grad", "events", "graph", "grad_mode", "no_grad",
    "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "set_detect_anomaly",
    "detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
]

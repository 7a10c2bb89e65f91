"""`nn.DataParallel` on a machine without GPUs, as PyTorch runs it there: the wrapped
module is kept (as `.module`, so a state dict's keys start with "module.") and called
directly, on the whole batch."""

from __future__ import annotations

from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Splits a batch across GPUs in PyTorch. With none (always, in minigrad), PyTorch
    keeps the module, sets `device_ids` to [] and calls the module itself: so does
    this."""

    def __init__(self, module: Module, device_ids=None, output_device=None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

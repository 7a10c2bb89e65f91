"""Optimizers, as in `torch.optim`: they update parameters in place under no_grad."""

from . import lr_scheduler
from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "Optimizer", "lr_scheduler"]

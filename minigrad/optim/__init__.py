"""Optimizers, as in `torch.optim`: they update parameters in place under no_grad."""

from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Optimizer", "lr_scheduler"]

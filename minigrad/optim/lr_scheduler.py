"""Learning-rate schedules, as in `torch.optim.lr_scheduler`: they change each param
group's `lr` between optimizer steps."""

from __future__ import annotations

import functools
import warnings

from .optimizer import Optimizer

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


class LRScheduler:
    """Base class: remembers each group's initial `lr`, sets the first value at once
    (`step()` is called once on construction, as PyTorch does) and notices a
    `scheduler.step()` called before any `optimizer.step()` (PyTorch's warning)."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._watch_optimizer_steps()
        self._step_count = 0
        self.step()

    def _watch_optimizer_steps(self) -> None:
        """Wrap this optimizer's `step` so the scheduler knows it was called."""
        opt = self.optimizer
        step = opt.step

        @functools.wraps(step)
        def counted_step(*args, **kwargs):
            opt._opt_called = True
            return step(*args, **kwargs)

        opt.step = counted_step

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group after the last `step()`."""
        return self._last_lr

    def step(self) -> None:
        """Move the schedule on by one epoch (call it after `optimizer.step()`)."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class StepLR(LRScheduler):
    """lr times `gamma` every `step_size` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in groups]
        return [group["lr"] * self.gamma for group in groups]

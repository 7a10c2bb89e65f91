"""Handles for registered hooks, public as `minigrad.utils.hooks` (PyTorch's
`torch.utils.hooks`). Defined here, at the bottom of the layers, for the tensor and the
graph: `minigrad.utils` also holds `checkpoint`, which stands above autograd."""

from __future__ import annotations

import itertools


class RemovableHandle:
    """Returned by `register_hook`: call `remove()` to take the hook off again."""

    __slots__ = ("_hooks", "_key")
    __module__ = "minigrad.utils.hooks"  # (where PyTorch has it, and where learners import it)

    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self._key = next(self._ids)

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

"""Saved-tensor hooks: `saved_tensors_hooks(pack_hook, unpack_hook)` hands every
tensor an op saves to `pack_hook`, and backward gets it back from `unpack_hook`;
`disable_saved_tensors_hooks` and `save_on_cpu` are built on it.

The per-thread stack these push onto, and the count `SavedTensor` checks before
looking at it, live in `saved.py`, beside the code that reads them on every save.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import saved as _saved
from .saved import _HOOK_STATE, _incompatible_arguments


def push_saved_tensors_default_hooks(pack_hook: Callable, unpack_hook: Callable) -> None:
    """Make (pack_hook, unpack_hook) this thread's innermost pair."""
    if not (callable(pack_hook) and callable(unpack_hook)):
        raise _incompatible_arguments("_push_saved_tensors_default_hooks",
                                      (pack_hook, unpack_hook), {})
    if _HOOK_STATE.disabled is not None:
        raise RuntimeError(_HOOK_STATE.disabled)
    _HOOK_STATE.stack.append((pack_hook, unpack_hook))
    with _saved._pushed_lock:
        _saved._pushed += 1


def pop_saved_tensors_default_hooks() -> tuple[Callable, Callable]:
    """Remove and return this thread's innermost pair."""
    pair = _HOOK_STATE.stack.pop()
    with _saved._pushed_lock:
        _saved._pushed -= 1
    return pair


def saved_tensors_hooks_get_disabled_error_message() -> str | None:
    return _HOOK_STATE.disabled


def saved_tensors_hooks_disable(message: str) -> None:
    """Refuse hooks in this thread from now on, with `message` (an error at once if
    some are in use)."""
    _HOOK_STATE.disabled = message
    if _HOOK_STATE.stack:
        raise RuntimeError(message)


def saved_tensors_hooks_enable() -> None:
    _HOOK_STATE.disabled = None


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: every tensor an op saves for backward inside it is handed
    to `pack_hook(tensor)`, and the graph keeps whatever that returns; backward (and
    `grad_fn._saved_<name>`) gets the tensor back from `unpack_hook(packed)`.

    Per thread; when nested, only the innermost pair applies. A Python number an op
    saves is not shown to the hooks. Saved tensors are not version-checked: what
    `unpack_hook` returns is used as it is."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        pop_saved_tensors_default_hooks()


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: inside it, entering `saved_tensors_hooks` (or using it
    already) raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self._previous: list = []

    def __enter__(self) -> None:
        self._previous.append(_HOOK_STATE.disabled)
        try:
            saved_tensors_hooks_disable(self.error_message)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *args: object) -> None:
        _HOOK_STATE.disabled = self._previous.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are packed as (device, tensor on the CPU) and moved back on
    unpack. minigrad's tensors are on the CPU already: the tensor is kept as it is,
    or, with `pin_memory=True`, as a copy (pinning needs CUDA, as on a machine
    without it)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            # (a fresh row-major tensor, `copy_` into it: version 1, as in PyTorch)
            packed = Tensor._make(np.empty(tensor._data.shape, tensor._data.dtype))
            return (tensor.device, packed.copy_(tensor))

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)



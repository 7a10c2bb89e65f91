"""Warnings attributed to the learner's own line.

PyTorch's warnings from C++ point at the Python line that called the op. A minigrad op
may sit under several of minigrad's frames (a method or a function form, a module's
`forward`, a helper), so a fixed `stacklevel` would be right for one path only:
`warn_user` counts the frames instead.
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn `message`, attributed to the nearest frame outside minigrad."""
    frame, level = sys._getframe(1), 2  # (level 2: the caller of warn_user)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


# -- warnings given once per process ------------------------------------------------------

_always = False


def set_warn_always(b: bool) -> None:
    """Give every time the warnings PyTorch gives only once per process (True), or once
    again (False, the default). As `torch.set_warn_always`, which turns a warning given
    while it is on into no "once": the first warning after it is off still comes."""
    global _always
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _always = b


def is_warn_always_enabled() -> bool:
    """Whether `set_warn_always(True)` is in force."""
    return _always


class Once:
    """One warning PyTorch gives once per process (its C++ TORCH_WARN_ONCE); every time
    while `set_warn_always(True)` is in force."""

    __slots__ = ("warned",)

    def __init__(self) -> None:
        self.warned = False

    def due(self) -> bool:
        """Whether to warn now (and, outside warn-always, not again)."""
        if _always:
            return True
        if self.warned:
            return False
        self.warned = True
        return True

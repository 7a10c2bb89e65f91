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

"""Grad mode and anomaly mode: the two global switches autograd consults."""

from __future__ import annotations

import contextlib


class _State:
    grad_enabled = True
    anomaly_enabled = False
    anomaly_check_nan = True


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether operations are currently recorded for backward."""
    return STATE.grad_enabled


class _GradModeContext(contextlib.ContextDecorator):
    """Base for the grad-mode context managers; also usable as decorators."""

    _mode = True

    def __enter__(self) -> None:
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._mode

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._prev

    def __call__(self, func):
        # `@no_grad` without parentheses is accepted, like PyTorch.
        return super().__call__(func)


class no_grad(_GradModeContext):  # noqa: N801
    """Context manager / decorator: operations inside are not recorded."""

    _mode = False


class enable_grad(_GradModeContext):  # noqa: N801
    """Context manager / decorator: turn recording back on inside `no_grad`."""

    _mode = True


class inference_mode(_GradModeContext):  # noqa: N801
    """Like `no_grad` (minigrad has no separate inference tensors)."""

    def __init__(self, mode: bool = True) -> None:
        self._mode = not mode


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """`set_grad_enabled(False)` switches grad mode at once; as a context manager
    it restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self._prev = STATE.grad_enabled
        self._mode = bool(mode)
        STATE.grad_enabled = self._mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._prev


def is_anomaly_enabled() -> bool:
    return STATE.anomaly_enabled


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_check_nan


class set_detect_anomaly:  # noqa: N801
    """Turn anomaly detection on or off (at once, and as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (STATE.anomaly_enabled, STATE.anomaly_check_nan)
        STATE.anomaly_enabled = bool(mode)
        STATE.anomaly_check_nan = bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        STATE.anomaly_enabled, STATE.anomaly_check_nan = self._prev


class detect_anomaly(contextlib.ContextDecorator):  # noqa: N801
    """Context manager: record a forward traceback for every node, and check
    that no backward node returns NaN."""

    def __init__(self, check_nan: bool = True) -> None:
        import warnings

        self._check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev = (STATE.anomaly_enabled, STATE.anomaly_check_nan)
        STATE.anomaly_enabled = True
        STATE.anomaly_check_nan = self._check_nan

    def __exit__(self, *exc) -> None:
        STATE.anomaly_enabled, STATE.anomaly_check_nan = self._prev

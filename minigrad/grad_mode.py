"""Grad mode and anomaly mode: the switches autograd consults.

As in PyTorch, grad mode (`no_grad`, `enable_grad`, `set_grad_enabled`,
`inference_mode`) belongs to a thread: a `with no_grad():` held open in one thread
does not stop another from recording, and every new thread starts with grad mode
on. Anomaly mode is one switch for the whole process, as PyTorch's is.
"""

from __future__ import annotations

import contextlib
import threading


class _Anomaly:
    """The process-wide anomaly switches."""

    enabled = False
    check_nan = True


# Read directly where every op looks (`ANOMALY.enabled`): a plain object's attribute
# costs half of a thread-local's, and a property on one costs three times as much.
ANOMALY = _Anomaly()


class _State(threading.local):
    """What autograd reads on every op. A `threading.local`: each thread sees its own
    `grad_enabled` and `inference` (starting from the class defaults below); the
    anomaly attributes are properties over the one process-wide `ANOMALY`."""

    grad_enabled = True
    inference = False

    @property
    def anomaly_enabled(self) -> bool:
        return ANOMALY.enabled

    @anomaly_enabled.setter
    def anomaly_enabled(self, value: bool) -> None:
        ANOMALY.enabled = value

    @property
    def anomaly_check_nan(self) -> bool:
        return ANOMALY.check_nan

    @anomaly_check_nan.setter
    def anomaly_check_nan(self, value: bool) -> None:
        ANOMALY.check_nan = value


STATE = _State()


def is_grad_enabled() -> bool:
    """Whether operations are currently recorded for backward (in this thread)."""
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()`."""
    return STATE.inference


def _check_bool(value, what: str, name: str = "enabled", position: int = 1) -> bool:
    """PyTorch's argument check: `set_grad_enabled("no")` is refused, not truth-tested."""
    if not isinstance(value, bool):
        raise TypeError(f"{what}(): argument '{name}' (position {position}) must be bool, "
                        f"not {type(value).__name__}")
    return value


class _GradModeContext(contextlib.ContextDecorator):
    """Base for the grad-mode context managers; also usable as decorators."""

    _mode = True

    def __new__(cls, func=None):
        # `@no_grad` without parentheses decorates `func` at once, as in PyTorch.
        if func is None:
            return super().__new__(cls)
        return cls()(func)

    def __enter__(self) -> None:
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._mode

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._prev


class no_grad(_GradModeContext):  # noqa: N801
    """Context manager / decorator: operations inside are not recorded."""

    _mode = False


class enable_grad(_GradModeContext):  # noqa: N801
    """Context manager / decorator: turn recording back on inside `no_grad`."""

    _mode = True


class inference_mode(_GradModeContext):  # noqa: N801
    """Like `no_grad` (minigrad has no separate inference tensors), and reported by
    `is_inference_mode_enabled()`."""

    def __new__(cls, mode=True):
        if not isinstance(mode, bool):  # `@inference_mode` without parentheses
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self._inference = mode
        self._mode = not mode

    def __enter__(self) -> None:
        super().__enter__()
        self._prev_inference = STATE.inference
        STATE.inference = self._inference

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        STATE.inference = self._prev_inference


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """`set_grad_enabled(False)` switches grad mode at once; as a context manager
    it restores the previous mode on exit."""

    def __new__(cls, mode: bool):
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        self._prev = STATE.grad_enabled
        self._mode = _check_bool(mode, "set_grad_enabled")
        STATE.grad_enabled = self._mode

    def __call__(self, func):
        # As a decorator it must not leave the mode switched: the mode it set at
        # construction is undone now, and set again each time `func` runs.
        STATE.grad_enabled = self._prev
        return super().__call__(func)

    def __enter__(self) -> None:
        STATE.grad_enabled = self._mode

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._prev


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (one switch for every thread)."""
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward results for NaN."""
    return ANOMALY.check_nan


def _set_anomaly(mode: bool, check_nan: bool) -> None:
    _check_bool(mode, "set_anomaly_enabled")
    _check_bool(check_nan, "set_anomaly_enabled", "check_nan", 2)
    ANOMALY.enabled = mode
    ANOMALY.check_nan = check_nan


class set_detect_anomaly:  # noqa: N801
    """Turn anomaly detection on or off (at once, and as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        _set_anomaly(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self._prev


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
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        _set_anomaly(True, self._check_nan)

    def __exit__(self, *exc) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self._prev

"""Printing tensors the way PyTorch prints them (a faithful subset)."""

from __future__ import annotations

import math

import numpy as np

from . import _dtype

_EDGE = 3  # elements shown at each end once a tensor is summarised
_THRESHOLD = 1000
_LINEWIDTH = 80


class _Formatter:
    """Chooses one format for all elements: integers-as-floats (`2.`), fixed
    point with 4 decimals, or scientific notation, like PyTorch."""

    def __init__(self, values: np.ndarray, is_float: bool) -> None:
        self.is_float = is_float
        self.sci = False
        self.int_mode = True
        self.width = 1
        if not is_float:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        finite = values[np.isfinite(values)].astype(np.float64)
        strs = []
        if finite.size:
            absv = np.abs(finite)
            nonzero = absv[absv != 0]
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            if nonzero.size:
                mx, mn = nonzero.max(), nonzero.min()
                if self.int_mode:
                    self.sci = mx > 1e8
                else:
                    self.sci = mx / mn > 1000.0 or mx > 1e8 or mn < 1e-4
        strs = [self.format_raw(v) for v in values.tolist()]
        self.width = max((len(s) for s in strs), default=1)

    def format_raw(self, v) -> str:
        if not self.is_float:
            return str(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if self.sci:
            return f"{v:.4e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.4f}"

    def __call__(self, v) -> str:
        return self.format_raw(v).rjust(self.width)


def _summary_values(a: np.ndarray) -> np.ndarray:
    if a.size <= _THRESHOLD:
        return a.reshape(-1)
    parts = []

    def walk(x):
        if x.ndim == 0:
            parts.append(x.reshape(1))
            return
        if x.shape[0] > 2 * _EDGE:
            for i in list(range(_EDGE)) + list(range(x.shape[0] - _EDGE, x.shape[0])):
                walk(x[i])
        else:
            for i in range(x.shape[0]):
                walk(x[i])

    walk(a)
    return np.concatenate(parts) if parts else a.reshape(-1)


def _format(a: np.ndarray, fmt: _Formatter, indent: int, summarize: bool) -> str:
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        n = a.shape[0]
        if summarize and n > 2 * _EDGE:
            items = [fmt(v) for v in a[:_EDGE].tolist()] + ["..."] + \
                [fmt(v) for v in a[-_EDGE:].tolist()]
        else:
            items = [fmt(v) for v in a.tolist()]
        per_line = max(1, (_LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    n = a.shape[0]
    if summarize and n > 2 * _EDGE:
        rows = [_format(a[i], fmt, indent + 1, summarize) for i in range(_EDGE)] + ["..."] + \
            [_format(a[i], fmt, indent + 1, summarize) for i in range(n - _EDGE, n)]
    else:
        rows = [_format(a[i], fmt, indent + 1, summarize) for i in range(n)]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t) -> str:
    a = t._data
    suffixes = []
    dt = t.dtype
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size=({', '.join(map(str, a.shape))}{',' if a.ndim == 1 else ''})")
    else:
        summarize = a.size > _THRESHOLD
        if dt is _dtype.bool_:
            fmt = _BoolFormatter()
        else:
            fmt = _Formatter(_summary_values(a), dt.is_floating_point)
        body = _format(a, fmt, len("tensor("), summarize)
    if dt not in (_dtype.float32, _dtype.int64, _dtype.bool_) or (
        a.size == 0 and dt is not _dtype.float32
    ):
        suffixes.append(f"dtype={dt}")
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    prefix = "Parameter containing:\ntensor(" if getattr(t, "_is_param", False) else "tensor("
    return prefix + ", ".join([body] + suffixes) + ")"


class _BoolFormatter:
    width = 5

    def __call__(self, v) -> str:
        return str(bool(v)).rjust(5)

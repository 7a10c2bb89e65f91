"""Printing tensors the way PyTorch prints them (a faithful subset)."""

from __future__ import annotations

import math

import numpy as np

from . import _dtype

_EDGE = 3  # elements shown at each end once a tensor is summarised
_THRESHOLD = 1000
_LINEWIDTH = 80


class _Formatter:
    """Chooses one format for all elements, the way PyTorch does: integers shown
    as `2.`, fixed point with 4 decimals, or scientific notation. The column width
    is measured over the nonzero finite values only, so `nan` and `inf` are never
    padded for."""

    def __init__(self, values: np.ndarray, is_float: bool) -> None:
        self.is_float = is_float
        self.sci = False
        self.int_mode = True
        if not is_float:
            self.width = max((len(str(v)) for v in values.tolist()), default=1)
            return
        finite = values[np.isfinite(values)].astype(np.float64)
        nonzero = finite[finite != 0]
        self.width = 1
        if nonzero.size == 0:
            return
        absv = np.abs(nonzero)
        mx, mn = absv.max(), absv.min()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci = bool(mx / mn > 1000.0 or mx > 1e8)
        if not self.int_mode and mn < 1e-4:
            self.sci = True
        if self.sci:
            self.width = max(len(f"{v:.4e}") for v in nonzero.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in nonzero.tolist())
        else:
            self.width = max(len(f"{v:.4f}") for v in nonzero.tolist())

    def __call__(self, v) -> str:
        if not self.is_float:
            text = str(v)
        elif self.sci:
            text = f"{v:.4e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.4f}"
        return text.rjust(self.width)


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
            items = [fmt(v) for v in a[:_EDGE].tolist()] + [" ..."] + \
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
    # A dual tensor shows its tangent (forward mode; a pending one is computed first).
    if t._fw_pending is not None:
        t._fw_pending.compute_if_written()
    tangent = t._fw_grad
    if tangent is not None:
        # (PyTorch formats it with `f"{tangent}"`: a 0-d one as its number)
        shown = tangent._data.item() if tangent._data.ndim == 0 else tensor_repr(tangent)
        suffixes.append(f"tangent={shown}")
    text = _add_suffixes("tensor(" + body, suffixes)
    return "Parameter containing:\n" + text if getattr(t, "_is_param", False) else text


def _add_suffixes(text: str, suffixes: list[str]) -> str:
    """Append each `, suffix` and the closing parenthesis. A suffix that would pass the
    line width starts a new line, indented to the data: PyTorch's rule, which counts
    the current line as two characters longer than it is (after a wrapped suffix,
    exactly as long as it is)."""
    indent = len("tensor(")
    used = len(text.rsplit("\n", 1)[-1]) + 2
    parts = [text]
    for suffix in suffixes:
        if used + len(suffix) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            used = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            used += len(suffix) + 2
    return "".join(parts) + ")"

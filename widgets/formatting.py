"""Short text for tensors and values, shared by the drawing, the inspectors and the stepper.

Everything here works on anything that looks like a tensor (real `torch` or `minigrad`),
through `detach()` / `tolist()` / `shape` / `dtype` only.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np


def is_tensor_like(value: Any) -> bool:
    """True for objects with the tensor surface the widgets read (torch or minigrad)."""
    return all(hasattr(value, attr) for attr in ("grad_fn", "requires_grad", "shape", "_version"))


def shape_text(tensor: Any) -> str:
    """`(3, 2)` for a 3x2 tensor, `()` for a scalar."""
    dims = tuple(int(d) for d in tensor.shape)
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(str(d) for d in dims) + ")"


def dtype_text(tensor: Any) -> str:
    """`float32` rather than `torch.float32` / `minigrad.float32`."""
    return str(getattr(tensor, "dtype", "")).rsplit(".", 1)[-1]


def to_numpy(value: Any) -> np.ndarray:
    """The values of a tensor (or number, or list) as a numpy array, never sharing autograd."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "tolist"):
        return np.asarray(value.tolist(), dtype=float)
    return np.asarray(value, dtype=float)


def value_text(value: Any, max_elements: int = 6, max_chars: int = 60) -> str:
    """A one-line rendering of a gradient or saved value: `[2., 2., 2.]`, `6.0`, `None`."""
    if value is None:
        return "None"
    if not (is_tensor_like(value) or hasattr(value, "tolist")):
        return _clip(repr(value), max_chars)
    try:
        array = to_numpy(value)
    except (TypeError, ValueError, RuntimeError):
        return _clip(repr(value), max_chars)
    if array.ndim == 0:
        text = np.format_float_positional(float(array), precision=4, trim="-")
    else:
        text = np.array2string(
            array,
            precision=4,
            threshold=max_elements,
            edgeitems=2,
            separator=", ",
            suppress_small=True,
            max_line_width=10_000,
        )
    return _clip(" ".join(text.split()), max_chars)


def packed_text(packed: Any, max_chars: int = 60) -> str:
    """What a saved-tensor pack hook returned, in one line: its type, and a tensor's or
    array's dtype and shape rather than its values (`tuple(str 'disk-3', tensor float32
    (4,))`), so a learner sees what the graph holds instead of the tensor."""
    return _clip(_packed_part(packed), max_chars)


def _packed_part(packed: Any) -> str:
    if is_tensor_like(packed):
        return f"tensor {dtype_text(packed)} {shape_text(packed)}"
    if isinstance(packed, np.ndarray):
        return f"ndarray {packed.dtype} {shape_text(packed)}"
    if isinstance(packed, (tuple, list)):
        return f"{type(packed).__name__}({', '.join(_packed_part(p) for p in packed)})"
    if packed is None:
        return "None"
    if isinstance(packed, (bool, int, float, str)):
        return f"{type(packed).__name__} {packed!r}"
    return type(packed).__name__


def node_display_name(node: Any) -> str:
    """`AccumulateGrad` for `torch::autograd::AccumulateGrad`; other names unchanged."""
    return str(node.name()).rsplit("::", 1)[-1]


def escape(text: str) -> str:
    """HTML-escape text for the notebook panels."""
    return html.escape(str(text), quote=True)


def _clip(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"

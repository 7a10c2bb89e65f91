"""Run one program under PyTorch and under minigrad and describe everything observable.

A *program* is a function `program(c)` where `c` is a `Ctx`: `c.m` is the module
(`torch` or `minigrad`), `c.leaf(...)` makes a tracked leaf tensor, `c.keep(t)` tracks an
intermediate tensor. The program returns its outputs (a tensor, a tuple/list of
tensors, or None); outputs are tracked too.

`record(module, program)` returns a plain-data description of the run:

* `error`: the exception raised by the program (type name, message), if any;
* `tensors`: for every tracked tensor, its values, dtype, shape, strides (see
  `_strides`), `requires_grad`, `is_leaf`, `_version`, `_is_view()`, which tracked
  tensor is its `_base`, and its `grad_fn`;
* `nodes`: every node reachable from a tracked tensor, numbered in discovery order:
  type name, `name()`, `next_functions` (as node numbers and output indices, `None`
  for `(None, 0)`), the `_saved_*` attributes (values, or the error reading one raises),
  and for `AccumulateGrad` which tracked tensor is its `variable`;
* `order`: the node numbers in the order backward executed them (node pre-hooks);
* `backward_error`, `grads` (the `.grad` of every tracked leaf, with its strides and
  `_version`), and `saved_after`:
  the `_saved_*` attributes read again after backward (released or not);
* `warnings`: every warning raised while the program, the description and backward
  ran, in order, as (category name, text). Python's "show once" filters are off, so
  a repeated warning is recorded each time it is raised; and so is each library's own
  once-per-process warning (PyTorch's TORCH_WARN_ONCE), by `set_warn_always(True)`,
  so what a program sees does not depend on which tests ran before it in the process.

Backward is seeded with the same fixed, non-uniform gradient for every output that
requires grad, so a wrong formula cannot hide behind a symmetric seed.

`assert_same(torch_record, minigrad_record)` compares the two, with PyTorch's text
translated ("torch" -> "minigrad"): everything exactly but float values, which are
compared as the float policy (`float_policy.py`) says: a program's values and gradients
within `CHAIN` unless a test asks for a stricter kind.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from float_policy import CHAIN, Tolerance, outside

# -- messages ----------------------------------------------------------------------------


def translate(message: str) -> str:
    """PyTorch's text as minigrad must print it: `torch` becomes `minigrad` (but not
    inside `pytorch`), and the C++ source location PyTorch appends is dropped."""
    message = re.sub(r"\btorch\b", "minigrad", message)
    return re.sub(r" \(Triggered internally at .*\)$", "", message, flags=re.S)


def error_of(exc: BaseException) -> tuple[str, str]:
    return ("error", type(exc).__name__, translate(str(exc)))


def raised(fn: Callable[[], Any]) -> tuple[str, str]:
    """What calling `fn` raises, (type name, translated message), or ("no error", "")."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - comparing whatever each library raises
        return type(exc).__name__, translate(str(exc))
    return ("no error", "")


# -- running a program ---------------------------------------------------------------------


class Ctx:
    """What a program receives: the module and tensor-tracking helpers."""

    def __init__(self, m) -> None:
        self.m = m
        self.tensors: list = []
        self.run_backward = True

    def leaf(self, values, dtype: str = "float64", requires_grad: bool = True):
        t = self.m.tensor(values, dtype=getattr(self.m, dtype), requires_grad=requires_grad)
        return self.keep(t)

    def keep(self, *ts):
        for t in ts:
            if not any(t is u for u in self.tensors):
                self.tensors.append(t)
        return ts[0] if len(ts) == 1 else ts


def seed_gradient(shape: tuple) -> np.ndarray:
    """A fixed gradient with distinct entries (0.5, 0.75, 1.0, ...)."""
    n = int(np.prod(shape)) if shape else 1
    return (0.5 + 0.25 * np.arange(n)).reshape(shape)


def _safe(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # the *same* failure is part of the behaviour compared
        return error_of(exc)


def _values(t) -> np.ndarray:
    # (`force`: PyTorch's efficient zero gradients, such as sgn's, are ZeroTensors,
    # which give their values only when forced)
    return np.array(t.detach().numpy(force=True), copy=True)


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


class _Graph:
    """Numbers nodes in discovery order and describes them (iteratively)."""

    def __init__(self, tensors: list) -> None:
        self.tensors = tensors
        self.nodes: list = []  # keeps node objects alive, so ids are not reused
        self.index: dict[int, int] = {}

    def tensor_index(self, t) -> int | str | None:
        if t is None:
            return None
        for i, u in enumerate(self.tensors):
            if t is u:
                return i
        return "untracked"

    def add(self, node) -> int | None:
        """Number `node` and everything below it; returns its number."""
        if node is None:
            return None
        stack = [node]
        while stack:
            n = stack.pop()
            if id(n) in self.index:
                continue
            self.index[id(n)] = len(self.nodes)
            self.nodes.append(n)
            children = [nxt for nxt, _ in n.next_functions if nxt is not None]
            stack.extend(reversed(children))
        return self.index[id(node)]

    def saved(self, node) -> dict:
        out = {}
        for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
            out[attr] = _safe(lambda attr=attr: self.value(getattr(node, attr)))
        return out

    def value(self, v) -> Any:
        if hasattr(v, "grad_fn") and hasattr(v, "detach"):  # a tensor
            return ("tensor", _dtype_name(v), tuple(v.shape), _values(v), self.tensor_index(v))
        if isinstance(v, tuple):
            return tuple(self.value(x) for x in v)
        if isinstance(v, (bool, int, float)) or v is None:
            return (type(v).__name__, v)
        return ("other", type(v).__name__)

    def describe(self, i: int) -> dict:
        node = self.nodes[i]
        d = {
            "type": type(node).__name__,
            "name": translate(node.name()),
            "next": [
                None if nxt is None else (self.index[id(nxt)], nr)
                for nxt, nr in node.next_functions
            ],
            "saved": self.saved(node),
        }
        if type(node).__name__ == "AccumulateGrad":
            d["variable"] = self.tensor_index(node.variable)
        return d


def describe_graph(tensors: list) -> list[dict]:
    """Every node reachable from the `grad_fn`s of `tensors`, described as `record`
    describes them (saved tensors by value and by their index in `tensors`)."""
    graph = _Graph(tensors)
    for t in tensors:
        _safe(lambda t=t: graph.add(t.grad_fn))
    return [graph.describe(i) for i in range(len(graph.nodes))]


def _describe_tensor(graph: _Graph, t) -> dict:
    def grad_fn():
        return graph.add(t.grad_fn)

    return {
        "shape": tuple(t.shape),
        "stride": _strides(t),
        "dtype": _dtype_name(t),
        "values": _values(t),
        "requires_grad": t.requires_grad,
        "is_leaf": _safe(lambda: t.is_leaf),
        "version": t._version,
        "is_view": t._is_view(),
        "base": graph.tensor_index(t._base),
        "grad_fn": _safe(grad_fn),
    }


def _strides(t) -> tuple:
    """The strides where a dim has more than one element (elsewhere a stride says
    nothing about the layout, and PyTorch's own contiguity checks skip it)."""
    return tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))


def _outputs(result) -> list:
    if result is None:
        return []
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _outputs(r)]
    return [result] if hasattr(result, "grad_fn") else []


def record(m, program: Callable[[Ctx], Any]) -> dict:
    """Run `program` with module `m` and describe what happened (see module doc)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        was = m.is_warn_always_enabled()
        m.set_warn_always(True)
        try:
            rec = _record(m, program)
        finally:
            m.set_warn_always(was)
    rec["warnings"] = [(w.category.__name__, translate(str(w.message))) for w in caught
                       if not _numpy_deprecation(w)]
    return rec


def _numpy_deprecation(w: warnings.WarningMessage) -> bool:
    """numpy's own notice that a library's array protocol (torch's `__array_wrap__`)
    will change: about how torch is written, not how PyTorch behaves."""
    return issubclass(w.category, DeprecationWarning) and "(Deprecated NumPy" in str(w.message)


def _record(m, program: Callable[[Ctx], Any]) -> dict:
    c = Ctx(m)
    rec: dict = {}
    try:
        outs = _outputs(program(c))
    except Exception as exc:
        rec["error"] = error_of(exc)
        outs = []
    c.keep(*outs) if outs else None
    graph = _Graph(c.tensors)
    rec["tensors"] = [_describe_tensor(graph, t) for t in c.tensors]
    rec["nodes"] = [graph.describe(i) for i in range(len(graph.nodes))]
    if "error" in rec or not c.run_backward:
        rec["grads"] = _grads(c)
        return rec

    order: list = []
    for i, node in enumerate(graph.nodes):
        node.register_prehook(lambda grads, i=i: order.append(i))
    roots = [t for t in outs if t.requires_grad and t.dtype.is_floating_point]
    if roots:
        seeds = [m.tensor(seed_gradient(tuple(t.shape)), dtype=t.dtype) for t in roots]
        try:
            m.autograd.backward(roots, seeds)
        except Exception as exc:
            rec["backward_error"] = error_of(exc)
    rec["order"] = order
    rec["grads"] = _grads(c)
    rec["saved_after"] = [graph.saved(n) for n in graph.nodes]
    return rec


def _grads(c: Ctx) -> list:
    out = []
    for t in c.tensors:
        if _safe(lambda t=t: t.is_leaf) is True:
            g = t.grad
            out.append(None if g is None else (_dtype_name(g), tuple(g.shape), _values(g),
                                               _strides(g), g._version))
        else:
            out.append("non-leaf")
    return out


# -- comparing ---------------------------------------------------------------------------------


def _diff(a, b, path: str, out: list, how: Tolerance) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            out.append(f"{path}: torch {a!r} != minigrad {b!r}")
        elif a.dtype.kind == "f":
            if outside(b, a, how).any():
                out.append(f"{path}: torch {a.tolist()} != minigrad {b.tolist()} "
                           f"(not within {how.name})")
        elif not np.array_equal(a, b):
            out.append(f"{path}: torch {a.tolist()} != minigrad {b.tolist()}")
    elif isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: torch {a.get(k, '<missing>')!r} "
                           f"!= minigrad {b.get(k, '<missing>')!r}")
            else:
                _diff(a[k], b[k], f"{path}.{k}", out, how)
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b) or type(a) is not type(b):
            out.append(f"{path}: torch {a!r} != minigrad {b!r}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _diff(x, y, f"{path}[{i}]", out, how)
    elif isinstance(a, float) and isinstance(b, float):
        # (a Python float a node saved, such as a scalar operand: float64 values)
        if outside(np.float64(b), np.float64(a), how).any():
            out.append(f"{path}: torch {a!r} != minigrad {b!r}")
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: torch {a!r} != minigrad {b!r}")


def differences(torch_rec: dict, minigrad_rec: dict, how: Tolerance = CHAIN) -> list[str]:
    """Where the two records differ: anything but a float value differing at all, a
    float value not within `how` (a kind of the float policy)."""
    out: list[str] = []
    _diff(torch_rec, minigrad_rec, "", out, how)
    return out


def assert_same(torch_rec: dict, minigrad_rec: dict, how: Tolerance = CHAIN) -> None:
    diffs = differences(torch_rec, minigrad_rec, how)
    assert not diffs, "minigrad differs from torch:\n  " + "\n  ".join(diffs[:25])


def check(torch, program: Callable[[Ctx], Any], how: Tolerance = CHAIN) -> dict:
    """Run `program` under both libraries and assert they behave the same (floats
    within `how`, as for `differences`)."""
    import minigrad

    rec_t = record(torch, program)
    rec_m = record(minigrad, program)
    assert_same(rec_t, rec_m, how)
    return rec_m

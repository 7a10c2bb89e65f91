"""The short lane: one element-wise op on a short float64 vector that needs a gradient.

A long chain of small ops (a learner's loop of `y = y * 1.001`, `y = y.sin()`)
spends its time around the arithmetic, not in it: an op checks its operands'
dtypes and layout in one function, picks the kernel's compiled code in another,
makes the result tensor in a third and records the node in a fourth. For the
commonest case of all, a short row-major float64 vector that needs a gradient, in
plain grad mode, the functions here do all those steps in one place, with only the
checks that case needs.

Anything else (another dtype or layout, a view, an input needing no gradient, no
grad mode, anomaly mode, a dual level, a long array) returns None, and the op goes
its general way (`arrays.dispatch`, `autograd.record`), which gives the same result,
node and saved values. What the op saves stays in the op.

Measured on `benchmarks/bench_overhead.py`'s chain: see benchmarks/README.md,
"Changes made for speed".
"""

from __future__ import annotations

import numpy as np

from ..arrays.dispatch import short_vector, short_vector_and_number
from ..autograd.graph import Node
from ..autograd.tangents import DUAL
from ..grad_mode import ANOMALY, STATE
from ..tensor import Tensor, VersionCounter

_NO_EDGE = (None, 0)
_new_object = object.__new__


def _edge_if_plain(t: Tensor) -> tuple | None:
    """The edge to `t`'s producer when `t` needs a gradient, is not a view, and ops
    record plainly (grad mode, no anomaly mode, no dual level); else None. (Whether
    its data is a short float64 vector, the `dispatch.short_*` functions check.)"""
    if t._view is not None or not STATE.grad_enabled or ANOMALY.enabled or DUAL.active:
        return None
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:  # a leaf
        return (t._grad_accumulator(), 0)
    return None


def _result(data: np.ndarray, node: Node) -> Tensor:
    """A fresh tensor of `data` (a fresh vector), made by `node`: `Tensor._make`, with
    nothing to check and the producer set at once."""
    out = _new_object(Tensor)
    out._data = data
    out._requires_grad = False
    out._grad_fn = node
    out._output_nr = 0
    out._version_counter = VersionCounter()
    return out


def with_number(node_cls: type[Node], kernel, t: Tensor, s) -> Tensor | None:
    """`kernel(t, s)` for a Python float `s` (`y * 0.5`, `y + 0.5`), recorded as a
    `node_cls` node with the number as its second input (whose edge leads nowhere).
    None when this is not the short lane's case."""
    if type(s) is not float:
        return None
    edge = _edge_if_plain(t)
    if edge is None:
        return None
    out = short_vector_and_number(kernel, t._data, s)
    if out is None:
        return None
    return _result(out, node_cls((edge, _NO_EDGE), None))


def of_one(node_cls: type[Node], kernel, t: Tensor) -> Tensor | None:
    """`kernel(t)` (`y.sin()`), recorded as a `node_cls` node. None when this is not
    the short lane's case."""
    edge = _edge_if_plain(t)
    if edge is None:
        return None
    out = short_vector(kernel, t._data)
    if out is None:
        return None
    return _result(out, node_cls((edge,), None))

"""The short lane: one element-wise op on a short float64 vector that needs a gradient.

A long chain of small ops (a learner's loop of `y = y * 1.001`, `y = y.sin()`)
spends its time around the arithmetic, not in it: an op checks its operands'
dtypes and layout in one function, picks the kernel's compiled code in another,
makes the result tensor in a third and records the node in a fourth. For the
commonest case of all, a short row-major float64 vector that needs a gradient, in
plain grad mode, `run` here does all those steps in one place, with only the
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

from ..arrays.direct import PLAIN, VECTOR_SCALAR, VECTOR_VECTOR
from ..arrays.dispatch import PARALLEL_MIN, VECTORISED_MIN
from ..autograd.graph import Node, plain_node
from ..autograd.tangents import DUAL
from ..grad_mode import ANOMALY, STATE
from ..tensor import Tensor, VersionCounter

_NO_EDGE = (None, 0)
_NO_NUMBER = object()  # (`run` for an op of one tensor)
_new_object = object.__new__
_FLOAT64 = np.dtype(np.float64)
_empty = np.empty


def run(node_cls: type[Node], kernel, t: Tensor, s=_NO_NUMBER) -> Tensor | None:
    """`kernel(t)` (`y.sin()`), or `kernel(t, s)` for a Python float `s` (`y * 0.5`,
    `y + 0.5`, whose number is the node's second input, with an edge leading
    nowhere), recorded as a `node_cls` node. None when this is not the short lane's
    case: `t` must need a gradient, not be a view, and ops must record plainly
    (grad mode, no anomaly mode, no dual level), and `t`'s data must be a short
    row-major float64 vector.

    Written out in one function, each step inline (the checks and the kernel call
    of `dispatch.short_vector[_and_number]`, the edge, the result tensor as
    `Tensor._make` makes it with its producer set at once), and the node made by
    `plain_node` without `Node.__init__`'s frame: a call fewer for each step, on
    every op of a chain."""
    fn = t._grad_fn
    if (t._view is not None or (fn is None and not t._requires_grad)
            or not STATE.grad_enabled or ANOMALY.enabled or DUAL.active):
        return None
    # (a short row-major float64 vector: its kernel's machine code is called directly)
    a = t._data
    if a.dtype is not _FLOAT64 or a.ndim != 1 or a.flags.num & PLAIN != PLAIN:
        return None
    n = a.size
    if s is _NO_NUMBER:
        if not 0 < n < VECTORISED_MIN:
            return None
        data = _empty(n, _FLOAT64)
        VECTOR_VECTOR[kernel](a, data)
    elif type(s) is float and 0 < n < PARALLEL_MIN:
        data = _empty(n, _FLOAT64)
        VECTOR_SCALAR[kernel](a, s, data)
    else:
        return None
    # (the input's edge: to its producer, or to a leaf's accumulator)
    edge = (fn, t._output_nr) if fn is not None else (t._grad_accumulator(), 0)
    out = _new_object(Tensor)
    out._data = data
    out._requires_grad = False
    out._grad_fn = plain_node(node_cls, (edge,) if s is _NO_NUMBER else (edge, _NO_EDGE))
    out._output_nr = 0
    out._version_counter = VersionCounter()
    return out

"""How an op adds its node to the graph.

Every differentiable op computes its result, then calls `record` (or, for the
commonest case, `record_elementwise`): if grad mode is on and some input needs a
gradient, a new node becomes the result's `grad_fn`, with one edge per input to
that input's producer (or to a leaf's `AccumulateGrad`, or `(None, 0)`). The op then
saves what its backward formula needs on the node it got back.
"""

from __future__ import annotations

from ..grad_mode import ANOMALY, STATE
from ..tensor import Tensor
from .graph import Node, capture_forward_trace
from .tangents import DUAL, note_dual


def record(node_cls: type[Node], output: Tensor | None, *inputs,
           like_output: bool = False) -> Node | None:
    """Attach a new `node_cls` node as `output.grad_fn` if any input requires grad.

    `inputs` are the op's differentiable inputs in order (tensors, or None / Python
    numbers for positions that cannot need a gradient). Each input that needs a
    gradient gives the node an edge to its producer and its shape and dtype (which
    the engine checks that gradient against); the others get `(None, 0)` and None.
    An element-wise op whose inputs that may need a gradient all have the output's
    shape and dtype says so with `like_output`: its node keeps no input shapes and
    the engine checks none of its gradients (see `Node.elementwise`). Nor does a
    node whose formula always fits its inputs (`Node.exact`).
    Returns the node so the op can save what its backward needs, or None when no
    graph is recorded. (In-place ops pass `output=None` and attach the node
    themselves, see `begin_inplace`.)
    While a dual level is active, every call ends in `note_dual`, which gives the
    output a tangent if an input has one (`autograd/tangents.py`).
    """
    if not STATE.grad_enabled:
        return None if not DUAL.active else note_dual(node_cls, output, inputs, None)
    edges = []
    needed = False
    for t in inputs:  # this runs for every op, so `Tensor._edge` is spelled out here
        if not isinstance(t, Tensor):
            edges.append(_NO_EDGE)
            continue
        fn = t._grad_fn if t._view is None else t.grad_fn
        if fn is not None:
            edges.append((fn, t._output_nr))
        elif t._requires_grad:
            edges.append((t._grad_accumulator(), 0))
        else:
            edges.append(_NO_EDGE)
            # A view requires grad when its base does, even with no edge to follow
            # (made in no_grad mode, or before the base required grad): the output
            # is still recorded, with a node whose gradient for it goes nowhere.
            if t._view is not None and t._view.base.requires_grad:
                needed = True
            continue
        needed = True
    if not needed:
        return None if not DUAL.active else note_dual(node_cls, output, inputs, None)
    if node_cls.exact or (like_output and node_cls.elementwise):
        node = node_cls(tuple(edges), None)
    else:
        node = node_cls(tuple(edges), _input_meta(inputs, edges))
    if output is not None:
        output._grad_fn = node
        output._output_nr = 0
    if ANOMALY.enabled:
        node._forward_trace = capture_forward_trace()
        node._plain = False
    if DUAL.active:
        return note_dual(node_cls, output, inputs, node)
    return node


def record_elementwise(node_cls: type[Node], output: Tensor, t: Tensor, *numbers) -> Node | None:
    """`record` for the commonest op of all: an element-wise op of one tensor `t`
    (`exp(x)`, `y + 0.5`), whose output is just like `t`, for an `elementwise` node
    class. `numbers`: the op's Python number, at most one, when the node counts it
    as an input (`x * 2` has two inputs); its edge leads nowhere. The same rule as
    `record`, written out for one tensor because every op of a long chain pays for
    it; anything unusual (anomaly mode, forward mode, an input that needs no
    gradient) goes to `record`."""
    if not STATE.grad_enabled:
        return None if not DUAL.active else record(node_cls, output, t, *numbers)
    fn = t._grad_fn if t._view is None else t.grad_fn
    if fn is not None:
        edge = (fn, t._output_nr)
    elif t._requires_grad:
        edge = (t._grad_accumulator(), 0)
    else:
        edge = None
    if edge is None or ANOMALY.enabled or DUAL.active:
        return record(node_cls, output, t, *numbers, like_output=True)
    node = node_cls((edge, _NO_EDGE) if numbers else (edge,), None)
    output._grad_fn = node
    output._output_nr = 0
    return node


def refuse_grad_for(function: str, argument: str, t: Tensor | None) -> None:
    """PyTorch's error for an argument its backward formula has no gradient for (a
    loss's `weight`) when, in grad mode, that argument requires grad: rather than
    silently leave its `.grad` None, the op refuses to run."""
    if t is not None and STATE.grad_enabled and t.requires_grad:
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to "
                           f"argument '{argument}'. This input cannot have requires_grad True.")


def _input_meta(inputs: tuple, edges: list) -> tuple:
    """(shape, dtype) of each input with an edge, which its gradient must match;
    None for the others."""
    meta = []
    for t, (fn, _) in zip(inputs, edges):
        meta.append(None if fn is None else (t._data.shape, t._data.dtype))
    return tuple(meta)


_NO_EDGE = (None, 0)

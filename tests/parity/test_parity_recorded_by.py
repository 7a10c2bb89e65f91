"""Which node's backward recorded each node of a `create_graph=True` gradient.

minigrad marks every node a `create_graph=True` backward makes with the node whose
turn made it (`Node._recorded_by`, a weak reference). PyTorch keeps the same thing,
in anomaly mode only, as `node.metadata["parent_"]`: the two must name the same
parents, node for node (the input buffer's sums and the engine's `sum_to_size` belong
to the node whose results they took, `.grad`'s copy to the AccumulateGrad).
"""

from __future__ import annotations

import warnings

import pytest

import minigrad


def _short(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def _parents(fn, parent_of) -> list[tuple[str, str | None]]:
    """(node name, parent name) for every node reachable from `fn`, depth first."""
    out, stack, seen = [], [fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        parent = parent_of(node)
        out.append((_short(node.name()), None if parent is None else _short(parent.name())))
        stack.extend(f for f, _ in node.next_functions)
    return out


def _minigrad_parent(node):
    ref = node._recorded_by
    return None if ref is None else ref()


def _grad(m, y, x):
    """The gradient, and `y` (the weak references lead to the forward's nodes only
    while something keeps them: here, `y`)."""
    return m.autograd.grad(y, x, create_graph=True)[0], y


PROGRAMS = {
    "cube": lambda m, x, w: _grad(m, (x**3).sum(), x),
    "tanh": lambda m, x, w: _grad(m, m.tanh(x * w).sum(), x),
    # x used twice: the input buffer adds the two streams (AddBackward0)
    "square": lambda m, x, w: _grad(m, (x * x).sum(), x),
    # a broadcast scalar: the engine sums its gradient down (SumBackward0)
    "broadcast": lambda m, x, w: _grad(m, (x * w[0]).sum(), w),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_recording_nodes_are_pytorchs(torch, name):
    program = PROGRAMS[name]
    recorded = {}
    libraries = ((torch, lambda n: n.metadata.get("parent_")), (minigrad, _minigrad_parent))
    for m, parent_of in libraries:
        x = m.tensor([1.0, -2.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([0.5, 3.0], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (anomaly mode says it slows things down)
            if m is torch:
                with torch.autograd.detect_anomaly():
                    g, y = program(m, x, w)
            else:
                g, y = program(m, x, w)
        recorded[m.__name__] = _parents(g.grad_fn, parent_of)
    assert recorded["minigrad"] == recorded["torch"]
    assert any(parent is not None for _, parent in recorded["minigrad"])


def test_backward_create_graph_copy_into_grad_belongs_to_the_accumulator():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the reference-cycle warning)
        (x**3).sum().backward(create_graph=True)
    copy = x.grad.grad_fn
    assert copy.name() == "minigrad::autograd::CopyBackwards"
    assert copy._recorded_by() is x._grad_accumulator()


def test_inputs_accumulation_is_recorded_by_the_accumulator():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x**3).sum().backward(create_graph=True, inputs=[x])
    parent = x.grad.grad_fn._recorded_by()
    assert type(parent).__name__ == "AccumulateGrad" and parent.variable is x


def test_forward_nodes_and_plain_backward_record_no_parent():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    assert y.grad_fn._recorded_by is None
    (g,) = minigrad.autograd.grad(y, x, retain_graph=True)
    assert g.grad_fn is None
    # Ops run after a create_graph backward (and between a stepper's steps) are
    # forward ops again.
    (g,) = minigrad.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn._recorded_by is not None
    assert (g * 2).grad_fn._recorded_by is None


def test_nodes_made_between_traced_steps_are_not_recorded_by_backward():
    from minigrad.autograd import backward_events
    from minigrad.autograd import events as ev

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x**3).sum()
    between = []
    recorded = []
    for event in backward_events((y,), trace=True, create_graph=True, retain_graph=True):
        between.append((x * 2).grad_fn)  # user code while the engine waits
        if isinstance(event, ev.NodesRecorded):
            recorded.append((event.node.name(), [n.name() for n in event.nodes]))
            assert all(n._recorded_by() is event.node for n in event.nodes)
    assert all(fn._recorded_by is None for fn in between)
    assert recorded == [
        ("SumBackward0", []),
        ("PowBackward0", ["PowBackward0", "MulBackward1", "MulBackward0"]),
        ("minigrad::autograd::AccumulateGrad", ["minigrad::autograd::CopyBackwards"]),
    ]


def test_only_passes_under_way_make_nodes_look_for_a_recording_parent():
    """Node.__init__ reads the thread-local RECORDING only while some create_graph
    pass is under way (RECORDING_PASSES); a pass dropped half way counts out too."""
    import gc

    from minigrad.autograd import backward_events
    from minigrad.autograd.graph import RECORDING_PASSES

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x**3).sum()
    # (counted from where it stands: a stepper another test of this process keeps
    # alive, paused half way through a create_graph pass, counts as under way)
    gc.collect()
    before = RECORDING_PASSES.count
    minigrad.autograd.grad(y, x, create_graph=True)
    assert RECORDING_PASSES.count == before
    events = backward_events((y,), trace=True, create_graph=True, retain_graph=True)
    next(events)
    assert RECORDING_PASSES.count == before + 1
    del events
    gc.collect()
    assert RECORDING_PASSES.count == before

"""The engine's event stream, asserted event by event for small graphs.

The node order is PyTorch's execution order for these graphs (the same as the order of
the nodes torch's own engine runs; checked with torch hooks on the same programs)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad as torch
from minigrad.autograd import backward_events
from minigrad.autograd import events as ev

ACC = "minigrad::autograd::AccumulateGrad"


def outline(events):
    """(event type, step, node name, detail) for each event; detail is the hook kind,
    the released names or the unpacked saved name."""
    rows = []
    for e in events:
        node = getattr(e, "node", None)
        detail = getattr(e, "kind", None) or getattr(e, "names", None) or getattr(e, "name", None)
        if isinstance(detail, tuple):
            detail = tuple(sorted(detail))
        rows.append((type(e).__name__, e.step if node is not None else None,
                     node.name() if node is not None else None, detail))
    return rows


def test_sequence_with_tensor_hook_and_retain_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 3
    a.register_hook(lambda g: g * 2)
    a.retain_grad()
    events = list(backward_events(a.sum()))
    assert outline(events) == [
        ("BackwardStarted", None, None, None),
        ("NodeStarted", 0, "SumBackward0", None),
        ("NodeFinished", 0, "SumBackward0", None),
        ("NodeStarted", 1, "MulBackward0", None),
        ("HookFired", 1, "MulBackward0", "tensor"),
        ("GradRetained", 1, "MulBackward0", None),
        ("SavedTensorUnpacked", 1, "MulBackward0", "other"),
        ("NodeFinished", 1, "MulBackward0", None),
        ("SavedTensorsReleased", 1, "MulBackward0", ("other",)),  # x * 3 saves no self
        ("NodeStarted", 2, ACC, None),
        ("GradAccumulated", 2, ACC, None),
        ("NodeFinished", 2, ACC, None),
        ("BackwardFinished", None, None, None),
    ]
    hook = events[4]
    assert hook.before.tolist() == [1.0, 1.0] and hook.after.tolist() == [2.0, 2.0]
    assert events[5].tensor is a and events[5].grad.tolist() == [2.0, 2.0]
    mul_done = events[7]
    assert mul_done.grads_in[0].tolist() == [2.0, 2.0]
    assert mul_done.grads_out[0].tolist() == [6.0, 6.0] and mul_done.grads_out[1] is None
    acc = events[10]
    assert acc.tensor is x and acc.total is x.grad and x.grad.tolist() == [6.0, 6.0]
    assert events[-1].nodes_run == 3


def test_node_pre_and_post_hooks_and_retain_graph_releases_nothing():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x.exp()
    a.grad_fn.register_prehook(lambda grads_in: None)
    a.grad_fn.register_hook(lambda grads_in, grads_out: None)
    x.register_hook(lambda g: g * 2)
    events = list(backward_events((a * a).sum(), retain_graph=True))
    assert outline(events) == [
        ("BackwardStarted", None, None, None),
        ("NodeStarted", 0, "SumBackward0", None),
        ("NodeFinished", 0, "SumBackward0", None),
        ("NodeStarted", 1, "MulBackward0", None),
        # (in the order PyTorch saves and unpacks them: by name)
        ("SavedTensorUnpacked", 1, "MulBackward0", "other"),
        ("SavedTensorUnpacked", 1, "MulBackward0", "self"),
        ("NodeFinished", 1, "MulBackward0", None),
        ("NodeStarted", 2, "ExpBackward0", None),
        ("HookFired", 2, "ExpBackward0", "prehook"),
        ("SavedTensorUnpacked", 2, "ExpBackward0", "result"),
        ("NodeFinished", 2, "ExpBackward0", None),
        ("HookFired", 2, "ExpBackward0", "posthook"),
        ("NodeStarted", 3, ACC, None),
        ("HookFired", 3, ACC, "tensor"),
        ("GradAccumulated", 3, ACC, None),
        ("NodeFinished", 3, ACC, None),
        ("BackwardFinished", None, None, None),
    ]
    # d/dx sum(exp(x)^2) = 2 exp(2x), doubled by the leaf hook
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.exp([2.0, 4.0]), rtol=1e-6)
    assert events[0].retain_graph is True
    assert a.grad_fn._saved_result.tolist() == a.tolist()  # still there


def test_started_event_counts_dependencies():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    loss = (h * 2 + h.sin()).sum()
    start = next(iter(backward_events(loss)))
    by_name = {node.name(): count for node, count in start.dependencies.items()}
    assert by_name["ExpBackward0"] == 2  # two consumers: MulBackward0 and SinBackward0
    assert by_name[ACC] == 1
    assert start.roots == (loss.grad_fn,) and start.root_grads[0].item() == 1.0


def test_error_event_names_the_node_and_the_generator_stops():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()
    z = y.exp()
    z.mul_(2)  # ExpBackward0 saved its result, now at version 1
    seen = []
    stream = backward_events(z.sum())
    with pytest.raises(RuntimeError, match="output 0 of Exp, is at version 1"):
        for e in stream:
            seen.append(e)
    assert outline(seen)[-1] == ("EngineFailed", 2, "ExpBackward0", None)
    assert isinstance(seen[-1].error, RuntimeError)
    assert x.grad is None  # the leaf was never reached
    assert not any(isinstance(e, ev.NodeStarted) and e.node.name() == "SinBackward0"
                   for e in seen)


def test_the_public_stream_is_backward_with_inputs_and_defaults_included():
    # `backward_events` is `backward()` as a stream: with `inputs` the leaves' .grad are
    # filled in at the end (reported as accumulations of the last step), and
    # `retain_graph` defaults to `create_graph`, as backward's does.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    events = list(backward_events((x * w).sum(), inputs=[x]))
    accumulated = [e for e in events if isinstance(e, ev.GradAccumulated)]
    assert [e.tensor is x for e in accumulated] == [True]
    assert isinstance(events[-1], ev.BackwardFinished)
    assert accumulated[0].step == events[-1].step
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None

    y = (x * x).sum()
    with warnings.catch_warnings():  # (backward's reference-cycle warning, once a process)
        warnings.simplefilter("ignore")
        started = next(iter(backward_events(y, create_graph=True)))
    assert started.retain_graph is True


def test_an_untraced_stream_yields_nothing_and_runs_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert list(backward_events((x * x).sum(), trace=False)) == []
    assert x.grad.tolist() == [2.0, 4.0]

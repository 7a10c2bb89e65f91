"""BackwardStepper on a real torch loss: PyTorch's engine runs once under observing
hooks, and the stepper replays it. Every check compares with a plain PyTorch run of
the same program (built twice, once for the stepper, once for `loss.backward()`)."""

from __future__ import annotations

import numpy as np
import pytest

from widgets import BackwardStepper
from widgets.torch_recording import is_torch_tensor


def mlp(torch):
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    w1 = torch.randn(3, 5, requires_grad=True)
    b1 = torch.zeros(5, requires_grad=True)
    w2 = torch.randn(5, 1, requires_grad=True)
    hidden = (x @ w1 + b1).tanh()
    hidden.retain_grad()
    loss = ((hidden @ w2) ** 2).mean()
    return loss, {"w1": w1, "b1": b1, "w2": w2, "hidden": hidden}


def unbind_and_reuse(torch):
    a = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    b, c, d = a.unbind()
    e = b * c * d + a.sum() * b
    return e, {"a": a, "b": b, "e": e}


def hooked(torch):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.register_hook(lambda g: g * 10)  # a tensor hook that changes what flows on
    loss = (y * x).sum()
    return loss, {"x": x, "y": y}


def leaf_used_twice(torch):
    w = torch.tensor([0.5, -1.5], requires_grad=True)
    loss = (w.sin() * w.cos() + w * w).sum()
    return loss, {"w": w}


PROGRAMS = [mlp, unbind_and_reuse, hooked, leaf_used_twice]


def plain_run(torch, program):
    """Node order (via pre-hooks only) and leaf/retained grads of a plain backward."""
    loss, named = program(torch)
    order, seen, stack = [], set(), [loss.grad_fn]
    nodes = []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(n for n, _ in node.next_functions)
    handles = [
        n.register_prehook(lambda g, n=n: order.append(n.name().rsplit("::", 1)[-1]))
        for n in nodes
    ]
    loss.backward()
    for h in handles:
        h.remove()
    grads = {k: t.grad.clone() for k, t in named.items() if t.is_leaf or t.retains_grad}
    return order, grads, {k: t._version for k, t in named.items()}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_torch_stepper_follows_pytorch_and_leaves_the_same_tensors(torch, program):
    order, grads, versions = plain_run(torch, program)
    loss, named = program(torch)
    stepper = BackwardStepper(loss, names=named)
    seen = []
    while not stepper.at_end:
        stepper.next()
        seen.append(stepper.current_node_name)
    assert seen == order
    assert stepper.recording.finished and stepper.error is None
    assert (len(stepper.frames) - 1) == len(order)
    for name, want in grads.items():
        assert torch.equal(named[name].grad, want), name
    assert {k: t._version for k, t in named.items()} == versions


def test_leaf_grads_fill_up_frame_by_frame(torch):
    loss, named = leaf_used_twice(torch)
    stepper = BackwardStepper(loss, names=named)
    w = named["w"]
    before = stepper.recording.leaf_grads(0, stepper._initial_grads)
    assert before[id(w)] is None
    stepper.last()
    accumulations = [f for f in stepper.recording.frames if f.accumulation is not None]
    # PyTorch sums the three streams into w before its one AccumulateGrad runs.
    assert len(accumulations) == 1
    assert np.allclose(accumulations[0].accumulation.total, w.grad.numpy())
    last = len(stepper.recording.frames) - 1
    assert np.allclose(stepper.recording.leaf_grads(last, {})[id(w)], w.grad.numpy())
    assert "w" in stepper.grads_html and "Backward finished" in stepper.panel_html


def test_gradients_on_each_node_match_retain_grad(torch):
    """What a node receives is d(loss)/d(its output), as retain_grad reports it."""
    loss, named = mlp(torch)
    stepper = BackwardStepper(loss, names=named)
    stepper.last()
    hidden = named["hidden"]
    tanh_frames = [f for f in stepper.recording.frames if f.node_name == "TanhBackward0"]
    assert len(tanh_frames) == 1
    assert np.allclose(tanh_frames[0].grads_in[0], hidden.grad.numpy())
    retained = stepper.recording.retained_grads(len(stepper.recording.frames) - 1)
    assert [t for t, _ in retained] == [hidden]
    assert np.allclose(retained[0][1], hidden.grad.numpy())


def test_released_buffers_are_observed(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = (x * y).exp().sum()
    stepper = BackwardStepper(loss, retain_graph=False)
    stepper.last()
    released = {f.node_name: set(f.released) for f in stepper.recording.frames if f.released}
    assert released == {"ExpBackward0": {"result"}, "MulBackward0": {"self", "other"}}
    # with retain_graph nothing is freed, and a second backward works
    x2 = torch.tensor([1.0, 2.0], requires_grad=True)
    loss2 = (x2 * x2).exp().sum()
    stepper2 = BackwardStepper(loss2, retain_graph=True)
    stepper2.last()
    assert not any(f.released for f in stepper2.recording.frames)
    loss2.backward()
    assert torch.allclose(x2.grad, (4 * x2 * (x2 * x2).exp()).detach())  # two backwards


def test_the_error_shows_at_the_node_where_pytorch_raised(torch):
    t = torch.arange(3.0, requires_grad=True)
    e = (2 * t).exp()
    loss = e.sum()
    e[0] = 6
    with pytest.raises(RuntimeError) as plain:
        loss.backward(retain_graph=True)
    stepper = BackwardStepper(loss)
    stepper.last()
    assert stepper.current_node_name == "ExpBackward0"
    assert type(stepper.error) is RuntimeError and str(stepper.error) == str(plain.value)
    assert "is at version 1; expected version 0" in stepper.panel_html
    assert t.grad is None


def test_second_backward_through_freed_graph(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    stepper = BackwardStepper(loss)
    stepper.last()
    assert "backward through the graph a second time" in str(stepper.error)
    assert stepper.current_node_name == "MulBackward0"


def test_non_scalar_loss_needs_a_gradient(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    stepper = BackwardStepper(y)
    assert str(stepper.error) == "grad can be implicitly created only for scalar outputs"
    assert stepper.recording.nodes_run == 0
    v = torch.tensor([1.0, 10.0])
    x.grad = None
    stepper = BackwardStepper(x * 3, grad_tensors=v)
    stepper.last()
    assert torch.equal(x.grad, torch.tensor([3.0, 30.0]))


def test_only_tensors_are_recognised_as_torch(torch, mg):
    assert is_torch_tensor(torch.ones(1)) and not is_torch_tensor(mg.ones(1))
    assert not is_torch_tensor(torch.nn.Linear(1, 1))
    with pytest.raises(ValueError, match="no backward graph"):
        BackwardStepper(torch.ones(2))


def test_custom_function_nodes_are_recorded(torch):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * out

    x = torch.tensor([0.5, 1.0], requires_grad=True)
    stepper = BackwardStepper(Exp.apply(x).sum())
    stepper.last()
    names = [f.node_name for f in stepper.recording.frames[1:]]
    assert names == ["SumBackward0", "ExpBackward", "AccumulateGrad"]
    assert [f.released for f in stepper.recording.frames[1:]][1] == ("tensors",)
    y = Exp.apply(x)
    loss = y.sum()
    y.add_(1)
    stepper = BackwardStepper(loss)
    stepper.last()
    assert stepper.current_node_name == "ExpBackward"
    assert "modified by an inplace operation" in str(stepper.error)

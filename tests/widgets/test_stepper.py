"""BackwardStepper drives minigrad's real engine: clicks pull engine events, frames
replay going back, the error shows where the engine raised, and the end state is
exactly what loss.backward() leaves."""

from __future__ import annotations

import numpy as np
import pytest

from widgets import BackwardStepper
from widgets.draw import CURRENT, DONE, FAILED, PENDING


def mlp_loss(mg):
    """A small two-layer network; returns (loss, leaves)."""
    x = mg.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])
    w1 = mg.tensor([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]], requires_grad=True)
    b1 = mg.tensor([0.01, -0.02], requires_grad=True)
    w2 = mg.tensor([[0.7], [-0.8]], requires_grad=True)
    hidden = (x @ w1 + b1).tanh()
    loss = ((hidden @ w2) ** 2).mean()
    return loss, {"w1": w1, "b1": b1, "w2": w2}


def engine_order(mg, loss):
    from minigrad.autograd.engine import backward_events

    return [
        str(e.node.name()).rsplit("::", 1)[-1]
        for e in backward_events(loss)
        if type(e).__name__ == "NodeStarted"
    ]


def click(stepper, name):
    stepper.buttons[name].click()


def test_next_clicks_follow_the_engine_order(mg):
    expected = engine_order(mg, mlp_loss(mg)[0])
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    assert stepper.index == 0 and stepper.current_node_name == ""
    seen = []
    while not stepper.buttons["next"].disabled:
        click(stepper, "next")
        seen.append(stepper.current_node_name)
    assert seen == expected
    assert stepper.slider.value == len(expected) == stepper.slider.max
    assert stepper.recording.finished and stepper.error is None
    assert "Backward finished" in stepper.panel.value


def test_the_engine_runs_only_as_far_as_the_user_clicked(mg):
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    assert all(leaf.grad is None for leaf in leaves.values())
    assert len(stepper.recording.frames) == 1  # frame 0: seeded, nothing ran
    click(stepper, "next")
    assert len(stepper.recording.frames) == 2
    assert all(leaf.grad is None for leaf in leaves.values())


def test_end_state_equals_plain_backward(mg):
    reference_loss, reference = mlp_loss(mg)
    reference_loss.backward()
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    click(stepper, "last")
    for name, leaf in leaves.items():
        np.testing.assert_array_equal(leaf.grad.numpy(), reference[name].grad.numpy())
    # Saved tensors were released exactly as without the stepper.
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        reference_loss.backward()


def test_going_back_replays_frames_without_rerunning(mg):
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    click(stepper, "last")
    frames = len(stepper.recording.frames)
    grads = {n: leaf.grad.numpy().copy() for n, leaf in leaves.items()}
    names = [f.node_name for f in stepper.recording.frames]
    click(stepper, "previous")
    assert stepper.index == frames - 2 and stepper.current_node_name == names[-2]
    stepper.slider.value = 3
    assert stepper.index == 3 and stepper.current_node_name == names[3]
    click(stepper, "first")
    assert stepper.index == 0 and stepper.buttons["previous"].disabled
    assert len(stepper.recording.frames) == frames
    for n, leaf in leaves.items():
        np.testing.assert_array_equal(leaf.grad.numpy(), grads[n])  # nothing ran twice


def test_slider_pulls_frames_lazily(mg):
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    expected = engine_order(mg, mlp_loss(mg)[0])
    assert stepper.slider.max == len(expected)  # known from the engine's dependency count
    stepper.slider.value = 4
    assert stepper.current_node_name == expected[3]
    assert len(stepper.recording.frames) == 5


def test_frame_shows_statuses_gradients_and_leaf_grads(mg):
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    loss = (a * b).sum()
    stepper = BackwardStepper(loss, names={"a": a, "b": b, "loss": loss})
    graph, drawing = stepper.graph, stepper.drawing
    sum_node = graph.find("SumBackward0")[0]
    mul = graph.find("MulBackward0")[0]
    first_png = bytes(stepper.image.value)
    assert first_png.startswith(b"\x89PNG")
    assert drawing.box_status[sum_node.index] == PENDING
    assert drawing.edge_labels == {(graph.roots[0], 0): "1"}  # the seed gradient

    click(stepper, "next")  # SumBackward0
    click(stepper, "next")  # MulBackward0
    assert stepper.current_node_name == "MulBackward0"
    assert drawing.box_status[sum_node.index] == DONE
    assert drawing.box_status[mul.index] == CURRENT
    assert drawing.edge_labels[(mul.index, 0)] == "[4., 5., 6.]"  # d loss / d a = b
    assert drawing.edge_labels[(mul.index, 1)] == "[1., 2., 3.]"
    assert drawing.saved_look[(mul.index, "self")] == "released"
    assert "grad out[0] \u2192 AccumulateGrad (a)" in stepper.panel.value
    assert "read saved self" in stepper.panel.value
    assert bytes(stepper.image.value) != first_png

    click(stepper, "next")  # the first AccumulateGrad
    accumulated = stepper.frame.accumulation.leaf
    other = b if accumulated is a else a
    assert ".grad is now" in stepper.panel.value
    table = stepper.leaf_table.value
    grad_text = "[4., 5., 6.]" if accumulated is a else "[1., 2., 3.]"
    assert grad_text in table and other.grad is None
    click(stepper, "previous")
    assert grad_text not in stepper.leaf_table.value  # back before the accumulation


def test_in_place_error_stops_at_the_failing_node(mg):
    def build():
        t = mg.arange(3.0, requires_grad=True)
        u = 2 * t
        e = u.exp()
        loss = e.sum()
        e.__setitem__(0, 6)
        return t, loss

    _, reference = build()
    with pytest.raises(RuntimeError) as raised:
        reference.backward()
    t, loss = build()
    stepper = BackwardStepper(loss, names={"t": t})
    click(stepper, "next")
    assert stepper.current_node_name == "SumBackward0" and stepper.error is None
    click(stepper, "next")
    assert stepper.current_node_name == "ExpBackward0"
    error = stepper.error
    assert type(error) is RuntimeError and str(error) == str(raised.value)
    exp = stepper.graph.find("ExpBackward0")[0]
    assert stepper.drawing.box_status[exp.index] == FAILED
    assert "<b>RuntimeError</b>: one of the variables needed for gradient computation" in (
        stepper.panel.value
    )
    assert "is at version 1; expected version 0 instead." in stepper.panel.value
    assert stepper.buttons["next"].disabled and stepper.buttons["last"].disabled
    assert stepper.slider.max == stepper.index == 2
    click(stepper, "next")  # nothing further
    assert stepper.index == 2 and t.grad is None


def test_error_before_the_first_node_is_shown_at_frame_zero(mg):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackwardStepper(x * 2)  # not a scalar and no grad_tensors
    assert stepper.index == 0
    assert "grad can be implicitly created only for scalar outputs" in stepper.panel.value
    assert stepper.buttons["next"].disabled
    stepper = BackwardStepper(x * 2, grad_tensors=mg.tensor([1.0, 10.0]))
    click(stepper, "last")
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 20.0])


def test_retain_graph_keeps_buffers_for_a_second_pass(mg):
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    first = BackwardStepper(loss, retain_graph=True, names={"w": w})
    click(first, "last")
    mul = first.graph.find("MulBackward0")[0]
    assert first.drawing.saved_look[(mul.index, "self")] == "ok"
    second = BackwardStepper(loss, names={"w": w})
    click(second, "last")
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 8.0])  # 2w, twice
    assert second.drawing.saved_look[(mul.index, "self")] == "released"


def test_hooks_fired_are_shown(mg):
    w = mg.tensor([1.0, 2.0], requires_grad=True)

    def double(grad):
        return grad * 2

    w.register_hook(double)
    stepper = BackwardStepper((w * 3).sum(), names={"w": w})
    click(stepper, "last")
    assert "tensor hook double" in stepper.panel.value
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 6.0])


def test_auto_names(mg):
    weights = mg.tensor([1.0], requires_grad=True)
    stepper = BackwardStepper((weights * 2).sum(), names="auto")
    click(stepper, "last")
    assert "weights (1,)" in stepper.leaf_table.value


def test_play_is_linked_to_the_slider(mg):
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    assert stepper.play.max == stepper.slider.max
    assert stepper.widget.children[0].children[-1] is stepper.slider


def test_bad_inputs(mg):
    with pytest.raises(TypeError, match="expects a minigrad tensor.*got a int"):
        BackwardStepper(3)
    leaf = mg.tensor([1.0])
    with pytest.raises(ValueError, match="needs a tensor with a grad_fn.*does not require grad"):
        BackwardStepper(leaf)
    with pytest.raises(ValueError, match="needs a tensor with a grad_fn.*this one is a leaf."):
        BackwardStepper(mg.tensor([1.0], requires_grad=True))


def test_freed_buffers_stop_at_the_node_that_needs_them(mg):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    loss = (y * 3).sum()
    loss.backward()  # frees the saved tensors of MulBackward0 and ExpBackward0
    stepper = BackwardStepper(loss, names={"x": x})
    stepper.last()
    assert stepper.current_node_name == "MulBackward0"
    assert type(stepper.error) is RuntimeError
    assert str(stepper.error).startswith("Trying to backward through the graph a second time")
    assert "Trying to backward through the graph a second time" in stepper.panel.value
    assert x.grad.tolist() == pytest.approx(list(3 * np.exp([1.0, 2.0])))  # first pass only


def test_a_declared_ops_frame_shows_its_backward_formula(mg):
    class Total(mg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.sum()

        @staticmethod
        def backward(ctx, grad):
            return grad * mg.ones(2)

    x = mg.tensor([0.5, 2.0], requires_grad=True)
    stepper = BackwardStepper(Total.apply(x.exp() * 3), names={"x": x})
    shown = {}
    while not stepper.buttons["next"].disabled:
        click(stepper, "next")
        shown[stepper.current_node_name] = stepper.panel.value
    assert "formula for self" in shown["ExpBackward0"]
    assert "grad * result" in shown["ExpBackward0"]
    assert "grad * other" in shown["MulBackward0"]
    # a node without a formula written as minigrad code (a custom Function's) has none
    assert "formula for" not in shown["TotalBackward"]


def test_a_hooked_saved_tensor_is_shown_unpacked_without_a_version_check(mg):
    x = mg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    unpacked = []

    def unpack(tensor):
        unpacked.append(tuple(tensor.shape))
        return tensor

    with mg.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.exp()
    loss = (y * 2.0).sum()  # outside the hooks: 2.0 is saved as usual
    stepper = BackwardStepper(loss, names={"x": x})
    stepper.show(2)  # MulBackward0, then ExpBackward0
    assert stepper.current_node_name == "MulBackward0"
    assert "read saved other" in stepper.panel.value
    stepper.show(3)
    assert stepper.current_node_name == "ExpBackward0"
    assert "unpacked saved result" in stepper.panel.value
    assert "from its unpack hook, no version check" in stepper.panel.value
    assert "read saved result" not in stepper.panel.value
    assert unpacked  # backward did call the hook
    assert stepper.error is None

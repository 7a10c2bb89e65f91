"""BackwardStepper records minigrad's real engine: its frames follow the engine's
events, stepping back and forth replays them, the error shows where the engine raised,
and the end state is exactly what loss.backward() leaves."""

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
    from minigrad.autograd import backward_events

    return [
        str(e.node.name()).rsplit("::", 1)[-1]
        for e in backward_events(loss)
        if type(e).__name__ == "NodeStarted"
    ]


def test_next_clicks_follow_the_engine_order(mg):
    expected = engine_order(mg, mlp_loss(mg)[0])
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    assert stepper.index == 0 and stepper.current_node_name == ""
    seen = []
    while not stepper.at_end:
        stepper.next()
        seen.append(stepper.current_node_name)
    assert seen == expected
    assert stepper.index == len(expected) == (len(stepper.frames) - 1)
    assert stepper.recording.finished and stepper.error is None
    assert "Backward finished" in stepper.panel_html


def test_the_whole_pass_is_recorded_when_the_stepper_is_made(mg):
    reference_loss, reference = mlp_loss(mg)
    reference_loss.backward()
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    expected = engine_order(mg, mlp_loss(mg)[0])
    assert len(stepper.recording.frames) == len(stepper.frames) == len(expected) + 1
    assert stepper.index == 0 and stepper.recording.finished
    for name, leaf in leaves.items():  # as after loss.backward(), at step 0 already
        np.testing.assert_array_equal(leaf.grad.numpy(), reference[name].grad.numpy())
    stepper.next()
    stepper.last()
    for name, leaf in leaves.items():  # stepping runs nothing again
        np.testing.assert_array_equal(leaf.grad.numpy(), reference[name].grad.numpy())


def test_end_state_equals_plain_backward(mg):
    reference_loss, reference = mlp_loss(mg)
    reference_loss.backward()
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    stepper.last()
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
    stepper.last()
    frames = len(stepper.recording.frames)
    grads = {n: leaf.grad.numpy().copy() for n, leaf in leaves.items()}
    names = [f.node_name for f in stepper.recording.frames]
    stepper.previous()
    assert stepper.index == frames - 2 and stepper.current_node_name == names[-2]
    stepper.index = 3
    assert stepper.index == 3 and stepper.current_node_name == names[3]
    stepper.first()
    assert stepper.index == 0
    assert len(stepper.recording.frames) == frames
    for n, leaf in leaves.items():
        np.testing.assert_array_equal(leaf.grad.numpy(), grads[n])  # nothing ran twice


def test_setting_the_index_shows_that_frame_clamped_to_the_recording(mg):
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    expected = engine_order(mg, mlp_loss(mg)[0])
    stepper.index = 4
    assert stepper.current_node_name == expected[3]
    assert stepper.caption == f"Step 4 of {len(expected)}: {expected[3]}"
    stepper.index = 99
    assert stepper.index == len(expected) and stepper.at_end
    stepper.show(-3)
    assert stepper.index == 0 and stepper.caption.startswith("Before backward")


def test_frame_shows_statuses_gradients_and_leaf_grads(mg):
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    loss = (a * b).sum()
    stepper = BackwardStepper(loss, names={"a": a, "b": b, "loss": loss})
    graph, drawing = stepper.graph, stepper.drawing
    sum_node = graph.find("SumBackward0")[0]
    mul = graph.find("MulBackward0")[0]
    first_png = stepper.to_png()
    assert first_png.startswith(b"\x89PNG")
    assert drawing.box_status[sum_node.index] == PENDING
    assert drawing.edge_labels == {(graph.roots[0], 0): "1"}  # the seed gradient

    stepper.next()  # SumBackward0
    stepper.next()  # MulBackward0
    assert stepper.current_node_name == "MulBackward0"
    assert drawing.box_status[sum_node.index] == DONE
    assert drawing.box_status[mul.index] == CURRENT
    assert drawing.edge_labels[(mul.index, 0)] == "[4., 5., 6.]"  # d loss / d a = b
    assert drawing.edge_labels[(mul.index, 1)] == "[1., 2., 3.]"
    assert drawing.saved_look[(mul.index, "self")] == "released"
    assert "grad out[0] \u2192 AccumulateGrad (a)" in stepper.panel_html
    assert "read saved self" in stepper.panel_html
    assert stepper.to_png() != first_png

    stepper.next()  # the first AccumulateGrad
    accumulated = stepper.frame.accumulation.leaf
    other = b if accumulated is a else a
    assert ".grad is now" in stepper.panel_html
    table = stepper.grads_html
    grad_text = "[4., 5., 6.]" if accumulated is a else "[1., 2., 3.]"
    assert grad_text in table and table.count("None") == 1  # the other leaf, not yet
    assert other.grad is not None  # (the tensors are as after backward all along)
    stepper.previous()
    assert grad_text not in stepper.grads_html  # back before the accumulation


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
    stepper.next()
    assert stepper.current_node_name == "SumBackward0" and stepper.error is None
    stepper.next()
    assert stepper.current_node_name == "ExpBackward0"
    error = stepper.error
    assert type(error) is RuntimeError and str(error) == str(raised.value)
    exp = stepper.graph.find("ExpBackward0")[0]
    assert stepper.drawing.box_status[exp.index] == FAILED
    assert "<b>RuntimeError</b>: one of the variables needed for gradient computation" in (
        stepper.panel_html
    )
    assert "is at version 1; expected version 0 instead." in stepper.panel_html
    assert stepper.at_end
    assert (len(stepper.frames) - 1) == stepper.index == 2
    stepper.next()  # nothing further
    assert stepper.index == 2 and t.grad is None


def test_error_before_the_first_node_is_shown_at_frame_zero(mg):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    stepper = BackwardStepper(x * 2)  # not a scalar and no grad_tensors
    assert stepper.index == 0
    assert "grad can be implicitly created only for scalar outputs" in stepper.panel_html
    assert stepper.at_end
    stepper = BackwardStepper(x * 2, grad_tensors=mg.tensor([1.0, 10.0]))
    stepper.last()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 20.0])


def test_retain_graph_keeps_buffers_for_a_second_pass(mg):
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    first = BackwardStepper(loss, retain_graph=True, names={"w": w})
    first.last()
    mul = first.graph.find("MulBackward0")[0]
    assert first.drawing.saved_look[(mul.index, "self")] == "ok"
    second = BackwardStepper(loss, names={"w": w})
    second.last()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 8.0])  # 2w, twice
    assert second.drawing.saved_look[(mul.index, "self")] == "released"


def test_hooks_fired_are_shown(mg):
    w = mg.tensor([1.0, 2.0], requires_grad=True)

    def double(grad):
        return grad * 2

    w.register_hook(double)
    stepper = BackwardStepper((w * 3).sum(), names={"w": w})
    stepper.last()
    assert "tensor hook double" in stepper.panel_html
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 6.0])


def test_auto_names(mg):
    weights = mg.tensor([1.0], requires_grad=True)
    stepper = BackwardStepper((weights * 2).sum(), names="auto")
    stepper.last()
    assert "weights (1,)" in stepper.grads_html


def test_the_browser_steps_and_python_reads_the_step(mg):
    """The browser writes `index` back (what a comm message does: `set_state`), and the
    matplotlib drawing and the Python API follow it."""
    loss, leaves = mlp_loss(mg)
    stepper = BackwardStepper(loss, names=leaves)
    assert "export default" in stepper._esm and ".minigrad-stepper" in stepper._css
    state = stepper.get_state()
    assert {"scene", "frames", "index", "interval_ms", "_esm"} <= set(state)
    assert len(state["frames"]) == len(stepper.recording.frames)
    assert len(state["scene"]["boxes"]) == len(stepper.drawing.box_keys)
    stepper.set_state({"index": 2})
    name = stepper.recording.frames[2].node_name
    assert stepper.index == 2 and stepper.current_node_name == name
    node = stepper.graph.node_of(stepper.recording.frames[2].node)
    assert stepper.drawing.box_status[node.index] == CURRENT
    current = stepper.frames[2]["status"][stepper.drawing.box_keys.index(node.index)]
    assert current == "c"  # what the browser highlights is the same node


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
    assert "Trying to backward through the graph a second time" in stepper.panel_html
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
    while not stepper.at_end:
        stepper.next()
        shown[stepper.current_node_name] = stepper.panel_html
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
    assert "read saved other" in stepper.panel_html
    stepper.show(3)
    assert stepper.current_node_name == "ExpBackward0"
    assert "unpacked saved result" in stepper.panel_html
    assert "from its unpack hook, no version check" in stepper.panel_html
    assert "read saved result" not in stepper.panel_html
    assert unpacked  # backward did call the hook
    assert stepper.error is None

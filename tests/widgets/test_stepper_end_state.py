"""After the stepper has run, every tensor is exactly as `loss.backward()` leaves it.

Each test builds the same computation twice: one twin runs plain `backward()`, the
other is stepped through with `BackwardStepper`. Everything observable afterwards --
leaf and retained gradients, released or kept buffers, a second backward, hooks called,
partial gradients after an engine error -- must be identical.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib import pyplot

from widgets import BackwardStepper


def grads_of(tensors: dict) -> dict:
    return {name: None if t.grad is None else t.grad.numpy().copy() for name, t in tensors.items()}


def assert_same_grads(stepped: dict, plain: dict) -> None:
    a, b = grads_of(stepped), grads_of(plain)
    assert a.keys() == b.keys()
    for name in a:
        if b[name] is None:
            assert a[name] is None, name
        else:
            assert a[name] is not None, name
            assert a[name].dtype == b[name].dtype, name
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def saved_state(loss) -> list[tuple[str, str, bool]]:
    """(node, saved name, released?) for every saved tensor of the graph, in walk order."""
    rows, stack, seen = [], [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        rows += [(node.name(), name, saved.is_released) for name, saved in node.saved_items()]
        stack.extend(nxt for nxt, _ in node.next_functions)
    return rows


def second_backward_outcome(loss) -> str:
    try:
        loss.backward()
    except RuntimeError as error:
        return f"RuntimeError: {error}"
    return "ran"


def step_to_end(stepper: BackwardStepper) -> None:
    """Click next until the button is disabled, as a learner would."""
    clicks = 0
    while not stepper.at_end:
        stepper.next()
        clicks += 1
        assert clicks < 1000, "the stepper never reached the end"


def network(mg):
    """Shared leaf, a non-leaf with retain_grad, a tensor hook and a multi-output node."""
    x = mg.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])
    w = mg.tensor([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]], requires_grad=True)
    b = mg.tensor([0.01, -0.02], requires_grad=True)
    hidden = (x @ w + b).tanh()
    hidden.retain_grad()
    first, second = hidden.unbind(1)
    loss = (first * second).sum() + (w * w).sum() * 0.1
    return loss, {"w": w, "b": b, "hidden": hidden}


@pytest.mark.parametrize("retain_graph", [False, True])
@pytest.mark.parametrize("how", ["next", "last", "slider"])
def test_stepped_twin_matches_plain_backward(mg, retain_graph, how):
    plain_loss, plain = network(mg)
    plain_loss.backward(retain_graph=retain_graph)
    loss, tensors = network(mg)
    stepper = BackwardStepper(loss, retain_graph=retain_graph, names=tensors)
    if how == "next":
        step_to_end(stepper)
    elif how == "last":
        stepper.last()
    else:
        stepper.index = (len(stepper.frames) - 1)
    assert stepper.recording.finished
    assert_same_grads(tensors, plain)
    assert tensors["hidden"].grad is not None  # retain_grad worked in both
    assert saved_state(loss) == saved_state(plain_loss)
    assert {released for *_, released in saved_state(loss)} == {not retain_graph}
    # A second backward behaves the same: accumulates with retain_graph, raises without.
    assert second_backward_outcome(loss) == second_backward_outcome(plain_loss)
    assert_same_grads(tensors, plain)


def test_going_back_and_forth_does_not_change_the_end_state(mg):
    plain_loss, plain = network(mg)
    plain_loss.backward()
    loss, tensors = network(mg)
    stepper = BackwardStepper(loss, names=tensors)
    for _ in range(3):
        stepper.next()
    stepper.previous()
    stepper.first()
    stepper.index = 2
    step_to_end(stepper)
    stepper.first()  # looking back afterwards changes nothing either
    assert_same_grads(tensors, plain)
    assert saved_state(loss) == saved_state(plain_loss)


def test_hooks_fire_the_same_way(mg):
    def build(calls: list):
        w = mg.tensor([1.0, -2.0], requires_grad=True)
        h = w * 3
        h.register_hook(lambda g: calls.append(("h", g.tolist())) or g * 10)
        w.register_hook(lambda g: calls.append(("w", g.tolist())))
        square = h * h
        square.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].tolist())))
        square.grad_fn.register_hook(
            lambda gi, go: calls.append(("post", [g.tolist() for g in gi]))
        )
        return square.sum(), {"w": w}

    plain_calls, stepped_calls = [], []
    plain_loss, plain = build(plain_calls)
    plain_loss.backward()
    loss, tensors = build(stepped_calls)
    stepper = BackwardStepper(loss, names=tensors)
    step_to_end(stepper)
    assert stepped_calls == plain_calls
    assert [name for name, _ in plain_calls] == ["pre", "post", "h", "w"]
    assert_same_grads(tensors, plain)
    shown = [hook.kind for frame in stepper.recording.frames for hook in frame.hooks]
    assert sorted(shown) == ["posthook", "prehook", "tensor", "tensor"]


def test_partial_gradients_after_an_engine_error_match(mg):
    """backward() that raises half-way leaves some gradients set: so does the stepper."""

    def build():
        a = mg.tensor([1.0, 2.0], requires_grad=True)
        b = mg.tensor([0.5, 0.25], requires_grad=True)
        e = (a * 2).exp()
        loss = (b * 3).sum() + e.sum()
        e.__setitem__(0, 0.0)  # ExpBackward0's saved result is now at version 1
        return loss, {"a": a, "b": b}

    plain_loss, plain = build()
    with pytest.raises(RuntimeError) as raised:
        plain_loss.backward()
    loss, tensors = build()
    stepper = BackwardStepper(loss, names=tensors)
    step_to_end(stepper)
    assert str(stepper.error) == str(raised.value)
    assert stepper.current_node_name == "ExpBackward0"
    assert_same_grads(tensors, plain)
    assert saved_state(loss) == saved_state(plain_loss)


def test_frames_reuse_one_figure_outside_pyplot(mg):
    before = pyplot.get_fignums()
    loss, tensors = network(mg)
    stepper = BackwardStepper(loss, names=tensors)
    figure = stepper.drawing.figure
    artists = len(stepper.drawing.ax.get_children())
    pictures = {stepper.to_png()}
    step_to_end(stepper)
    pictures.add(stepper.to_png())
    for _ in range(stepper.index):
        stepper.previous()
        pictures.add(stepper.to_png())
    assert stepper.drawing.figure is figure  # restyled in place, never rebuilt
    assert len(stepper.drawing.ax.get_children()) == artists  # no artists pile up
    assert pyplot.get_fignums() == before  # nothing registered with pyplot
    assert len(pictures) == len(stepper.recording.frames)  # every frame looks different


def test_gradients_shown_leaving_a_node_are_those_its_post_hook_sent(mg):
    w = mg.tensor([1.0, -2.0], requires_grad=True)
    h = w * 3
    square = h * h

    def clip(grad_inputs, grad_outputs):
        return tuple(g.clamp(-5, 5) for g in grad_inputs)

    square.grad_fn.register_hook(clip)
    stepper = BackwardStepper(square.sum(), names={"w": w, "h": h})
    stepper.last()
    frames = stepper.recording.frames  # 1: SumBackward0, 2: h * h, 3: w * 3
    assert frames[2].node is square.grad_fn
    sent = frames[2].grads_out
    assert [g.tolist() for g in sent] == [[3.0, -5.0], [3.0, -5.0]]  # clipped from -6
    (received,) = frames[3].grads_in  # w * 3 gets their sum
    np.testing.assert_array_equal(received, sent[0] + sent[1])
    mul = stepper.graph.node_of(square.grad_fn)
    stepper.show(2)
    assert stepper.drawing.edge_labels[(mul.index, 0)] == "[ 3., -5.]"

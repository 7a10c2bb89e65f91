"""The widgets on the graph a `create_graph=True` backward records: `draw_graph` marks
the nodes the backward pass recorded apart from the forward graph's, and
`BackwardStepper(loss, create_graph=True)` shows what each step recorded. Node names
and which node recorded which are checked against PyTorch (its anomaly mode keeps
the recording node as `metadata["parent_"]`)."""

from __future__ import annotations

import warnings

import pytest

import minigrad
from widgets import BackwardStepper, draw_graph
from widgets.draw import ACCUMULATE, PALETTE, GraphDrawing
from widgets.figures import figure_to_png, figure_to_svg
from widgets.graph import build_graph

RECORDED_LABEL = "recorded by backward (create_graph)"


def cube(m):
    x = m.tensor([1.0, -2.0], requires_grad=True)
    y = (x**3).sum()
    return {"x": x}, y


def tanh_mul(m):
    x = m.tensor([1.0, -2.0], requires_grad=True)
    w = m.tensor([0.5, 3.0], requires_grad=True)
    y = m.tanh(x * w).sum()
    return {"x": x, "w": w}, y


def square(m):
    """x used twice: the input buffer adds its two gradients (an AddBackward0)."""
    x = m.tensor([1.0, -2.0], requires_grad=True)
    return {"x": x}, (x * x).sum()


def _quiet():
    context = warnings.catch_warnings()
    context.__enter__()
    warnings.simplefilter("ignore")  # anomaly mode's and create_graph's warnings
    return context


def gradient_graph(m, program, wrt="x"):
    """(graph of d y / d wrt, the program's tensors) with the recorded nodes known:
    for torch, under anomaly mode (the only time PyTorch keeps the parents)."""
    context = _quiet()
    try:
        if m is minigrad:
            leaves, y = program(m)
            (g,) = m.autograd.grad(y, leaves[wrt], create_graph=True)
        else:
            with m.autograd.detect_anomaly():
                leaves, y = program(m)
                (g,) = m.autograd.grad(y, leaves[wrt], create_graph=True)
    finally:
        context.__exit__(None, None, None)
    return build_graph(g, names={**leaves, "g": g}), (leaves, y, g)


def described(graph):
    return sorted((n.kind, n.name, n.recorded, n.recorded_by) for n in graph.nodes)


# -- draw_graph ---------------------------------------------------------------------------


def test_the_cube_gradient_is_recorded_by_pow_backward():
    graph, keep = gradient_graph(minigrad, cube)
    recorded = sorted((n.name, n.recorded_by) for n in graph.recorded_nodes)
    assert recorded == [("MulBackward0", "PowBackward0"), ("MulBackward1", "PowBackward0"),
                        ("PowBackward0", "PowBackward0")]
    (acc,) = [n for n in graph.nodes if n.kind == ACCUMULATE]
    assert not acc.recorded and acc.leaf_name == "x"  # the forward's leaf, as usual


@pytest.mark.parametrize("program, wrt", [(cube, "x"), (tanh_mul, "x"), (tanh_mul, "w"),
                                          (square, "x")])
def test_what_is_marked_is_what_pytorch_recorded(torch, program, wrt):
    mine, keep_mine = gradient_graph(minigrad, program, wrt)
    theirs, keep_theirs = gradient_graph(torch, program, wrt)
    assert described(mine) == described(theirs)
    assert mine.recorded_nodes  # (something is marked at all)


def test_tanh_gradient_leads_into_the_forward_graph_drawn_as_usual():
    graph, keep = gradient_graph(minigrad, tanh_mul)
    marked = {n.name: n for n in graph.nodes if n.recorded}
    assert set(marked) == {"MulBackward0", "TanhBackwardBackward0"}
    assert marked["TanhBackwardBackward0"].recorded_by == "TanhBackward0"
    forward = [n.name for n in graph.nodes if n.is_engine_node and not n.recorded]
    assert sorted(forward) == ["AccumulateGrad", "AccumulateGrad", "MulBackward0",
                               "TanhBackward0"]
    drawing = GraphDrawing(graph)
    for node in graph.nodes:
        face = drawing.box_face.get(node.index)
        if node.recorded:
            assert face == PALETTE["recorded"]
        elif node.is_engine_node:
            assert face == PALETTE[node.kind]
    assert RECORDED_LABEL in drawing.legend_labels


def test_a_forward_graph_has_no_recorded_nodes_and_no_legend_entry():
    leaves, y = tanh_mul(minigrad)
    drawing = GraphDrawing(build_graph(y))
    assert drawing.graph.recorded_nodes == []
    assert RECORDED_LABEL not in drawing.legend_labels


def test_a_torch_gradient_outside_anomaly_mode_shows_as_forward(torch):
    leaves, y = cube(torch)
    (g,) = torch.autograd.grad(y, leaves["x"], create_graph=True)
    assert build_graph(g).recorded_nodes == []


def test_the_label_says_whose_backward_recorded_a_node_and_both_formats_draw():
    graph, (leaves, y, g) = gradient_graph(minigrad, cube)
    figure = draw_graph(g, names={"x": leaves["x"], "g": g})
    svg = figure_to_svg(figure)
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    assert figure_to_png(figure).startswith(b"\x89PNG")
    from widgets.draw import node_label

    pow_node = next(n for n in graph.nodes if n.name == "PowBackward0")
    assert node_label(pow_node) == "PowBackward0\nby PowBackward0's backward"


def test_once_the_forward_graph_is_gone_the_marking_stays():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    (g,) = minigrad.autograd.grad((x[0] * x).sum(), x, create_graph=True)  # (y is dropped)
    graph = build_graph(g)
    # The parents are held weakly: the forward MulBackward0 is gone, its mark is not.
    orphans = [n.name for n in graph.recorded_nodes if n.recorded_by is None]
    assert orphans and "MulBackward0" in orphans
    assert RECORDED_LABEL in GraphDrawing(graph).legend_labels


# -- BackwardStepper(create_graph=True) ------------------------------------------------------


def stepped(loss, **kwargs):
    context = _quiet()
    try:
        stepper = BackwardStepper(loss, **kwargs)
        stepper.last()
    finally:
        context.__exit__(None, None, None)
    return stepper


def torch_recorded_by_parent(torch, program) -> dict[str, list[str]]:
    """For `program`'s loss.backward(create_graph=True) in PyTorch: parent name ->
    sorted names of the nodes its backward recorded."""
    context = _quiet()
    try:
        with torch.autograd.detect_anomaly():
            leaves, y = program(torch)
            y.backward(create_graph=True)
    finally:
        context.__exit__(None, None, None)
    found: dict[str, list[str]] = {}
    stack, seen = [t.grad.grad_fn for t in leaves.values()], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        parent = node.metadata.get("parent_")
        if parent is not None:
            found.setdefault(parent.name().rsplit("::", 1)[-1], []).append(
                node.name().rsplit("::", 1)[-1])
        stack.extend(f for f, _ in node.next_functions)
    return {k: sorted(v) for k, v in found.items()}


@pytest.mark.parametrize("program", [cube, tanh_mul, square], ids=lambda p: p.__name__)
def test_each_step_records_the_nodes_pytorch_records(torch, program):
    leaves, y = program(minigrad)
    stepper = stepped(y, create_graph=True, names=leaves)
    by_parent: dict[str, list[str]] = {}
    for index in range(1, len(stepper.recording.frames)):
        names = stepper.recorded_names(index)
        frame = stepper.recording.frames[index]
        assert all(n._recorded_by() is frame.node for n in frame.recorded)
        if names:
            by_parent.setdefault(frame.node_name, []).extend(names)
    assert {k: sorted(v) for k, v in by_parent.items()} == torch_recorded_by_parent(torch,
                                                                                    program)
    if program is square:  # the buffer's sum comes with the step whose results it added
        assert stepper.recorded_names(2) == ["MulBackward0", "MulBackward0", "AddBackward0"]


def test_the_cube_steps_in_order_and_the_end_state_names_the_grad_fn():
    leaves, y = cube(minigrad)
    stepper = stepped(y, create_graph=True, names=leaves)
    steps = [(f.node_name, stepper.recorded_names(f.index))
             for f in stepper.recording.frames[1:]]
    assert steps == [("SumBackward0", []),
                     ("PowBackward0", ["PowBackward0", "MulBackward1", "MulBackward0"]),
                     ("AccumulateGrad", ["CopyBackwards"])]
    x = leaves["x"]
    assert x.grad.grad_fn.name() == "minigrad::autograd::CopyBackwards"
    assert "x.grad has grad_fn=CopyBackwards" in stepper.gradient_graph_text()
    assert "x.grad has grad_fn=CopyBackwards" in stepper.panel_html
    stepper.show(2)
    assert "recorded" in stepper.panel_html and "MulBackward1" in stepper.panel_html
    # the gradient can be differentiated again: d/dx sum(3x^2) = 6x
    (gg,) = minigrad.autograd.grad(x.grad.sum(), x)
    assert gg.tolist() == [6.0, -12.0]


def test_draw_recorded_draws_the_step_graph_with_its_nodes_outlined():
    leaves, y = cube(minigrad)
    stepper = stepped(y, create_graph=True, names=leaves)
    figure = stepper.draw_recorded(2)
    assert figure_to_png(figure).startswith(b"\x89PNG")
    frame = stepper.recording.frames[2]
    (sent,) = [g for g in frame.sent if g is not None]
    graph = build_graph(sent)
    assert {n.name for n in graph.recorded_nodes} == {"MulBackward0", "MulBackward1",
                                                      "PowBackward0"}
    with pytest.raises(ValueError, match="no recorded graph to draw"):
        stepper.draw_recorded(1)  # SumBackward0 recorded nothing
    plain = stepped(cube(minigrad)[1])
    with pytest.raises(ValueError, match="without create_graph=True"):
        plain.draw_recorded(2)


def test_retain_graph_defaults_to_create_graph_as_in_backward():
    leaves, y = cube(minigrad)
    kept = stepped(y, create_graph=True)
    assert kept.retain_graph and all(not f.released for f in kept.recording.frames)
    y.backward()  # the graph was kept: a second backward works

    leaves, y = cube(minigrad)
    freed = stepped(y, create_graph=True, retain_graph=False)
    assert any(f.released for f in freed.recording.frames)
    with pytest.raises(RuntimeError, match="a second time"):
        y.backward()

    leaves, y = cube(minigrad)
    assert stepped(y).retain_graph is False


@pytest.mark.parametrize("create_graph", [False, True])
def test_inputs_fills_only_their_grad_as_backward_does(create_graph):
    leaves, y = tanh_mul(minigrad)
    stepper = stepped(y, inputs=[leaves["w"]], create_graph=create_graph, names=leaves)
    ref_leaves, ref_y = tanh_mul(minigrad)
    context = _quiet()
    try:
        ref_y.backward(inputs=[ref_leaves["w"]], create_graph=create_graph)
    finally:
        context.__exit__(None, None, None)
    assert leaves["x"].grad is None and ref_leaves["x"].grad is None
    assert leaves["w"].grad.tolist() == ref_leaves["w"].grad.tolist()
    assert (leaves["w"].grad.grad_fn is None) == (not create_graph)
    assert (ref_leaves["w"].grad.grad_fn is None) == (not create_graph)
    # the leaf table shows it at the end; x's AccumulateGrad never ran
    assert "w (2,)" in stepper.grads_html
    assert [f.node_name for f in stepper.recording.frames[1:]] == [
        "SumBackward0", "TanhBackward0", "MulBackward0", "AccumulateGrad"]


def test_empty_inputs_are_refused_as_backward_refuses_them():
    leaves, y = cube(minigrad)
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be"):
        BackwardStepper(y, inputs=[])


def test_a_torch_loss_cannot_be_stepped_with_create_graph(torch):
    leaves, y = cube(torch)
    with pytest.raises(NotImplementedError, match="on minigrad"):
        BackwardStepper(y, create_graph=True)

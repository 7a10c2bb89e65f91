"""Inspectors: which backward will fail before running it, .grad over a loop, and which
nodes two iterations' graphs share."""

from __future__ import annotations

import ipywidgets
import numpy as np
import pytest
from matplotlib.figure import Figure

from widgets import GradHistory, compare_graphs, saved_tensors_table


def test_table_predicts_the_in_place_failure(textbook):
    roots, names = textbook.modified_in_place()
    table = saved_tensors_table(*roots, names=names)
    rows = {(r.node_name, r.attr): r for r in table}
    assert set(rows) == {("ExpBackward0", "result"), ("MulBackward0", "other")}
    bad = rows[("ExpBackward0", "result")]
    assert (bad.saved_version, bad.current_version) == (0, 1)
    assert bad.status == "will fail: modified in place"
    assert rows[("MulBackward0", "other")].status == "ok"
    assert table.failure is bad
    assert bad.step == 1  # SumBackward0 runs at step 0, ExpBackward0 next
    assert table.summary == (
        "Backward will fail at step 1 (ExpBackward0): its saved tensor `result` was saved "
        "at version 0 but is now at version 1: it was modified in place after being saved."
    )


def test_table_html_names_the_failure_and_the_engine_message(textbook):
    roots, names = textbook.modified_in_place()
    table = saved_tensors_table(*roots, names=names)
    html = table._repr_html_()
    assert "Backward will fail at step 1 (ExpBackward0)" in html
    assert "is at version 1; expected version 0 instead" in html
    widget = table.widget()
    assert isinstance(widget, ipywidgets.HTML) and widget.value == html


def test_table_after_backward_says_released(textbook):
    roots, names = textbook.chain()
    assert saved_tensors_table(*roots).failure is None
    assert saved_tensors_table(*roots).summary == (
        "All 4 saved tensors are intact: backward can run."
    )
    roots[0].backward()
    table = saved_tensors_table(*roots)
    assert {r.status for r in table} == {"released"}
    assert "pass retain_graph=True" in table.summary


def test_predicted_failure_is_where_minigrad_fails(mg_textbook):
    from minigrad.autograd.engine import backward_events

    roots, names = mg_textbook.modified_in_place()
    predicted = saved_tensors_table(*roots).failure
    failed = None
    with pytest.raises(RuntimeError) as raised:
        for event in backward_events(roots):
            if type(event).__name__ == "EngineFailed":
                failed = event
    assert (failed.step, failed.node.name()) == (predicted.step, predicted.node_name)
    assert str(raised.value) == predicted.message


def test_table_rejects_bad_input():
    with pytest.raises(TypeError, match="saved_tensors_table expects tensors"):
        saved_tensors_table(1.5)


def test_grad_history_shows_accumulation_without_zero_grad(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, 4.0])
    history = GradHistory(w)
    history.record("before")
    for _ in range(3):
        (w * x).sum().backward()
        history.record()
    assert history.steps == ["before", 1, 2, 3]
    values = history.values["w"]
    assert values[0] is None
    np.testing.assert_allclose(np.array(values[1:]), [[3, 4], [6, 8], [9, 12]])
    assert np.isnan(history.norms("w")[0]) and history.norms("w")[1:] == [5.0, 10.0, 15.0]
    figure = history.plot()
    assert isinstance(figure, Figure)
    (axis,) = figure.axes
    lines = axis.get_lines()
    assert [line.get_label() for line in lines] == ["w.grad[0]", "w.grad[1]"]
    np.testing.assert_allclose(lines[1].get_ydata(), [np.nan, 4, 8, 12])


def test_grad_history_records_copies_not_references(lib):
    w = lib.tensor([1.0], requires_grad=True)
    history = GradHistory({"w": w})
    (w * 2).sum().backward()
    history.record()
    (w * 2).sum().backward()  # accumulates in place into the same .grad tensor
    history.record()
    assert [float(v[0]) for v in history.values["w"]] == [2.0, 4.0]


def test_grad_history_plots_norms_of_big_tensors(lib):
    w = lib.ones(20, requires_grad=True)
    history = GradHistory([w], names={"weight": w})
    (w * 3).sum().backward()
    history.record()
    (line,) = history.plot(max_elements=8).axes[0].get_lines()
    assert line.get_label() == "\u2016weight.grad\u2016"
    assert line.get_ydata()[0] == pytest.approx(3 * np.sqrt(20))


def test_grad_history_errors():
    with pytest.raises(TypeError, match="GradHistory tracks tensors"):
        GradHistory([1, 2])
    with pytest.raises(ValueError, match="call record"):
        GradHistory([]).plot()


def test_compare_graphs_finds_the_graph_carried_across_iterations(lib):
    w = lib.tensor([1.0, -1.0], requires_grad=True)
    hidden = lib.zeros(2)
    losses = []
    for _ in range(2):
        hidden = hidden + w * 2  # never detached: the old graph is part of the new one
        losses.append(hidden.sum())
    comparison = compare_graphs(losses[0], losses[1], names={"w": w})
    assert sorted(comparison.shared) == ["AccumulateGrad(w)", "AddBackward0", "MulBackward0"]
    assert sorted(comparison.rebuilt_b) == ["AddBackward0", "MulBackward0", "SumBackward0"]
    assert comparison.rebuilt_a == ["SumBackward0"]
    assert len(comparison.figure.axes) == 2
    assert comparison._repr_png_().startswith(b"\x89PNG")


def test_compare_graphs_with_detach_shares_only_the_parameter(lib):
    w = lib.tensor([1.0, -1.0], requires_grad=True)
    hidden = lib.zeros(2)
    losses = []
    for _ in range(2):
        hidden = (hidden + w * 2).detach() + w
        losses.append(hidden.sum())
    comparison = compare_graphs(losses[0], losses[1], names={"w": w})
    assert comparison.shared == ["AccumulateGrad(w)"]
    assert "1 node(s) shared" in repr(comparison)


def test_table_predicts_the_freed_buffers_of_a_reused_subgraph(mg_textbook):
    """Lesson 3: the second iteration reuses y = t @ a, whose buffers the first freed."""
    from minigrad.autograd.engine import backward_events

    (first,), names = mg_textbook.retain_graph_loop()
    t, x, y = names["t"], names["x"], names["y"]
    first.backward()
    second = ((t @ (x + y) - x) ** 2).mean()
    table = saved_tensors_table(second, names=names)
    failure = table.failure
    assert failure.node is y.grad_fn and failure.status == "released"
    # Only y's node was freed: the nodes built in this iteration are intact.
    assert {r.node_name for r in table if r.will_fail} == {"MvBackward0"}
    assert all(r.node is y.grad_fn for r in table if r.will_fail)
    failed = None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        for event in backward_events(second):
            if type(event).__name__ == "EngineFailed":
                failed = event
    assert failed.node is failure.node and failed.step == failure.step


def test_compare_graphs_shows_the_subgraph_hoisted_out_of_the_loop(textbook):
    """Lesson 3: y = t @ a is built once, so both iterations' graphs contain its node."""
    (first,), names = textbook.retain_graph_loop()
    t, x, y = names["t"], names["x"], names["y"]
    second = ((t @ (x + y) - x) ** 2).mean()
    comparison = compare_graphs(first, second, names=names)
    assert sorted(comparison.shared) == ["AccumulateGrad(a)", "AccumulateGrad(t)", "MvBackward0"]
    assert sorted(comparison.rebuilt_b) == sorted(comparison.rebuilt_a) == [
        "AddBackward0",
        "MeanBackward0",
        "MvBackward0",
        "PowBackward0",
        "SubBackward0",
    ]

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
    from minigrad.autograd import backward_events

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


def test_grad_history_text_is_at_least_body_size(lib):
    # JupyterLab's prose is 14 px; an s-point font is s * dpi / 72 pixels high
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    history = GradHistory(w)
    (w * 2).sum().backward()
    history.record()
    figure = history.plot()
    (axis,) = figure.axes
    texts = [axis.title, axis.xaxis.label, *axis.get_xticklabels(), *axis.get_yticklabels(),
             *axis.get_legend().get_texts()]
    assert texts and all(t.get_fontsize() * figure.dpi / 72 >= 14 - 1e-9 for t in texts)


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
    from minigrad.autograd import backward_events

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


# -- what saved-tensor hooks packed ---------------------------------------------------------


def _logged_graph(lib):
    """`(x * w).exp() * 2.0`, built under hooks that pack (call number, numpy copy)."""
    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    w = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
    packed_shapes = []

    def pack(tensor):
        packed_shapes.append(tuple(tensor.shape))
        return (len(packed_shapes) - 1, tensor.detach().numpy().copy())

    def unpack(packed):
        return lib.from_numpy(packed[1])

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * w).exp()
        loss = (y * 2.0).sin().sum()
    return x, w, y, loss, packed_shapes


def test_table_shows_what_each_pack_hook_call_returned(lib):
    x, w, y, loss, packed_shapes = _logged_graph(lib)
    table = saved_tensors_table(loss)
    rows = {(r.node_name, r.attr, r.step): r for r in table}
    # Four tensors went through the pack hook; the Python number 2.0 was saved unpacked.
    assert packed_shapes == [(3,)] * 4
    assert [r.packed for r in table] == [
        "tuple(int 3, ndarray float32 (3,))",  # SinBackward0 self: the last one packed
        None,  # MulBackward0 other: the number 2.0
        "tuple(int 2, ndarray float32 (3,))",  # ExpBackward0 result
        "tuple(int 0, ndarray float32 (3,))",  # MulBackward0 other (w): packed first
        "tuple(int 1, ndarray float32 (3,))",  # MulBackward0 self (x)
    ]
    number = rows[("MulBackward0", "other", 2)]
    assert not number.hooked and number.shape == "()" and number.unpacked is None
    exp = rows[("ExpBackward0", "result", 3)]
    assert exp.hooked and exp.unpacked == "float32 (3,) [ 1.6487, 0.3679, 54.5981]"
    assert (exp.saved_version, exp.current_version) == (None, None)  # nobody checks them
    assert len(table.hooked) == 4 and table.failure is None
    assert "Hooks packed 4 of them" in table.summary
    assert "no version check protects those" in table.summary


def test_table_of_hooked_tensors_agrees_with_backward_after_an_in_place_change(lib):
    x, w, y, loss, _ = _logged_graph(lib)
    y.add_(1)  # ExpBackward0's saved result, had it been saved plainly, would now fail
    table = saved_tensors_table(loss)
    assert table.failure is None
    row = next(r for r in table if r.node_name == "ExpBackward0")
    assert row.unpacked.endswith("[ 1.6487, 0.3679, 54.5981]")  # the copy, not y now
    loss.backward()  # and the engine agrees: no error
    expected = np.cos(2 * np.exp([0.5, -1.0, 4.0])) * 2 * np.exp([0.5, -1.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), expected * [1.0, -1.0, 2.0], rtol=1e-5)


def test_table_predicts_an_unpack_hook_that_fails(lib):
    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    store = {}

    def pack(tensor):
        store[f"slot {len(store)}"] = tensor.detach().clone()
        return f"slot {len(store) - 1}"

    with lib.autograd.graph.saved_tensors_hooks(pack, store.__getitem__):
        loss = (x.exp() * x).sin().sum()
    del store["slot 0"]  # ExpBackward0's result, packed first
    table = saved_tensors_table(loss)
    failure = table.failure
    assert (failure.node_name, failure.attr, failure.packed) == (
        "ExpBackward0", "result", "str 'slot 0'")
    assert failure.unpacked is None and failure.message == "KeyError: 'slot 0'"
    assert table.summary == (
        "Backward will fail at step 3 (ExpBackward0): its saved tensor `result` cannot be "
        "unpacked: its unpack hook raised KeyError: 'slot 0'."
    )
    assert "The engine will raise: KeyError: &#x27;slot 0&#x27;" in table._repr_html_()
    with pytest.raises(KeyError, match="slot 0"):
        loss.backward()


def test_table_shows_hooks_registered_on_one_saved_tensor(lib):
    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.sin() * x.exp()
    y.grad_fn._raw_saved_other.register_hooks(lambda t: ("kept", t), lambda p: p[1])
    rows = {r.attr: r for r in saved_tensors_table(y) if r.node_name == "MulBackward0"}
    assert rows["other"].packed == "tuple(str 'kept', tensor float32 (3,))"
    assert rows["self"].packed is None and rows["self"].saved_version == 0


def test_table_of_save_on_cpu_and_after_backward(lib):
    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.save_on_cpu():
        loss = x.sin().sum()
    (row,) = saved_tensors_table(loss)
    assert row.packed == "tuple(device, tensor float32 (3,))"
    loss.backward()
    (row,) = saved_tensors_table(loss)
    assert row.status == "released" and not row.hooked  # the packed object is gone


def test_table_prints_as_text_with_the_hook_columns_only_when_needed(lib):
    *_, loss, _ = _logged_graph(lib)
    lines = str(saved_tensors_table(loss)).splitlines()
    assert lines[1].split() == ["step", "node", "saved", "tensor", "saved", "v", "now", "v",
                                "packed", "by", "hook", "unpack", "gives", "status"]
    assert lines[3].split()[:6] == ["2", "MulBackward0", "other", "()", "0", "0"]
    x = lib.tensor([1.0], requires_grad=True)
    plain = str(saved_tensors_table(x.exp(), names={"x": x})).splitlines()
    assert "packed by hook" not in plain[1]
    assert plain[2].split() == ["0", "ExpBackward0", "result", "(1,)", "0", "0", "ok"]


def test_packed_text_describes_without_values():
    from widgets.formatting import packed_text

    assert packed_text(None) == "None"
    assert packed_text(np.zeros((2, 3), np.float64)) == "ndarray float64 (2, 3)"
    assert packed_text([1.5, "disk", (True,)]) == "list(float 1.5, str 'disk', tuple(bool True))"

    class Handle:
        pass

    assert packed_text(Handle()) == "Handle"
    assert packed_text(tuple(range(40)), max_chars=20) == "tuple(int 0, int 1,\u2026"


def test_drawn_saved_tensor_says_packed(lib):
    from widgets.draw import saved_label
    from widgets.graph import build_graph

    *_, loss, _ = _logged_graph(lib)
    labels = {saved_label(s) for n in build_graph(loss).nodes for s in n.saved_tensors}
    assert labels == {"self packed", "other packed", "result packed", "other v0\u2192v0"}

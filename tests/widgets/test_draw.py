"""draw_graph: what the figure shows, the state hook, PNG rendering, and clear errors."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from widgets import draw_graph, figure_to_png
from widgets.draw import (
    CURRENT,
    DONE,
    FAILED,
    PALETTE,
    PENDING,
    GraphDrawing,
    GraphState,
    node_label,
    saved_label,
)
from widgets.graph import build_graph

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def drawing_of(roots, names, **options):
    return GraphDrawing(build_graph(*roots, names=names), **options)


def test_draw_graph_returns_a_figure_outside_pyplot(textbook):
    from matplotlib import pyplot

    roots, names = textbook.chain()
    before = pyplot.get_fignums()
    fig = draw_graph(*roots, names=names)
    assert isinstance(fig, Figure)
    assert pyplot.get_fignums() == before  # nothing registered with pyplot: no leak


def test_figure_to_png_renders_the_figure(textbook):
    roots, names = textbook.chain()
    fig = draw_graph(*roots, names=names)
    png = figure_to_png(fig)
    assert png.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(png))
    width, height = fig.get_size_inches() * fig.dpi
    assert abs(image.size[0] - width) <= 1 and abs(image.size[1] - height) <= 1
    pixels = np.asarray(image.convert("RGB"))
    assert (pixels != 255).any()  # something was drawn


def test_labels_show_leaf_names_shapes_and_versions(textbook):
    roots, names = textbook.modified_in_place()
    graph = build_graph(*roots, names=names)
    labels = {node_label(n) for n in graph.nodes}
    assert "AccumulateGrad\nt (3,)" in labels
    assert "loss\ntensor ()" in labels
    (exp,) = graph.find("ExpBackward0")
    (result,) = exp.saved_tensors
    assert saved_label(result) == "result v0\u2192v1"
    assert saved_label(result, released=True) == "result released"


def test_mismatched_saved_tensor_is_drawn_red(textbook):
    roots, names = textbook.modified_in_place()
    drawing = drawing_of(roots, names)
    graph = drawing.graph
    exp = graph.find("ExpBackward0")[0].index
    mul = graph.find("MulBackward0")[0].index
    assert drawing.saved_look[(exp, "result")] == "modified"
    assert drawing.saved_look[(mul, "other")] == "ok"
    position = [key for key, value, *_ in drawing._saved_items].index(exp)
    edge = drawing._saved_boxes.get_edgecolor()[position]
    assert tuple(edge) == pytest.approx(matplotlib.colors.to_rgba(PALETTE["bad"]))
    assert "saved, modified in place" in drawing.legend_labels


def test_legend_lists_what_the_graph_contains(textbook):
    roots, names = textbook.shared_two_losses()
    labels = drawing_of(roots, names).legend_labels
    assert {"root tensor", "backward node", "AccumulateGrad (leaf)"} <= set(labels)
    assert "shared by several roots" in labels
    assert "(None, 0): needs no grad" in labels
    assert "current node" not in labels  # no stepper state asked for
    roots, names = textbook.chain()
    labels = drawing_of(roots, names).legend_labels
    assert "shared by several roots" not in labels
    assert "(None, 0): needs no grad" not in labels


def test_shared_nodes_are_outlined(textbook):
    roots, names = textbook.shared_two_losses()
    drawing = drawing_of(roots, names)
    edges = drawing._boxes.get_edgecolor()
    for position, key in enumerate(drawing._box_keys):
        node = drawing.graph.nodes[key]
        expected = PALETTE["shared"] if node.shared else PALETTE["outline"]
        if node.kind != "no_grad":
            assert tuple(edges[position]) == pytest.approx(matplotlib.colors.to_rgba(expected))


def test_multi_output_edges_are_labelled_with_output_index(textbook):
    roots, names = textbook.unbind_two_muls()
    drawing = drawing_of(roots, names)
    unbind = drawing.graph.find("UnbindBackward0")[0].index
    assert sorted(label for _, target, label in drawing.index_labels if target == unbind) == [
        "0",
        "1",
    ]
    roots, names = textbook.chain()
    assert drawing_of(roots, names).index_labels == []


def test_state_hook_colours_nodes_labels_edges_and_releases(textbook):
    roots, names = textbook.chain()
    drawing = drawing_of(roots, names, with_status=True)
    graph = drawing.graph
    sum_node = graph.find("SumBackward0")[0]
    outer = graph.node_of(sum_node.obj.next_functions[0][0])
    state = GraphState(
        node_status={id(sum_node.obj): DONE, id(outer.obj): CURRENT},
        edge_text={(id(sum_node.obj), 0): "[1., 1., 1.]"},
        released={(id(outer.obj), "self")},
    )
    drawing.update(state)
    assert drawing.box_status[sum_node.index] == DONE
    assert drawing.box_status[outer.index] == CURRENT
    assert drawing.box_status[graph.find("a")[0].index] == PENDING
    assert drawing.box_status[graph.roots[0]] is None  # root tensors are not engine nodes
    assert drawing.edge_labels == {(sum_node.index, 0): "[1., 1., 1.]"}
    assert drawing.saved_look[(outer.index, "self")] == "released"
    assert drawing.saved_look[(outer.index, "other")] == "ok"
    assert {"current node", "done", "failed"} <= set(drawing.legend_labels)

    drawing.update(GraphState(node_status={id(outer.obj): FAILED}))
    assert drawing.box_status[outer.index] == FAILED
    assert drawing.edge_labels == {}
    assert drawing.saved_look[(outer.index, "self")] == "ok"


def test_highlight_by_name_and_by_tensor(textbook):
    roots, names = textbook.chain()
    drawing = drawing_of(roots, names, highlight=["a", roots[0]])
    graph = drawing.graph
    # A leaf's name marks its AccumulateGrad; a root tensor marks its box and its grad_fn.
    expected = {graph.find("a")[0].index, graph.find("SumBackward0")[0].index, graph.roots[0]}
    assert drawing.highlighted == expected
    with pytest.raises(ValueError, match="no node or tensor named 'zzz'"):
        drawing_of(roots, names, highlight="zzz")


def test_draw_into_given_axes(textbook):
    roots, names = textbook.chain()
    fig = Figure()
    ax = fig.add_subplot()
    assert draw_graph(*roots, names=names, ax=ax) is fig
    assert not ax.axison


def test_auto_names(textbook):
    roots, _ = textbook.chain()
    loss = roots[0]
    drawing = GraphDrawing(build_graph(loss, names="auto"))
    assert drawing.graph.nodes[drawing.graph.roots[0]].name == "loss"


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((), ValueError, r"draw_graph needs at least one tensor"),
        ((3,), TypeError, r"draw_graph expects tensors, but the argument is int"),
        (([1.0, 2.0],), TypeError, r"draw_graph expects tensors, but the argument is list"),
    ],
)
def test_bad_input_raises_helpful_errors(args, error, message):
    with pytest.raises(error, match=message):
        draw_graph(*args)


def test_bad_drawing_options_raise_before_matplotlib(textbook):
    roots, names = textbook.chain()
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes, not str"):
        draw_graph(*roots, ax="left")
    for figsize in ((0, 3), "big", (4,), (4, None)):
        with pytest.raises(ValueError, match="figsize must be"):
            draw_graph(*roots, figsize=figsize)
    assert draw_graph(*roots, figsize=(3, 2)).get_size_inches().tolist() == [3, 2]


def test_tensor_without_graph_raises(lib):
    leaf = lib.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="no backward graph"):
        draw_graph(leaf)
    ok = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="argument 2 has no backward graph"):
        draw_graph(ok * 2, leaf)


def test_leaf_that_requires_grad_is_drawn_as_a_root(lib):
    leaf = lib.tensor([1.0, 2.0], requires_grad=True)
    drawing = GraphDrawing(build_graph(leaf, names={"w": leaf}))
    (root,) = drawing.graph.nodes
    assert root.is_leaf_root and node_label(root) == "w\nleaf (2,)"


def test_figure_to_png_rejects_non_figures():
    with pytest.raises(TypeError, match="expects a matplotlib Figure, not str"):
        figure_to_png("figure")


def test_huge_chain_draws_collapsed(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(2000):
        y = y * 1.0001
    fig = draw_graph(y.sum(), names={"x": x})
    width, height = fig.get_size_inches()
    assert width < 12 and height < 12  # a handful of boxes, not 2000 layers
    assert figure_to_png(fig).startswith(PNG_SIGNATURE)


def test_five_hundred_node_chain_draws(lib):
    """Hundreds of nodes: drawn collapsed and legible (the run time is for benchmarks)."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([0.5, 0.5], requires_grad=True)
    y = x
    for i in range(250):
        y = (y * w).sin() if i % 2 else (y * 1.001).cos()
    loss = y.sum()
    drawing = GraphDrawing(build_graph(loss, names={"x": x, "w": w, "loss": loss}))
    assert len(drawing.graph.nodes) > 500
    assert drawing.layout.collapsed and len(drawing.layout.positions) <= 12
    assert "collapsed nodes" in drawing.legend_labels
    graph = drawing.graph
    shown = {graph.nodes[k].leaf_name for k in drawing.layout.positions if k < len(graph.nodes)}
    assert {"x", "w"} <= shown  # the leaves stay visible
    png = figure_to_png(drawing.figure)
    image = Image.open(io.BytesIO(png))
    assert max(image.size) < 2000  # a readable picture, not a 500-layer strip


@pytest.mark.parametrize(
    "name", ["chain", "leaf_two_ops", "unbind_two_muls", "unbind_three", "retain_graph_loop"]
)
def test_gradient_labels_do_not_print_over_each_other(textbook, name):
    """Every edge labelled at once (as at the end of a stepper run): all stay readable."""
    roots, names = getattr(textbook, name)()
    drawing = drawing_of(roots, names, with_status=True)
    graph = drawing.graph
    edge_text = {
        (id(graph.nodes[e.source].obj), e.input_index): "[1.2345, -6.789]" for e in graph.edges
    }
    drawing.update(GraphState(edge_text=edge_text))
    boxes = drawing.edge_label_boxes
    assert len(boxes) == len(drawing.edge_labels) > 0
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, f"labels at {a} and {b} overlap"

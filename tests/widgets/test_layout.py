"""The layered layout: roots on top, leaves below, no crossings on textbook graphs,
and big graphs collapsed so drawing stays bounded."""

from __future__ import annotations

import pytest

from widgets.graph import ACCUMULATE, build_graph
from widgets.layout import MAX_BOXES, layered_layout

TEXTBOOK = [
    "chain",
    "leaf_two_ops",
    "unbind_two_muls",
    "shared_two_losses",
    "modified_in_place",
    "unbind_three",
    "retain_graph_loop",
    "copy_slices",
]


@pytest.mark.parametrize("name", TEXTBOOK)
def test_textbook_graphs_have_no_crossings(textbook, name):
    roots, names = getattr(textbook, name)()
    layout = layered_layout(build_graph(*roots, names=names))
    assert layout.crossings() == 0


def test_crossing_counter_sees_a_crossing(textbook):
    roots, names = textbook.shared_two_losses()
    graph = build_graph(*roots, names=names)
    layout = layered_layout(graph)
    sum_node, mean_node = graph.find("SumBackward0")[0].index, graph.find("MeanBackward0")[0].index
    assert layout.crossings() == 0
    # Swap SumBackward0 (under l1) and MeanBackward0 (under l2): l1's and l2's edges cross.
    layout.x_of[sum_node], layout.x_of[mean_node] = layout.x_of[mean_node], layout.x_of[sum_node]
    assert layout.crossings() >= 1


@pytest.mark.parametrize("name", TEXTBOOK)
def test_roots_on_top_and_every_edge_points_down(textbook, name):
    roots, names = getattr(textbook, name)()
    graph = build_graph(*roots, names=names)
    layout = layered_layout(graph)
    for root in graph.roots:
        assert layout.layer_of[root] == 0
    for edge in layout.edges:
        assert layout.layer_of[edge.source] < layout.layer_of[edge.target]
        assert layout.positions[edge.source][1] > layout.positions[edge.target][1]


def test_leaves_sit_right_below_their_lowest_consumer(textbook):
    roots, names = textbook.shared_two_losses()
    graph = build_graph(*roots, names=names)
    layout = layered_layout(graph)
    for node in graph.nodes:
        if node.kind == ACCUMULATE:
            lowest = max(layout.layer_of[p.index] for p in graph.parents(node.index))
            assert layout.layer_of[node.index] == lowest + 1


def test_boxes_in_a_layer_do_not_overlap(textbook):
    roots, names = textbook.shared_two_losses()
    layout = layered_layout(build_graph(*roots, names=names))
    for layer in layout.layers:
        boxes = sorted(
            (
                layout.positions[k][0] - layout.footprints[k].width / 2,
                layout.positions[k][0]
                + layout.footprints[k].width / 2
                + layout.footprints[k].side_width,
            )
            for k in layer
            if k in layout.positions
        )
        for (_, right), (left, _) in zip(boxes, boxes[1:]):
            assert right <= left


def test_layout_is_deterministic(textbook):
    roots, names = textbook.shared_two_losses()
    first = layered_layout(build_graph(*roots, names=names))
    second = layered_layout(build_graph(*roots, names=names))
    assert first.positions == second.positions
    assert [e.route for e in first.edges] == [e.route for e in second.edges]


def test_long_chain_collapses_into_one_box(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([0.5, 0.5], requires_grad=True)
    y = x
    for i in range(2000):
        y = y * w if i % 2 else y * 1.001
    graph = build_graph(y.sum(), names={"x": x, "w": w})
    layout = layered_layout(graph)
    assert len(graph.nodes) > 3000
    assert len(layout.positions) <= 8
    (group,) = layout.groups.values()
    assert group.label == "\u2026 1999 nodes \u2026"
    # Both leaves stay visible: nothing that matters is hidden.
    visible = {graph.nodes[k].leaf_name for k in layout.positions if k < len(graph.nodes)}
    assert {"x", "w"} <= visible
    assert layout.crossings() == 0


def test_small_graphs_are_never_collapsed(textbook):
    roots, names = textbook.chain()
    layout = layered_layout(build_graph(*roots, names=names), collapse_above=0)
    assert not layout.groups  # no chain of 4 linear nodes in a*b*c


def test_wide_graph_is_capped(lib):
    xs = [lib.tensor([1.0], requires_grad=True) for _ in range(300)]
    total = xs[0] * xs[0]
    for x in xs[1:]:
        total = total + x * x
    graph = build_graph(total.sum())
    layout = layered_layout(graph)
    assert len(graph.nodes) > MAX_BOXES
    assert len(layout.positions) <= MAX_BOXES
    overflow = [g for g in layout.groups.values() if "more nodes" in g.label]
    assert len(overflow) == 1
    hidden = sum(len(g.members) for g in layout.groups.values())
    assert hidden + len(layout.positions) - len(layout.groups) == len(graph.nodes)

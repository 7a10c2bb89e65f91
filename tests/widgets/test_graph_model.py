"""The graph model, read through the public surface of torch and minigrad graphs alike."""

from __future__ import annotations

import pytest

from widgets.graph import (
    ACCUMULATE,
    BACKWARD,
    NO_GRAD,
    ROOT,
    TensorNames,
    build_graph,
    resolve_names,
)


def edge_set(graph):
    """{(source name, target name, input index, output index)} with leaf names resolved."""

    def name(node):
        return node.leaf_name or node.name

    return {
        (name(graph.nodes[e.source]), name(graph.nodes[e.target]), e.input_index, e.output_index)
        for e in graph.edges
    }


def test_chain_nodes_edges_and_leaf_names(textbook):
    roots, names = textbook.chain()
    graph = build_graph(*roots, names=names)

    assert [n.kind for n in graph.nodes].count(ROOT) == 1
    assert sorted(n.name for n in graph.nodes if n.kind == BACKWARD) == [
        "MulBackward0",
        "MulBackward0",
        "SumBackward0",
    ]
    assert sorted(n.leaf_name for n in graph.nodes if n.kind == ACCUMULATE) == ["a", "b", "c"]
    assert edge_set(graph) == {
        ("loss", "SumBackward0", 0, 0),
        ("SumBackward0", "MulBackward0", 0, 0),
        ("MulBackward0", "MulBackward0", 0, 0),
        ("MulBackward0", "c", 1, 0),
        ("MulBackward0", "a", 0, 0),
        ("MulBackward0", "b", 1, 0),
    }
    leaf_a = graph.find("a")[0]
    assert leaf_a.variable is names["a"] and leaf_a.shape == "(3,)"
    # The node that produced `loss` knows its tensor's name.
    assert graph.find("SumBackward0")[0].tensor_names == ("loss",)


def test_nodes_are_identified_by_object_identity(textbook):
    roots, names = textbook.chain()
    graph = build_graph(*roots, names=names)
    sum_node = roots[0].grad_fn
    assert graph.node_of(sum_node).name == "SumBackward0"
    assert (
        graph.node_of(sum_node.next_functions[0][0])
        is graph.children(graph.node_of(sum_node).index)[0]
    )
    # Three AccumulateGrad nodes, three distinct objects, three distinct graph nodes.
    assert len({id(n.obj) for n in graph.nodes if n.kind == ACCUMULATE}) == 3
    assert graph.node_of(object()) is None


def test_none_inputs_become_no_gradient_stubs(textbook):
    roots, names = textbook.modified_in_place()
    graph = build_graph(*roots, names=names)
    mul = graph.find("MulBackward0")[0]
    children = graph.children(mul.index)
    # 2 * t: the python scalar needs no gradient -> next_functions[1] == (None, 0)
    assert [c.kind for c in children] == [ACCUMULATE, NO_GRAD]
    stub_edges = [e for e in graph.edges if graph.nodes[e.target].kind == NO_GRAD]
    assert [(e.source, e.input_index, e.output_index) for e in stub_edges] == [(mul.index, 1, 0)]


def test_leaf_feeding_two_ops_is_one_accumulate_node(textbook):
    roots, names = textbook.leaf_two_ops()
    graph = build_graph(*roots, names=names)
    (leaf,) = graph.find("x")
    assert sorted(p.name for p in graph.parents(leaf.index)) == ["ExpBackward0", "SinBackward0"]


def test_multi_output_node_has_one_consumer_per_output(textbook):
    roots, names = textbook.unbind_two_muls()
    graph = build_graph(*roots, names=names)
    (unbind,) = graph.find("UnbindBackward0")
    into = sorted(
        (graph.nodes[e.source].name, e.output_index)
        for e in graph.edges
        if e.target == unbind.index
    )
    assert into == [("MulBackward0", 0), ("MulBackward0", 1)]
    consumers = {e.source for e in graph.edges if e.target == unbind.index}
    assert len(consumers) == 2  # two different MulBackward0 nodes
    assert set(unbind.tensor_names) == {"p", "q"}


def test_two_losses_share_the_matmul_subgraph(textbook):
    roots, names = textbook.shared_two_losses()
    graph = build_graph(*roots, names=names)
    assert [graph.nodes[i].name for i in graph.roots] == ["l1", "l2"]
    shared = sorted(n.leaf_name or n.name for n in graph.shared_nodes)
    assert shared == ["MmBackward0", "a"]
    assert graph.find("SumBackward0")[0].roots == frozenset({0})
    assert graph.find("MeanBackward0")[0].roots == frozenset({1})
    (mm,) = graph.find("MmBackward0")
    assert mm.tensor_names == ("y",)
    assert [c.kind for c in graph.children(mm.index)] == [NO_GRAD, ACCUMULATE]
    # y * y uses y twice: two edges from the same MulBackward0 to MmBackward0.
    (mul,) = graph.find("MulBackward0")
    assert sorted(e.input_index for e in graph.edges if e.source == mul.index) == [0, 1]


def test_saved_tensors_with_names_and_versions(textbook):
    roots, names = textbook.chain()
    graph = build_graph(*roots, names=names)
    outer = graph.node_of(roots[0].grad_fn.next_functions[0][0])  # (a * b) * c
    saved = {s.attr: s for s in outer.saved_tensors}
    assert set(saved) == {"self", "other"}
    assert saved["other"].tensor_name == "c"
    assert saved["self"].tensor_name is None  # a * b has no variable name
    assert (saved["other"].saved_version, saved["other"].current_version) == (0, 0)
    assert saved["other"].status == "ok" and not saved["other"].version_mismatch
    # Non-tensor saved values (sizes, dims) are kept as values, not tensors.
    (sum_node,) = graph.find("SumBackward0")
    assert all(s.kind != "tensor" for s in sum_node.saved)


def test_saved_tensor_modified_in_place_is_flagged(textbook):
    roots, names = textbook.modified_in_place()
    graph = build_graph(*roots, names=names)
    (exp,) = graph.find("ExpBackward0")
    (result,) = exp.saved_tensors
    assert result.attr == "result"
    assert result.version_mismatch and result.status == "modified"
    assert (result.saved_version, result.current_version) == (0, 1)
    assert "modified by an inplace operation" in result.error


def test_saved_tensors_are_released_after_backward(textbook):
    roots, names = textbook.chain()
    before = build_graph(*roots, names=names)
    roots[0].backward()
    after = build_graph(*roots, names=names)
    for graph, expected in ((before, "ok"), (after, "released")):
        statuses = {s.status for n in graph.nodes for s in n.saved_tensors}
        assert statuses == {expected}


def test_retain_graph_keeps_saved_tensors(textbook):
    roots, names = textbook.chain()
    roots[0].backward(retain_graph=True)
    graph = build_graph(*roots, names=names)
    assert {s.status for n in graph.nodes for s in n.saved_tensors} == {"ok"}


def test_auto_names_come_from_the_callers_variables(textbook):
    roots, _ = textbook.chain()
    loss = roots[0]
    mystery = loss.grad_fn.next_functions[0][0].next_functions[1][0].variable  # that is c
    graph = build_graph(loss, names="auto")
    assert graph.nodes[graph.roots[0]].name == "loss"
    (leaf,) = graph.find("mystery")  # named after the local variable holding it
    assert leaf.variable is mystery
    # no names unless asked: an unnamed root is called by what it is
    assert build_graph(loss).nodes[0].name == f"loss: {loss.grad_fn.name()}"
    two = build_graph(loss * 2, loss)
    assert [two.nodes[i].name for i in two.roots] == ["root 0: MulBackward0",
                                             f"root 1: {loss.grad_fn.name()}"]


def test_names_argument_is_validated(textbook):
    roots, names = textbook.chain()
    with pytest.raises(ValueError, match='"auto"'):
        resolve_names("everything")
    with pytest.raises(TypeError, match="'w' maps to int"):
        resolve_names({"w": 3})
    with pytest.raises(TypeError, match="names must be None"):
        resolve_names(42)
    assert isinstance(resolve_names(names), TensorNames)


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (3, TypeError, "build_graph expects tensors, but the argument is int"),
        ("loss", TypeError, "expects tensors, but the argument is str"),
    ],
)
def test_bad_roots_raise_clear_errors(bad, error, message):
    with pytest.raises(error, match=message):
        build_graph(bad)


def test_tensor_without_graph_is_rejected(lib):
    plain = lib.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="has no backward graph.*requires_grad=False"):
        build_graph(plain)
    with pytest.raises(ValueError, match="at least one tensor"):
        build_graph()


def test_predicted_order_matches_dependencies(textbook):
    roots, names = textbook.shared_two_losses()
    graph = build_graph(*roots, names=names)
    order = [n.index for n in graph.predicted_order()]
    assert sorted(order) == sorted(n.index for n in graph.engine_nodes)
    position = {index: k for k, index in enumerate(order)}
    for edge in graph.edges:
        if graph.nodes[edge.source].is_engine_node and graph.nodes[edge.target].is_engine_node:
            assert position[edge.source] < position[edge.target]


def test_predicted_order_is_the_order_minigrad_runs(mg, mg_textbook):
    from minigrad.autograd import backward_events

    for build in (mg_textbook.chain, mg_textbook.unbind_two_muls, mg_textbook.leaf_two_ops):
        roots, names = build()
        predicted = [n.obj for n in build_graph(*roots).predicted_order()]
        ran = [e.node for e in backward_events(roots) if type(e).__name__ == "NodeStarted"]
        assert [id(n) for n in ran] == [id(n) for n in predicted]


def test_long_chain_is_built_without_recursion(lib):
    x = lib.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):  # far deeper than Python's recursion limit
        y = y * 1.0001
    graph = build_graph(y.sum())
    assert len(graph.find("MulBackward0")) == 5000
    assert len([n for n in graph.nodes if n.kind == NO_GRAD]) == 5000


GRAPHS = [
    "chain",
    "leaf_two_ops",
    "unbind_two_muls",
    "shared_two_losses",
    "modified_in_place",
    "unbind_three",
    "retain_graph_loop",
    "copy_slices",
]


def described(graph):
    """Everything the drawing shows, in a form comparable across libraries."""
    nodes = sorted(
        (
            n.kind,
            n.leaf_name or n.name,
            n.shape,
            tuple(sorted(n.tensor_names)),
            tuple(
                (s.attr, s.kind, s.status, s.saved_version, s.current_version, s.shape)
                for s in sorted(n.saved, key=lambda s: s.attr)
            ),
            tuple(sorted(n.roots)),
        )
        for n in graph.nodes
    )
    return nodes, edge_set(graph)


@pytest.mark.parity
@pytest.mark.parametrize("name", GRAPHS)
def test_minigrad_and_torch_graphs_are_described_alike(torch_textbook, mg_textbook, name):
    """The same code gives the same picture on both libraries: torch is the reference."""
    torch_roots, torch_names = getattr(torch_textbook, name)()
    mg_roots, mg_names = getattr(mg_textbook, name)()
    assert described(build_graph(*mg_roots, names=mg_names)) == described(
        build_graph(*torch_roots, names=torch_names)
    )


def test_unbind_outputs_and_copy_slices(textbook):
    roots, names = textbook.unbind_three()
    graph = build_graph(*roots, names=names)
    (unbind,) = graph.find("UnbindBackward0")
    assert sorted(e.output_index for e in graph.edges if e.target == unbind.index) == [0, 1, 2]
    roots, names = textbook.copy_slices()
    graph = build_graph(*roots, names=names)
    (copy,) = graph.find("CopySlices")
    assert [(c.kind, c.name) for c in graph.children(copy.index)] == [
        (BACKWARD, "MulBackward0"),
        (NO_GRAD, "None"),
    ]

"""The op table is read from minigrad's node declarations and agrees with what the
nodes really save when they run."""

from __future__ import annotations

import pytest

import minigrad as torch
from widgets.op_table import op_table

UNARY = {
    "ExpBackward0": lambda x: x.exp(), "LogBackward0": lambda x: x.log(),
    "SinBackward0": lambda x: x.sin(), "CosBackward0": lambda x: x.cos(),
    "TanhBackward0": lambda x: x.tanh(), "SigmoidBackward0": lambda x: x.sigmoid(),
    "ReluBackward0": lambda x: x.relu(), "SqrtBackward0": lambda x: x.sqrt(),
    "AbsBackward0": lambda x: x.abs(), "PowBackward0": lambda x: x ** 2,
    "MulBackward0": lambda x: x * x, "AddBackward0": lambda x: x + x,
    "DivBackward0": lambda x: x / (x + 1), "NegBackward0": lambda x: -x,
}


@pytest.mark.parametrize("node", list(UNARY))
def test_declared_roles_match_the_live_node(node):
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = UNARY[node](x)
    assert y.grad_fn.name() == node
    row = op_table()[node]
    live = {name: saved.is_output for name, saved in y.grad_fn.saved_items()}
    assert {n for n, is_out in live.items() if not is_out} == set(row.inputs)
    assert {n for n, is_out in live.items() if is_out} == set(row.outputs)


def test_keeps_summarises_the_roles():
    table = op_table("unary", "arithmetic")
    assert table["ExpBackward0"].keeps == "output"
    assert table["SinBackward0"].keeps == "input"
    assert table["AddBackward0"].keeps == "nothing"
    assert table["PowBackward1"].keeps == "both"
    assert {r.family for r in table.rows} == {"unary", "arithmetic"}


def test_every_op_family_is_listed_and_text_and_html_render():
    table = op_table()
    families = {r.family for r in table.rows}
    assert {"arithmetic", "unary", "views", "reductions", "linalg", "indexing"} <= families
    assert "CopySlices" in str(table) and "<table>" in table._repr_html_()


def test_unknown_family_and_node_are_clear_errors():
    with pytest.raises(ValueError, match="no op family named"):
        op_table("nonsense")
    with pytest.raises(KeyError, match="no backward node named"):
        op_table()["FooBackward0"]

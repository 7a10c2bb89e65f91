"""The op table is read from minigrad's node declarations, agrees with what the nodes
really save when they run, and with what PyTorch's nodes save."""

from __future__ import annotations

import pytest

import minigrad
from widgets.op_table import op_table


def _div(x):
    d = x + 1
    return x / d, (x, d)


# node name -> builds (output, inputs of the op) from a leaf x, with either library
CASES = {
    "ExpBackward0": lambda x: (x.exp(), (x,)), "LogBackward0": lambda x: (x.log(), (x,)),
    "SinBackward0": lambda x: (x.sin(), (x,)), "CosBackward0": lambda x: (x.cos(), (x,)),
    "TanhBackward0": lambda x: (x.tanh(), (x,)),
    "SigmoidBackward0": lambda x: (x.sigmoid(), (x,)),
    "ReluBackward0": lambda x: (x.relu(), (x,)), "SqrtBackward0": lambda x: (x.sqrt(), (x,)),
    "AbsBackward0": lambda x: (x.abs(), (x,)), "PowBackward0": lambda x: (x ** 2, (x,)),
    "MulBackward0": lambda x: (x * x, (x,)), "AddBackward0": lambda x: (x + x, (x,)),
    "DivBackward0": _div, "NegBackward0": lambda x: (-x, (x,)),
}


def _leaf(lib):
    return lib.tensor([0.5, 1.0, 2.0], requires_grad=True)


@pytest.mark.parametrize("node", list(CASES))
def test_declared_roles_match_the_live_node(node):
    y, _ = CASES[node](_leaf(minigrad))
    assert y.grad_fn.name() == node
    row = op_table()[node]
    live = {name: saved.is_output for name, saved in y.grad_fn.saved_items()}
    assert {n for n, is_out in live.items() if not is_out} == set(row.inputs)
    assert {n for n, is_out in live.items() if is_out} == set(row.outputs)


def _torch_saved_roles(torch, node):
    """{name: "input" | "output"} for the tensors a real torch node saved. PyTorch hands
    back a saved input as the very object that was passed in, and a saved output as a
    new tensor object."""
    y, inputs = CASES[node](_leaf(torch))
    assert type(y.grad_fn).__name__ == node
    roles = {}
    for attr in dir(y.grad_fn):
        if not attr.startswith("_saved_"):
            continue
        value = getattr(y.grad_fn, attr)
        if isinstance(value, torch.Tensor):
            is_input = any(value is t for t in inputs)
            roles[attr[len("_saved_"):]] = "input" if is_input else "output"
    return roles


@pytest.mark.parity
@pytest.mark.parametrize("node", list(CASES))
def test_table_agrees_with_what_torch_saves(torch, node):
    row = op_table()[node]
    declared = {n: "input" for n in row.inputs} | {n: "output" for n in row.outputs}
    assert _torch_saved_roles(torch, node) == declared


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


def test_which_changes_break_runs_each_experiment():
    from widgets.op_table import which_changes_break

    text = which_changes_break({"u.exp()": lambda u: u.exp(), "u ** 2": lambda u: u ** 2,
                                "10 * u": lambda u: 10 * u, "u + 1": lambda u: u + 1})
    rows = {line[:9].strip(): line[9:].split() for line in text.splitlines()[1:]}
    assert rows["u.exp()"][:2] == ["ExpBackward0", "output"]
    assert rows["u.exp()"][-2:] == ["ok", "RuntimeError"]  # changing the output breaks it
    assert rows["u ** 2"][-2:] == ["RuntimeError", "ok"]  # changing the input does
    assert "the number 10" in text and rows["10 * u"][-2:] == ["ok", "ok"]
    assert rows["u + 1"][:2] == ["AddBackward0", "nothing"] and rows["u + 1"][-2:] == ["ok", "ok"]

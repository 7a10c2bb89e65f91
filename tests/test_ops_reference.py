"""docs/ops.md is generated from the ops; it must be regenerated whenever they change."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location(
        "make_ops_reference", REPO / "scripts" / "make_ops_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_op_reference_is_up_to_date():
    script = _script()
    assert script.PAGE.read_text(encoding="utf-8") == script.render(), (
        "docs/ops.md is out of date: run python scripts/make_ops_reference.py")


def test_the_op_reference_lists_every_op_its_names_nodes_and_formulas():
    from minigrad.ops.declaration import DECLARATIONS
    from widgets.op_table import op_table

    page = _script().render()
    for d in DECLARATIONS:
        assert f"| {d.name} | {d.family} |" in page
        for name in d.functions:
            assert f"`minigrad.{name}`" in page
        for node in d.nodes:
            for f in node.formulas:
                assert f"`{f!r}`" in page
    for row in op_table().rows:
        assert f"| {row.node} |" in page

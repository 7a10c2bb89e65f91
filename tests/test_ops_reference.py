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


def test_the_declarations_architecture_md_shows_are_the_code():
    """docs/architecture.md shows a newcomer real declarations: each python block in
    its "Adding an op" section is, line for line, in one of minigrad's op modules."""
    import re

    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Adding an op")[1].split("\n## ")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    sources = "".join(p.read_text(encoding="utf-8")
                      for p in sorted((REPO / "minigrad" / "ops").glob("*.py")))
    assert len(blocks) >= 2
    for block in blocks:
        assert block in sources, block

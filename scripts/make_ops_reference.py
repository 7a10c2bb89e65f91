"""Write docs/ops.md, the reference of every op minigrad has, from the ops themselves.

Every op is listed from its declaration (`minigrad/ops/declaration.py`): its public
names, the backward nodes it records, what each saves, each input's backward
formula and the forward-mode (tangent) formula.
Nothing in the page is typed by hand, so it cannot drift from the code;
`tests/test_ops_reference.py` fails when the file is older than the code.

Usage::

    python scripts/make_ops_reference.py           # (re)write docs/ops.md
    python scripts/make_ops_reference.py --check   # fail if it is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PAGE = REPO / "docs" / "ops.md"

INTRO = """\
# minigrad's ops

Every op minigrad has, with PyTorch's name for its backward node and what that node
saves for backward: an *input* (`self`, `other`), the *output* (`result`), or plain
values (dims, numbers). An in-place change to a saved tensor is what makes backward
fail with "modified by an inplace operation" (lesson 4).

The last column is the node's *tangent* formula, what forward-mode AD
(`minigrad.autograd.forward_ad`) computes the output's tangent with, as PyTorch's
`derivatives.yaml` names them: `auto_element_wise` (the backward formula with the
input's tangent `self_t` in place of `grad`), `auto_linear` (a view: the same view of
the input's tangent; or the op itself applied to the tangents, as written),
`decomposition` (no formula: the op runs its decomposition into smaller ops on the
dual inputs, as PyTorch does for the backward ops of batch_norm and layer_norm), or
the formula itself. An op without one refuses a dual input with a `NotImplementedError`.

This page is generated from the code by `scripts/make_ops_reference.py`; `make test`
fails when it is out of date. How to add an op: [architecture.md](architecture.md).
"""


def _code(names) -> str:
    return ", ".join(f"`{n}`" for n in names) or "-"


def _tangent(node_cls) -> str:
    from minigrad.ops.tangent_formulas import describe

    text = describe(node_cls)
    return "-" if text is None else f"`{text}`"


def render() -> str:
    import minigrad  # noqa: F401 - builds every declaration
    from minigrad.autograd.graph import INPUT, OUTPUT
    from minigrad.ops.declaration import DECLARATIONS
    from widgets.op_table import op_table

    lines = [INTRO, "## Every op", "",
             "Each op is one declaration in its family's module (`minigrad/ops/<family>.py`): "
             "its public names, and the backward nodes it may record. Generated ops "
             "(`unary_op`, `binary_op`) are built from a kernel and a formula, and what the "
             "node saves is read off the names the formula uses; ops written by hand "
             "(`declare`) register their own functions and node classes, each node with "
             "what it saves and, where it has one, its formula. A formula is the code a "
             "`create_graph=True` backward evaluates (written with minigrad's own ops, as "
             "PyTorch's `derivatives.yaml` writes them); a node without one refuses "
             "`create_graph=True` with a `NotImplementedError`, and *not yet* marks a "
             "formula that calls a backward op minigrad does not have yet. Ops without "
             "public names are those the formulas call (PyTorch's `torch.ops.aten`) and "
             "those `minigrad.nn.functional` exposes.", "",
             "| op | family | functions | methods and operators | node | saves "
             "| backward formula | tangent |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    role_names = {INPUT: "input", OUTPUT: "output"}

    def saves_of(node) -> str:
        return ", ".join(f"`{n}` ({role_names.get(r, 'value')})"
                         for n, r in node.saves.items()) or "nothing"

    def formulas_of(node) -> str:
        if not node.formulas:
            return "-"
        text = "<br>".join(f"`{f!r}`" for f in node.formulas)
        if not node.recordable:  # (see `Node.recordable`)
            text += " (*not yet* with `create_graph=True`)"
        return text

    for d in sorted(DECLARATIONS, key=lambda d: (d.family, d.name)):
        head = (f"| {d.name} | {d.family} | {_code(f'minigrad.{n}' for n in d.functions)} "
                f"| {_code([*(f'Tensor.{n}' for n in d.methods), *d.attributes])} ")
        if not d.nodes:
            lines.append(head + "| - | - | - | - |")
        for i, node in enumerate(d.nodes):
            lines.append((head if i == 0 else "| | | | ")
                         + f"| {node.__name__} | {saves_of(node)} | {formulas_of(node)} "
                         f"| {_tangent(node)} |")
    declared = {node for d in DECLARATIONS for node in d.nodes}
    lines += ["", "## Nodes of the in-place machinery", "",
              "Recorded by `autograd/inplace.py` when a view or its base is modified in "
              "place, whatever the op.", "",
              "| node | saved inputs | saved outputs | other values | what it does |",
              "| --- | --- | --- | --- | --- |"]
    for row in op_table().rows:
        if row.node in {node.__name__ for node in declared}:
            continue
        lines.append(f"| {row.node} | {_code(row.inputs)} | {_code(row.outputs)} | "
                     f"{_code(row.values)} | {row.summary.replace('|', '&#124;')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print("docs/ops.md is out of date: run python scripts/make_ops_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Write docs/ops.md, the reference of every op minigrad has, from the ops themselves.

Declared ops (`minigrad/ops/declaration.py`) are listed with their public names, their
backward node, what the node saves, each input's backward formula and the forward-mode
(tangent) formula; the nodes of ops still written by hand are listed with what they
save and their formulas, read from their classes.
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

The last column is the op's *tangent* formula, what forward-mode AD
(`minigrad.autograd.forward_ad`) computes the output's tangent with, as PyTorch's
`derivatives.yaml` names them: `auto_element_wise` (the backward formula with the
input's tangent `self_t` in place of `grad`), `auto_linear` (a view: the same view of
the input's tangent; or the op itself applied to the tangents, as written), or the
formula itself. An op without one refuses a dual input with a `NotImplementedError`.

This page is generated from the code by `scripts/make_ops_reference.py`; `make test`
fails when it is out of date. How to add an op: [architecture.md](architecture.md).
"""


def _code(names) -> str:
    return ", ".join(f"`{n}`" for n in names) or "-"


def _tangent(node_cls) -> str:
    from minigrad.ops.tangent_formulas import describe

    text = describe(node_cls)
    return "-" if text is None else f"`{text}`"


def _node_classes() -> dict:
    """Every node class, by name."""
    from minigrad.autograd.graph import Node

    found, stack = {}, [Node]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        found.setdefault(cls.__name__, cls)
    return found


def render() -> str:
    import minigrad  # noqa: F401 - builds every declaration
    from minigrad.autograd.graph import INPUT, OUTPUT
    from minigrad.ops.declaration import DECLARATIONS
    from widgets.op_table import op_table

    lines = [INTRO, "## Declared ops", "",
             "Each is one declaration in its family's module (`minigrad/ops/<family>.py`): "
             "the formulas below are the code a backward pass evaluates (written with "
             "minigrad's own ops, as PyTorch's `derivatives.yaml` writes them), and what "
             "the node saves is read off the names they use.", "",
             "| op | family | functions | methods | node | saves | backward formula "
             "| tangent |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    role_names = {INPUT: "input", OUTPUT: "output"}
    for d in sorted(DECLARATIONS, key=lambda d: (d.family, d.name)):
        saves = ", ".join(f"`{n}` ({role_names[r]})" for n, r in d.saves.items()) or "nothing"
        formulas = "<br>".join(f"`{f!r}`" for f in d.formulas)
        if not d.node.recordable:  # (see `Node.recordable`)
            formulas += " (*not yet* with `create_graph=True`)"
        lines.append(f"| {d.name} | {d.family} | {_code(f'minigrad.{n}' for n in d.functions)} "
                     f"| {_code(f'Tensor.{n}' for n in d.methods)} | {d.node.__name__} "
                     f"| {saves} | {formulas} | {_tangent(d.node)} |")
    declared = {d.node.__name__ for d in DECLARATIONS}
    lines += ["", "## Ops written by hand", "",
              "These nodes are still written as classes with their own `backward` (and are "
              "being moved to declarations). Those with a backward formula written as "
              "minigrad code can be differentiated again (`create_graph=True`), except where "
              "the formula calls a backward op minigrad does not have yet (marked *not yet*); "
              "the others refuse it with a `NotImplementedError`.", "",
              "| node | family | saved inputs | saved outputs | other values | what it does "
              "| backward formula | tangent |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    classes = _node_classes()
    for row in op_table().rows:
        if row.node in declared:
            continue
        formulas = "<br>".join(f"`{f}`" for f in row.formulas) or "-"
        if row.formulas and not row.recordable:
            formulas += " (*not yet*)"
        lines.append(f"| {row.node} | {row.family} | {_code(row.inputs)} | "
                     f"{_code(row.outputs)} | {_code(row.values)} | "
                     f"{row.summary.replace('|', '&#124;')} | {formulas} "
                     f"| {_tangent(classes[row.node])} |")
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

"""Which tensors each minigrad op keeps for backward, read from the op declarations.

Every op is declared once (`minigrad/ops/declaration.py`), with the backward node
classes it records; each node class has a `saves` table: the name of each thing it
may keep (`self`, `other`, `result`, ...) and its role, INPUT or OUTPUT of the op, or
a plain value such as a dim. `op_table()` collects them from the declarations, so the
table in lesson 4 is the library itself, not a copy of it.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from minigrad.autograd.graph import INPUT, OUTPUT, Node

__all__ = ["OpRow", "OpTable", "op_table", "which_changes_break"]


@dataclass(frozen=True)
class OpRow:
    node: str  # "ExpBackward0"
    family: str  # the ops module it lives in: "unary", "arithmetic", ...
    inputs: tuple[str, ...]  # saved inputs, as `_saved_<name>`
    outputs: tuple[str, ...]  # saved outputs
    values: tuple[str, ...]  # saved non-tensor values (dims, sizes, numbers)
    summary: str  # the first line of the node's docstring
    # The backward formula of each input ("self: grad * result"), written as minigrad
    # code; empty for a node that has none yet.
    formulas: tuple[str, ...] = ()
    # Whether `create_graph=True` can run those formulas (see `Node.recordable`).
    recordable: bool = True

    @property
    def keeps(self) -> str:
        """"input", "output", "both" or "nothing": what an in-place change can break."""
        if self.inputs and self.outputs:
            return "both"
        return "input" if self.inputs else "output" if self.outputs else "nothing"


class OpTable:
    """Rows of `OpRow`; prints as text, shows as an HTML table in a notebook."""

    def __init__(self, rows: list[OpRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, node: str) -> OpRow:
        for row in self.rows:
            if row.node == node:
                return row
        raise KeyError(f"no backward node named {node!r} in minigrad.ops")

    def __str__(self) -> str:
        lines = [f"{'node':<24} {'keeps':<8} {'saved inputs':<18} {'saved outputs':<14}"]
        for r in self.rows:
            lines.append(f"{r.node:<24} {r.keeps:<8} {', '.join(r.inputs) or '-':<18} "
                         f"{', '.join(r.outputs) or '-':<14}")
        return "\n".join(line.rstrip() for line in lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='text-align:left'>{h}</th>" for h in
                       ("node", "keeps", "saved inputs", "saved outputs", "other values",
                        "backward"))
        body = []
        for r in self.rows:
            colour = {"input": "#e7f0ff", "output": "#fff1dc", "both": "#f3e5ff"}.get(
                r.keeps, "#ffffff")
            cells = (r.node, r.keeps, ", ".join(r.inputs) or "-", ", ".join(r.outputs) or "-",
                     ", ".join(r.values) or "-", "; ".join(r.formulas) or r.summary)
            body.append(f"<tr style='background:{colour}'>" + "".join(
                f"<td style='text-align:left'>{html.escape(c)}</td>" for c in cells) + "</tr>")
        return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _op_nodes() -> dict[type[Node], str]:
    """Every node class an op declares (`minigrad.ops.declaration.DECLARATIONS`, the
    public table of op declarations), with the op's family, and the nodes of a
    rewritten view history (CopySlices, AsStridedBackward0), which the in-place
    machinery in autograd records: in the table they belong with the views. (Those
    two are found among the subclasses of the public `Node`.)"""
    import minigrad  # noqa: F401 - importing minigrad runs every declaration
    from minigrad.ops.declaration import DECLARATIONS

    families: dict[type[Node], str] = {}
    for d in DECLARATIONS:
        for cls in d.nodes:
            families.setdefault(cls, d.family)
    for cls in _subclasses(Node):
        if cls.__name__ in ("CopySlices", "AsStridedBackward0"):
            families[cls] = "views"
    return families


def _subclasses(cls: type) -> list[type]:
    """Every subclass of `cls`, at any depth."""
    found, stack = [], list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        found.append(sub)
        stack.extend(sub.__subclasses__())
    return found


def op_table(*families: str) -> OpTable:
    """The saved-tensor table of every op node (or of the given families, e.g.
    `op_table("unary", "arithmetic")`), sorted by family and name."""
    rows = []
    for cls, family in _op_nodes().items():
        if families and family not in families:
            continue
        saves = cls.saves
        doc = (cls.__doc__ or "").strip().splitlines()
        rows.append(OpRow(
            node=cls.__name__,
            family=family,
            inputs=tuple(n for n, role in saves.items() if role == INPUT),
            outputs=tuple(n for n, role in saves.items() if role == OUTPUT),
            values=tuple(n for n, role in saves.items() if role not in (INPUT, OUTPUT)),
            summary=doc[0] if doc else "",
            formulas=tuple(repr(f) for f in cls.formulas),
            recordable=bool(cls.formulas) and cls.recordable,
        ))
    if families:
        unknown = set(families) - {r.family for r in rows}
        if unknown:
            raise ValueError(f"no op family named {sorted(unknown)}; families are the "
                             "modules of minigrad.ops (arithmetic, unary, views, ...)")
    rows.sort(key=lambda r: (r.family, r.node))
    return OpTable(rows)


# -- the experiment that confirms the table ---------------------------------------------------


def which_changes_break(ops: dict[str, Callable]) -> str:
    """For each op (`{"u.exp()": lambda u: u.exp(), ...}`), build `loss = op(u).sum()`
    from an intermediate `u = 2 * t`, overwrite `u[0]` (the op's input) or `out[0]`
    (its output), run backward, and tabulate: the node, what the op table says it
    keeps, what it saved in this very run, and whether each change broke backward."""
    import minigrad
    from minigrad.autograd.graph import SavedNumber

    def backward_after_change(op, change: str) -> str:
        t = minigrad.arange(3.0, requires_grad=True)
        u = 2 * t
        out = op(u)
        loss = out.sum()
        (u if change == "input" else out)[0] = 666
        try:
            loss.backward()
            return "ok"
        except RuntimeError:
            return "RuntimeError"

    def describe(node, name: str, saved) -> str:
        """'result (output)', 'self (input)' or, for a saved Python number, its value."""
        if isinstance(saved, SavedNumber):
            return f"{name} (the number {getattr(node, '_saved_' + name).item()})"
        return f"{name} ({'output' if saved.is_output else 'input'})"

    table = op_table()
    lines = [f"{'op':<9} {'node':<13} {'keeps':<7} {'saved right now':<28} "
             f"{'u[0] = 666':<13} out[0] = 666"]
    for expr, op in ops.items():
        node = op(2 * minigrad.arange(3.0, requires_grad=True)).grad_fn
        name = type(node).__name__
        saved = ", ".join(describe(node, n, s) for n, s in node.saved_items())
        lines.append(f"{expr:<9} {name:<13} {table[name].keeps:<7} {saved:<28} "
                     f"{backward_after_change(op, 'input'):<13} "
                     f"{backward_after_change(op, 'output')}")
    return "\n".join(lines)

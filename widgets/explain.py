"""`explain(loss)`: what will happen when you call `loss.backward()`, said before it runs.

`explain` reads the graph through the same public surface as `draw_graph` (so it works
on a real torch graph and on a minigrad one), changes nothing, and reports in words:

* saved tensors modified in place since they were saved (backward will raise), with the
  node, the saved name, the saved and current versions, and which in-place operation
  did it when the tensor is still reachable under a name;
* saved tensors already freed by an earlier backward (backward will raise);
* a loss with no graph at all, or a non-scalar loss without a gradient (backward will
  raise before any node runs);
* tensors you expect a gradient for (`expect_grads=`) that will get none, and why;
* named non-leaf tensors whose `.grad` stays None;
* gradients that will be inf or nan although the forward values are finite (sqrt, log,
  division, pow below 1 at a boundary; atan2's formula guards its origin and
  gives 0 there) and ops whose gradient is zero everywhere.

Each finding says how to fix it. The report shows the graph with the nodes concerned
outlined: saved tensors changed in place and freed buffers are drawn as such.
"""

from __future__ import annotations

import base64
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .draw import draw_graph
from .figures import figure_to_png
from .formatting import escape, is_tensor_like, shape_text, to_numpy
from .graph import (
    ACCUMULATE,
    BACKWARD,
    RELEASED,
    BackwardGraph,
    GraphNode,
    SavedValue,
    TensorNames,
    build_graph,
    resolve_names,
)

# Severities, from "backward raises" to "worth knowing".
ERROR = "error"
WARNING = "warning"
NOTE = "note"

# Ops whose gradient is zero wherever it exists: nothing useful flows back through them.
ZERO_GRADIENT = {
    "RoundBackward0": "round",
    "RoundBackward1": "round",
    "FloorBackward0": "floor",
    "CeilBackward0": "ceil",
    "TruncBackward0": "trunc",
    "SignBackward0": "sign",
}
_VERSION_MESSAGE = re.compile(r"is at version (\d+); expected version (\d+)")
# What the node a tensor's grad_fn became says about the in-place op that changed it.
INPLACE_OPS = {"CopySlices": "an assignment into part of it (t[...] = ...)"}


@dataclass
class Finding:
    """One thing `explain` found: what, where, and how to fix it."""

    kind: str  # "modified", "released", "no_graph", "not_scalar", "no_grad", ...
    severity: str  # ERROR (backward will raise), WARNING, NOTE
    text: str
    fix: str
    node: Any = None  # the backward node concerned (highlighted in the figure)
    tensor: Any = None  # the tensor concerned, when known
    attr: str | None = None  # the saved attribute, for saved-tensor findings
    saved_version: int | None = None
    current_version: int | None = None
    step: int | None = None  # where backward will meet it (0 runs first)
    details: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return f"[{self.severity}] {self.text} Fix: {self.fix}"


class Explanation:
    """The report of `explain`: findings, in words, and the highlighted graph."""

    def __init__(
        self, root: Any, findings: list[Finding], graph: BackwardGraph | None, figure: Figure | None
    ) -> None:
        self.root = root
        self.findings = findings
        self.graph = graph
        self.figure = figure

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def will_raise(self) -> bool:
        """True when `backward()` will raise."""
        return bool(self.errors)

    @property
    def failure(self) -> Finding | None:
        """The finding backward will stop at (the first error in execution order)."""
        errors = self.errors
        return min(errors, key=lambda f: -1 if f.step is None else f.step) if errors else None

    def of_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    @property
    def text(self) -> str:
        """The report in words."""
        if self.failure is not None:
            head = f"backward() will raise: {self.failure.text}"
        elif self.findings:
            head = "backward() will run, but look at the points below."
        else:
            head = "backward() will run, and nothing here looks wrong."
        lines = [head]
        for finding in self.findings:
            if finding is self.failure:
                lines.append(f"- fix: {finding.fix}")
            else:
                lines += [f"- {finding.severity}: {finding.text}", f"  fix: {finding.fix}"]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        colors = {ERROR: "#c92a2a", WARNING: "#e67700", NOTE: "#495057"}
        head_color = "#c92a2a" if self.will_raise else "#2b8a3e"
        first = self.text.splitlines()[0]
        items = "".join(
            f'<li><b style="color:{colors[f.severity]}">{f.severity}</b>: {escape(f.text)}'
            f"<br><i>fix</i>: {escape(f.fix)}</li>"
            for f in self.findings
        )
        image = ""
        if self.figure is not None:
            data = base64.b64encode(figure_to_png(self.figure)).decode("ascii")
            # natural size (text as large as the notebook's), scrolling when wider
            image = (f'<div style="overflow:auto"><img src="data:image/png;base64,{data}" '
                     'style="max-width:none"/></div>')
        return (
            f'<div class="minigrad-explain"><p style="color:{head_color};font-weight:bold">'
            f"{escape(first)}</p><ul>{items}</ul>{image}</div>"
        )


def explain(
    loss_or_tensor: Any,
    names: Any = "auto",
    expect_grads: Any = None,
    gradient: Any = None,
    draw: bool = True,
) -> Explanation:
    """Say what `loss_or_tensor.backward()` will do, before it runs.

    names: how tensors are named in the report (see `draw_graph`); by default the
        caller's variable names.
    expect_grads: tensors whose `.grad` you will read after backward (a tensor, a list,
        a dict ``{"w": w}`` or a module with `parameters()`): explain says which of them
        will get no gradient, and why.
    gradient: the `gradient=` you will pass to backward (a non-scalar loss needs one).
    draw: draw the graph with the problems outlined (`Explanation.figure`).
    """
    tensor_names = resolve_names(names, sys._getframe(1))
    expected = _expected_tensors(expect_grads, tensor_names)
    root = loss_or_tensor
    if not is_tensor_like(root):
        raise TypeError(f"explain expects a tensor (e.g. a loss), not {type(root).__name__}")
    if root.grad_fn is None and not root.requires_grad:
        finding = Finding(
            "no_graph",
            ERROR,
            "element 0 of tensors does not require grad and does not have a grad_fn: this "
            "tensor has no backward graph. It was computed from tensors none of which "
            "requires grad, or under no_grad(), or from detach()/.data, or by an op with no "
            "gradient (argmax, comparisons, integer results).",
            "create the inputs you want gradients for with requires_grad=True and compute "
            "the loss from them with grad mode on, through differentiable ops.",
        )
        findings = [finding] + [_why_no_grad(t, n, None) for n, t in expected]
        return Explanation(root, findings, None, None)

    graph = build_graph(root, names=tensor_names, caller="explain")
    findings: list[Finding] = []
    if gradient is None and _numel(root) != 1:
        findings.append(
            Finding(
                "not_scalar",
                ERROR,
                "grad can be implicitly created only for scalar outputs: this tensor has "
                f"shape {shape_text(root)}, and backward() needs to know how to weigh its "
                "elements.",
                "reduce it to one number first (loss.sum() or loss.mean()), or pass "
                "backward(gradient=v): that computes the vector-Jacobian product v^T J "
                "(the gradient of (loss * v).sum()), not the Jacobian.",
                step=-1,
            )
        )
    order = {n.index: step for step, n in enumerate(graph.predicted_order())}
    for node in graph.nodes:
        if node.kind != BACKWARD:
            continue
        freed = [s.attr for s in node.saved_tensors if s.status == RELEASED]
        if freed:
            findings.append(_released(node, freed, order.get(node.index)))
        for saved in map(_with_versions(node.obj), node.saved_tensors):
            if saved.status != RELEASED and saved.version_mismatch:
                findings.append(_modified(graph, node, saved, order.get(node.index)))
        findings.extend(_boundaries(node, order.get(node.index)))
    findings.sort(key=lambda f: (f.step is None, f.step if f.step is not None else 0))
    in_graph = {id(n.variable) for n in graph.nodes if n.kind == ACCUMULATE}
    in_graph |= {id(t) for t in graph.root_tensors if t.grad_fn is None}  # a leaf as loss
    for name, tensor in expected:
        if tensor.is_leaf and id(tensor) in in_graph and tensor.requires_grad:
            continue
        if not tensor.is_leaf and getattr(tensor, "retains_grad", False):
            if graph.node_of(tensor.grad_fn) is not None:
                continue
        findings.append(_why_no_grad(tensor, name, graph))
    findings.extend(_unkept_non_leaves(graph, expected))
    figure = None
    if draw:
        marked = [f.node for f in findings if f.node is not None]
        figure = draw_graph(root, names=graph.names, highlight=marked or None)
    return Explanation(root, findings, graph, figure)


# -- findings about saved tensors ---------------------------------------------------------


def _released(node: GraphNode, attrs: list[str], step: int | None) -> Finding:
    which = ", ".join(f"'{a}'" for a in attrs)
    return Finding(
        "released",
        ERROR,
        f"{node.name} needs its saved {'tensors' if len(attrs) > 1 else 'tensor'} {which}, "
        "which an earlier backward already freed (Trying to backward through the graph a "
        "second time).",
        "rebuild the graph before each backward (compute the loss again), or pass "
        "retain_graph=True to the first backward if you really need two; in a loop that "
        "carries a tensor across iterations (an RNN's hidden state), detach() it at the "
        "start of each iteration so the new graph stops there.",
        node=node.obj,
        attr=attrs[0],
        step=step,
    )


def _modified(graph: BackwardGraph, node: GraphNode, saved: SavedValue, step) -> Finding:
    tensor, how = _culprit(graph, node, saved)
    name = saved.tensor_name or (graph.names.name_of(tensor) if tensor is not None else None)
    what = f"'{saved.attr}'" + (f" ({name})" if name else "")
    text = (
        f"{node.name} saved {what} at version {saved.saved_version}, and it is now at version "
        f"{saved.current_version}: it was modified in place after being saved"
    )
    text += f", by {how}." if how else "."
    if tensor is not None and _is_leaf_or_view_of_leaf(tensor):
        fix = (
            "do the update after backward (an optimizer step between building a graph and "
            "calling backward through it changes the weights it saved), or recompute the "
            "forward pass after the update."
        )
    else:
        fix = (
            "use the out-of-place op (y = y + 1, y = torch.relu(y), inplace=False) or clone() "
            "the tensor before changing it; if the change is an optimizer step, call "
            "backward before it or recompute the forward pass after it."
        )
    return Finding(
        "modified",
        ERROR,
        text,
        fix,
        node=node.obj,
        tensor=tensor,
        attr=saved.attr,
        saved_version=saved.saved_version,
        current_version=saved.current_version,
        step=step,
        details={"inplace_op": how},
    )


def _with_versions(node: Any):
    """Fill in versions the graph could not tell apart per item.

    A torch custom Function keeps its tensors as one tuple; reading it raises for the
    whole tuple, so a one-tensor tuple that raised is that tensor.
    """

    def fill(saved: SavedValue) -> SavedValue:
        if not saved.attr.endswith("[0]") or saved.saved_version is not None:
            return saved
        try:
            getattr(node, "saved_tensors" if saved.attr == "tensors[0]" else "_saved_"
                    + saved.attr[:-3])
        except RuntimeError as error:
            match = _VERSION_MESSAGE.search(str(error))
            if match and len(_raw_saved(node, saved.attr[:-3]) or ()) == 1:
                now, then = int(match.group(1)), int(match.group(2))
                return replace(saved, saved_version=then, current_version=now, error=str(error))
        return saved

    return fill


def _culprit(graph: BackwardGraph, node: GraphNode, saved: SavedValue) -> tuple[Any, str | None]:
    """The named tensor the bad saved value was, and the in-place op that changed it.

    minigrad keeps the saved tensor's version counter, shared with the tensor itself;
    torch hides it, so there the tensor is found through the graph: an in-place op on a
    non-leaf gives it a new grad_fn whose next_functions lead back to the old one.
    """
    raw = _raw_saved(node.obj, saved.attr)
    counter = getattr(raw, "_counter", None)
    producers = {id(node.obj)} | {id(n) for n, _ in node.obj.next_functions if n is not None}
    near = graph.children(node.index)
    near += [g for n in near for g in graph.children(n.index)]  # weight.t() -> weight
    leaves = {id(n.variable) for n in near if n.kind == ACCUMULATE}
    for _, tensor in graph.names.items():
        if counter is not None:
            if getattr(tensor, "_version_counter", None) is not counter:
                continue
        elif tensor._version != saved.current_version:
            continue
        elif id(tensor) in leaves or id(getattr(tensor, "_base", None)) in leaves:
            pass  # a leaf the node read, changed where autograd does not record it
        else:
            grad_fn = tensor.grad_fn
            nexts = () if grad_fn is None else [n for n, _ in grad_fn.next_functions]
            if not any(n is not None and id(n) in producers for n in nexts):
                continue
        return tensor, _inplace_op(tensor)
    return None, None


def _inplace_op(tensor: Any) -> str | None:
    """Which in-place op a tensor's history shows (None when autograd did not record it)."""
    grad_fn = tensor.grad_fn
    if grad_fn is None:
        return "a change autograd did not record (under no_grad(), e.g. an optimizer step)"
    if _is_leaf_or_view_of_leaf(tensor):  # autograd refuses to record those: it was unseen
        return (
            "a write through this view of a leaf under no_grad(), which autograd did not "
            "record (a write through .data would not even move the version)"
        )
    name = type(grad_fn).__name__
    if name in INPLACE_OPS:
        return INPLACE_OPS[name]
    op = name.split("Backward")[0].lower()
    return f"{op}_ (its grad_fn is now {name})"


def _raw_saved(node: Any, attr: str) -> Any:
    base, _, index = attr.partition("[")
    try:
        raw = getattr(node, "_raw_saved_" + base, None)
    except RuntimeError:
        return None
    if index and isinstance(raw, (tuple, list)):
        raw = raw[int(index.rstrip("]"))]
    return raw


def _is_leaf_or_view_of_leaf(tensor: Any) -> bool:
    base = getattr(tensor, "_base", None)
    return tensor.grad_fn is None or (base is not None and base.grad_fn is None)


# -- gradients that will be inf/nan or zero --------------------------------------------------


def _saved_array(node: Any, attr: str) -> np.ndarray | None:
    try:
        value = getattr(node, "_saved_" + attr)
    except (AttributeError, RuntimeError):
        return None
    return to_numpy(value) if is_tensor_like(value) else None


def _boundaries(node: GraphNode, step: int | None) -> list[Finding]:
    """Where a formula divides by zero although the forward value is finite."""
    obj, name = node.obj, node.name
    bad: np.ndarray | None = None
    why = ""
    if name == "SqrtBackward0":
        result = _saved_array(obj, "result")
        if result is not None:
            bad, why = result == 0, "sqrt(x) has slope 1 / (2 sqrt(x)), infinite at x = 0"
    elif name == "LogBackward0":
        x = _saved_array(obj, "self")
        if x is not None:
            bad, why = x == 0, "log(x) has slope 1 / x, infinite at x = 0"
    elif name == "DivBackward0":
        other = _saved_array(obj, "other")
        if other is not None:
            bad, why = other == 0, "a / b has slopes 1 / b and -a / b^2, infinite at b = 0"
    elif name == "PowBackward0":
        x = _saved_array(obj, "self")
        exponent = getattr(obj, "_saved_exponent", None)
        # (x ** 0 has slope 0, and a negative power's value is itself infinite at 0)
        if x is not None and isinstance(exponent, (int, float)) and 0 < exponent < 1:
            bad = x == 0
            why = f"x ** {exponent} has slope {exponent} * x ** {exponent - 1}, infinite at 0"
    if name in ZERO_GRADIENT:
        op = ZERO_GRADIENT[name]
        return [
            Finding(
                "zero_gradient",
                WARNING,
                f"{name}: the gradient of {op} is zero everywhere (it is flat between jumps), "
                "so nothing useful flows back through it.",
                "keep the exact op for reporting, but train through a smooth stand-in "
                "(e.g. x + (x.round() - x).detach(), the straight-through estimator, or a "
                "sigmoid instead of a hard threshold).",
                node=obj,
                step=step,
            )
        ]
    if bad is None or not np.any(bad):
        return []
    where = np.argwhere(np.atleast_1d(bad)).tolist()
    where = [p[0] if len(p) == 1 else tuple(p) for p in where]
    return [
        Finding(
            "nan_gradient",
            WARNING,
            f"{name}: {why}; at positions {where[:6]} the gradient will be inf (nan where "
            "the incoming gradient is 0, e.g. masked out by where() or a masked "
            "assignment, because 0 * inf is nan), although the forward values are finite.",
            "keep the input away from the boundary before the op (clamp(min=eps), or add eps "
            "inside sqrt/log), or apply where() to the input, not to the result; anomaly "
            "mode (torch.autograd.set_detect_anomaly(True)) names the node that made a nan.",
            node=obj,
            step=step,
            details={"positions": where},
        )
    ]


# -- tensors whose .grad stays None ---------------------------------------------------------


def _expected_tensors(expect: Any, names: TensorNames) -> list[tuple[str, Any]]:
    if expect is None:
        return []
    if is_tensor_like(expect):
        items = [(None, expect)]
    elif isinstance(expect, dict):
        items = list(expect.items())
    elif callable(getattr(expect, "named_parameters", None)):
        items = list(expect.named_parameters())
    else:
        items = [(None, t) for t in expect]
    result = []
    for name, tensor in items:
        if not is_tensor_like(tensor):
            raise TypeError(f"expect_grads: {type(tensor).__name__} is not a tensor")
        result.append((name or names.name_of(tensor) or f"tensor {shape_text(tensor)}", tensor))
    return result


def _why_no_grad(tensor: Any, name: str, graph: BackwardGraph | None) -> Finding:
    if not tensor.requires_grad:
        text = (
            f"{name} will get no gradient: it does not require grad (created without "
            "requires_grad=True, frozen with requires_grad_(False), or detached / taken "
            "from .data)."
        )
        fix = f"create {name} with requires_grad=True (or call {name}.requires_grad_())."
        kind = "no_grad"
    elif not tensor.is_leaf:
        producer = type(tensor.grad_fn).__name__
        text = (
            f"{name}.grad will stay None: {name} is not a leaf, it was computed by "
            f"{producer} (arithmetic, and a .to(), .double() or .cuda() that converts, make "
            "new non-leaf tensors), "
            "and backward fills .grad only of leaves."
        )
        fix = (
            f"make {name} the leaf: create it with its final dtype and device and "
            f"requires_grad=True (or x = x.detach().requires_grad_()); to inspect a "
            f"non-leaf's gradient call {name}.retain_grad() before backward."
        )
        kind = "non_leaf"
    else:
        orphans = [] if graph is None else [
            n for n in graph.nodes
            if n.kind == ACCUMULATE and graph.names.name_of(n.variable) is None
        ]
        text = (
            f"{name} will get no gradient: the loss was not computed from it. "
            + (
                f"The graph uses a leaf with no name ({', '.join(n.shape or '' for n in orphans)}"
                f"): was {name} reassigned after the loss was built, or replaced by a copy?"
                if orphans
                else "It was detached, used through .data, or not used at all."
            )
        )
        fix = (
            f"compute the loss from {name} itself (no .detach(), no .data, no re-created "
            "tensor), and keep the same tensor object in the optimizer."
        )
        kind = "not_in_graph"
    return Finding(kind, WARNING, text, fix, tensor=tensor)


def _unkept_non_leaves(graph: BackwardGraph, expected: list[tuple[str, Any]]) -> list[Finding]:
    told = {id(t) for _, t in expected} | {id(t) for t in graph.root_tensors}
    names = []
    for name, tensor in graph.names.items():
        node = graph.node_of(tensor.grad_fn) if tensor.grad_fn is not None else None
        if node is None or id(tensor) in told or getattr(tensor, "retains_grad", False):
            continue
        names.append((name, node))
    if not names:
        return []
    listed = ", ".join(n for n, _ in names)
    return [
        Finding(
            "non_leaf_grad_none",
            NOTE,
            f"{listed}: non-leaf tensors; their .grad will stay None after backward.",
            "call t.retain_grad() before backward to keep a non-leaf's gradient, or "
            "register a hook (t.register_hook(print)) to see it pass.",
            details={"names": [n for n, _ in names]},
        )
    ]


def _numel(tensor: Any) -> int:
    return int(np.prod([int(d) for d in tensor.shape], dtype=np.int64))


__all__ = ["ERROR", "NOTE", "WARNING", "Explanation", "Finding", "explain"]

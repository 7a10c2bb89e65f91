"""A backward graph as plain data.

The graph is read only through the public PyTorch-style surface -- `grad_fn`,
`next_functions`, `AccumulateGrad.variable`, `_saved_<name>` attributes and `_version` --
so the same code describes a real `torch` graph and a `minigrad` one.

Nodes are identified by object identity: the graph keeps a reference to every node it
describes, so `id()` stays valid for as long as the `BackwardGraph` lives.
Everything is built iteratively (no recursion): a 100 000-node chain is fine.
"""

from __future__ import annotations

import heapq
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from types import FrameType
from typing import Any

from .formatting import (
    dtype_text,
    is_tensor_like,
    node_display_name,
    packed_text,
    shape_text,
    value_text,
)

# Kinds of graph nodes.
ROOT = "root"  # a tensor backward starts from (drawn at the top)
BACKWARD = "backward"  # a backward function such as MulBackward0
ACCUMULATE = "accumulate"  # AccumulateGrad, which writes into a leaf's .grad
NO_GRAD = "no_grad"  # a `(None, 0)` entry of next_functions: that input needs no gradient

# Status of a saved value.
OK = "ok"
MODIFIED = "modified"  # changed in place since it was saved: backward will raise
RELEASED = "released"  # freed by a backward without retain_graph
UNREADABLE = "unreadable"  # reading it raised some other error

_VERSION_MESSAGE = re.compile(r"is at version (\d+); expected version (\d+)")
_FREED_MARKERS = ("backward through the graph a second time", "already been freed")


@dataclass(frozen=True)
class SavedValue:
    """One value a backward node keeps for its formula (`grad_fn._saved_<attr>`).

    Versions: `saved_version` is the tensor's `_version` when it was saved (from
    minigrad's raw saved object; for torch it is inferred, because reading a saved
    tensor only succeeds when the versions match), `current_version` the one now.
    Either is None when it cannot be known, e.g. after release, and for a value packed
    by saved-tensor hooks, which nobody version-checks.

    `packed` describes what a saved-tensor pack hook returned for this value (None: no
    hook packed it); then `shape`, `dtype` and `text` describe what the unpack hook
    gives back, which is what backward will use.
    """

    attr: str
    kind: str  # "tensor", "value" (a number, size, dim...), "none" (nothing saved)
    status: str = OK
    saved_version: int | None = None
    current_version: int | None = None
    shape: str | None = None
    dtype: str | None = None
    tensor_name: str | None = None
    text: str = ""
    error: str | None = None
    packed: str | None = None

    @property
    def is_tensor(self) -> bool:
        return self.kind == "tensor"

    @property
    def hooked(self) -> bool:
        """True when saved-tensor hooks packed this value."""
        return self.packed is not None

    @property
    def version_mismatch(self) -> bool:
        """True when backward will refuse this tensor because it changed in place."""
        if self.status == MODIFIED:
            return True
        known = self.saved_version is not None and self.current_version is not None
        return known and self.saved_version != self.current_version

    @property
    def released(self) -> bool:
        return self.status == RELEASED


@dataclass(eq=False)
class GraphNode:
    """A box of the graph: a root tensor, a backward node, an AccumulateGrad or a stub."""

    index: int
    kind: str
    name: str
    obj: Any = None  # the backward node object, or the root tensor for ROOT
    variable: Any = None  # ACCUMULATE: the leaf tensor it accumulates into
    leaf_name: str | None = None
    shape: str | None = None  # ROOT and ACCUMULATE: shape of the tensor
    tensor_names: tuple[str, ...] = ()  # named non-leaf tensors this node produced
    saved: tuple[SavedValue, ...] = ()
    roots: frozenset[int] = frozenset()  # which roots (positions) reach this node
    is_leaf_root: bool = False  # ROOT that is itself a leaf (no grad_fn)
    # BACKWARD recorded by a `create_graph=True` backward pass (not by a forward), and
    # the name of the node whose backward recorded it (None when no longer known).
    recorded: bool = False
    recorded_by: str | None = None

    @property
    def shared(self) -> bool:
        """An engine node reachable from more than one root (a sub-graph two losses share)."""
        return self.is_engine_node and len(self.roots) > 1

    @property
    def is_engine_node(self) -> bool:
        """True for the nodes the backward engine executes."""
        return self.kind in (BACKWARD, ACCUMULATE)

    @property
    def saved_tensors(self) -> tuple[SavedValue, ...]:
        """The saved values that are (or were) tensors."""
        return tuple(s for s in self.saved if s.is_tensor)

    def __repr__(self) -> str:
        return f"GraphNode({self.index}, {self.kind}, {self.name!r})"


@dataclass(frozen=True)
class GraphEdge:
    """Gradient flows from `source` (nearer the root) to `target`.

    `input_index` is the position in `source.next_functions`; `output_index` says which
    output of `target` the gradient belongs to (0, 1, 2... for multi-output nodes).
    Root-tensor edges use the tensor's `output_nr`.
    """

    source: int
    target: int
    input_index: int
    output_index: int


class TensorNames:
    """Names for tensors, looked up by identity (keeps the tensors alive meanwhile)."""

    def __init__(self, pairs: Iterable[tuple[str, Any]] = ()) -> None:
        self._by_id: dict[int, tuple[str, Any]] = {}
        for name, tensor in pairs:
            self._by_id.setdefault(id(tensor), (name, tensor))

    def name_of(self, tensor: Any) -> str | None:
        entry = self._by_id.get(id(tensor))
        return entry[0] if entry is not None and entry[1] is tensor else None

    def items(self) -> Iterator[tuple[str, Any]]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __repr__(self) -> str:
        return f"TensorNames({[name for name, _ in self.items()]})"


def resolve_names(names: Any, frame: FrameType | None = None) -> TensorNames:
    """Turn the `names=` argument of the widgets into a `TensorNames`.

    Accepted: None (no names), a dict ``{"w": w, ...}``, a module-like object with
    `named_parameters()`, or ``"auto"``: every tensor bound to a variable in `frame`
    (the caller's locals, then globals; module attributes as ``model.weight``).
    """
    if names is None:
        return TensorNames()
    if isinstance(names, TensorNames):
        return names
    if isinstance(names, str):
        if names != "auto":
            raise ValueError(f'names must be a dict of tensors or "auto", not the string {names!r}')
        return names_from_frame(frame) if frame is not None else TensorNames()
    if isinstance(names, Mapping):
        pairs = []
        for name, tensor in names.items():
            if not is_tensor_like(tensor):
                raise TypeError(
                    f"names must map a name to a tensor, but {name!r} maps to "
                    f"{type(tensor).__name__}"
                )
            pairs.append((str(name), tensor))
        return TensorNames(pairs)
    if callable(getattr(names, "named_parameters", None)):
        return TensorNames(names.named_parameters())
    raise TypeError(
        'names must be None, "auto", a dict like {"w": w} or a module with '
        f"named_parameters(), not {type(names).__name__}"
    )


def names_from_frame(frame: FrameType) -> TensorNames:
    """Names of the tensors visible as variables in `frame` (locals win over globals)."""
    scopes = [dict(frame.f_locals)]
    if frame.f_globals is not frame.f_locals:
        scopes.append(frame.f_globals)
    pairs: list[tuple[str, Any]] = []
    for scope in scopes:
        for name, value in list(scope.items()):
            if name.startswith("_"):  # IPython's _, _1, __ and private helpers
                continue
            if is_tensor_like(value):
                pairs.append((name, value))
            elif not isinstance(value, type) and callable(getattr(value, "named_parameters", None)):
                try:
                    pairs.extend((f"{name}.{p}", t) for p, t in value.named_parameters())
                except Exception:  # a look-alike that is not a module: ignore it
                    continue
    return TensorNames(pairs)


def check_roots(roots: tuple[Any, ...], caller: str) -> None:
    """Raise a clear error unless `roots` are tensors that have a backward graph."""
    if not roots:
        raise ValueError(f"{caller} needs at least one tensor, e.g. {caller}(loss)")
    for position, root in enumerate(roots):
        where = f"argument {position + 1}" if len(roots) > 1 else "the argument"
        if not is_tensor_like(root):
            raise TypeError(
                f"{caller} expects tensors, but {where} is {type(root).__name__}: "
                f"{value_text(root, max_chars=40)}. Pass the result of a computation, "
                f"e.g. {caller}(loss)."
            )
        if root.grad_fn is None and not root.requires_grad:
            raise ValueError(
                f"{caller}: {where} has no backward graph: it is a tensor with "
                "requires_grad=False and no grad_fn (a leaf that does not require grad, or "
                "a result computed under no_grad / from detached tensors). Create inputs "
                "with requires_grad=True and compute from them."
            )


class BackwardGraph:
    """Nodes and edges of the backward graph reachable from some root tensors."""

    def __init__(
        self,
        nodes: list[GraphNode],
        edges: list[GraphEdge],
        roots: list[int],
        names: TensorNames,
    ) -> None:
        self.nodes = nodes
        self.edges = edges
        self.roots = roots
        self.names = names
        self.out_edges: list[list[int]] = [[] for _ in nodes]
        self.in_edges: list[list[int]] = [[] for _ in nodes]
        for e, edge in enumerate(edges):
            self.out_edges[edge.source].append(e)
            self.in_edges[edge.target].append(e)
        self._by_id = {id(n.obj): n.index for n in nodes if n.obj is not None}

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"<BackwardGraph: {len(self.nodes)} nodes, {len(self.edges)} edges>"

    def node_of(self, obj: Any) -> GraphNode | None:
        """The graph node describing `obj` (a backward node or a root tensor), by identity."""
        index = self._by_id.get(id(obj))
        if index is None or self.nodes[index].obj is not obj:
            return None
        return self.nodes[index]

    def find(self, name: str) -> list[GraphNode]:
        """Nodes whose name (or leaf name, or produced tensor name) is `name`."""
        return [
            n for n in self.nodes if name == n.name or name == n.leaf_name or name in n.tensor_names
        ]

    def children(self, index: int) -> list[GraphNode]:
        """The nodes `index` sends gradient to, in `next_functions` order."""
        return [self.nodes[self.edges[e].target] for e in self.out_edges[index]]

    def parents(self, index: int) -> list[GraphNode]:
        """The nodes that send gradient to `index`."""
        return [self.nodes[self.edges[e].source] for e in self.in_edges[index]]

    @property
    def engine_nodes(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.is_engine_node]

    @property
    def recorded_nodes(self) -> list[GraphNode]:
        """The nodes a `create_graph=True` backward pass recorded."""
        return [n for n in self.nodes if n.recorded]

    @property
    def shared_nodes(self) -> list[GraphNode]:
        return [n for n in self.nodes if n.is_engine_node and n.shared]

    @property
    def root_tensors(self) -> list[Any]:
        return [self.nodes[i].obj for i in self.roots]

    def predicted_order(self) -> list[GraphNode]:
        """The order a PyTorch-like engine runs the nodes in.

        Dependencies are counted per edge; among ready nodes the one with the highest
        `_sequence_nr()` (created last in forward) runs first, as in PyTorch's ready
        queue. Without sequence numbers, discovery order is used.
        """
        waiting = [0] * len(self.nodes)
        for edge in self.edges:
            waiting[edge.target] += 1
        ready: list[tuple[int, int]] = []

        def deliver(source: int) -> None:
            for e in self.out_edges[source]:
                target = self.edges[e].target
                waiting[target] -= 1
                if waiting[target] == 0 and self.nodes[target].is_engine_node:
                    heapq.heappush(ready, (-self._priority(target), target))

        for root in self.roots:
            deliver(root)
        order = []
        while ready:
            _, index = heapq.heappop(ready)
            order.append(self.nodes[index])
            deliver(index)
        return order

    def _priority(self, index: int) -> int:
        sequence_nr = getattr(self.nodes[index].obj, "_sequence_nr", None)
        if callable(sequence_nr):
            return int(sequence_nr())
        return -index


def _unnamed_root(tensor: Any, position: int, count: int) -> str:
    """A root nobody named, called by what it is: `loss: SumBackward0` (the one scalar
    root of a graph), `root 1: MulBackward0`, or `root 0` for a leaf."""
    fn = tensor.grad_fn
    if fn is None:
        return f"root {position}"
    scalar = count == 1 and not tuple(getattr(tensor, "shape", ()) or ())
    return f"{'loss' if scalar else f'root {position}'}: {node_display_name(fn)}"


def build_graph(*roots: Any, names: Any = None, caller: str = "build_graph") -> BackwardGraph:
    """Describe the backward graph of `roots` (torch or minigrad tensors).

    `names`: see `resolve_names`; ``"auto"`` looks at the caller's variables.
    `caller` names the public function in error messages.
    """
    check_roots(roots, caller)
    return _build(roots, resolve_names(names, sys._getframe(1)))


def _build(roots: tuple[Any, ...], names: TensorNames) -> BackwardGraph:
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    index_of: dict[int, int] = {}
    queue: list[int] = []

    def intern(obj: Any) -> int:
        index = index_of.get(id(obj))
        if index is None:
            index = len(nodes)
            index_of[id(obj)] = index
            nodes.append(_describe_node(index, obj, names))
            queue.append(index)
        return index

    root_indices = []
    seen_roots: set[int] = set()
    for position, tensor in enumerate(roots):
        if id(tensor) in seen_roots:
            continue
        seen_roots.add(id(tensor))
        index = len(nodes)
        nodes.append(
            GraphNode(
                index,
                ROOT,
                names.name_of(tensor) or _unnamed_root(tensor, position, len(roots)),
                obj=tensor,
                shape=shape_text(tensor),
                is_leaf_root=tensor.grad_fn is None,
            )
        )
        root_indices.append(index)
        if tensor.grad_fn is not None:
            output_nr = int(getattr(tensor, "output_nr", 0) or 0)
            edges.append(GraphEdge(index, intern(tensor.grad_fn), 0, output_nr))

    head = 0
    while head < len(queue):  # breadth first: nearer nodes get smaller indices
        source = queue[head]
        head += 1
        for input_index, (next_node, output_index) in enumerate(nodes[source].obj.next_functions):
            if next_node is None:
                target = len(nodes)
                nodes.append(GraphNode(target, NO_GRAD, "None"))
            else:
                target = intern(next_node)
            edges.append(GraphEdge(source, target, input_index, int(output_index)))

    _attach_tensor_names(nodes, index_of, names)
    graph = BackwardGraph(nodes, edges, root_indices, names)
    _mark_roots(graph)
    return graph


def _describe_node(index: int, obj: Any, names: TensorNames) -> GraphNode:
    name = node_display_name(obj)
    if name == "AccumulateGrad" and hasattr(obj, "variable"):
        leaf = obj.variable
        return GraphNode(
            index,
            ACCUMULATE,
            name,
            obj=obj,
            variable=leaf,
            leaf_name=names.name_of(leaf),
            shape=shape_text(leaf),
        )
    recorded, parent = recording_parent(obj)
    return GraphNode(
        index,
        BACKWARD,
        name,
        obj=obj,
        saved=tuple(read_saved_values(obj, names)),
        recorded=recorded,
        recorded_by=None if parent is None else node_display_name(parent),
    )


def recording_parent(node: Any) -> tuple[bool, Any]:
    """Whether a `create_graph=True` backward recorded `node`, and the node whose
    backward did (None when it is gone or unknown).

    minigrad marks every such node (`_recorded_by`, a weak reference to the parent).
    PyTorch keeps the parent only in anomaly mode, as `metadata["parent_"]`: a torch
    graph recorded outside `torch.autograd.detect_anomaly()` shows as a forward one.
    """
    if hasattr(node, "_recorded_by"):  # minigrad
        ref = node._recorded_by
        return (False, None) if ref is None else (True, ref())
    metadata = getattr(node, "metadata", None)
    parent = metadata.get("parent_") if isinstance(metadata, dict) else None
    return parent is not None, parent


def _attach_tensor_names(nodes: list[GraphNode], index_of: dict[int, int], names: TensorNames):
    produced: dict[int, list[str]] = {}
    for name, tensor in names.items():
        grad_fn = getattr(tensor, "grad_fn", None)
        if grad_fn is not None and id(grad_fn) in index_of:
            produced.setdefault(index_of[id(grad_fn)], []).append(name)
    for index, tensor_names in produced.items():
        nodes[index].tensor_names = tuple(tensor_names)


def _mark_roots(graph: BackwardGraph) -> None:
    reached: list[set[int]] = [set() for _ in graph.nodes]
    for position, root in enumerate(graph.roots):
        stack = [root]
        while stack:
            index = stack.pop()
            if position in reached[index]:
                continue
            reached[index].add(position)
            stack.extend(graph.edges[e].target for e in graph.out_edges[index])
    for node, positions in zip(graph.nodes, reached):
        node.roots = frozenset(positions)


# -- saved values -------------------------------------------------------------------


def saved_attribute_names(node: Any) -> list[str]:
    """The `<name>` of every `_saved_<name>` attribute of a backward node."""
    attrs = [a[len("_saved_") :] for a in dir(node) if a.startswith("_saved_")]
    # A custom autograd.Function node keeps its tensors in `saved_tensors` instead.
    if not attrs and "_raw_saved_tensors" in dir(node):
        attrs = ["tensors"]
    return attrs


def read_saved_values(node: Any, names: TensorNames | None = None) -> list[SavedValue]:
    """Everything `node` saved for backward, with versions and release status."""
    names = names or TensorNames()
    values: list[SavedValue] = []
    for attr in saved_attribute_names(node):
        values.extend(_read_saved(node, attr, names))
    return values


def _read_saved(node: Any, attr: str, names: TensorNames) -> list[SavedValue]:
    try:
        raw = getattr(node, "_raw_saved_" + attr, None)
    except RuntimeError:
        raw = None
    raws = list(raw) if isinstance(raw, (tuple, list)) else []
    hooked = any(_packed_by_hook(r) for r in raws or [raw])
    try:
        # (For a hooked value this calls the unpack hook, as reading it in PyTorch does.)
        if attr == "tensors" and not hasattr(node, "_saved_tensors"):
            value = node.saved_tensors
        else:
            value = getattr(node, "_saved_" + attr)
    except RuntimeError as error:
        return _unreadable(attr, raw, error)
    except Exception as error:
        if not hooked:
            raise
        # An unpack hook that fails (its storage is gone, it returns no tensor) makes
        # backward fail too: the value is unreadable.
        failed = _unreadable_one(attr, None, error, per_item=False)
        return [replace(failed, packed=packed_text(raw.data) if _packed_by_hook(raw) else "?")]

    if value is None:
        return [SavedValue(attr, "none")]
    if is_tensor_like(value):
        return [_tensor_value(attr, value, raw, names)]
    if isinstance(value, (tuple, list)) and any(is_tensor_like(v) for v in value):
        raws = raws if len(raws) == len(value) else []
        result = []
        for i, item in enumerate(value):
            item_attr = f"{attr}[{i}]"
            if is_tensor_like(item):
                result.append(_tensor_value(item_attr, item, raws[i] if raws else None, names))
            else:
                result.append(SavedValue(item_attr, "value", text=value_text(item)))
        return result
    return [SavedValue(attr, "value", text=value_text(value))]


def _packed_by_hook(raw: Any) -> bool:
    """Whether a raw saved value (`_raw_saved_<name>`) was packed by saved-tensor hooks:
    then it keeps its unpack hook, and its `data` is what the pack hook returned."""
    return getattr(raw, "unpack_hook", None) is not None


def _tensor_value(attr: str, tensor: Any, raw: Any, names: TensorNames) -> SavedValue:
    if _packed_by_hook(raw):
        # What the unpack hook gave: backward uses it as it is, with no version check.
        return SavedValue(
            attr,
            "tensor",
            shape=shape_text(tensor),
            dtype=dtype_text(tensor),
            tensor_name=names.name_of(tensor),
            text=value_text(tensor),
            packed=packed_text(raw.data),
        )
    current = int(tensor._version)
    saved = getattr(raw, "saved_version", None)
    return SavedValue(
        attr,
        "tensor",
        # Reading succeeded, so the engine's version check passed: versions agree.
        saved_version=current if saved is None else int(saved),
        current_version=current,
        shape=shape_text(tensor),
        dtype=dtype_text(tensor),
        tensor_name=names.name_of(tensor),
    )


def _unreadable(attr: str, raw: Any, error: RuntimeError) -> list[SavedValue]:
    if isinstance(raw, (tuple, list)) and raw:
        return [
            _unreadable_one(f"{attr}[{i}]", item, error, per_item=True)
            for i, item in enumerate(raw)
        ]
    return [_unreadable_one(attr, raw, error, per_item=False)]


def _unreadable_one(attr: str, raw: Any, error: Exception, per_item: bool) -> SavedValue:
    message = str(error) if isinstance(error, RuntimeError) else f"{type(error).__name__}: {error}"
    saved = getattr(raw, "saved_version", None)
    current = getattr(raw, "current_version", None)
    released = getattr(raw, "is_released", None)
    match = _VERSION_MESSAGE.search(message)
    if released or (released is None and any(m in message for m in _FREED_MARKERS)):
        status = RELEASED
    elif match and not per_item:
        status, current, saved = MODIFIED, int(match.group(1)), int(match.group(2))
    elif saved is not None and current is not None and saved != current:
        status = MODIFIED
    elif per_item:
        # One tuple element broke the read; this one is fine.
        return SavedValue(attr, "tensor", saved_version=saved, current_version=current)
    else:
        status = UNREADABLE
    return SavedValue(
        attr,
        "tensor",
        status=status,
        saved_version=None if saved is None else int(saved),
        current_version=None if current is None else int(current),
        error=message,
    )


__all__ = [
    "ACCUMULATE",
    "BACKWARD",
    "NO_GRAD",
    "ROOT",
    "BackwardGraph",
    "GraphEdge",
    "GraphNode",
    "SavedValue",
    "TensorNames",
    "build_graph",
    "check_roots",
    "read_saved_values",
    "recording_parent",
    "resolve_names",
]

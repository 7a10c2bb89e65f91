"""A layered layout for backward graphs: roots at the top, leaves at the bottom.

The classic Sugiyama recipe, kept small and deterministic:

1. big graphs first collapse long linear chains into one "... N nodes ..." box (and, as
   a last resort, everything past `max_boxes` into one "... N more nodes ..." box), so
   drawing never hangs;
2. layers by longest path from the roots (a leaf lands right below its lowest consumer);
3. every edge gets dummy vertices, one per rank crossed: node layers sit on the even
   ranks and a *label rank* lies between each two of them, where every edge passing
   through owns a slot as wide as the text it may carry (as Graphviz's dot does);
4. crossings are reduced by barycentric ordering sweeps, then adjacent swaps;
5. x coordinates: each vertex is pulled towards its neighbours' mean while keeping the
   order and the spacing (an isotonic regression per rank, solved exactly by PAV); the
   links of a long edge pull hardest (dot's weights), and a long edge whose neighbours
   leave room is then set in one straight line.

An edge leaves and enters a box right above or below its next bend where the box's
side reaches it (a port), not only at the side's middle, so it need not slant there.
Within a rank's band every edge runs straight down at its vertex's x, and the vertices
of a rank keep their order and spacing, so a label in its slot can touch neither a box,
nor another label, nor any edge: edges slant only in the gaps between the bands.

Coordinates are in points (1/72 inch); y grows upwards, so layer 0 is at the top.
Everything is iterative: no recursion anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from .graph import ACCUMULATE, BACKWARD, NO_GRAD, BackwardGraph, GraphNode

COLLAPSE_ABOVE = 150  # graphs with more nodes than this get their chains collapsed
MIN_CHAIN = 4  # shortest chain worth collapsing (its two ends stay visible)
MAX_BOXES = 400  # hard cap on drawn boxes, whatever the graph looks like
MAX_DUMMIES = 8000  # edges beyond this budget are drawn straight (and get no label slot)
POLISH_SWEEPS = 16
NODE_GAP = 22.0  # between neighbours in a rank
RANK_GAP = 14.0  # between the bands of two ranks: where edges may slant
EMPTY_BAND = 4.0  # height of a label rank whose slots all stay empty
FONT_SIZE = 11.0


class Footprint(NamedTuple):
    """Room a vertex needs: its box, plus a side panel on the right (saved tensors)."""

    width: float
    height: float
    side_width: float = 0.0
    side_height: float = 0.0

    @property
    def total_height(self) -> float:
        return max(self.height, self.side_height)


def text_box_size(lines: list[str], fontsize: float = FONT_SIZE) -> tuple[float, float]:
    """Estimated (width, height) in points of a box holding `lines` of text."""
    longest = max((len(line) for line in lines), default=1)
    return longest * fontsize * 0.62 + 14.0, len(lines) * fontsize * 1.3 + 10.0


def default_footprint(node: GraphNode) -> Footprint:
    """Box size from the node's name alone (the drawing passes its own measure)."""
    return Footprint(*text_box_size([node.name]))


@dataclass
class Group:
    """Several graph nodes shown as one box."""

    key: int
    members: tuple[int, ...]
    label: str


@dataclass
class LayoutEdge:
    """A drawn edge between two boxes, standing for one or more graph edges.

    `source_slot` and `target_slot` are where its labels go: the point of the edge in the
    label rank right below the source and right above the target (the same point when
    the edge spans one layer); the slot's room extends to the right of that point.
    """

    source: int
    target: int
    graph_edges: tuple[int, ...]
    path: list[int] = field(default_factory=list)  # source, dummy vertices..., target
    route: list[tuple[float, float]] = field(default_factory=list)
    source_slot: tuple[float, float] | None = None
    target_slot: tuple[float, float] | None = None
    label_left: bool = False  # the label near the source goes left of the edge


@dataclass
class Layout:
    """Where every box and edge goes. Vertex keys: graph node indices for visible
    nodes, then group keys, then dummy vertices (which only appear in `layers`)."""

    graph: BackwardGraph
    positions: dict[int, tuple[float, float]]  # box anchor (centre of the node box)
    footprints: dict[int, Footprint]
    layer_of: dict[int, int]  # box key -> node layer (0: the roots)
    layers: list[list[int]]  # vertices by rank: boxes on even ranks, label slots between
    edges: list[LayoutEdge]
    groups: dict[int, Group]
    owner: list[int]  # graph node index -> key of the box showing it
    width: float
    height: float
    x_of: dict[int, float] = field(default_factory=dict)  # every vertex, dummies included
    rank_of: dict[int, int] = field(default_factory=dict)  # every vertex, dummies included
    label_height: float = 0.0  # height of the label slots

    @property
    def collapsed(self) -> bool:
        return bool(self.groups)

    def box_keys(self) -> list[int]:
        return list(self.positions)

    def crossings(self) -> int:
        """Edge crossings between adjacent layers (edges meeting at a box do not count)."""
        total = 0
        segments: dict[int, list[tuple[float, float]]] = {}
        for edge in self.edges:
            for upper, lower in zip(edge.path, edge.path[1:]):
                layer = self.rank_of[upper]
                if self.rank_of[lower] != layer + 1:
                    continue  # straight long edge without dummies
                segments.setdefault(layer, []).append((self.x_of[upper], self.x_of[lower]))
        for pairs in segments.values():
            for i, (a_top, a_bottom) in enumerate(pairs):
                for b_top, b_bottom in pairs[i + 1 :]:
                    if (a_top - b_top) * (a_bottom - b_bottom) < 0:
                        total += 1
        return total


def layered_layout(
    graph: BackwardGraph,
    footprint: Callable[[GraphNode], Footprint] = default_footprint,
    collapse_above: int = COLLAPSE_ABOVE,
    max_boxes: int = MAX_BOXES,
    group_footprint: Callable[[str], Footprint] | None = None,
    label_room: Callable[[LayoutEdge], tuple[float, float]] | None = None,
    label_height: float = 0.0,
) -> Layout:
    """Lay out `graph` top-down. See the module docstring for the steps.

    footprint, group_footprint: the room a node's box, or a collapsed group's box, needs.
    label_room: for an edge, the width its labels need next to the source and next to
        the target; label_height: their height (the height of a label rank's band).
    """
    owner, groups = _visible_boxes(graph, collapse_above, max_boxes)
    sizes: dict[int, Footprint] = {}
    for node in graph.nodes:
        if owner[node.index] == node.index:
            sizes[node.index] = footprint(node)
    for key, group in groups.items():
        sizes[key] = (
            group_footprint(group.label) if group_footprint else Footprint(
                *text_box_size([group.label]))
        )

    edges = _box_edges(graph, owner, groups)
    keys = sorted(sizes)
    layer_of = _longest_path_layers(keys, edges)
    rank_of = {k: 2 * layer for k, layer in layer_of.items()}
    next_key = max(keys) + 1
    dummies = _add_dummies(edges, rank_of, next_key)
    layers = _order(keys, edges, rank_of)
    widths = {k: (sizes[k].width / 2, sizes[k].width / 2 + sizes[k].side_width) for k in keys}
    widths.update({d: (4.0, 4.0) for d in dummies})
    labelled_ranks = _reserve_label_room(edges, layers, widths, rank_of, label_room)
    x_of = _assign_x(layers, edges, widths, rank_of)
    bands = _rank_bands(layers, sizes, labelled_ranks, label_height)
    height = -bands[-1][1] if bands else 0.0

    def centre(rank: int) -> float:
        return (bands[rank][0] + bands[rank][1]) / 2

    positions = {k: (x_of[k], centre(rank_of[k])) for k in keys}
    for edge in edges:
        edge.route = _route(edge, positions, sizes, x_of, bands, rank_of)
        if len(edge.path) > 2:
            first, last = edge.path[1], edge.path[-2]
            edge.source_slot = (x_of[first], centre(rank_of[first]))
            edge.target_slot = (x_of[last], centre(rank_of[last]))
    _separate_parallel_edges(edges)
    width = max((x_of[k] + widths[k][1] for k in x_of), default=0.0)
    return Layout(
        graph, positions, sizes, layer_of, layers, edges, groups, owner, width, height, x_of,
        rank_of, label_height,
    )


# -- 1. collapsing ----------------------------------------------------------------


def _visible_boxes(
    graph: BackwardGraph, collapse_above: int, max_boxes: int
) -> tuple[list[int], dict[int, Group]]:
    owner = list(range(len(graph.nodes)))
    groups: dict[int, Group] = {}
    next_key = len(graph.nodes)
    if len(graph.nodes) > collapse_above:
        for run in _chains(graph):
            hidden = run[1:-1]
            members = list(hidden)
            members += _absorbed_children(graph, set(hidden))
            for index in members:
                owner[index] = next_key
            groups[next_key] = Group(next_key, tuple(members), f"\u2026 {len(hidden)} nodes \u2026")
            next_key += 1

    visible = sorted(
        {owner[i] for i in range(len(graph.nodes))}, key=lambda k: _first_index(k, groups)
    )
    if len(visible) > max_boxes:
        overflow = set(visible[max_boxes - 1 :])
        members = [i for i in range(len(graph.nodes)) if owner[i] in overflow]
        for key in overflow & set(groups):
            del groups[key]
        for index in members:
            owner[index] = next_key
        groups[next_key] = Group(
            next_key, tuple(members), f"\u2026 {len(members)} more nodes \u2026"
        )
    return owner, groups


def _first_index(key: int, groups: dict[int, Group]) -> int:
    return min(groups[key].members) if key in groups else key


def _chains(graph: BackwardGraph) -> list[list[int]]:
    """Maximal runs of backward nodes with one consumer and one backward input each."""

    def next_in_chain(index: int) -> int | None:
        node = graph.nodes[index]
        if node.kind != BACKWARD or len(graph.in_edges[index]) != 1:
            return None
        backward_children = []
        for e in graph.out_edges[index]:
            child = graph.nodes[graph.edges[e].target]
            if child.kind == BACKWARD:
                backward_children.append(child.index)
            elif child.kind not in (ACCUMULATE, NO_GRAD):
                return None
        return backward_children[0] if len(backward_children) == 1 else None

    chainable = [next_in_chain(i) is not None for i in range(len(graph.nodes))]
    runs = []
    for index in range(len(graph.nodes)):
        if not chainable[index]:
            continue
        parent = graph.edges[graph.in_edges[index][0]].source
        if chainable[parent]:
            continue  # not the start of a run
        run = [index]
        current = next_in_chain(index)
        while current is not None and len(graph.in_edges[current]) == 1:
            run.append(current)
            if not chainable[current]:
                break
            current = next_in_chain(current)
        if len(run) >= MIN_CHAIN:
            runs.append(run)
    return runs


def _absorbed_children(graph: BackwardGraph, hidden: set[int]) -> list[int]:
    """Stubs of hidden nodes always disappear; their private leaves do when numerous."""
    stubs, private_leaves = [], []
    for index in hidden:
        for e in graph.out_edges[index]:
            child = graph.edges[e].target
            kind = graph.nodes[child].kind
            if kind == NO_GRAD:
                stubs.append(child)
            elif kind == ACCUMULATE and all(
                graph.edges[p].source in hidden for p in graph.in_edges[child]
            ):
                private_leaves.append(child)
    private_leaves = sorted(set(private_leaves))
    return stubs + (private_leaves if len(private_leaves) > 3 else [])


def _box_edges(
    graph: BackwardGraph, owner: list[int], groups: dict[int, Group]
) -> list[LayoutEdge]:
    edges: list[LayoutEdge] = []
    merged: dict[tuple[int, int], LayoutEdge] = {}
    overflow = {k for k, g in groups.items() if g.label.endswith("more nodes \u2026")}
    for e, graph_edge in enumerate(graph.edges):
        source, target = owner[graph_edge.source], owner[graph_edge.target]
        if source == target or source in overflow:
            continue  # inside a box, or leaving the overflow box (which must stay a sink)
        if source in groups or target in groups:
            existing = merged.get((source, target))
            if existing is not None:
                existing.graph_edges += (e,)
                continue
            merged[(source, target)] = edge = LayoutEdge(source, target, (e,))
        else:
            edge = LayoutEdge(source, target, (e,))
        edges.append(edge)
    return edges


# -- 2. layers ------------------------------------------------------------------------


def _longest_path_layers(keys: list[int], edges: list[LayoutEdge]) -> dict[int, int]:
    children: dict[int, list[int]] = {k: [] for k in keys}
    waiting = dict.fromkeys(keys, 0)
    for edge in edges:
        children[edge.source].append(edge.target)
        waiting[edge.target] += 1
    layer_of = dict.fromkeys(keys, 0)
    ready = [k for k in keys if waiting[k] == 0]
    done = 0
    while ready:
        key = ready.pop()
        done += 1
        for child in children[key]:
            layer_of[child] = max(layer_of[child], layer_of[key] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    if done < len(keys):  # a cycle cannot come from autograd; stay safe anyway
        bottom = max(layer_of.values()) + 1
        for key in keys:
            if waiting[key] > 0:
                layer_of[key] = bottom
    return layer_of


def _add_dummies(edges: list[LayoutEdge], layer_of: dict[int, int], next_key: int) -> list[int]:
    dummies: list[int] = []
    budget = MAX_DUMMIES
    for edge in sorted(edges, key=lambda e: layer_of[e.target] - layer_of[e.source]):
        top, bottom = layer_of[edge.source], layer_of[edge.target]
        span = bottom - top - 1
        if span > budget:
            edge.path = [edge.source, edge.target]
            continue
        budget -= max(span, 0)
        path = [edge.source]
        for layer in range(top + 1, bottom):
            layer_of[next_key] = layer
            dummies.append(next_key)
            path.append(next_key)
            next_key += 1
        path.append(edge.target)
        edge.path = path
    return dummies


# -- 3. ordering ----------------------------------------------------------------------


def _initial_order(keys: list[int], edges: list[LayoutEdge], layer_of: dict[int, int]):
    """Depth-first discovery order from the roots, layer by layer."""
    below: dict[int, list[int]] = {}
    has_parent: set[int] = set()
    for edge in edges:
        for upper, lower in zip(edge.path, edge.path[1:]):
            below.setdefault(upper, []).append(lower)
            has_parent.add(lower)
    seen: set[int] = set()
    order: list[int] = []
    for start in [k for k in keys if k not in has_parent]:
        stack = [start]
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            order.append(key)
            stack.extend(reversed(below.get(key, [])))
    order += [k for k in keys if k not in seen]
    layers: list[list[int]] = [[] for _ in range(max(layer_of.values(), default=0) + 1)]
    for key in order:
        layers[layer_of[key]].append(key)
    return layers


def _order(keys: list[int], edges: list[LayoutEdge], rank_of: dict[int, int]):
    """Every rank's vertices in order. Crossings are reduced on the node layers alone (a
    label slot only continues its edge); each label rank then takes the order of the
    segments passing through it, which adds no crossing."""
    coarse = [
        LayoutEdge(e.source, e.target, e.graph_edges, [v for v in e.path if rank_of[v] % 2 == 0])
        for e in edges
    ]
    half = {v: rank // 2 for v, rank in rank_of.items() if rank % 2 == 0}
    node_layers = _initial_order(keys, coarse, half)
    _reduce_crossings(node_layers, coarse, half)
    position = {v: i for layer in node_layers for i, v in enumerate(layer)}
    slots: list[list[tuple[int, int, int]]] = [[] for _ in node_layers]
    for edge in edges:
        for upper, slot, lower in zip(edge.path, edge.path[1:], edge.path[2:]):
            if rank_of[slot] % 2:
                slots[rank_of[slot] // 2].append((position[upper], position[lower], slot))
    layers: list[list[int]] = []
    for i, layer in enumerate(node_layers):
        layers.append(layer)
        if i + 1 < len(node_layers):
            layers.append([slot for *_, slot in sorted(slots[i])])
    return layers


def _neighbours(edges: list[LayoutEdge]) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    up: dict[int, list[int]] = {}
    down: dict[int, list[int]] = {}
    for edge in edges:
        for upper, lower in zip(edge.path, edge.path[1:]):
            down.setdefault(upper, []).append(lower)
            up.setdefault(lower, []).append(upper)
    return up, down


def _reduce_crossings(layers: list[list[int]], edges: list[LayoutEdge], layer_of) -> None:
    up, down = _neighbours(edges)
    size = sum(len(layer) for layer in layers)
    rounds = 12 if size < 2000 else 3
    best = [list(layer) for layer in layers]
    best_count = _total_crossings(layers, down)
    for sweep in range(rounds):
        if best_count == 0:
            break
        downward = sweep % 2 == 0
        indices = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        for i in indices:
            reference = layers[i - 1] if downward else layers[i + 1]
            links = up if downward else down
            _sort_by_barycenter(layers[i], reference, links)
        count = _total_crossings(layers, down)
        if count < best_count:
            best, best_count = [list(layer) for layer in layers], count
    layers[:] = best
    if 0 < best_count and size <= 400:
        _transpose(layers, up, down)


def _sort_by_barycenter(layer: list[int], reference: list[int], links: dict[int, list[int]]):
    position = {key: i for i, key in enumerate(reference)}
    current = {key: i for i, key in enumerate(layer)}
    scale = len(reference) / max(len(layer), 1)

    def barycenter(key: int) -> float:
        linked = [position[n] for n in links.get(key, ()) if n in position]
        return sum(linked) / len(linked) if linked else current[key] * scale

    layer.sort(key=lambda k: (barycenter(k), current[k]))


def _transpose(layers: list[list[int]], up, down) -> None:
    """Swap neighbours while that removes crossings (cheap final polish)."""
    improved = True
    passes = 0
    while improved and passes < 8:
        improved = False
        passes += 1
        for i, layer in enumerate(layers):
            for j in range(len(layer) - 1):
                before = _local_crossings(layers, i, down, up)
                layer[j], layer[j + 1] = layer[j + 1], layer[j]
                if _local_crossings(layers, i, down, up) < before:
                    improved = True
                else:
                    layer[j], layer[j + 1] = layer[j + 1], layer[j]


def _local_crossings(layers, i, down, up) -> int:
    count = 0
    if i > 0:
        count += _pair_crossings(layers[i - 1], layers[i], down)
    if i + 1 < len(layers):
        count += _pair_crossings(layers[i], layers[i + 1], down)
    return count


def _total_crossings(layers: list[list[int]], down: dict[int, list[int]]) -> int:
    return sum(_pair_crossings(a, b, down) for a, b in zip(layers, layers[1:]))


def _pair_crossings(upper: list[int], lower: list[int], down: dict[int, list[int]]) -> int:
    """Inversions among the edges between two layers, counted with a Fenwick tree."""
    position = {key: i for i, key in enumerate(lower)}
    ends = []
    for key in upper:
        ends.extend(sorted(position[n] for n in down.get(key, ()) if n in position))
    tree = [0] * (len(lower) + 1)
    crossings = 0
    for seen, end in enumerate(ends):
        # edges already seen whose lower end is strictly right of this one cross it
        i, not_greater = end + 1, 0
        while i > 0:
            not_greater += tree[i]
            i -= i & -i
        crossings += seen - not_greater
        i = end + 1
        while i <= len(lower):
            tree[i] += 1
            i += i & -i
    return crossings


# -- 4. coordinates -----------------------------------------------------------------------


def _assign_x(layers, edges, widths, layer_of) -> dict[int, float]:
    up, down = _neighbours(edges)
    real = {edge.source for edge in edges} | {edge.target for edge in edges}
    real.update(key for layer in layers[::2] for key in layer if key not in up and key not in down)
    primary = _primary_children(layers, down)
    primary_of = {child: parent for parent, child in primary.items()}
    x_of: dict[int, float] = {}
    for layer in layers:
        x = 0.0
        for j, key in enumerate(layer):
            if j:
                x += widths[layer[j - 1]][1] + widths[key][0] + NODE_GAP
            x_of[key] = x
    order = list(range(len(layers)))
    for sweep in range(8):
        downward = sweep % 2 == 0
        for i in order if downward else reversed(order):
            layer = layers[i]
            targets, weights = [], []
            for key in layer:
                # A chain continues straight down: the deepest child sits right under its
                # parent, the other children go beside it.
                if downward and key in primary_of:
                    target, weight = x_of[primary_of[key]], 10.0
                elif not downward and key in primary:
                    target, weight = x_of[primary[key]], 10.0
                else:
                    first, second = (up, down) if downward else (down, up)
                    linked = first.get(key) or second.get(key) or ()
                    target = sum(x_of[n] for n in linked) / len(linked) if linked else x_of[key]
                    weight = 1.0
                targets.append(target)
                weights.append(weight)
            _place_in_order(layer, targets, weights, widths, x_of)
    pulls = {key: [(n, 10.0 if primary.get(key) == n or primary_of.get(key) == n
                    else _stiffness(key, n, real))
                   for n in up.get(key, []) + down.get(key, [])]
             for layer in layers for key in layer}
    size = sum(len(layer) for layer in layers)
    for sweep in range(POLISH_SWEEPS if size <= 2000 else 2):  # big graphs: time first
        for i in order if sweep % 2 == 0 else reversed(order):
            layer = layers[i]
            targets, weights = [], []
            for key in layer:
                total = sum(w for _, w in pulls[key])
                targets.append(sum(x_of[n] * w for n, w in pulls[key]) / total
                               if total else x_of[key])
                weights.append(total or 1.0)
            _place_in_order(layer, targets, weights, widths, x_of)
    _straighten(layers, edges, widths, x_of)
    left = min((x_of[k] - widths[k][0] for k in x_of), default=0.0)
    return {k: x - left for k, x in x_of.items()}


def _straighten(layers, edges, widths, x_of) -> None:
    """Line up each long edge's inner vertices on one x where their neighbours leave
    room, so it runs down in one straight line instead of jogging from band to band."""
    place = {key: (layer, j) for layer in layers for j, key in enumerate(layer)}
    for edge in sorted(edges, key=lambda e: -len(e.path)):
        inner = edge.path[1:-1]
        if len(inner) < 2:
            continue
        low, high = -float("inf"), float("inf")
        for key in inner:
            layer, j = place[key]
            if j:
                left = layer[j - 1]
                low = max(low, x_of[left] + widths[left][1] + widths[key][0] + NODE_GAP)
            if j + 1 < len(layer):
                right = layer[j + 1]
                high = min(high, x_of[right] - widths[right][0] - widths[key][1] - NODE_GAP)
        if low <= high:
            mean = sum(x_of[key] for key in inner) / len(inner)
            for key in inner:
                x_of[key] = min(max(mean, low), high)


def _stiffness(a: int, b: int, real: set[int]) -> float:
    """How hard the link between two vertices pulls them into line (Graphviz's dot uses
    the same ratios): a long edge's inner links most, so it runs straight down and the
    boxes and label slots beside it make way, rather than it bending around them."""
    dummies = (a not in real) + (b not in real)
    return (1.0, 2.0, 8.0)[dummies]


def _primary_children(layers: list[list[int]], down: dict[int, list[int]]) -> dict[int, int]:
    """parent -> its child with strictly the longest way down, when there is one."""
    depth: dict[int, int] = {}
    for layer in reversed(layers):
        for key in layer:
            depth[key] = 1 + max((depth[c] for c in down.get(key, ())), default=-1)
    primary = {}
    for key, children in down.items():
        distinct = sorted(set(children), key=lambda c: -depth[c])
        if len(distinct) > 1 and depth[distinct[0]] > depth[distinct[1]]:
            primary[key] = distinct[0]
    return primary


def _place_in_order(layer: list[int], targets, weights, widths, x_of) -> None:
    """Closest positions to `targets` (weighted least squares) keeping order and spacing."""
    offsets = [0.0]
    for a, b in zip(layer, layer[1:]):
        offsets.append(offsets[-1] + widths[a][1] + widths[b][0] + NODE_GAP)
    # Pool adjacent violators on targets - offsets, which must be non-decreasing.
    blocks: list[list[float]] = []  # [mean, weight, count]
    for target, weight, offset in zip(targets, weights, offsets):
        blocks.append([target - offset, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean_b, weight_b, count_b = blocks.pop()
            mean_a, weight_a, count_a = blocks[-1]
            total = weight_a + weight_b
            blocks[-1] = [(mean_a * weight_a + mean_b * weight_b) / total, total, count_a + count_b]
    j = 0
    for mean, _, count in blocks:
        for _ in range(count):
            x_of[layer[j]] = mean + offsets[j]
            j += 1


LABEL_PAD = 4.0  # between an edge and the label beside it
LABEL_SPACE = 6.0  # between two labels sharing one slot


def _reserve_label_room(edges, layers, widths, rank_of, label_room) -> set[int]:
    """Widen each edge's label slots (to the right of the edge) by what its labels need;
    return the ranks holding a slot with room.

    Where edges fan out of one box, the leftmost one writes its label on its left
    instead (`label_left`): the fan's two outer edges then need no room between them, so
    a binary op's two edges stay as close as its box, and edges passing by make no
    detour around a label."""
    ranks: set[int] = set()
    if label_room is None:
        return ranks
    leftmost: dict[int, tuple[int, LayoutEdge]] = {}  # source -> its leftmost labelled edge
    fans: dict[int, int] = {}
    for edge in edges:
        if len(edge.path) < 3:
            continue  # drawn straight (over the dummy budget): no slot
        near_source, near_target = label_room(edge)
        first, last = edge.path[1], edge.path[-2]
        if near_source:
            fans[edge.source] = fans.get(edge.source, 0) + 1
            place = layers[rank_of[first]].index(first)
            if edge.source not in leftmost or place < leftmost[edge.source][0]:
                leftmost[edge.source] = (place, edge)
    on_left = {id(edge) for source, (_, edge) in leftmost.items() if fans[source] > 1}
    for edge in edges:
        if len(edge.path) < 3:
            continue
        near_source, near_target = label_room(edge)
        first, last = edge.path[1], edge.path[-2]
        if id(edge) in on_left:
            edge.label_left = True
            left, right = widths[first]
            widths[first] = (max(left, LABEL_PAD + near_source), right)
            ranks.add(rank_of[first])
            needs = {last: near_target}  # an output index ("#0") stays on the right
        elif first == last and near_source and near_target:
            needs = {first: near_source + LABEL_SPACE + near_target}
        else:
            needs = {first: near_source}
            needs[last] = max(needs.get(last, 0.0), near_target)
        for key, room in needs.items():
            if room > 0:
                left, right = widths[key]
                widths[key] = (left, max(right, LABEL_PAD + room))
                ranks.add(rank_of[key])
    return ranks


def _rank_bands(layers, sizes, labelled_ranks, label_height) -> list[tuple[float, float]]:
    """(top, bottom) of each rank's band: the tallest box of a node layer, the label
    height of a label rank with labels."""
    bands = []
    y = 0.0
    for rank, layer in enumerate(layers):
        if rank % 2 == 0:
            height = max((sizes[k].total_height for k in layer if k in sizes), default=10.0)
        else:
            height = label_height if rank in labelled_ranks else EMPTY_BAND
        bands.append((y, y - height))
        y -= height + RANK_GAP
    return bands


def _route(edge, positions, sizes, x_of, bands, rank_of) -> list[tuple[float, float]]:
    """Straight down through every band, slanting only in the gaps between bands."""
    x0, y0 = positions[edge.source]
    x1, y1 = positions[edge.target]
    if len(edge.path) > 2:  # leave and enter the boxes right above or below the next bend
        x0 = _port(x0, sizes[edge.source].width, x_of[edge.path[1]])
        x1 = _port(x1, sizes[edge.target].width, x_of[edge.path[-2]])
    points = [(x0, y0 - sizes[edge.source].height / 2), (x0, bands[rank_of[edge.source]][1])]
    for d in edge.path[1:-1]:
        top, bottom = bands[rank_of[d]]
        points += [(x_of[d], top), (x_of[d], bottom)]
    points += [(x1, bands[rank_of[edge.target]][0]), (x1, y1 + sizes[edge.target].height / 2)]
    return points


PORT_INSET = 10.0  # an edge meets a box at least this far from its corners


def _port(centre: float, width: float, towards: float) -> float:
    """Where on a box's top or bottom side an edge heading to x = `towards` meets it:
    straight above or below that x when the side reaches it (so a neighbouring edge
    lands without a slant), else the side's nearest point."""
    reach = max(width / 2 - PORT_INSET, 0.0)
    return min(max(towards, centre - reach), centre + reach)


def _separate_parallel_edges(edges: list[LayoutEdge]) -> None:
    """Edges between the same two boxes (as in `w * w`) leave and enter their boxes side
    by side, not on top of each other (in between, each has its own dummy vertices)."""
    bundles: dict[tuple[int, int], list[LayoutEdge]] = {}
    for edge in edges:
        bundles.setdefault((edge.source, edge.target), []).append(edge)
    for bundle in bundles.values():
        for k, edge in enumerate(bundle if len(bundle) > 1 else ()):
            shift = (k - (len(bundle) - 1) / 2) * 14.0
            route = edge.route
            for i in (0, 1, len(route) - 2, len(route) - 1):
                x, y = route[i]
                route[i] = (x + shift, y)
    for edge in edges:  # drop repeated points (a box as tall as its band)
        route = edge.route
        edge.route = [p for i, p in enumerate(route) if i == 0 or p != route[i - 1]]


__all__ = ["Footprint", "Group", "Layout", "LayoutEdge", "layered_layout", "text_box_size"]

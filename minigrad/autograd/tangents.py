"""Forward mode's machinery: where a tangent lives, and when an op's tangent is computed.

A dual tensor is a tensor with a tangent (`Tensor._fw_grad`). While a dual level is
active (`DUAL.active`, the one flag `record` checks), every op's `record` call ends in
`note_dual`: if some input has a tangent, the op's output gets one too, computed from
the node's `tangent` formula (`ops/tangent_formulas.py`), the inputs, their tangents
and the output.

That formula may read what the op stores on its node *after* `record` returned (a
sum's dims, add's alpha), so the tangent cannot be computed inside `record`. It is
left *pending* on the output and computed the first time it is needed: by the next
op that takes the output, by `unpack_dual`, or before an in-place op writes (which
could change the inputs the formula reads). An in-place op's own tangent is computed
once the new values are written and the op has returned (some ops store what the
formula reads after the write): before the next tangent anyone reads. The formula runs in the grad
mode of the op, so a tangent of tensors that require grad has a graph of its own.

When no input requires grad the op records no graph; `note_dual` then makes a node
anyway, that nobody else sees, just so the op has somewhere to store what the formula
reads ("forward only"). Saved-tensor hooks do not see what such an op saves, as
PyTorch, which makes no node there, packs nothing.

A view's tangent is the same view of its input's tangent (PyTorch's rule), which
this module makes directly from the two memory layouts: a tangent is always laid out
like its primal, so the view's place in its input's memory is its tangent's place in
the input's tangent.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from .._registry import attach
from ..grad_mode import STATE
from ..tensor import DEFAULT, Tensor, make_view
from . import saved

# The tangent of an element-wise op, PyTorch's `auto_element_wise`: its backward
# formula, with the input's tangent in place of `grad`.
AUTO_ELEMENT_WISE = "auto_element_wise"
# The tangent of a view op, PyTorch's `auto_linear` for views: the same view of the
# input's tangent.
SAME_VIEW = "auto_linear"
# The tangents of an op with no formula of its own, which computes its outputs'
# tangents itself by running its decomposition into smaller ops on the dual inputs
# (PyTorch's jvp decompositions, `torch/_decomp/decompositions_for_jvp.py`).
BY_DECOMPOSITION = "decomposition"


class _Dual:
    """The forward-AD level, one for the whole process as in PyTorch."""

    active = False  # a dual level is entered: `record` then calls `note_dual`
    level = -1


# Read directly where every op looks, like `grad_mode.ANOMALY`.
DUAL = _Dual()

# The tensors given a tangent in the current level (exiting it takes them away), and
# the outputs whose tangent is still pending, by id.
_DUALS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_PENDING: dict[int, Tensor] = {}
# The tensors an in-place op has just written whose tangent is still to compute: some
# ops store what the formula reads (index_put_'s indices) only once the write is done,
# so the tangent waits until the op has returned, for the next tangent anyone reads.
_WRITTEN: dict[int, Tensor] = {}


# PyTorch's text for an op its derivatives table marks `not_implemented`, which
# forward mode refuses as well (a node class names the op: `forward_ad_refused = "asinh_"`).
NOT_IMPLEMENTED_YET = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we "
    "can prioritize its implementation.")


def unsupported(node_cls: type) -> NotImplementedError:
    """PyTorch's error for an op with no forward formula, raised when the op runs: its
    own where PyTorch refuses too (`forward_ad_refused`), else one that says minigrad
    lacks the formula."""
    refused = getattr(node_cls, "forward_ad_refused", None)
    if refused is not None:
        return NotImplementedError(NOT_IMPLEMENTED_YET.format(refused))
    op = re.sub(r"Backward\d*$", "", node_cls.__name__)
    op = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()
    return NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it because it has "
        f"not been implemented yet in minigrad ({node_cls.__name__} has no tangent formula)."
    )


# -- where a tangent lives ---------------------------------------------------------------


def tangent_of(t: Tensor) -> Tensor | None:
    """`t`'s tangent at the current level (computed now if it was pending), or None.
    A view with none of its own shows its base's, viewed the same way (a base that got
    its tangent from an in-place op after the view was made)."""
    if _WRITTEN:
        _finish_written()
    pending = t._fw_pending
    if pending is not None:
        pending.compute_if_written()
    tangent = t._fw_grad
    if tangent is None and t._view is not None:
        base = t._view.base
        base_tangent = tangent_of(base)
        if base_tangent is not None:
            tangent = _same_view(base_tangent, base, t)
            _keep(t, tangent)
    return tangent


def share_tangent(source: Tensor, target: Tensor) -> None:
    """Give `target` (a saved output, rebuilt) the tangent `source` has, if any."""
    tangent = tangent_of(source)
    if tangent is not None:
        _keep(target, tangent)


attach(saved, "SHARE_TANGENT", share_tangent)


def same_views(x: Tensor, views: tuple) -> None:
    """Give each of `views` (views of `x`, which one op made: split's pieces) the same
    view of `x`'s tangent, if it has one. (`note_dual` sees the first output only, and a
    view of a view finds no tangent on its base when only the middle one has one.)"""
    tangent = tangent_of(x)
    if tangent is not None:
        for view in views:
            _keep(view, _same_view(tangent, x, view))


def _keep(t: Tensor, tangent: Tensor) -> None:
    _DUALS[id(t)] = t
    t._fw_grad = tangent


def _storage(a: np.ndarray) -> tuple[int, int]:
    """Where `a` starts in the memory it views (in elements), and how many elements
    that memory has."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return start // a.itemsize, root.nbytes // a.itemsize


def _element_strides(a: np.ndarray) -> tuple:
    return tuple(s // a.itemsize if n > 1 else 0 for s, n in zip(a.strides, a.shape))


def same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    """PyTorch's `has_same_meta`: same sizes, strides and place in equally large memory."""
    return (a.shape == b.shape and _element_strides(a) == _element_strides(b)
            and _storage(a) == _storage(b))


def _same_view(tangent: Tensor, primal: Tensor, view: Tensor) -> Tensor:
    """The view of `tangent` that `view` is of `primal` (tangent laid out like primal)."""
    p, v, g = primal._data, view._data, tangent._data
    offset = (v.__array_interface__["data"][0] - p.__array_interface__["data"][0]) // p.itemsize
    start = g.__array_interface__["data"][0] + offset * g.itemsize
    strides = tuple(s // v.itemsize * g.itemsize for s in v.strides)
    out = make_view(tangent, np.asarray(_Memory(g, start, v.shape, strides)))
    if tangent.requires_grad and STATE.grad_enabled and out._view.creation_meta == DEFAULT:
        # A tangent with a graph: the view's gradient reaches it (PyTorch records the
        # view op itself; minigrad, not knowing which op it was, its region of memory).
        out._refresh_view_grad_fn()
    return out


class _Memory:
    """Part of an array's memory seen with a shape and strides of one's own (what
    numpy's `as_strided` does, from any place in the memory)."""

    def __init__(self, owner: np.ndarray, start: int, shape: tuple, strides: tuple) -> None:
        self.base = owner  # (keeps the memory alive for as long as the view)
        self.__array_interface__ = {
            "data": (start, not owner.flags.writeable), "shape": shape,
            "strides": strides, "typestr": owner.dtype.str, "version": 3,
        }


def _laid_out_like(t: Tensor, new: Tensor) -> Tensor:
    """`new` copied into fresh memory laid out like `t` (broadcast to its shape), as
    PyTorch stores a tangent whose layout differs from its primal's."""
    from_layout = np.empty_like(t._data, dtype=new._data.dtype)  # (numpy keeps the strides)
    if new.requires_grad:
        return Tensor._make(from_layout).copy_(new)
    from_layout[...] = new._data
    return Tensor._make(from_layout)


def set_tangent(t: Tensor, new: Tensor) -> None:
    """Give `t` the tangent `new` (copied first if laid out otherwise)."""
    _keep(t, new if same_layout(new._data, t._data) else _laid_out_like(t, new))


def update_tangent(t: Tensor, new: Tensor) -> None:
    """An in-place op's new tangent for `t`: written into the tangent `t` has (or its
    base has: a view's is part of it), else it becomes `t`'s tangent. A view of a base
    without one first gives the base a tangent of zeros, of which it is a view."""
    old = tangent_of(t)
    if old is None and t._view is not None:
        base = t._view.base
        set_tangent(base, Tensor._make(np.zeros_like(base._data, dtype=new._data.dtype)))
        old = tangent_of(t)
    if old is None:
        set_tangent(t, new)
    else:
        old.copy_(new)


# -- pending tangents --------------------------------------------------------------------


class _Pending:
    """What computing one op's tangent needs: its node (the formula, and what the op
    stored), its inputs and their tangents (as they were when it ran), its output, and
    the grad mode it ran in. An in-place op's (`target` set) also keeps the input's
    values from before the write, if its formula reads them, and waits for the write
    (the version counter's bump)."""

    __slots__ = ("kind", "node", "inputs", "tangents", "output", "grad_enabled", "target",
                 "version", "original")

    def __init__(self, node_cls: type, node, inputs: tuple, tangents: list,
                 output: Tensor | None) -> None:
        self.kind = node_cls.tangent
        self.node, self.inputs, self.tangents = node, inputs, tangents
        self.output = output
        self.grad_enabled = STATE.grad_enabled
        self.target = None

    def compute_if_written(self) -> None:
        if self.target is None:
            self.compute()
        elif self.target._version_counter.value != self.version:
            self.finish()

    def compute(self) -> None:
        """The output's tangent, now."""
        out = self.output
        del _PENDING[id(out)]
        out._fw_pending = None
        set_tangent(out, self._evaluate(self.inputs, out))

    def finish(self) -> None:
        """An in-place op's tangent, once the values are written."""
        t = self.target
        t._fw_pending = None
        if self.kind == SAME_VIEW:  # (`t_`, `unsqueeze_`: the tangent is re-viewed too)
            tangent = self.tangents[0]
            tangent._data = _same_view(tangent, self.original, t)._data
            tangent._version_counter.value += 1
            return
        inputs = (self.original if self.original is not None else t,) + self.inputs[1:]
        update_tangent(t, self._evaluate(inputs, t))

    def _evaluate(self, inputs: tuple, result: Tensor) -> Tensor:
        saved_grad_mode = STATE.grad_enabled
        STATE.grad_enabled = self.grad_enabled
        DUAL.active = False  # (the formula's own ops compute no tangents)
        try:
            return self.node.apply_tangent(inputs, self.tangents, result)
        finally:
            DUAL.active = True
            STATE.grad_enabled = saved_grad_mode


def _finish_written() -> None:
    while _WRITTEN:
        _, t = _WRITTEN.popitem()
        if t._fw_pending is not None:
            t._fw_pending.finish()


def compute_pending() -> None:
    """Compute every pending tangent (before an in-place op writes)."""
    _finish_written()
    for out in list(_PENDING.values()):
        if out._fw_pending is not None:
            out._fw_pending.compute()


def note_dual(node_cls: type, output: Tensor | None, inputs: tuple, node):
    """`record`'s last step while a dual level is active: give the op's output (or,
    for an in-place op, `output=None`, its first input) a tangent if an input has one.
    `node`: the node `record` made for the graph, or None. Returns the node the op
    stores its values on."""
    saved.skip_packing(False)
    if node_cls.tangent == BY_DECOMPOSITION:
        return node  # (the op has given its outputs their tangents already)
    if output is None:
        compute_pending()
    tangents = [tangent_of(t) if isinstance(t, Tensor) else None for t in inputs]
    if not any(g is not None for g in tangents):
        return node
    kind = node_cls.tangent
    if kind is None:
        raise unsupported(node_cls)
    if kind == SAME_VIEW and output is not None:
        _keep(output, _same_view(tangents[0], inputs[0], output))
        return node
    if node is None and kind != SAME_VIEW:
        # A node only for the formula; what the op saves on it is never packed.
        node = node_cls(tuple((None, 0) for _ in inputs), None)
        node._forward_only = True
        saved.skip_packing(True)
    pending = _Pending(node_cls, node, inputs, tangents, output)
    if output is not None:
        output._fw_pending = pending
        _PENDING[id(output)] = output
        return node
    target = inputs[0]
    pending.target, pending.version = target, target._version_counter.value
    if kind == SAME_VIEW:
        pending.original = Tensor._make(target._data)  # (its layout before the op)
    elif node_cls.tangent_reads_self():
        pending.original = Tensor._make(target._data.copy())  # (its values before)
    else:
        pending.original = None
    target._fw_pending = pending
    return node


def finish_tangent(t: Tensor, node) -> bool:
    """`finish_inplace`'s step while a dual level is active: `t` was just written by
    the in-place op of `node`; its tangent, if the op left one pending, is computed
    before the next tangent anyone reads (`_WRITTEN`). True if
    `node` was made only for the tangent (so it must not become `t`'s producer)."""
    pending = t._fw_pending
    if pending is not None and pending.node is node:
        _WRITTEN[id(t)] = t  # (finished once the op has stored its values, see `_WRITTEN`)
    return getattr(node, "_forward_only", False)


def clear_level() -> None:
    """Exiting the level: every tangent made in it is gone."""
    saved.skip_packing(False)
    for t in list(_DUALS.values()):
        t._fw_grad = None
        t._fw_pending = None
    for out in _PENDING.values():
        out._fw_pending = None
    _DUALS.clear()
    _PENDING.clear()
    _WRITTEN.clear()

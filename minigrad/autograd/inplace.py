"""In-place ops and views: PyTorch's rules for writing into a tensor that a graph
may need, version bumps, and the history rewrite after a view is modified.

An in-place op checks the rules (`begin_inplace`), writes, bumps the version counter
shared by the tensor and all its views, and becomes the tensor's new producer
(`finish_inplace`). Modifying a *view* also changes its base: the base's new
`grad_fn` is a `CopySlices` node, and every other view of the base gets an
`AsStridedBackward0` history the next time its `grad_fn` is read.
"""

from __future__ import annotations

import math

import numpy as np

from .._registry import attach
from ..arrays.layout import is_dense, is_efficient_zeros, memory_order
from ..grad_mode import STATE
from ..tensor import (
    DEFAULT,
    IN_CUSTOM_FUNCTION,
    MULTI_OUTPUT_NODE,
    NO_GRAD_MODE,
    Tensor,
    element_strides,
)
from . import mutation
from .graph import FREED_MESSAGE, VALUE, Node, bump_version, move_retained_grad, short_name
from .record import record
from .tangents import DUAL, SAME_VIEW, finish_tangent


def view_rebase_error(t: Tensor, indirect: bool) -> RuntimeError:
    """Why the history of view `t` cannot be rewritten after an in-place op on it
    (`indirect=False`) or on its base or another view of it (`indirect=True`).

    One output of unbind/split cannot get its own CopySlices (its node computes all
    outputs' gradients at once), a view made in no_grad mode has no history to
    rewrite, and rewriting a custom Function's output would bypass its backward, so
    PyTorch refuses all three rather than guess.
    """
    what = ("its base or another view of its base has been" if indirect else "is being")
    meta = t._view.creation_meta
    fn = t._grad_fn
    if meta == NO_GRAD_MODE or fn is None:
        # With a node, `t` is a view (made with grad) of a view made in no_grad mode.
        who = (f"Output {t._output_nr} of {short_name(fn.name())} is a view of a view which "
               "was created in" if fn is not None else "A view was created in")
        text = f"{who} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        text = (f"Output {t._output_nr} of {short_name(fn.name())} is a view and {what} "
                "modified inplace.")
    if meta == MULTI_OUTPUT_NODE:
        return RuntimeError(
            f"{text} This view is the output of a function that returns multiple views. "
            "Such functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one."
        )
    if meta == IN_CUSTOM_FUNCTION:
        return RuntimeError(
            f"{text} This view was created inside a custom Function (or because an input "
            "was returned as-is) and the autograd logic to handle view+inplace would "
            "override the custom backward associated with the custom Function, leading to "
            "incorrect gradients. This behavior is forbidden. You can fix this by cloning "
            "the output of the custom Function."
        )
    return RuntimeError(
        f"{text} Given that this use case is ambiguous and error-prone, it is forbidden. "
        "You can clarify your code by moving both the view and the inplace either both "
        "inside the no_grad block (if you don't want the inplace to be tracked) or both "
        "outside (if you want the inplace to be tracked)."
    )


def check_inplace(t: Tensor, other_requires_grad: bool = False) -> None:
    """PyTorch's rules for modifying a tensor in place while grad mode records.
    Every in-place op calls this before it writes, so inside
    `allow_mutation_on_saved_tensors` a saved tensor about to change is cloned here."""
    if mutation.watching:
        mutation.before_write(t)
    if not STATE.grad_enabled:
        return
    if not (t.requires_grad or other_requires_grad):
        return
    view = t._view
    if view is not None:
        if view.creation_meta != DEFAULT:
            raise view_rebase_error(t, indirect=False)
        # Whether the base requires grad does not matter (PyTorch checks only is_leaf).
        if t.requires_grad and view.base.is_leaf:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
    if t.requires_grad and t.is_leaf:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def check_no_overlap(t: Tensor) -> None:
    """An expanded tensor has several elements in one memory place: PyTorch refuses
    to write into it rather than let the writes race. Nor does it write into its
    efficient zero tensor (sgn's gradient), which has no memory."""
    data = t._data
    # (no elements, nothing shared: numpy gives a new empty array 0 strides)
    if data.size and any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)):
        if is_efficient_zeros(data):
            raise RuntimeError("ZeroTensors are immutable. Please use the materialized zero "
                               "tensor obtained using .clone() if you want a mutable tensor.")
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the "
            "operation."
        )


def check_no_partial_overlap(t: Tensor, other) -> None:
    """An operand that covers part of the memory an in-place op writes
    (`t.div_(t[0])`, `a[1:].add_(a[:3])`) would be read after some of it was already
    overwritten, so the result would depend on the order of the writes: PyTorch
    refuses. The same memory seen the same way (`x.mul_(x)`) is fine, and so is
    anything PyTorch does not try to decide (an operand or a target that is not
    dense, such as `a[::2]`)."""
    if not isinstance(other, Tensor):
        return
    a, b = t._data, other._data
    if a is b or a.size == 0 or b.size == 0 or not np.may_share_memory(a, b):
        return  # (numpy compares the two memory extents only: cheap)
    if not (is_dense(a) and is_dense(b)):
        return
    a_start, b_start = _address(a), _address(b)
    if a_start == b_start and a.nbytes == b.nbytes and _same_walk(a, b):
        return
    if a_start < b_start + b.nbytes and b_start < a_start + a.nbytes:
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to "
            "tensor refer to a single memory location. Please clone() the tensor before "
            "performing the operation."
        )


def _address(a: np.ndarray) -> int:
    """Where `a`'s lowest element is (a dense array's first byte)."""
    return a.__array_interface__["data"][0] + sum(
        (n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0)


def _same_walk(a: np.ndarray, b: np.ndarray) -> bool:
    """The same strides wherever a dim has more than one element (numpy, unlike
    PyTorch, does not keep a meaningful stride for a dim of size 1)."""
    if a.ndim != b.ndim:
        return False
    return all(sa == sb for n, m, sa, sb in zip(a.shape, b.shape, a.strides, b.strides)
               if n > 1 or m > 1)


def begin_inplace(node_cls: type[Node], t: Tensor, *others,
                  overlap_matters: bool = True) -> Node | None:
    """Check the in-place rules and, if a graph must be recorded, make the node.

    Called *before* the data changes: `t`'s current `grad_fn` becomes the new
    node's first input, `others` (the op's other operands) the following ones.
    After computing, the op calls `finish_inplace`. `overlap_matters=False`: PyTorch
    does not check the operands for overlapping `t` (`fill_` reads its value's number
    before writing; assignment stretches its value to the target's shape first).
    """
    others_require_grad = any(isinstance(x, Tensor) and x.requires_grad for x in others)
    check_inplace(t, others_require_grad)
    check_no_overlap(t)
    if overlap_matters:
        for other in others:
            check_no_partial_overlap(t, other)
    return record(node_cls, None, t, *others)


def finish_inplace(t: Tensor, node: Node | None) -> None:
    """Bump the version (every in-place op does, tracked or not) and make `node`
    the tensor's new producer."""
    t._version_counter.value += 1
    if node is not None:
        if DUAL.active and finish_tangent(t, node):
            return  # (a node made only for the tangent: no graph to rewrite)
        rebase_history(t, node)


def rebase_history(t: Tensor, node: Node) -> None:
    """Make `node` the new producer of `t` after an in-place op."""
    view = t._view
    if view is not None and t.dtype.is_floating_point:
        base = view.base
        old_fn, old_nr = base._grad_fn, base._output_nr
        base._grad_fn = CopySlices(base, t, node)
        base._output_nr = 0
        move_retained_grad(base, old_fn, old_nr)
        t._refresh_view_grad_fn()  # (moves the view's own retained gradient)
    else:
        old_fn, old_nr = t._grad_fn, t._output_nr
        t._grad_fn = node
        t._output_nr = 0
        move_retained_grad(t, old_fn, old_nr)


def refresh_view_grad_fn(self: Tensor) -> None:
    """The base was modified in place since this view's `grad_fn` was made: the
    view now differentiates through the base's new history (AsStridedBackward0)."""
    view = self._view
    base = view.base
    if self._grad_fn is None and not base.requires_grad:
        return  # never part of a graph: nothing to rebuild
    if view.creation_meta != DEFAULT:
        # No AsStrided history can be made up for these (see `view_rebase_error`).
        raise view_rebase_error(self, indirect=True)
    view.attr_version = self._version_counter.value
    old_fn, old_nr = self._grad_fn, self._output_nr
    if base.requires_grad and self.dtype.is_floating_point:
        node = AsStridedBackward0((base._edge(),))
        AsStridedBackward0.describe(node, self, base)
        self._grad_fn = node
        self._output_nr = 0
    else:
        self._grad_fn = None
    move_retained_grad(self, old_fn, old_nr)


attach(Tensor, "_refresh_view_grad_fn", refresh_view_grad_fn)


# -- the nodes of a rewritten history --------------------------------------------------------


class AsStridedBackward0(Node):
    """`as_strided`'s node, and a view's rebuilt after its base was modified in
    place: the gradient lands in the view's region (size, stride, offset) of a zero
    tensor laid out like the input (the base)."""

    tangent = SAME_VIEW  # (as PyTorch's: the same view of the input's tangent)
    saves = {"size": VALUE, "stride": VALUE, "storage_offset": VALUE}

    @staticmethod
    def describe(node: Node, view: Tensor, base: Tensor, storage_offset="") -> None:
        """Record where `view` sits inside `base`'s memory, in elements (`_offset`,
        negative where the view starts before `base`), and the `storage_offset`
        PyTorch shows: as_strided's argument (None if not given), else the offset."""
        item = base._data.itemsize
        offset = (view._data.__array_interface__["data"][0]
                  - base._data.__array_interface__["data"][0]) // item
        node._saved.update({
            "size": view._data.shape,
            "stride": element_strides(view._data),
            "storage_offset": offset if storage_offset == "" else storage_offset,
            "_offset": offset,
            "_base_shape": base._data.shape,
            "_base_stride": element_strides(base._data),
        })

    def backward(self, grad):
        saved = self._saved
        if not within_input(saved):
            return (scattered_into_input(grad, saved),)
        base, region = base_and_region(saved, grad.dtype)
        # An expanded view shows one memory place several times (stride 0), and
        # `region += grad` would keep only one of those writes: sum the repeats first.
        stretched = tuple(d for d, (n, s) in enumerate(zip(region.shape, region.strides))
                          if s == 0 and n > 1)
        if stretched:
            grad = grad.sum(axis=stretched, keepdims=True)
            region = region[tuple(slice(0, 1) if d in stretched else slice(None)
                                  for d in range(region.ndim))]
        region += grad
        # PyTorch returns a view of its zeros with the input's layout, written once.
        bump_version(base)
        return (base.view(),)


def maybe_overlapping(sizes, strides) -> bool:
    """PyTorch's `_maybe_overlapping_memory`: whether some element may be seen twice
    (taken by increasing stride, each dim's stride must step past all that the dims
    before it reach; dims of size 1 do not count)."""
    reach = 0
    for n, s in sorted(((n, s) for n, s in zip(sizes, strides) if n != 1),
                       key=lambda d: d[1]):
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def _reach(sizes, strides) -> int:
    """How many elements of memory a geometry spans from its first (0 if it has none)."""
    return 1 + sum((n - 1) * s for n, s in zip(sizes, strides)) if all(sizes) else 0


def within_input(saved: dict) -> bool:
    """Whether the view's region lies in its input's memory, seeing no element twice
    but by an expanded dim (stride 0), and the input sees none twice: always, for a
    view minigrad makes by itself; `as_strided` may make others."""
    size, stride, offset = saved["size"], saved["stride"], saved["_offset"]
    shape, base_stride = saved["_base_shape"], saved["_base_stride"]
    spread = [(n, s) for n, s in zip(size, stride) if s != 0]
    return (offset >= 0 and offset + _reach(size, stride) <= _reach(shape, base_stride)
            and not maybe_overlapping([n for n, _ in spread], [s for _, s in spread])
            and not maybe_overlapping(shape, base_stride))


def scattered_into_input(grad: np.ndarray, saved: dict) -> np.ndarray:
    """PyTorch's `as_strided_backward` for any geometry: the gradient added into a zero
    storage that holds both the input's and the view's memory, each element where the
    view sees it (several times where it sees it several times: `index_add_`), each
    place divided by how many times the input sees it, the input's geometry read off
    it (a view of it: the view's memory outside the input's is dropped)."""
    size, stride, offset = saved["size"], saved["stride"], saved["_offset"]
    shape, base_stride = saved["_base_shape"], saved["_base_stride"]
    shared = min(0, offset)  # (the storage starts where the earlier of the two starts)
    length = max(_reach(shape, base_stride), offset + _reach(size, stride)) - shared
    storage = np.zeros(max(length, 1), grad.dtype)
    if grad.size:
        places = offset - shared + sum(i * s for i, s in zip(np.indices(size), stride))
        np.add.at(storage, places.ravel(), np.broadcast_to(grad, size).ravel())
    writes = 1
    if maybe_overlapping(shape, base_stride) and all(shape):
        count = np.zeros_like(storage)
        np.add.at(count, (-shared + sum(i * s for i, s in zip(np.indices(shape), base_stride))
                          ).ravel(), 1)
        with np.errstate(all="ignore"):
            storage /= count
        writes = 2
    bump_version(storage, writes)
    item = storage.itemsize
    return np.ndarray(shape, storage.dtype, buffer=storage, offset=-shared * item,
                      strides=tuple(s * item for s in base_stride))


def base_and_region(saved: dict, dt) -> tuple[np.ndarray, np.ndarray]:
    """Zeros laid out exactly like the base's memory, seen two ways: shaped like
    the base, and as the view's region (same strides and offset as the real view).
    Like PyTorch's, the array owns its memory when the base is dense (the usual
    case: a later gradient stream may then be added into it in place); a base with
    gaps is a buffer of its extent, seen through its strides."""
    item = np.dtype(dt).itemsize
    shape, stride = saved["_base_shape"], saved["_base_stride"]
    strides = tuple(s * item for s in stride)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 1
    as_strided = np.lib.stride_tricks.as_strided
    if extent == math.prod(shape):
        base = np.ndarray(shape, dt, strides=strides)
        memory = base.transpose(memory_order(base)).reshape(-1)  # (a view: base is dense)
        memory[...] = 0
    else:
        memory = np.zeros(extent, dt)
        base = as_strided(memory, shape, strides)
    region = as_strided(memory[saved["_offset"]:], saved["size"],
                        tuple(s * item for s in saved["stride"]))
    return base, region


class CopySlices(Node):
    """The base's new history after an in-place op on one of its views.

    Backward: the base's gradient is copied; the view's region of it is handed to
    the in-place op's own backward (`fn`), whose result for the view replaces that
    region; `fn`'s gradients for its other inputs pass through.
    """

    __slots__ = ("fn",)
    _display_name = "minigrad::autograd::CopySlices"

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        super().__init__((base._edge(),) + fn.next_functions[1:])
        self.fn = fn
        has_edge = self.next_functions[0][0] is not None
        base_meta = (base._data.shape, base._data.dtype) if has_edge else None
        self._input_meta = (base_meta,) + fn._input_meta[1:]
        AsStridedBackward0.describe(self, view, base)

    _saves_elsewhere = True  # in the wrapped in-place node

    def saved_items(self) -> list:
        return self.fn.saved_items() if self.fn is not None else []

    # Set once a `create_graph=True` backward ran the wrapped node's formulas: the graph
    # they recorded may lead to that node (its saved output comes back with it as
    # `grad_fn`), which must then keep what it saved, as PyTorch's, kept alive by that
    # graph, does.
    _fn_recorded = False

    def release_variables(self) -> tuple[str, ...]:
        # As PyTorch's CopySlices, let go of the wrapped node itself: a second backward
        # through this node fails even when that node saved nothing (`t[0] = 2.0`).
        released = ()
        if self.fn is not None and not self._fn_recorded:
            released = self.fn.release_variables()
        self.fn = None
        return released

    def backward(self, grad):
        if self.fn is None:
            raise RuntimeError(FREED_MESSAGE)
        result, region = base_and_region(self._saved, grad.dtype)
        result[...] = grad
        fn_grads = self.fn.apply([region.copy()])
        if fn_grads[0] is None:
            # (a custom Function's backward gave the view none: PyTorch then gives the
            # base none either, not the rest of `grad`)
            return (None, *fn_grads[1:])
        region[...] = fn_grads[0]
        # PyTorch makes `result` with two in-place writes (`copy_` of the gradient,
        # then of the region), which its version counts.
        bump_version(result, 2)
        return (result, *fn_grads[1:])

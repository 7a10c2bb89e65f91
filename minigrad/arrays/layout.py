"""Memory layout: how PyTorch lays out a fresh result (the operands' dim order, so
`x.t().exp()` is transposed too), and the flat views the kernels walk."""

from __future__ import annotations

import numpy as np

# A Python number as PyTorch's TensorIterator sees it in `x * 2`: a 0-d operand, which
# has no say about the order of the dims, but makes the operands' shapes differ.
WRAPPED_NUMBER = np.zeros(())


def flat(a: np.ndarray) -> np.ndarray:
    """`a` as the 1-D array kernels loop over: itself when it is 1-D (the kernels
    take any strides), else a flat view, or a copy in row-major order when its
    memory is not laid out that way. (`ravel` costs a third of `reshape(-1)`, but
    copies a spread-out single value that `reshape` can still view.)"""
    if a.ndim == 1:
        return a
    return a.ravel() if a.flags.c_contiguous else a.reshape(-1)


def plain(a: np.ndarray) -> np.ndarray:
    """`a` flat (see `flat`) as a kernel's input: contiguous and writable, copied if it
    is not. numba compiles a kernel once per argument type, and a spread-out gradient
    (`sum`'s, every stride 0) or a read-only array is a type of its own: a second
    compilation of the same kernel, about 0.1 s, for a copy of a few elements.
    (Never for an output: a copy would not be written back.)"""
    if a.ndim != 1:
        a = a.ravel() if a.flags.c_contiguous else a.reshape(-1)  # (`flat`, inlined)
    flags = a.flags
    return a if flags.c_contiguous and flags.writeable else np.array(a)


def result_order(shape: tuple, *arrays: np.ndarray) -> list | None:
    """How PyTorch lays out an element-wise result of `shape` from `arrays` (each
    broadcastable to it): its dims from outermost to innermost in the order the
    operands' strides give them, so `x.t().exp()` is transposed like `x.t()`. The
    first operand decides; one broadcast along a dim has no say about it, and the
    next one is asked. None when that order is plain row-major, as it always is
    when every operand is row-major with row-major strides on its dims of size 1
    too (see `reorders`)."""
    for a in arrays:
        if not a.flags.c_contiguous:
            break
    else:
        if not reorders(shape, arrays):
            return None
    strides = [_strides_at(a, shape) for a in arrays]

    def outer(d0: int, d1: int) -> int:
        """1 if dim d0 belongs outside dim d1, -1 if inside, 0 if no operand says."""
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:  # equal strides: the longer dim goes outside
                return 1
        return 0

    inner_first = reorder_dims(list(range(len(shape) - 1, -1, -1)), outer)
    order = inner_first[::-1]
    return None if order == sorted(order) else order


def reorders(shape: tuple, arrays) -> bool:
    """Whether an element-wise result of `arrays` (each broadcastable to `shape`) may
    be laid out other than row-major: an operand is (`layout_matters`), or one has a
    dim of size 1 whose stride is not row-major's (`x.movedim(0, -1)` of a (1, 2, 1)
    `x`, strides (1, 1, 2)) and PyTorch's TensorIterator sorts the dims by their
    strides: it does unless every operand has the result's shape and is contiguous
    (its fast path). numpy's contiguity ignores the strides of dims of size 1."""
    for a in arrays:
        if layout_matters(a):
            return True
    if 1 not in shape:  # (a dim of size 1 that is broadcast has no say)
        return False
    for a in arrays:
        if odd_unit_stride(a):
            break
    else:
        return False
    return any(a.shape != shape or not a.flags.c_contiguous for a in arrays)


def odd_unit_stride(a: np.ndarray) -> bool:
    """Whether `a` has a dim of size 1 whose stride is neither row-major's (the extent
    of the dims inside it) nor 0 (which has no say in PyTorch's order)."""
    if 1 not in a.shape:
        return False
    step = a.itemsize
    for n, s in zip(reversed(a.shape), reversed(a.strides)):
        if n == 1 and s and s != step:
            return True
        step *= n
    return False


def is_row_major(a: np.ndarray) -> bool:
    """Row-major as PyTorch counts it: its size-1 dims' strides included (numpy's
    contiguity ignores those)."""
    return a.flags.c_contiguous and not odd_unit_stride(a)


def row_major(a: np.ndarray) -> np.ndarray:
    """`a` itself where it is row-major (`is_row_major`), else a row-major copy: how
    PyTorch allocates a reduction's result (numpy's reductions of a permuted array
    keep its layout)."""
    if is_row_major(a):
        return a
    return np.array(a, order="C", copy=True)


def in_result_layout(values: np.ndarray, *operands: np.ndarray) -> np.ndarray:
    """`values`, an element-wise result of the arrays `operands` computed by numpy
    (whose own choice of layout differs), laid out as PyTorch lays that result out
    (`result_order`): itself where it is already, else a copy. (A Python number
    among the operands is `WRAPPED_NUMBER`.)"""
    if not values.size:
        return values
    if not reorders(values.shape, operands):
        order = None
        if is_row_major(values):
            return values
    else:
        order = result_order(values.shape, *operands)
    out = np.empty(values.shape, values.dtype) if order is None else result_empty(
        values.shape, values.dtype, operands, order)
    if out.strides == values.strides:  # (numpy laid it out so already)
        return values
    out[...] = values
    return out


def reorder_dims(dims: list, should_swap) -> list:
    """PyTorch's insertion sort of TensorIterator dims, innermost first:
    `should_swap(a, b)` > 0 moves b before a, < 0 stops b there, 0 (undecided) lets it
    look further; so undecided pairs keep their order."""
    dims = list(dims)
    for i in range(1, len(dims)):
        j = i
        for k in range(i - 1, -1, -1):
            decided = should_swap(dims[k], dims[j])
            if decided > 0:
                dims[k], dims[j] = dims[j], dims[k]
                j = k
            elif decided < 0:
                break
    return dims


def _strides_at(a: np.ndarray, shape: tuple) -> tuple:
    """`a`'s strides seen at the broadcast `shape`: 0 along the dims it is stretched
    over (a dim of size 1 in both keeps its stride, which `np.broadcast_to` zeroes)."""
    lead = len(shape) - a.ndim
    return (0,) * lead + tuple(
        0 if n == 1 and shape[lead + i] != 1 else s
        for i, (n, s) in enumerate(zip(a.shape, a.strides))
    )


def layout_matters(a: np.ndarray) -> bool:
    """Whether operand `a` can make an element-wise result other than row-major: it
    is laid out otherwise, and is not one value spread out (whose strides are all 0,
    `sum()`'s gradient), which has no say."""
    return not a.flags.c_contiguous and any(a.strides)


def memory_order(array: np.ndarray) -> list:
    """`array`'s dims from the outermost in memory (largest stride) to the innermost:
    `array.transpose(memory_order(array))` walks its memory in row-major order."""
    return sorted(range(array.ndim), key=lambda d: -array.strides[d])


def is_dense(array: np.ndarray) -> bool:
    """Non-overlapping and dense: a row-major array with its dims in some order
    (`x.t()` is, `x[:, ::2]` and an expanded array are not)."""
    return array.transpose(memory_order(array)).flags.c_contiguous


def empty_in_order(shape: tuple, dtype, order: list) -> np.ndarray:
    """A fresh array of `shape` whose memory runs through its dims in `order`
    (outermost first), owning its memory as a fresh PyTorch tensor does. (numpy
    allocates an array with the strides asked for when given no buffer.)"""
    strides = [0] * len(shape)
    step = np.dtype(dtype).itemsize
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    return np.ndarray(shape, dtype, strides=strides)


def empty_like(a: np.ndarray, dtype=None) -> np.ndarray:
    """A fresh array laid out as PyTorch's `empty_like(a)` (the memory format kept:
    what `flip` and `sort` give): `a`'s own strides where `a` is non-overlapping and
    dense, a dim of size 1 keeping its stride too (even 0, which numpy's contiguity
    ignores), every array of no elements included; else dense in the order of `a`'s
    strides."""
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    if not a.size:
        return with_strides(a.shape, dtype, element_strides(a))
    if a.flags.c_contiguous or is_dense(a):  # (numpy allocates the strides asked for)
        return np.ndarray(a.shape, dtype,
                          strides=[s // a.itemsize * dtype.itemsize for s in a.strides])
    order = result_order(a.shape, a)
    return np.empty(a.shape, dtype) if order is None else empty_in_order(a.shape, dtype, order)


def copy_like(data: np.ndarray, model: np.ndarray, dtype=None) -> np.ndarray:
    """A copy of `data` (of `model`'s shape, in `dtype`, by default its own) laid out
    as PyTorch lays out a result made from `model` (`result_order`): a transposed
    model gives a transposed copy."""
    dtype = data.dtype if dtype is None else dtype
    if keeps_strides(model):
        return (copy_of(data) if data is model and dtype == data.dtype
                else astype_kept(data, dtype, model))
    order = result_order(model.shape, model) if layout_matters(model) else None
    if order is None:
        return np.array(data, dtype, copy=True, order="C")
    copy = empty_in_order(model.shape, dtype, order)
    copy[...] = data
    return copy


def keeps_strides(model: np.ndarray) -> bool:
    """Whether PyTorch's copy of `model` in its memory format (`clone`, `to`, the
    `*_like` factories) has strides numpy's copy would not: `model` is dense, so the
    copy takes its strides exactly, and it has a dim of size 1, whose stride numpy's
    copy (order 'K') would choose itself (even 0, or in a 1-d array)."""
    return (1 in model.shape and model.size > 0 and is_dense(model)
            and element_strides(model) != contiguous_strides(model.shape))


def astype_kept(data: np.ndarray, dtype, model: np.ndarray) -> np.ndarray:
    """A copy of `data` in `dtype` with `model`'s strides exactly (counted in elements:
    see `keeps_strides`)."""
    dtype = np.dtype(dtype)
    copy = np.ndarray(model.shape, dtype,
                      strides=[s // model.itemsize * dtype.itemsize for s in model.strides])
    copy[...] = data
    return copy


def fresh_result(shape: tuple, dtype, *operands: np.ndarray, number: bool = False) -> tuple:
    """For an element-wise kernel over `operands` (each broadcastable to `shape`): a
    fresh result laid out as PyTorch lays it out (`result_order`), a flat view of it,
    and the operands flattened in the same order, for the kernel to walk side by side.
    `number`: a Python number is an operand too (`WRAPPED_NUMBER`)."""
    arrays = operands + (WRAPPED_NUMBER,) if number else operands
    order = result_order(shape, *arrays) if reorders(shape, arrays) else None
    if order is None:
        out = np.empty(shape, dtype)
        flats = [plain(a if a.shape == shape else np.broadcast_to(a, shape)) for a in operands]
        return out, out.reshape(-1), flats
    out = result_empty(shape, dtype, arrays, order)
    flats = [plain(np.broadcast_to(a, shape).transpose(order)) for a in operands]
    return out, out.transpose(order).ravel(), flats


def step_layout(*operands: np.ndarray, number: bool = False, dtype=None) -> np.ndarray:
    """An empty array laid out as PyTorch lays out one element-wise step of a formula
    over `operands` (broadcast together; `number`: a Python number among them), in
    `dtype` (the first operand's by default): the next step's operand, when a fused
    kernel computes the whole formula in one pass and only its layout must follow
    PyTorch's step-by-step one (`laid_out_as`)."""
    shape = np.broadcast_shapes(*(a.shape for a in operands))
    return fresh_result(shape, operands[0].dtype if dtype is None else dtype, *operands,
                        number=number)[0]


def laid_out_as(out: np.ndarray, model: np.ndarray) -> np.ndarray:
    """`out`, or a copy of it with `model`'s strides where they differ."""
    if out.strides == model.strides:
        return out
    model[...] = out
    return model


def result_empty(shape: tuple, dtype, arrays, order: list) -> np.ndarray:
    """A fresh array for an element-wise result of `arrays` whose dims PyTorch orders
    as `order` (`result_order`): with the strides TensorIterator's fast setup gives
    where every operand has the result's shape (4-D operands all channels-last: a
    channels-last result; all dense with the same strides: those strides, a size-1
    dim's included), else dense in that order. Its dims in `order` are row-major in
    memory either way (the kernels walk it so)."""
    strides = _fast_strides(shape, arrays)
    if strides is not None:
        size = np.dtype(dtype).itemsize
        out = np.ndarray(shape, dtype, strides=[s * size for s in strides])
        if out.transpose(order).flags.c_contiguous:
            return out
    return empty_in_order(shape, dtype, order)


def _fast_strides(shape: tuple, arrays) -> tuple | None:
    """The strides (in elements) of TensorIterator's fast setup for operands of the
    result's shape that are not all contiguous: channels-last if they all are, the
    operands' own if they are all dense with the same ones; else None."""
    for a in arrays:
        if a.shape != shape:
            return None
    if len(shape) == 4:
        last = channels_last_strides(shape)
        if all(_channels_last(a, last) for a in arrays):
            return last
    first = element_strides(arrays[0])
    if all(element_strides(a) == first for a in arrays[1:]) and non_overlapping_and_dense(
            shape, first):
        return first
    return None


def channels_last_strides(shape: tuple) -> tuple:
    """PyTorch's channels-last strides of an (N, C, H, W) shape: C innermost, then W,
    H and N (an empty dim counted as 1)."""
    n, c, h, w = (max(d, 1) for d in shape)
    return (h * w * c, 1, w * c, c)


def _channels_last(a: np.ndarray, last: tuple) -> bool:
    """PyTorch's `is_contiguous(memory_format=torch.channels_last)` of a 4-D array:
    the strides of `last` wherever a dim has more than one element."""
    return all(n == 1 or s == t for n, s, t in zip(a.shape, element_strides(a), last))


def copy_in_order(dst: np.ndarray, src: np.ndarray) -> None:
    """`dst[...] = src` as PyTorch copies: element by element, through `dst`'s memory in
    order. numpy copies through a buffer when the two overlap; PyTorch does not, so
    where `src` reads memory the copy has already written (`t[1] = t[:, 0]` of a 2x2
    `t`) a later element gets the new value. (PyTorch refuses the overlaps it can
    decide, see `check_no_partial_overlap`; these are the ones it leaves alone.)"""
    if dst is src or not np.shares_memory(dst, src):
        dst[...] = src
        return
    order = memory_order(dst)
    to = dst.transpose(order)
    source = np.broadcast_to(src, dst.shape).transpose(order)
    for index in np.ndindex(to.shape):
        to[index] = source[index]


# -- tensors of no elements -----------------------------------------------------------
# Their strides are arbitrary (no memory is walked), so PyTorch's rules show: numpy
# gives a fresh empty array zero strides, PyTorch row-major ones counting an empty dim
# as 1, and its element-wise ops lay a result out by the operands' strides.


def contiguous_strides(shape: tuple) -> tuple:
    """PyTorch's row-major strides in elements, an empty dim counted as 1
    ((3, 0) -> (1, 1))."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def element_strides(data: np.ndarray) -> tuple:
    """The strides in elements, as PyTorch counts them (numpy counts bytes). numpy
    gives a new empty array zero strides; PyTorch gives it row-major ones, counting
    an empty dim as 1 ((3, 0) -> (1, 1)). (A tensor's array has them already, see
    `Tensor._make`; a view with zero strides, such as an expanded one, keeps its own.)"""
    size = data.itemsize
    if data.ndim == 2 and data.size:  # a matrix product's operand: the usual case
        rows, columns = data.strides
        return (rows // size, columns // size)
    if data.size == 0 and data.base is None and not any(data.strides):
        return contiguous_strides(data.shape)
    return tuple([s // size for s in data.strides])


def with_strides(shape: tuple, dtype, strides: tuple) -> np.ndarray:
    """A fresh array of no elements with these strides (in elements). (numpy keeps
    the strides asked for only over a buffer: here an empty array, so it is not
    taken for one of numpy's own fresh arrays, see `element_strides`.)"""
    itemsize = np.dtype(dtype).itemsize
    return np.ndarray(shape, dtype, buffer=np.empty(0, dtype),
                      strides=[s * itemsize for s in strides])


def copy_of(a: np.ndarray) -> np.ndarray:
    """A copy of `a` in numpy's order 'K' (its layout, where it is dense), a dim of
    size 1 keeping its stride too (numpy's copy gives it the row-major one); one of
    no elements keeps `a`'s strides, as PyTorch's `clone` does (numpy's copy would
    have none)."""
    if not a.size and a.ndim:
        return with_strides(a.shape, a.dtype, element_strides(a))
    if keeps_strides(a):
        return astype_kept(a, a.dtype, a)
    return np.array(a, copy=True)


def empty_result(shape: tuple, dtype, *operands: tuple) -> np.ndarray:
    """The result of no elements of an element-wise op over `operands` (each a
    `(shape, strides)` pair, strides in elements), laid out as PyTorch's
    TensorIterator lays it out: row-major when the operands all have the result's
    shape (tensors of no elements are contiguous); otherwise its dims sorted by the
    operands' strides, innermost first (`reorder_dims`), each stride the product of the
    sizes inside it, an empty dim counted as 0 (`zeros(0, 1) / 2` has strides (1, 0))."""
    ndim = len(shape)
    if all(tuple(s) == tuple(shape) for s, _ in operands) or ndim < 2:
        return with_strides(shape, dtype, contiguous_strides(shape))
    at = [_broadcast_strides(s, st, shape) for s, st in operands]

    def should_swap(d0: int, d1: int) -> int:
        for st in at:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:  # equal strides: the smaller dim goes inside
                return 1
        return 0

    perm = reorder_dims(list(range(ndim - 1, -1, -1)), should_swap)
    if perm == list(range(ndim - 1, -1, -1)):
        return with_strides(shape, dtype, contiguous_strides(shape))
    strides, step = [0] * ndim, 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return with_strides(shape, dtype, tuple(strides))


def view_strides(shape: tuple, strides: tuple, new: tuple) -> tuple | None:
    """PyTorch's `computeStride`: the strides of a view of `new` shape over a tensor of
    `shape` and `strides` (elements), or None if no view can be had. Its dims go in
    chunks laid out one after another; each chunk of `new` takes the strides of the
    matching chunk, so a size-1 dim gets the stride of the dim inside it (numpy's
    `reshape` gives it its own)."""
    if not shape:
        return (1,) * len(new)
    if 0 in shape:  # (strides of no elements: copied if the shape stays, else row-major)
        return tuple(strides) if tuple(shape) == tuple(new) else contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base = strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(out) if view_d == -1 else None


def restrided(data: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray | None:
    """A view of `data`'s memory with this shape and these strides (elements), where
    numpy's own view would choose others (for dims of size 1, arrays of no elements)
    or none. Made over the memory's owner, which numpy keeps as its base; None when
    the owner cannot lend its memory so."""
    if not data.size:
        return with_strides(shape, data.dtype, strides)
    owner = data
    while getattr(owner, "base", None) is not None:  # (through `as_strided`'s wrappers)
        owner = owner.base
    if not isinstance(owner, np.ndarray) or not owner.flags.c_contiguous:
        return None
    offset = data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    try:
        out = np.ndarray(shape, data.dtype, buffer=owner, offset=offset,
                         strides=[s * data.itemsize for s in strides])
    except (TypeError, ValueError):
        return None
    if not data.flags.writeable:
        out.flags.writeable = False
    return out


def unsqueezed_strides(shape: tuple, strides: tuple, dim: int) -> tuple:
    """PyTorch's strides after `unsqueeze(dim)`: the new dim's is the extent of the dim
    it goes before (its size times its stride; 0 before an empty dim), 1 at the end."""
    new = 1 if dim == len(shape) else shape[dim] * strides[dim]
    return strides[:dim] + (new,) + strides[dim:]


def spread_strides(shape: tuple, strides: tuple, dims: tuple, keepdim: bool,
                   sizes: tuple) -> tuple:
    """The strides of a reduction's gradient (of `shape` and `strides`) spread back
    over the input's `sizes` as PyTorch's `sum_backward` does: the reduced `dims`
    unsqueezed (unless kept), then expanded (stride 0 where a 1 grows)."""
    if not keepdim:
        shape, strides = tuple(shape), tuple(strides)
        for d in sorted(dims):
            strides = unsqueezed_strides(shape, strides, d)
            shape = shape[:d] + (1,) + shape[d:]
    return tuple(0 if n == 1 and m != 1 else s for n, s, m in zip(shape, strides, sizes))


def _broadcast_strides(shape: tuple, strides: tuple, full: tuple) -> tuple:
    """An operand's strides at the broadcast shape `full`: 0 where it is stretched."""
    lead = len(full) - len(shape)
    return (0,) * lead + tuple(0 if n == 1 and full[lead + i] != 1 else s
                               for i, (n, s) in enumerate(zip(shape, strides)))


def non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """PyTorch's `is_non_overlapping_and_dense` on element strides: contiguous (so
    any tensor of no elements), or the dims with more than one element, innermost
    first, each step the extent of those inside."""
    if is_contiguous(shape, strides):
        return True
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    dims = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if
                                                     shape[d] >= 2 else 0))
    step = 1
    for d in dims:
        if shape[d] < 2:
            return True
        if strides[d] != step:
            return False
        step *= shape[d]
    return True


def obeys_layout_contract(grad: tuple, leaf: tuple) -> bool:
    """PyTorch's gradient layout contract (`obeys_layout_contract`), of `(shape,
    strides)` pairs: a dense leaf's strides where a dim has other than one element
    (and no zero stride on a size-1 dim, which PyTorch takes for an expanded view),
    row-major for any other leaf."""
    (shape, strides), (leaf_shape, leaf_strides) = grad, leaf
    if not non_overlapping_and_dense(leaf_shape, leaf_strides):
        return is_contiguous(shape, strides)
    return all(g == v if n != 1 else g != 0
               for n, g, v in zip(shape, strides, leaf_strides))


def is_contiguous(shape: tuple, strides: tuple) -> bool:
    """PyTorch's `is_contiguous`: row-major where a dim has more than one element
    (always, for no elements)."""
    if 0 in shape:
        return True
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


# -- PyTorch's efficient zero tensor -------------------------------------------------------

# One 0-d zero per dtype, which every efficient zero array of that dtype views.
_ZEROS: dict = {}


def efficient_zeros(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """minigrad's form of PyTorch's efficient zero tensor (the gradient of `sgn`): a
    read-only array of zeros that owns no memory (it views one 0-d zero). PyTorch
    never adds into one in place, and keeps one as a leaf's `.grad` as is. Its strides
    are 0 here; a tensor of one shows PyTorch's, row-major (`Tensor.stride`)."""
    zero = _ZEROS.get(dtype)
    if zero is None:
        zero = _ZEROS[dtype] = np.zeros((), dtype)
    return np.broadcast_to(zero, shape)


def is_efficient_zeros(array: np.ndarray) -> bool:
    """Whether `array` was made by `efficient_zeros`."""
    base = array.base
    return base is not None and base is _ZEROS.get(array.dtype)

"""Padding (`nn.functional.pad`): constant, reflect, replicate and circular.

`pad` lists amounts for the last dims, last dim first: (left, right) for the last,
then (top, bottom) for the one before, ... A negative amount crops.
* constant (PyTorch's constant_pad_nd, ConstantPadNdBackward0) fills the border with
  a value; its gradient is the gradient cropped back, which is constant padding by the
  negated amounts again;
* reflect mirrors the input at its edges without repeating the edge (for 1, 2, 3:
  pad 2 gives 3, 2, 1, 2, 3, 2, 1), replicate repeats the edge element (1, 1, 1, 2,
  3, 3, 3). Each output element is a copy of one input element, so the gradient of
  an input element is the sum of the gradients of its copies. PyTorch has one op per
  mode and number of padded dims (reflection_pad1d, ..., replication_pad3d), each with
  its backward op; minigrad makes their nodes from one table.

Circular padding wraps around (for 1, 2, 3: pad 2 gives 2, 3, 1, 2, 3, 1, 2). PyTorch
has no node for it: it fills a new tensor by copying slices into it (the input into
the middle, then each border from the opposite side of the output), so its graph is
CopySlices nodes, as minigrad's is.

Reflect and replicate are written as a map from each output element to the input
element it copies (`_source`): forward gathers through the map, backward adds the
gradients back through it, in the output's order as PyTorch's loops do.
"""

from __future__ import annotations

import numpy as np

from ..arrays.scalars import u64
from ..autograd.graph import INPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from . import views
from .copies import copy_
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, FormulaNode, helper, on_arrays
from .tangent_formulas import Tangent

OP_FAMILY = "padding"

_GUIDE = ("Supported combinations for non-constant padding:\n"
          "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
          "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
          "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _sizes(shape: tuple) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


# -- constant padding -------------------------------------------------------------------------


class ConstantPadNdBackward0(ArrayFormulaNode):
    """constant_pad_nd(x, pad, value): the gradient with the padding cropped off."""

    tangent = Tangent("constant_pad_nd(self_t, pad, 0)", linear=True)

    saves = {"pad": VALUE}
    formulas = (Formula("self", "constant_pad_nd_backward(grad, pad)"),)
    exact = True


def _constant_pad_array(a: np.ndarray, pad: tuple, value) -> np.ndarray:
    """`a` cropped by the negative amounts, then padded with `value` by the others."""
    crop, grow = [], []
    for d in range(a.ndim):
        back = a.ndim - 1 - d  # (pad lists the last dim first)
        left, right = (pad[2 * back], pad[2 * back + 1]) if 2 * back < len(pad) else (0, 0)
        crop.append(slice(max(-left, 0), a.shape[d] - max(-right, 0)))
        grow.append((max(left, 0), max(right, 0)))
    cropped = a[tuple(crop)]
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(cropped.shape, grow, strict=True))
    out = np.full(shape, value, a.dtype) if value else np.zeros(shape, a.dtype)
    out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(cropped.shape, grow, strict=True))] = (
        cropped)
    return out


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:  # noqa: A002
    """`input` padded with `value` (cropped where an amount is negative), PyTorch's
    constant_pad_nd."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has "
                           f"{input.ndim} dimensions.")
    shape = list(input.shape)
    for i in range(len(pad) // 2):
        d, left, right = input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        # (PyTorch narrows by the negative amounts first, left then right)
        for amount in (left, right):
            if amount < 0:
                if shape[d] + amount < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
                shape[d] += amount
        new = shape[d] + max(left, 0) + max(right, 0)
        if new < 0:
            raise RuntimeError(f"The input size {input.shape[d]}, plus negative padding {left} "
                               f"and {right} resulted in a negative output size, which is "
                               f"invalid. Check dimension {d} of your input.")
    data = input._data
    fill = data.dtype.type(value) if data.dtype != np.bool_ else bool(value)
    out = Tensor._make(_constant_pad_array(data, pad, fill))
    node = record(ConstantPadNdBackward0, out, input)
    if node is not None:
        node._saved["pad"] = tuple(u64(p) for p in pad)
    return out


@helper
def constant_pad_nd_backward(grad: Tensor, pad: tuple) -> Tensor:
    """constant padding's gradient: constant padding by the negated amounts (a crop)."""
    return constant_pad_nd(grad, tuple(-p for p in pad), 0)


@on_arrays("constant_pad_nd_backward")
def _constant_pad_nd_backward(grad: np.ndarray, pad: tuple) -> np.ndarray:
    return _constant_pad_array(grad, tuple(-p for p in pad), 0)


# -- reflect and replicate: a map from each output element to its source ---------------------


def _source_1d(size: int, left: int, right: int, mode: str) -> np.ndarray:
    """For each output position along one dim, the input position it copies."""
    i = np.arange(-left, size + right)
    if mode == "reflect":
        i = np.abs(i)
        return np.where(i >= size, 2 * (size - 1) - i, i)
    return np.clip(i, 0, size - 1)


def _source(shape: tuple, padding: tuple, mode: str) -> np.ndarray:
    """For each element of the padded planes (the last len(padding) // 2 dims), the
    flat index within its input plane of the element it copies."""
    k = len(padding) // 2
    plane = shape[-k:]
    maps = [_source_1d(plane[j], padding[2 * (k - 1 - j)], padding[2 * (k - 1 - j) + 1], mode)
            for j in range(k)]
    return np.ravel_multi_index(np.ix_(*maps), plane)


def _pad_array(a: np.ndarray, padding: tuple, mode: str) -> np.ndarray:
    k = len(padding) // 2
    src = _source(a.shape, padding, mode)
    rows = a.reshape(int(np.prod(a.shape[:-k])), int(np.prod(a.shape[-k:])))
    return np.take(rows, src.ravel(), axis=1).reshape(a.shape[:-k] + src.shape)


def _pad_backward_array(grad: np.ndarray, shape: tuple, padding: tuple,
                        mode: str) -> np.ndarray:
    k = len(padding) // 2
    src = _source(shape, padding, mode)
    out = np.zeros((int(np.prod(shape[:-k])), int(np.prod(shape[-k:]))), grad.dtype)
    np.add.at(out, (slice(None), src.ravel()), grad.reshape(out.shape[0], src.size))
    return out.reshape(shape)


def _check_mirror(input: Tensor, padding: tuple, mode: str) -> None:  # noqa: A002
    """PyTorch's checks of reflection_padNd / replication_padNd, with its messages."""
    k = len(padding) // 2
    ndim, shape = input.ndim, tuple(input.shape)
    if ndim not in (k + 1, k + 2) or any(n == 0 for n in shape[1:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{_sizes(shape)}")
    if mode == "reflect":
        for j in range(k):  # (the last dim first: arguments #4, #6, #8)
            d, left, right = ndim - 1 - j, padding[2 * j], padding[2 * j + 1]
            if left >= shape[d] or right >= shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * j}: Padding size should be less than the "
                    f"corresponding input dimension, but got: padding ({left}, {right}) at "
                    f"dimension {d} of input {_sizes(shape)}")
    out = [n + padding[2 * (ndim - 1 - d)] + padding[2 * (ndim - 1 - d) + 1]
           if d >= ndim - k else n for d, n in enumerate(shape)]
    if k == 1 and out[-1] < 1:
        raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: "
                           f"{out[-1]}")
    for n in out:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{_sizes(tuple(out))}")


def _mirror_pad(mode: str, name: str, forward_node: type, input: Tensor,  # noqa: A002
                padding) -> Tensor:
    padding = tuple(int(p) for p in padding)
    _check_mirror(input, padding, mode)
    out = Tensor._make(_pad_array(input._data, padding, mode))
    node = record(forward_node, out, input)
    if node is not None:
        node._saved.update({"padding": tuple(u64(p) for p in padding),
                            "self": SavedTensor(input)})
    return out


def _mirror_pad_backward(mode: str, backward_node: type, grad_output: Tensor,
                         input: Tensor, padding) -> Tensor:  # noqa: A002
    padding = tuple(int(p) for p in padding)
    data = _pad_backward_array(grad_output._data, tuple(input.shape), padding, mode)
    out = Tensor._make(data)
    node = record(backward_node, out, grad_output, input)
    if node is not None:
        node._saved.update({"padding": tuple(u64(p) for p in padding),
                            "_self_info": (tuple(input.shape), input.dtype)})
    return out


def _make_mode(mode: str, kind: str, k: int) -> tuple:
    """The forward and backward ops of one mode and number of padded dims, and their
    node classes (ReflectionPad1DBackward0, ReflectionPad1DBackwardBackward0, ...)."""
    op = f"{kind.lower()}_pad{k}d"
    title = f"{kind}Pad{k}D"
    forward_node = type(f"{title}Backward0", (ArrayFormulaNode,), {
        "__doc__": f"{op}: each input element's gradient is the sum of its copies'.",
        "__module__": __name__,
        "tangent": Tangent(f"{op}(self_t, padding)", linear=True),
        "saves": {"padding": VALUE, "self": INPUT},
        "formulas": (Formula("self", f"{op}_backward(grad, self, padding)"),),
    })
    backward_node = type(f"{title}BackwardBackward0", (FormulaNode,), {
        "__doc__": f"{op}_backward: linear in grad_output, whose gradient is {op} of "
                   "`grad`; the input's is zero.",
        "__module__": __name__,
        "saves": {"padding": VALUE},
        "unshown": ("self_info",),
        "formulas": (Formula("grad_output", f"{op}(grad, padding)"),
                     Formula("self", "zeros_like_input(self_info)")),
    })

    def forward(input: Tensor, padding) -> Tensor:  # noqa: A002
        return _mirror_pad(mode, op, forward_node, input, padding)

    def backward(grad_output: Tensor, input: Tensor, padding) -> Tensor:  # noqa: A002
        return _mirror_pad_backward(mode, backward_node, grad_output, input, padding)

    forward.__name__, forward.__qualname__ = op, op
    forward.__doc__ = f"PyTorch's {op}: the last {k} dims padded in {mode} mode."
    backward.__name__ = backward.__qualname__ = f"{op}_backward"
    backward.__doc__ = f"{op}'s gradient of its input (PyTorch's aten op of that name)."

    def backward_array(grad: np.ndarray, input: np.ndarray, padding: tuple) -> np.ndarray:  # noqa: A002
        return _pad_backward_array(grad, input.shape, padding, mode)

    on_arrays(f"{op}_backward")(backward_array)
    declare(op, nodes=(forward_node,), aten=forward)
    declare(f"{op}_backward", nodes=(backward_node,), aten=backward)
    return forward, forward_node, backward_node


MIRRORS = {(mode, k): _make_mode(mode, kind, k)
           for mode, kind in (("reflect", "Reflection"), ("replicate", "Replication"))
           for k in (1, 2, 3)}
ReflectionPad1DBackward0, ReflectionPad1DBackwardBackward0 = MIRRORS["reflect", 1][1:]
ReflectionPad2DBackward0, ReflectionPad2DBackwardBackward0 = MIRRORS["reflect", 2][1:]
ReflectionPad3DBackward0, ReflectionPad3DBackwardBackward0 = MIRRORS["reflect", 3][1:]
ReplicationPad1DBackward0, ReplicationPad1DBackwardBackward0 = MIRRORS["replicate", 1][1:]
ReplicationPad2DBackward0, ReplicationPad2DBackwardBackward0 = MIRRORS["replicate", 2][1:]
ReplicationPad3DBackward0, ReplicationPad3DBackwardBackward0 = MIRRORS["replicate", 3][1:]


# -- circular: slices copied into a new tensor --------------------------------------------------


def _circular_pad(input: Tensor, padding: tuple) -> Tensor:  # noqa: A002
    """`input` padded circularly, as PyTorch's _pad_circular: the input (cropped by the
    negative amounts) copied into the middle of a new tensor, then, dim by dim from
    the last, the left border copied from the right end and the right border from the
    left end (corners are written more than once)."""
    k, ndim, shape = len(padding) // 2, input.ndim, tuple(input.shape)
    out_shape = list(shape)
    for i in range(k):
        dim = ndim - 1 - i
        left, right = padding[2 * i], padding[2 * i + 1]
        out_shape[dim] = shape[dim] + left + right
        if left > shape[dim] or right > shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = Tensor._make(np.zeros(out_shape, input._data.dtype))
    middle, source = out, input
    for i in range(k):
        dim = ndim - 1 - i
        left, right = padding[2 * i], padding[2 * i + 1]
        middle = views.slice_dim(middle, dim, max(left, 0), out_shape[dim] - max(right, 0), 1)
        source = views.slice_dim(source, dim, max(-left, 0), shape[dim] - max(-right, 0), 1)
    copy_(middle, source)
    for i in range(k):
        dim, n = ndim - 1 - i, out_shape[ndim - 1 - i]
        left, right = padding[2 * i], padding[2 * i + 1]
        if left > 0:
            copy_(views.slice_dim(out, dim, 0, left, 1),
                  views.slice_dim(out, dim, n - left - max(right, 0), n - max(right, 0), 1))
        if right > 0:
            copy_(views.slice_dim(out, dim, n - right, n, 1),
                  views.slice_dim(out, dim, max(left, 0), max(left, 0) + right, 1))
    return out


# -- nn.functional.pad --------------------------------------------------------------------------


def _int_list(pad) -> tuple:
    if not isinstance(pad, (tuple, list)):
        raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    return tuple(int(p) for p in pad)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad (or, with negative amounts, crop) the last dims of `input`: `pad` is
    (left, right) for the last dim, then (top, bottom) for the one before, ...;
    `mode` "constant" (with `value`, 0 by default), "reflect", "replicate" or
    "circular"."""
    amounts = _int_list(pad)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(amounts) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(amounts) > 2 * input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(amounts)} and input "
                           f"of dimension {input.ndim}")
    if mode == "constant":
        return constant_pad_nd(input, amounts, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(amounts) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(amounts)} is not supported for "
                                  f"{input.ndim}D input tensor.\n{_GUIDE}")
    if mode == "circular":
        return _circular_pad(input, amounts)
    return MIRRORS[mode, k][0](input, amounts)


declare("constant_pad_nd", nodes=(ConstantPadNdBackward0,), function=constant_pad_nd)

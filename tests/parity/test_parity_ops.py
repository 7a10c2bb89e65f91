"""Every op minigrad implements, generated from tables and compared with PyTorch.

Each case is a program (see `parity_harness`): values, gradients, `grad_fn` names,
`next_functions`, `_saved_*` attributes, versions, view bases, execution order and
error messages must all be the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import check

# -- operands -------------------------------------------------------------------------------

V = [1.5, -2.0, 3.0]
W = [0.5, 4.0, -1.25]
POS = [0.5, 2.0, 3.0]
M23 = [[1.0, 5.0, 3.0], [4.0, -2.0, 6.0]]
M32 = [[1.0, -1.0], [0.5, 2.0], [3.0, 1.5]]


def operand(c, kind: str, values=W):
    """The second operand of a binary op, in one of the forms PyTorch treats apart."""
    m = c.m
    if kind == "leaf":
        return c.leaf(values)
    if kind == "const":
        return c.leaf(values, requires_grad=False)
    if kind == "float":
        return 2.5
    if kind == "int":
        return 2
    if kind == "0d":
        return c.leaf(1.75)
    if kind == "0d_const":
        return c.leaf(1.75, requires_grad=False)
    if kind == "f32":
        return c.leaf(values, "float32")
    if kind == "i64":
        return c.keep(m.tensor([2, 3, 1]))
    if kind == "col":
        return c.leaf([[0.5], [2.0]])
    if kind == "nonleaf":
        return c.keep(c.leaf(values) * 1.5)
    raise ValueError(kind)


BINARY = {
    "add": lambda a, b: a + b,
    "radd": lambda a, b: b + a,
    "sub": lambda a, b: a - b,
    "rsub": lambda a, b: b - a,
    "mul": lambda a, b: a * b,
    "rmul": lambda a, b: b * a,
    "div": lambda a, b: a / b,
    "rdiv": lambda a, b: b / a,
    "pow": lambda a, b: a**b,
    "rpow": lambda a, b: b**a,
}
KINDS = ["leaf", "const", "float", "int", "0d", "0d_const", "f32", "i64", "col", "nonleaf"]


def _binary_case(op: str, kind: str):
    def program(c):
        a = c.leaf(POS if "pow" in op else V)
        b = operand(c, kind, POS if "pow" in op else W)
        return BINARY[op](a, b)

    return program


BINARY_CASES = {f"{op}-{kind}": _binary_case(op, kind) for op in BINARY for kind in KINDS}

NAMED_BINARY = {
    "add-alpha": lambda c: c.m.add(c.leaf(V), c.leaf(W), alpha=2),
    "sub-alpha": lambda c: c.m.sub(c.leaf(V), c.leaf(W), alpha=3),
    "add-alpha-float": lambda c: c.leaf(V).add(c.leaf(W), alpha=0.5),
    "mul-fn": lambda c: c.m.mul(c.leaf(V), c.leaf(W)),
    "div-fn": lambda c: c.m.div(c.leaf(V), 4),
    "pow-fn": lambda c: c.m.pow(c.leaf(POS), c.leaf(W)),
    "pow-0d-base": lambda c: c.leaf(2.0, requires_grad=False) ** c.leaf(V),
    "pow-0d-exp": lambda c: c.leaf(POS) ** c.leaf(2.0, requires_grad=False),
    "same-operand-mul": lambda c: (lambda a: a * a)(c.leaf(V)),
    "same-operand-add": lambda c: (lambda a: a + a)(c.leaf(V)),
    "broadcast-row-col": lambda c: c.leaf([[1.0], [2.0], [3.0]]) * c.leaf([[1.0, 2.0, 3.0, 4.0]]),
    "broadcast-0d-leaf": lambda c: c.leaf(V) + c.leaf(2.0),
    "f32-times-f64": lambda c: c.leaf(V, "float32") * c.leaf(W),
    "f32-times-f64-0d": lambda c: c.leaf(V, "float32") * c.leaf(2.0),
    "i64-plus-float": lambda c: c.keep(c.m.tensor([1, 2])) + 2.5,
    "i64-times-int": lambda c: c.keep(c.m.tensor([1, 2])) * 2,
    "i64-div-int": lambda c: c.keep(c.m.tensor([1, 2])) / 2,
    "i64-div-i64": lambda c: c.keep(c.m.tensor([1, 2])) / c.keep(c.m.tensor([2, 2])),
    "i64-pow-int": lambda c: c.keep(c.m.tensor([1, 2])) ** 2,
    "i64-pow-float": lambda c: c.keep(c.m.tensor([1, 2])) ** 0.5,
    "int-pow-i64": lambda c: 2 ** c.keep(c.m.tensor([1, 2])),
    "i64-plus-f64-0d": lambda c: c.keep(c.m.tensor([1, 2])) + c.leaf(2.0, requires_grad=False),
    "f64-0d-times-f32-0d": lambda c: c.leaf(2.0) * c.leaf(3.0, "float32"),
    "bool-plus-int": lambda c: c.keep(c.m.tensor([True, False])) + 1,
    "bool-plus-bool": lambda c: c.keep(c.m.tensor([True, False])) + c.m.tensor([True, False]),
    "bool-times-float": lambda c: c.keep(c.m.tensor([True, False])) * 2.5,
    "neg": lambda c: -c.leaf(V),
    "neg-fn": lambda c: c.m.neg(c.leaf(V)),
    "neg-i64": lambda c: -c.keep(c.m.tensor([1, -2])),
    "reciprocal": lambda c: c.leaf(V).reciprocal(),
    "pow-2": lambda c: c.leaf(V) ** 2,
    "pow-2.0": lambda c: c.leaf(V) ** 2.0,
    "pow-0.5": lambda c: c.leaf(POS) ** 0.5,
    "pow-0": lambda c: c.leaf(V) ** 0,
    "pow-1": lambda c: c.leaf(V) ** 1,
    "pow-neg1": lambda c: c.leaf(V) ** -1,
    "pow-3-method": lambda c: c.leaf(V).pow(3),
    "pow-at-zero": lambda c: c.leaf([0.0, 2.0]) ** 0.5,
    "pow-x-x-at-zero": lambda c: (lambda x: x**x)(c.leaf([0.0, 2.0])),
    "rpow-zero-base": lambda c: 0.0 ** c.leaf([0.5, 2.0]),
    "pow-cube-root-negative": lambda c: c.leaf([-8.0, 8.0]) ** (1 / 3),
    "i64-pow-negative": lambda c: c.keep(c.m.tensor([1, 2])) ** -1,
    "bool-minus-bool": lambda c: c.keep(c.m.tensor([True])) - c.m.tensor([True]),
    "neg-bool": lambda c: -c.keep(c.m.tensor([True])),
    "broadcast-error-3-2": lambda c: c.leaf(V) + c.leaf([1.0, 2.0]),
    "broadcast-error-23-32": lambda c: c.leaf(M23) * c.leaf(M32),
    "broadcast-error-23-4": lambda c: c.leaf(M23) + c.leaf([1.0, 2.0, 3.0, 4.0]),
}

UNARY = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "abs"]


def _unary_case(name: str, style: str, dtype: str):
    def program(c):
        x = c.leaf(POS if name in ("log", "sqrt") else V, dtype)
        return getattr(x, name)() if style == "method" else getattr(c.m, name)(x)

    return program


UNARY_CASES = {
    f"{name}-{style}-{dtype}": _unary_case(name, style, dtype)
    for name in UNARY
    for style in ("method", "function")
    for dtype in ("float64", "float32")
}

UNARY_SPECIAL = {
    "abs-at-zero": lambda c: c.leaf([0.0, -1.0, 2.0]).abs(),
    "relu-at-zero": lambda c: c.leaf([0.0, -1.0, 2.0]).relu(),
    "sqrt-at-zero": lambda c: c.leaf([0.0, 4.0]).sqrt(),
    "log-at-zero-and-negative": lambda c: c.leaf([-1.0, 0.0, 2.0]).log(),
    "abs-builtin": lambda c: abs(c.leaf(V)),
    "exp-i64": lambda c: c.keep(c.m.tensor([1, 2])).exp(),
    "sqrt-i64": lambda c: c.keep(c.m.tensor([1, 2])).sqrt(),
    "sigmoid-i64": lambda c: c.keep(c.m.tensor([1, 2])).sigmoid(),
    "abs-i64": lambda c: c.keep(c.m.tensor([1, -2])).abs(),
    "relu-i64": lambda c: c.keep(c.m.tensor([1, -2])).relu(),
    "clamp-min-int": lambda c: c.leaf(V).clamp(min=0),
    "clamp-min-float": lambda c: c.leaf(V).clamp(min=0.0),
    "clamp-max-int": lambda c: c.leaf(V).clamp(max=1),
    "clamp-both": lambda c: c.leaf(V).clamp(-1, 1),
    "clamp-fn": lambda c: c.m.clamp(c.leaf(V), -1.5, 2.5),
    "clip-fn": lambda c: c.m.clip(c.leaf(V), 0, 1),
    "clamp-at-bounds": lambda c: c.leaf([0.0, -1.0, 2.0]).clamp(0, 2),
    "clamp-i64-float-bounds": lambda c: c.keep(c.m.tensor([1, 2])).clamp(0, 1.5),
    "clamp-no-bounds": lambda c: c.leaf(V).clamp(),
}

REDUCTIONS = {
    "sum": lambda c: c.leaf(M23).sum(),
    "sum-0": lambda c: c.leaf(M23).sum(0),
    "sum-dim1": lambda c: c.leaf(M23).sum(dim=1),
    "sum-keepdim": lambda c: c.leaf(M23).sum(1, keepdim=True),
    "sum-tuple": lambda c: c.leaf(M23).sum((0, 1)),
    "sum-neg": lambda c: c.leaf(M23).sum(-1),
    "sum-fn": lambda c: c.m.sum(c.leaf(M23)),
    "sum-f32": lambda c: c.leaf(M23, "float32").sum(),
    "sum-0d": lambda c: c.leaf(2.0).sum(),
    "sum-i64": lambda c: c.keep(c.m.tensor([1, 2])).sum(),
    "sum-bool": lambda c: c.keep(c.m.tensor([True, False, True])).sum(),
    "sum-dim-out-of-range": lambda c: c.leaf(V).sum(1),
    "mean": lambda c: c.leaf(M23).mean(),
    "mean-0": lambda c: c.leaf(M23).mean(0),
    "mean-keepdim": lambda c: c.leaf(M23).mean(1, keepdim=True),
    "mean-neg-tuple": lambda c: c.leaf(M23).mean((-1, 0)),
    "mean-i64": lambda c: c.keep(c.m.tensor([1, 2])).mean(),
    "max": lambda c: c.leaf(M23).max(),
    "min": lambda c: c.leaf(M23).min(),
    "max-fn": lambda c: c.m.max(c.leaf(M23)),
    "max-ties": lambda c: c.leaf([2.0, 2.0, 1.0]).max(),
    "max-dim": lambda c: c.leaf(M23).max(dim=1),
    "max-dim-values": lambda c: c.leaf(M23).max(dim=1).values,
    "max-dim-indices": lambda c: c.leaf(M23).max(1)[1],
    "max-dim-keepdim": lambda c: c.leaf(M23).max(1, keepdim=True),
    "max-dim-ties": lambda c: c.leaf([2.0, 2.0, 1.0]).max(0),
    "min-dim": lambda c: c.leaf(M23).min(0),
    "min-dim-neg": lambda c: c.leaf(M23).min(-1),
    "max-empty": lambda c: c.leaf([]).max(),
    "max-i64": lambda c: c.keep(c.m.tensor([1, 2])).max(),
    "argmax": lambda c: c.leaf(M23).argmax(),
    "argmax-dim": lambda c: c.leaf(M23).argmax(1),
    "argmin-dim-keepdim": lambda c: c.leaf(M23).argmin(0, keepdim=True),
}

S131 = [[[1.0], [2.0], [3.0]]]
V4 = [1.0, 2.0, 3.0, 4.0]


def _nonleaf_t(c):
    """A non-contiguous non-leaf (3, 2) tensor."""
    return c.keep(c.leaf(M23).t())


VIEWS = {
    "view": lambda c: c.leaf(M23).view(3, 2),
    "view-minus1": lambda c: c.leaf(M23).view(-1),
    "view-tuple": lambda c: c.leaf(M23).view((6,)),
    "view-same": lambda c: c.leaf(M23).view(2, 3),
    "view-as": lambda c: c.leaf(M23).view_as(c.leaf(M32)),
    "reshape": lambda c: c.leaf(M23).reshape(3, 2),
    "reshape-same": lambda c: c.leaf(M23).reshape(2, 3),
    "reshape-noncontig": lambda c: _nonleaf_t(c).reshape(6),
    "reshape-noncontig-same-shape": lambda c: _nonleaf_t(c).reshape(3, 2),
    "reshape-fn": lambda c: c.m.reshape(c.leaf(M23), (3, 2)),
    "reshape-as": lambda c: c.leaf(M23).reshape_as(c.leaf(M32)),
    "contiguous-noncontig": lambda c: _nonleaf_t(c).contiguous(),
    "contiguous-same": lambda c: c.leaf(M23).contiguous(),
    "transpose": lambda c: c.leaf(M23).transpose(0, 1),
    "transpose-neg": lambda c: c.leaf(M23).transpose(-1, 0),
    "swapaxes": lambda c: c.leaf(M23).swapaxes(0, 1),
    "t": lambda c: c.leaf(M23).t(),
    "t-1d": lambda c: c.leaf(V).t(),
    "T": lambda c: c.leaf(M23).T,
    "mT": lambda c: c.leaf(M23).mT,
    "permute": lambda c: c.leaf(M23).permute(1, 0),
    "permute-3d": lambda c: c.leaf(S131).permute(2, 0, 1),
    "permute-tuple": lambda c: c.leaf(S131).permute((1, 2, 0)),
    "unsqueeze": lambda c: c.leaf(M23).unsqueeze(0),
    "unsqueeze-neg": lambda c: c.leaf(M23).unsqueeze(-1),
    "squeeze": lambda c: c.leaf(S131).squeeze(),
    "squeeze-0": lambda c: c.leaf(S131).squeeze(0),
    "squeeze-noop": lambda c: c.leaf(S131).squeeze(1),
    "squeeze-none-to-remove": lambda c: c.leaf(M23).squeeze(),
    "flatten": lambda c: c.leaf(M23).flatten(),
    "flatten-1": lambda c: c.leaf(S131).flatten(1),
    "flatten-1d": lambda c: c.leaf(V).flatten(),
    "flatten-noncontig": lambda c: _nonleaf_t(c).flatten(),
    "expand": lambda c: c.leaf(M23).expand(2, 2, 3),
    "expand-minus1": lambda c: c.leaf([[1.0], [2.0]]).expand(-1, 3),
    "expand-unsqueezed": lambda c: c.leaf(V4).unsqueeze(1).expand(4, 3),
    "expand-as": lambda c: c.leaf(M23).expand_as(c.leaf(M23)),
    "narrow": lambda c: c.leaf(M23).narrow(1, 0, 2),
    "select": lambda c: c.leaf(M23).select(1, 0),
    "clone": lambda c: c.leaf(M23).clone(),
    "detach": lambda c: c.leaf(M23).detach(),
    "data": lambda c: c.leaf(M23).data,
    "double": lambda c: c.leaf(M23, "float32").double(),
    "float-same": lambda c: c.leaf(M23, "float32").float(),
    "to-f32": lambda c: c.leaf(M23).to(c.m.float32),
    "to-same": lambda c: c.leaf(M23).to(c.m.float64),
    "long": lambda c: c.leaf(M23).long(),
    "float-of-bool": lambda c: (c.leaf(V) > 2).float(),
    "compare": lambda c: (c.leaf(V) > 1, c.leaf(W) == c.leaf(W), c.leaf(V).eq(2)),
    "unbind": lambda c: c.leaf(M23).unbind(),
    "unbind-1": lambda c: c.leaf(M23).unbind(1),
    "unbind-fn-1d": lambda c: c.m.unbind(c.leaf(V4)),
    "unbind-iter": lambda c: list(c.leaf(M23)),
    "unbind-used": lambda c: (lambda p: p[0] * p[1])(c.leaf(M23).unbind(1)),
    "unbind-one-used": lambda c: c.leaf(M23).unbind()[1] * 2,
    "split": lambda c: c.leaf(M23).split(1),
    "split-dim": lambda c: c.leaf(M23).split(2, dim=1),
    "split-sizes": lambda c: c.leaf(M23).split([1, 2], dim=1),
    "split-used": lambda c: (lambda p: p[0].sum() * p[1].sum())(c.leaf(M23).split(2, 1)),
    "chunk": lambda c: c.leaf(M23).chunk(2),
    "chunk-dim": lambda c: c.leaf(M23).chunk(2, 1),
    "chunk-uneven": lambda c: c.leaf(V4).chunk(3),
    "chunk-used": lambda c: c.leaf(M23).chunk(3, 1)[2].exp(),
    "view-error": lambda c: c.leaf(M23).view(4),
    "view-error-minus1": lambda c: c.leaf(M23).view(-1, 4),
    "view-error-two-minus1": lambda c: c.leaf(M23).view(-1, -1),
    "view-noncontig-error": lambda c: _nonleaf_t(c).view(6),
    "reshape-error": lambda c: c.leaf(M23).reshape(4),
    "t-3d-error": lambda c: c.leaf([S131]).t(),
    "mT-1d-error": lambda c: c.leaf(V).mT,
    "transpose-error": lambda c: c.leaf(M23).transpose(0, 2),
    "squeeze-error": lambda c: c.leaf(M23).squeeze(2),
    "unsqueeze-error": lambda c: c.leaf(M23).unsqueeze(3),
    "permute-length-error": lambda c: c.leaf(M23).permute(0),
    "permute-duplicate-error": lambda c: c.leaf(M23).permute(0, 0),
    "expand-error": lambda c: c.leaf(M23).expand(3, 3),
    "unbind-0d-error": lambda c: c.leaf(1.0).unbind(),
    "size-error": lambda c: c.leaf(M23).size(2),
}

INDEXING = {
    "int": lambda c: c.leaf(M23)[0],
    "neg-int": lambda c: c.leaf(M23)[-1],
    "int-int": lambda c: c.leaf(M23)[0, 1],
    "colon-int": lambda c: c.leaf(M23)[:, 1],
    "slice": lambda c: c.leaf(M23)[1:],
    "full-slice": lambda c: c.leaf(M23)[:],
    "step": lambda c: c.leaf(V4)[::2],
    "start-stop": lambda c: c.leaf(V4)[1:3],
    "negative-start": lambda c: c.leaf(V4)[-3:],
    "clipped-slice": lambda c: c.leaf(V)[-10:2],
    "empty-slice": lambda c: c.leaf(V)[5:],
    "list": lambda c: c.leaf(V4)[[0, 2]],
    "list-repeated": lambda c: c.leaf(V4)[[0, 0, 2]],
    "tensor-index": lambda c: c.leaf(V4)[c.m.tensor([0, 2])],
    "two-lists": lambda c: c.leaf(M23)[[0, 1], [1, 2]],
    "mask": lambda c: (lambda v: v[v > 2])(c.leaf(V4)),
    "mask-2d": lambda c: (lambda x: x[x > 2])(c.leaf(M23)),
    "mask-all-false": lambda c: (lambda v: v[v > 10])(c.leaf(V4)),
    "ellipsis": lambda c: c.leaf(M23)[...],
    # Inside a tuple a slice that takes a whole dim is skipped; nothing left is an alias.
    "tuple-whole-slices": lambda c: c.leaf(M23)[:, 0:3],
    "tuple-one-whole-slice": lambda c: c.leaf(M23)[(slice(None),)],
    "tuple-whole-then-slice": lambda c: c.leaf(M23)[0:2, 1:],
    "ellipsis-whole-slice": lambda c: c.leaf(M23)[..., :5],
    "whole-slice-then-list": lambda c: c.leaf(M23)[0:2, [0, 2]],
    "empty-tuple": lambda c: c.leaf(M23)[()],
    "ellipsis-int": lambda c: c.leaf(M23)[..., 1],
    "none": lambda c: c.leaf(M23)[None],
    "colon-none": lambda c: c.leaf(M23)[:, None],
    "int-slice": lambda c: c.leaf(M23)[0, 1:3],
    "chained": lambda c: c.leaf(M23)[0][1:3],
    "slice-list": lambda c: c.leaf(M23)[1:, [0, 2]],
    "0d-tensor-index": lambda c: c.leaf(V4)[c.m.tensor(1)],
    "view-of-view-base": lambda c: c.leaf(M23)[1:][0],
    "out-of-range": lambda c: c.leaf(V)[3],
    "out-of-range-2d": lambda c: c.leaf(M23)[0, 5],
    "too-many": lambda c: c.leaf(V)[0, 0],
    "mask-shape-error": lambda c: c.leaf(V)[c.m.tensor([True, False])],
    "list-out-of-range": lambda c: c.leaf(V)[[5]],
    "negative-step": lambda c: c.leaf(V)[::-1],
    "zero-step": lambda c: c.leaf(V)[::0],
    # A mask takes one entry of `_saved_indices` for all the dims it covers.
    "mask-2d-then-list": lambda c: c.leaf(T234)[c.m.tensor(MASK23), [0, 3, 1, 1]],
    "list-colon-mask": lambda c: c.leaf(T234)[[1, 0], :, c.m.tensor([True, False, True, False])],
    "mask-2d-colon-list": lambda c: c.leaf(T234)[c.m.tensor([[True, False]] * 2), :, [0, 3]],
    "setitem-mask-2d-then-list": lambda c: _put(c, (c.m.tensor(MASK23), [0, 3, 1, 1]),
                                                c.leaf([1.0, 2.0, 3.0, 4.0])),
    "setitem-list-colon-mask": lambda c: _put(
        c, ([1, 0], slice(None), c.m.tensor([True, False, True, False])), c.leaf([[5.0], [6.0]])),
    # An empty result reads no index: one out of range is no error.
    "empty-out-of-range": lambda c: c.leaf(M23)[:, :0][c.m.tensor([5, 9])],
}

T234 = [[[float(i * 12 + j * 4 + k) for k in range(4)] for j in range(3)] for i in range(2)]
MASK23 = [[True, False, True], [False, True, True]]


def _put(c, index: tuple, values):
    """`u[index] = values` on a non-leaf copy of a (2, 3, 4) leaf."""
    u = c.keep(c.leaf(T234) * 2)
    u[index] = values
    return u


# The ops PyTorch gives no derivative record one node class, NotImplemented, whose
# edges lead to the inputs that require grad only; backward through it raises.
NO_DERIVATIVE = {
    "floor-divide": lambda c: c.leaf(V4) // 2,
    "floor-divide-tensors": lambda c: c.m.floor_divide(c.leaf(V4, requires_grad=False),
                                                       c.leaf([2.0, 3.0, 1.0, 2.0])),
    "floor-divide-inplace": lambda c: c.keep(c.leaf(V4) * 1.0).floor_divide_(2),
    "heaviside": lambda c: c.m.heaviside(c.leaf(V4), c.leaf([0.5], requires_grad=False)),
    "heaviside-values-only": lambda c: c.m.heaviside(c.leaf(V4, requires_grad=False),
                                                     c.leaf([0.5])),
    "heaviside-both": lambda c: c.m.heaviside(c.leaf(V4), c.leaf([0.5])),
    "heaviside-inplace-values-only": lambda c: c.keep(c.leaf(V4, requires_grad=False) * 1.0)
    .heaviside_(c.leaf([0.5])),
}

MATMUL = {
    "mm": lambda c: c.leaf(M23) @ c.leaf(M32),
    "mm-left-only": lambda c: c.leaf(M23) @ c.leaf(M32, requires_grad=False),
    "mm-right-only": lambda c: c.leaf(M23, requires_grad=False) @ c.leaf(M32),
    "mm-fn": lambda c: c.m.mm(c.leaf(M23), c.leaf(M32)),
    "matmul-fn": lambda c: c.m.matmul(c.leaf(M23), c.leaf(M32)),
    "mm-f32": lambda c: c.leaf(M23, "float32") @ c.leaf(M32, "float32"),
    "mm-transposed": lambda c: c.leaf(M32).t() @ c.leaf(M32),
    "mv": lambda c: c.leaf(M23) @ c.leaf(V),
    "mv-matrix-const": lambda c: c.leaf(M32, requires_grad=False) @ c.leaf([1.0, 2.0]),
    "mv-detached": lambda c: c.leaf(M23).detach() @ c.leaf(V),
    "vm": lambda c: c.leaf([1.0, 2.0]) @ c.leaf(M23),
    "dot": lambda c: c.leaf(V) @ c.leaf(W),
    "dot-same": lambda c: (lambda v: v @ v)(c.leaf(V)),
    "dot-const": lambda c: c.leaf(V) @ c.leaf(W, requires_grad=False),
    "i64-dot": lambda c: c.keep(c.m.tensor([1, 2])) @ c.m.tensor([3, 4]),
    "mm-error": lambda c: c.leaf(M23) @ c.leaf(M23),
    "mv-error": lambda c: c.leaf(M23) @ c.leaf([1.0, 2.0]),
    "vm-error": lambda c: c.leaf([1.0, 2.0]) @ c.leaf(M32),
    "dot-error": lambda c: c.leaf(V) @ c.leaf([1.0, 2.0]),
    "matmul-0d-error": lambda c: c.leaf(1.0) @ c.leaf(V),
    # a view made under no_grad of a leaf requires grad but has no edge: its strides
    # are saved all the same (found by the random programs)
    "mm-of-a-no-grad-view": lambda c: _no_grad_view(c, c.leaf(M23)) @ c.leaf(M32),
    "linear-of-a-no-grad-view": lambda c: c.m.nn.functional.linear(
        _no_grad_view(c, c.leaf(M23)), c.leaf(M23), c.leaf([1.0, -1.0])),
}


def _no_grad_view(c, t):
    with c.m.no_grad():
        return c.keep(t.view(t.shape))


CASES = {}
for group, table in [("binary", BINARY_CASES), ("binary", NAMED_BINARY), ("unary", UNARY_CASES),
                     ("unary", UNARY_SPECIAL), ("reduce", REDUCTIONS), ("view", VIEWS),
                     ("index", INDEXING), ("matmul", MATMUL), ("no-derivative", NO_DERIVATIVE)]:
    for name, program in table.items():
        CASES[f"{group}:{name}"] = program


@pytest.mark.parametrize("name", list(CASES))
def test_op_matches_torch(torch, name):
    check(torch, CASES[name])


# -- edge cases of dtypes, operands and special values -------------------------------------

INF, NAN = float("inf"), float("nan")
EDGES = [-INF, INF, -0.0, 0.0, -1.0, 4.0, NAN]


def _power_of_edges(p):
    return lambda c: c.leaf(EDGES) ** p


def _inplace_into_f32(op):
    def program(c):
        a = c.keep(c.leaf(V, "float32") * 1.0)
        op(a, c.leaf(W))
        return a

    return program


EDGE_CASES = {
    # powers: a negative or zero number base, integer powers, special exponents
    "rpow-negative-base": lambda c: (-2.0) ** c.leaf([1.0, 2.0]),
    "rpow-negative-base-f32": lambda c: (-2.0) ** c.leaf([0.0, 2.5], "float32"),
    "rpow-zero-base": lambda c: 0.0 ** c.leaf([-1.0, 0.0, 2.0, NAN]),
    "rpow-minus-zero-base": lambda c: (-0.0) ** c.leaf([-1.0, 0.0, 2.0]),
    "rpow-int-zero-base": lambda c: 0 ** c.leaf([-1.0, 0.0, 2.0], "float32"),
    "pow-tensor-zero-base": lambda c: c.leaf([0.0, 0.0, 0.0, -2.0])
    ** c.leaf([-1.0, 0.0, 2.0, 0.5]),
    "i64-pow-negative-i64": lambda c: c.m.tensor([0, 0, 2, 1, -1])
    ** c.m.tensor([-1, -2, -1, -5, -3]),
    "int-zero-rpow-negative-i64": lambda c: 0 ** c.m.tensor([-1, 2]),
    "i64-pow-huge-exponent": lambda c: c.m.tensor([2, 3]) ** 2**62,
    "bool-pow-bool": lambda c: c.m.tensor([True, False]) ** c.m.tensor([True, False]),
    "bool-rpow-bool": lambda c: True ** c.m.tensor([True, False]),
    "bool-pow-true": lambda c: c.m.tensor([True, False]) ** True,
    **{f"pow-{p}-edges": _power_of_edges(p) for p in (0.5, -0.5, 1.5, 2.5, -1, 2, 3, -2, 1 / 3)},
    "pow-0.5-edges-f32": lambda c: c.leaf(EDGES, "float32") ** 0.5,
    "pow_-0.5-edges": lambda c: (lambda a: a.pow_(0.5))(c.keep(c.leaf(EDGES) * 1.0)),
    # in-place into float32 from float64; category checks
    "f32-add_-f64": _inplace_into_f32(lambda a, b: a.add_(b)),
    "f32-add_-f64-alpha": _inplace_into_f32(lambda a, b: a.add_(b, alpha=2)),
    "f32-sub_-f64": _inplace_into_f32(lambda a, b: a.sub_(b)),
    "f32-mul_-f64": _inplace_into_f32(lambda a, b: a.mul_(b)),
    "f32-div_-f64": _inplace_into_f32(lambda a, b: a.div_(b)),
    "f32-iadd-f64": _inplace_into_f32(lambda a, b: a.__iadd__(b)),
    "i64-add_-float": lambda c: c.m.tensor([1, 2]).add_(1.5),
    "i64-mul_-f64": lambda c: c.m.tensor([1, 2]).mul_(c.m.tensor([1.0, 2.0], dtype=c.m.float64)),
    "bool-add_-int": lambda c: c.m.tensor([True]).add_(1),
    "bool-div_": lambda c: c.m.tensor([True]).div_(2),
    # subtraction with a bool operand
    "f32-minus-true": lambda c: c.leaf(V) - True,
    "f64-minus-bool-tensor": lambda c: c.leaf([1.0, 2.0]) - c.m.tensor([True, False]),
    "bool-minus-int": lambda c: c.m.tensor([True, False]) - 1,
    "bool-minus-i64": lambda c: c.m.tensor([True, False]) - c.m.tensor([1, 2]),
    "bool-sub_-true": lambda c: c.m.tensor([True, False]).sub_(True),
    "f64-sub_-true": lambda c: c.keep(c.leaf(V) * 1.0).sub_(True),
    "true-minus-f64": lambda c: True - c.leaf(V),
    "int-minus-bool": lambda c: 1 - c.m.tensor([True, False]),
    "true-minus-bool": lambda c: True - c.m.tensor([True, False]),
    "sub-fn-int-bool": lambda c: c.m.sub(2, c.m.tensor([True, False])),
    # alpha
    "i64-add-float-alpha": lambda c: c.m.tensor([1, 2]).add(c.m.tensor([1, 2]), alpha=1.5),
    "i64-sub-float-alpha": lambda c: c.m.tensor([1, 2]).sub(1, alpha=1.0),
    "i64-add_-float-alpha": lambda c: c.m.tensor([1, 2]).add_(c.m.tensor([1, 2]), alpha=1.5),
    "bool-add-float-alpha": lambda c: c.m.tensor([True]).add(c.m.tensor([True]), alpha=1.5),
    "bool-add-bool-alpha": lambda c: c.m.tensor([True, False]).add(c.m.tensor([True, True]),
                                                                    alpha=True),
    "f64-add-bool-alpha": lambda c: c.leaf(V).add(c.leaf(W), alpha=True),
    "f64-sub-bool-alpha": lambda c: c.leaf(V).sub(1, alpha=True),
    "i64-add-float-tensor-alpha": lambda c: c.m.tensor([1, 2]).add(c.leaf([1.0, 2.0]), alpha=1.5),
    # function forms with a number first
    "add-fn-number-first": lambda c: c.m.add(2, c.leaf(V)),
    "add-fn-float-first-i64": lambda c: c.m.add(2.5, c.m.tensor([1, 2])),
    "add-fn-number-first-alpha": lambda c: c.m.add(2, c.leaf(V), alpha=2),
    "sub-fn-number-first": lambda c: c.m.sub(2, c.leaf(V)),
    "mul-fn-number-first": lambda c: c.m.mul(2, c.leaf(V, "float32")),
    "mul-fn-float-first": lambda c: c.m.mul(2.5, c.leaf(V)),
    "div-fn-number-first": lambda c: c.m.div(2, c.leaf(V)),
    "div-fn-number-first-i64": lambda c: c.m.div(2, c.m.tensor([1, 2])),
    "pow-fn-number-first": lambda c: c.m.pow(2, c.leaf(V)),
    "add-fn-two-numbers": lambda c: c.m.add(2, 3),
    # two floats: the first, wrapped, promotes as a Python number (the default dtype)
    "add-fn-two-floats": lambda c: c.m.add(2.0, 0.5),
    "sub-fn-two-floats": lambda c: c.m.sub(2.0, 0.5),
    "mul-fn-two-floats": lambda c: c.m.mul(2.0, 0.5),
    "div-fn-two-floats": lambda c: c.m.div(2.0, 0.5),
    # rounded division
    "div-trunc": lambda c: c.leaf([5.0, -7.0, 0.5]).div(2, rounding_mode="trunc"),
    "div-floor": lambda c: c.leaf([5.0, -7.0, 0.5]).div(c.leaf([2.0, 2.0, -0.25]),
                                                        rounding_mode="floor"),
    "div-floor-by-zero": lambda c: c.leaf([5.0, -7.0, 0.0]).div(0, rounding_mode="floor"),
    "i64-div-trunc": lambda c: c.m.tensor([5, -7, 7, -8]).div(c.m.tensor([2, 2, -2, -3]),
                                                              rounding_mode="trunc"),
    "i64-div-floor": lambda c: c.m.tensor([5, -7, 7, -8]).div(2, rounding_mode="floor"),
    "i64-div-floor-by-zero": lambda c: c.m.tensor([5, -7]).div(0, rounding_mode="floor"),
    "div-bad-rounding-mode": lambda c: c.leaf(V).div(2, rounding_mode="round"),
    "div-fn-rounding-mode": lambda c: c.m.div(c.leaf(V), 2, rounding_mode="floor"),
    # big Python ints, numpy operands
    "i64-plus-2**63": lambda c: c.m.tensor([1, 2]) + 2**63,
    "i64-add_-2**63": lambda c: c.m.tensor([1, 2]).add_(2**63),
    "i64-times-2**64": lambda c: c.m.tensor([1, 2]) * 2**64,
    "f64-plus-2**70": lambda c: c.leaf(V) + 2**70,
    "f64-plus-below-int64": lambda c: c.leaf(V) + (-(2**63) - 1),
    "f64-plus-2**63": lambda c: c.leaf(V) + 2**63,
    # (PyTorch lets numpy compute these, which refuses a tensor that requires grad)
    "f64-plus-f64-ndarray": lambda c: c.leaf(V, requires_grad=False) + np.array(W),
    "f32-plus-f32-ndarray": lambda c: c.leaf(V, "float32", False) + np.array(W, np.float32),
    "f64-times-f64-ndarray": lambda c: c.leaf(V, requires_grad=False) * np.array(W),
    # bitwise operators
    "i64-and-i64": lambda c: c.m.tensor([12, 10, -1]) & c.m.tensor([10, 6, 5]),
    "i64-or-i64": lambda c: c.m.tensor([12, 10]) | c.m.tensor([10, 6]),
    "i64-xor-i64": lambda c: c.m.tensor([12, 10]) ^ c.m.tensor([10, 6]),
    "bool-and-i64": lambda c: c.m.tensor([True, False]) & c.m.tensor([10, 6]),
    "bool-or-i64-0d": lambda c: c.m.tensor([True, False]) | c.m.tensor(5),
    "bool-xor-bool": lambda c: c.m.tensor([True, False]) ^ c.m.tensor([True, True]),
    "bool-and-int": lambda c: c.m.tensor([True, False]) & 3,
    "i64-and-true": lambda c: c.m.tensor([12, 11]) & True,
    "i64-and-negative-int": lambda c: c.m.tensor([-1, 2]) & -4,
    "i64-and-2**63": lambda c: c.m.tensor([5]) & 2**63,
    "int-rand-i64": lambda c: 3 & c.m.tensor([12, 10]),
    "true-ror-i64": lambda c: True | c.m.tensor([12, 10]),
    "false-rxor-bool": lambda c: False ^ c.m.tensor([True, False]),
    "bitwise-and-fn": lambda c: c.m.bitwise_and(c.m.tensor([12, 10]), c.m.tensor([10, 6])),
    "bitwise-or-method": lambda c: c.m.tensor([12, 10]).bitwise_or(3),
    "i64-and-float": lambda c: c.m.tensor([12, 10]) & 2.5,
    "float-rand-bool": lambda c: 2.5 & c.m.tensor([True, False]),
    "f32-and-f32": lambda c: c.leaf(V, "float32", False) & c.leaf(W, "float32", False),
    "f64-or-int": lambda c: c.leaf(V, requires_grad=False) | 1,
    "i64-or-f64": lambda c: c.m.tensor([1, 2]) | c.leaf([1.0, 2.0], requires_grad=False),
    "i64-xor-broadcast-error": lambda c: c.m.tensor([1, 2]) ^ c.m.tensor([1, 2, 3]),
    # in-place bitwise operators: the same tensor, one version later, its dtype kept
    "i64-iand-int": lambda c: c.m.tensor([12, 10]).__iand__(6),
    "i64-ior-i64": lambda c: c.m.tensor([12, 10]).__ior__(c.m.tensor([1, 1])),
    "i64-ixor-true": lambda c: c.m.tensor([12, 10]).__ixor__(True),
    "i64-bitwise-and_-method": lambda c: c.m.tensor([12, 10]).bitwise_and_(3),
    "bool-ior-bool": lambda c: c.m.tensor([True, False]).bitwise_or_(c.m.tensor([False, False])),
    "i64-iand-returns-self": lambda c: _same_after(c.m.tensor([12, 10]), lambda t: t.__iand__(6)),
    "view-ixor-bumps-base": lambda c: _view_ixor(c),
    "bool-iand-i64-error": lambda c: c.m.tensor([True, False]).__iand__(c.m.tensor([1, 1])),
    "i64-iand-float-error": lambda c: c.m.tensor([1, 2]).__iand__(1.5),
    "f32-iand-error": lambda c: c.leaf(V, "float32", False).__iand__(1),
    "leaf-iand-error": lambda c: c.leaf(V).__iand__(1),
    "i64-iand-broadcast-error": lambda c: c.m.tensor([1, 2]).__iand__(c.m.tensor([[1, 2], [3, 4]])),
    "i64-iand-str": lambda c: c.m.tensor([1, 2]).__iand__("x"),
    "add_-size-mismatch": lambda c: c.leaf(V, requires_grad=False).add_(c.leaf([1.0, 2.0])),
    "mul_-broadcast-beyond": lambda c: c.leaf(V, requires_grad=False).mul_(c.leaf([V, V])),
    "invert-i64": lambda c: ~c.m.tensor([1, -2]),
    "invert-bool": lambda c: ~c.m.tensor([True, False]),
    "invert-f32": lambda c: ~c.leaf(V, "float32", False),
    "invert-f64": lambda c: ~c.leaf(V, requires_grad=False),
    # bool operands PyTorch refuses
    "positive-bool": lambda c: +c.m.tensor([True, False]),
    "positive-i64": lambda c: +c.m.tensor([1, 2]),
    "bool-mm": lambda c: c.m.tensor([[True]]) @ c.m.tensor([[True]]),
    "bool-mm-fn": lambda c: c.m.mm(c.m.tensor([[True]]), c.m.tensor([[True]])),
    "bool-mv": lambda c: c.m.tensor([[True]]) @ c.m.tensor([True]),
    "bool-vm": lambda c: c.m.tensor([True]) @ c.m.tensor([[True]]),
    "bool-dot": lambda c: c.m.dot(c.m.tensor([True]), c.m.tensor([True])),
    # dot and mv messages
    "dot-f32-f64": lambda c: c.m.dot(c.leaf([1.0], "float32"), c.leaf([1.0])),
    "dot-dtype-before-size": lambda c: c.m.dot(c.leaf([1.0], "float32"), c.leaf([1.0, 2.0])),
    "dot-i64-f32": lambda c: c.m.tensor([1]) @ c.leaf([1.0], "float32"),
    "mv-f32-f64": lambda c: c.m.mv(c.leaf([[1.0]], "float32"), c.leaf([1.0])),
    "mv-i64-f32": lambda c: c.m.mv(c.m.tensor([[1]]), c.leaf([1.0], "float32")),
    "mv-size-before-dtype": lambda c: c.m.mv(c.leaf([[1.0]]), c.leaf([1.0, 2.0], "float32")),
    "mv-vector-first": lambda c: c.m.mv(c.leaf([1.0]), c.leaf([1.0])),
    "mv-matrix-second": lambda c: c.m.mv(c.leaf([[1.0]]), c.leaf([[1.0]])),
    "mv-0d-second": lambda c: c.m.mv(c.leaf([[1.0]]), c.leaf(1.0)),
    "mv-0d-first": lambda c: c.m.mv(c.leaf(1.0), c.leaf([1.0])),
    # strides saved by mm with an empty operand
    "mm-empty-inner": lambda c: c.leaf([[], [], []]) @ c.m.ones(0, 2, dtype=c.m.float64,
                                                               requires_grad=True),
    "mm-empty-rows": lambda c: c.m.ones(0, 3, dtype=c.m.float64, requires_grad=True) @ c.leaf(M32),
    "mm-empty-cols": lambda c: c.leaf(M23) @ c.m.ones(3, 0, dtype=c.m.float64, requires_grad=True),
}


def _same_after(t, op):
    """op(t), whether it returned t itself, and t's version."""
    result = op(t)
    return result, result is t, t._version


def _view_ixor(c):
    base = c.m.tensor([1, 2, 3])
    view = base[:2]
    view ^= 1
    return base, base._version, view._version


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_case_matches_torch(torch, name):
    check(torch, EDGE_CASES[name])


def _outcome(m, fn):
    """What `fn(m)` gives, comparable across the two libraries."""
    from parity_harness import error_of

    try:
        result = fn(m)
    except Exception as exc:  # the same failure is the behaviour compared
        return error_of(exc)
    if isinstance(result, m.Tensor):
        return ("tensor", str(result.dtype).split(".")[-1], result.tolist())
    return ("value", type(result).__name__, result)


PYTHON_PROTOCOL = {
    "eq-none": lambda m: m.tensor([1.0, 2.0]) == None,  # noqa: E711 - what is tested
    "ne-none": lambda m: m.tensor([1.0, 2.0]) != None,  # noqa: E711
    "none-eq": lambda m: None == m.tensor([1.0, 2.0]),  # noqa: E711
    "eq-str": lambda m: m.tensor([1.0, 2.0]) == "a",
    "ne-str": lambda m: m.tensor([1.0, 2.0]) != "a",
    "eq-list": lambda m: m.tensor([1.0, 2.0]) == [1.0, 2.0],
    "eq-object": lambda m: m.tensor([1.0, 2.0]) == object(),
    "in-list-of-none": lambda m: m.tensor([1.0, 2.0]) in [None],
    "lt-str": lambda m: m.tensor([1.0, 2.0]) < "a",
    "ge-none": lambda m: m.tensor([1.0, 2.0]) >= None,
    "lt-list": lambda m: m.tensor([1.0, 2.0]) < [1.0, 3.0],
    "eq-ndarray": lambda m: m.tensor([1.0, 2.0]) == np.array([1.0, 3.0]),
    "eq-2**70": lambda m: m.tensor([1.0, 2.0]) == 2**70,
    # an ndarray on the left: PyTorch takes it for / and == only
    "ndarray-plus": lambda m: np.ones(2) + m.tensor([1.0, 2.0]),
    "ndarray-minus": lambda m: np.ones(2) - m.tensor([1.0, 2.0]),
    "ndarray-times": lambda m: np.ones(2) * m.tensor([1.0, 2.0]),
    "ndarray-div": lambda m: np.ones(2) / m.tensor([1.0, 2.0]),
    "ndarray-pow": lambda m: np.ones(2) ** m.tensor([1.0, 2.0]),
    "ndarray-and": lambda m: np.array([1, 3]) & m.tensor([1, 2]),
    "ndarray-xor": lambda m: np.array([1, 3]) ^ m.tensor([1, 2]),
    "ndarray-matmul": lambda m: np.ones((1, 2)) @ m.tensor([[1.0], [2.0]]),
    "ndarray-eq": lambda m: np.ones(2) == m.tensor([1.0, 2.0]),
    "ndarray-ne": lambda m: np.ones(2) != m.tensor([1.0, 2.0]),
    "ne-ndarray": lambda m: m.tensor([1.0, 2.0]) != np.ones(2),
    "ndarray-lt": lambda m: np.ones(2) < m.tensor([1.0, 2.0]),
    "gt-ndarray": lambda m: m.tensor([1.0, 2.0]) > np.ones(2),
    "le-ndarray": lambda m: m.tensor([1.0, 2.0]) <= np.ones(2),
    "plus-ndarray": lambda m: m.tensor([1.0, 2.0]) + np.ones(2),
    "numpy-scalar-times": lambda m: np.float64(2.0) * m.tensor([1.0, 2.0]),
    "and-str": lambda m: m.tensor([1, 2]) & "a",
    "and-none": lambda m: m.tensor([1, 2]) & None,
    "float-of-2": lambda m: float(m.tensor([1.0, 2.0])),
    "int-of-2": lambda m: int(m.tensor([1, 2])),
    "float-of-empty": lambda m: float(m.tensor([])),
    "float-of-1": lambda m: float(m.tensor([1.5])),
    "bool-of-empty": lambda m: bool(m.tensor([])),
    "bool-of-2": lambda m: bool(m.tensor([1.0, 2.0])),
    "item-of-2": lambda m: m.tensor([1.0, 2.0]).item(),
    "saved-number-1": lambda m: (m.tensor([1.0], requires_grad=True) * 2).grad_fn._saved_other,
    "saved-number-bool": lambda m: (m.tensor([1.0], requires_grad=True)
                                    * True).grad_fn._saved_other,
    "stride-of-empty": lambda m: m.zeros(2, 0, 3).stride(),
    "stride-of-empty-rows": lambda m: m.zeros(0, 4).stride(),
}


@pytest.mark.parametrize("name", list(PYTHON_PROTOCOL))
def test_python_protocol_matches_torch(torch, name):
    import minigrad

    assert _outcome(minigrad, PYTHON_PROTOCOL[name]) == _outcome(torch, PYTHON_PROTOCOL[name])


def test_tanh_backward_is_bit_identical_in_float32(torch):
    """PyTorch's AVX2 and AVX-512 kernels round 1 - y*y once (a fused multiply-add),
    its portable kernel (a host without AVX2) twice; near |y| = 1 the two differ
    visibly. minigrad picks the kernel this host's PyTorch runs (`ATEN_CPU_CAPABILITY`
    chooses for both), so the result is bit for bit on any x86-64 host. Compared on
    PyTorch's own y, so only the backward differs."""
    from minigrad.ops.unary import TANH_BACKWARD

    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 2, 20000), rng.uniform(-0.05, 0.05, 5000),
                        [0.0, -0.0, 30.0, -30.0, np.inf, np.nan]]).astype(np.float32)
    grad = rng.uniform(0.5, 2, x.size).astype(np.float32)
    y = torch.tanh(torch.from_numpy(x))
    expected = torch.ops.aten.tanh_backward(torch.from_numpy(grad), y).numpy()
    # TanhBackward0's kernel on PyTorch's y (the forward tanh may differ in the last bit)
    got = np.empty_like(grad)
    TANH_BACKWARD(grad, y.numpy(), got)
    np.testing.assert_array_equal(got, expected)


# Batched products (an operand 3-D or more): minigrad computes none, but a shape
# mistake gets PyTorch's error, whose text depends on whether PyTorch folds the
# batch into an mm or mv (by requires_grad and layout) or calls bmm.
BATCHED_MISMATCHES = {
    "3-D @ matrix": ((1, 2, 3), (2, 3)),
    "3-D @ vector": ((2, 2, 3), (2,)),
    "matrix @ 3-D": ((2, 3), (1, 2, 3)),
    "vector @ 3-D": ((3,), (2, 2, 3)),
    "3-D @ 3-D": ((2, 2, 3), (2, 2, 3)),
    "batch dims that do not broadcast": ((2, 2, 3), (3, 2, 3)),
    "4-D @ 3-D": ((2, 1, 2, 3), (3, 2, 3)),
    "sliced 3-D @ vector": ("sliced", (2,)),
    "strided 3-D @ vector": ("transposed", (2,)),
    "vector @ transposed 3-D": ((4,), "transposed b"),
    "vector @ 3-D, not foldable": ((4,), (2, 3, 2)),
}


def _operand(m, spec, requires_grad):
    if spec == "sliced":  # leading dims still one after another
        t = m.ones(2, 2, 4)[..., :3]
    elif spec == "transposed":  # leading dims not
        t = m.ones(2, 3, 2).transpose(1, 2)
    elif spec == "transposed b":  # its transpose's leading dims are
        t = m.ones(2, 2, 3).transpose(1, 2)
    else:
        t = m.ones(*spec)
    return t.requires_grad_() if requires_grad and t.is_leaf else t


@pytest.mark.parametrize("grads", ["none", "first", "second"])
@pytest.mark.parametrize("case", list(BATCHED_MISMATCHES))
def test_batched_product_shape_errors_are_pytorchs(torch, case, grads):
    import minigrad

    def error(m):
        sa, sb = BATCHED_MISMATCHES[case]
        a, b = _operand(m, sa, grads == "first"), _operand(m, sb, grads == "second")
        with pytest.raises(RuntimeError) as info:
            a @ b
        return str(info.value)

    assert error(minigrad) == error(torch)


def test_batched_products_that_fit_are_computed(torch):
    # (their graphs: tests/parity/test_parity_joining_statistics.py)
    check(torch, lambda c: c.m.ones(2, 2, 3, dtype=c.m.float64, requires_grad=True)
          @ c.leaf([[1.0, 2.0, 0.5, -1.0], [0.0, 3.0, 1.5, 2.0], [1.0, -2.0, 0.25, 4.0]]))


def test_division_of_a_0d_tensor_by_a_vector_backward_is_exact_as_pytorchs(torch):
    # The divisor's gradient, -grad * ((self / other) / other): a 0-d tensor divided by
    # a vector is a division element by element (IEEE-exact, so equal to the bit); the
    # plain backward had taken the 0-d tensor for a Python number, which divides as
    # C++'s Scalar does, by the reciprocal (one ulp off). (Found by the random
    # programs, comparing the plain backward with the formula's.)
    import minigrad

    def grads(m, create_graph):
        rng = np.random.default_rng(0)  # (values where the two ways differ in the last bit)
        a = m.tensor(rng.uniform(-1.5, 1.5, ()), dtype=m.float64, requires_grad=True)
        b = m.tensor(rng.uniform(-1.5, 1.5, 3), dtype=m.float64, requires_grad=True)
        out = (a / (b * b + 1)).sum()
        return [g.tolist() for g in m.autograd.grad(out, [a, b], create_graph=create_graph)]

    expected = grads(torch, False)
    assert grads(minigrad, False) == expected
    assert grads(minigrad, True) == expected
    assert np.isfinite(expected[1]).all()

"""The indexing, shape and joining ops (flips, repeats, triangles and diagonals, stacks
and splits, products, gather/scatter and the index ops, the view scatters) against
PyTorch, for what the OpInfo test does not look at: forward-mode tangents (PyTorch's
formulas, or the ops PyTorch composes them of), which results are views (`_base`,
shared `_version`, strides), and the nodes a `create_graph=True` backward records.
"""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats

import minigrad

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
TA = RNG.standard_normal((3, 4))
V = RNG.standard_normal(4)
TV = RNG.standard_normal(4)
M3 = RNG.standard_normal((2, 3, 4))
TM3 = RNG.standard_normal((2, 3, 4))


def dual(m, values, tangent):
    return m.autograd.forward_ad.make_dual(m.tensor(values), m.tensor(tangent))


def idx(m, values):
    return m.tensor(values)


TANGENTS = {
    "flip, fliplr, flipud": lambda m: (dual(m, M3, TM3).flip(0, -1), dual(m, A, TA).fliplr(),
                                       m.flipud(dual(m, V, TV))),
    "roll": lambda m: (dual(m, A, TA).roll(1, -1), dual(m, A, TA).roll(5),
                       dual(m, M3, TM3).roll((1, -2), (0, 2))),
    "rot90": lambda m: (dual(m, A, TA).rot90(), dual(m, M3, TM3).rot90(-3, (2, 0)),
                        dual(m, A, TA).rot90(2), dual(m, A, TA).rot90(4)),
    "repeat, tile, repeat_interleave": lambda m: (
        dual(m, A, TA).repeat(2, 1, 3), dual(m, V, TV).tile(2, 2),
        dual(m, A, TA).repeat_interleave(2, dim=1),
        dual(m, A, TA).repeat_interleave(idx(m, [1, 0, 2]), dim=0)),
    "tril, triu": lambda m: (dual(m, A, TA).tril(), dual(m, M3, TM3).triu(-1)),
    "diag family": lambda m: (dual(m, V, TV).diag(1), dual(m, A, TA).diag(-1),
                              dual(m, A, TA).diag_embed(1, 0, 2), dual(m, A, TA).diagflat()),
    "stacks": lambda m: (m.hstack([dual(m, A, TA), m.tensor(A)]),
                         m.vstack([dual(m, V, TV), m.tensor(A)]),
                         m.dstack([dual(m, A, TA), dual(m, A, TA)]),
                         m.column_stack([dual(m, V[:3], TV[:3]), m.tensor(A)])),
    "splits": lambda m: (*m.tensor_split(dual(m, A, TA), 3, 1), *dual(m, M3, TM3).dsplit([1]),
                         *dual(m, A, TA).split_with_sizes([1, 2])),
    "rearranging": lambda m: (dual(m, M3, TM3).movedim(0, -1), dual(m, A, TA).t().ravel(),
                              dual(m, A, TA).unflatten(1, (2, 2)), dual(m, V, TV).broadcast_to(
                                  (3, 4)), *m.meshgrid(dual(m, V, TV), dual(m, V[:3], TV[:3]),
                                                       indexing="xy"),
                              m.cartesian_prod(dual(m, V, TV), m.tensor(V[:2])),
                              m.combinations(dual(m, V, TV), 2)),
    "products": lambda m: (m.outer(dual(m, V, TV), m.tensor(V)),
                           m.inner(dual(m, A, TA), dual(m, V, TV)),
                           m.kron(dual(m, A, TA), m.tensor(A[:2, :2])),
                           m.tensordot(dual(m, M3, TM3), dual(m, A, TA), ([1, 2], [0, 1])),
                           m.vdot(dual(m, V, TV), dual(m, V * 2, TV + 1))),
    "gather, scatter": lambda m: (
        dual(m, A, TA).gather(1, idx(m, [[0, 3], [2, 2], [1, 0]])),
        dual(m, A, TA).scatter(0, idx(m, [[2, 0, 1, 0]]), dual(m, V[None], TV[None])),
        dual(m, A, TA).scatter(1, idx(m, [[1], [0], [3]]), 2.5),
        dual(m, A, TA).scatter_add(0, idx(m, [[2, 2, 1, 0]]), dual(m, V[None], TV[None]))),
    "index ops": lambda m: (
        dual(m, A, TA).index_select(1, idx(m, [3, 0, 3])),
        dual(m, A, TA).index_add(0, idx(m, [2, 0]), dual(m, A[:2], TA[:2]), alpha=2),
        dual(m, A, TA).index_copy(1, idx(m, [1, 2]), dual(m, A[:, :2], TA[:, :2])),
        dual(m, A, TA).index_fill(1, idx(m, [0, 2]), -1.5),
        dual(m, A, TA).take(idx(m, [[0, 11], [-1, 5]])),
        dual(m, A, TA).take_along_dim(idx(m, [[0], [3], [1]]), 1)),
    "masked": lambda m: (dual(m, A, TA).masked_select(m.tensor(A) > 0),
                         dual(m, A, TA).masked_scatter(m.tensor(A) > 0, dual(m, A, TA).exp())),
    "view scatters": lambda m: (
        dual(m, A, TA).slice_scatter(dual(m, A[:, :2], TA[:, :2]), 1, 0, 4, 2),
        dual(m, A, TA).select_scatter(m.tensor(V), 0, -1),
        dual(m, A, TA).diagonal_scatter(dual(m, V[:3], TV[:3]))),
    "unfold": lambda m: (dual(m, A, TA).unfold(1, 3, 1), dual(m, M3, TM3).unfold(0, 1, 2)),
    "scatter_reduce": lambda m: tuple(
        dual(m, A, TA).scatter_reduce(0, idx(m, [[0, 1, 2, 0], [0, 0, 1, 2]]),
                                      dual(m, A[:2] * 3, TA[:2]), reduce, include_self=keep)
        for reduce in ("sum", "mean", "amax", "amin") for keep in (True, False)),
}


def _unpacked(m, outputs) -> list:
    found = []
    for out in outputs:
        primal, tangent = m.autograd.forward_ad.unpack_dual(out)
        found.append((primal.detach().numpy().copy(),
                      None if tangent is None else tangent.detach().numpy().copy()))
    return found


@pytest.mark.parametrize("name", TANGENTS)
def test_tangents_are_pytorchs(torch, name):
    got = {}
    for m in (torch, minigrad):
        with m.autograd.forward_ad.dual_level():
            got[m.__name__] = _unpacked(m, TANGENTS[name](m))
    assert len(got["torch"]) == len(got["minigrad"])
    for (p_want, t_want), (p_got, t_got) in zip(got["torch"], got["minigrad"]):
        assert_floats(p_got, p_want, CHAIN, err_msg="primal")
        assert (t_want is None) == (t_got is None)
        if t_want is not None:
            assert_floats(t_got, t_want, CHAIN, err_msg="tangent")


# -- views: which results share their input's memory and version counter ------------------

LAYOUTS = {
    "flip": lambda m, x: x.flip(1), "rot90 by one turn": lambda m, x: x.rot90(),
    "rot90 by three turns": lambda m, x: x.rot90(3, (1, 0)),
    "rot90 by no turn": lambda m, x: x.rot90(0), "repeat": lambda m, x: x.repeat(1, 2),
    "tril": lambda m, x: x.tril(), "diag of a matrix": lambda m, x: x.diag(),
    "atleast_3d": lambda m, x: m.atleast_3d(x), "atleast_2d": lambda m, x: m.atleast_2d(x),
    "hsplit": lambda m, x: m.hsplit(x, 2)[1], "tensor_split": lambda m, x: x.tensor_split(2)[0],
    "movedim": lambda m, x: x.movedim(1, 0), "ravel": lambda m, x: x.ravel(),
    "ravel of a transpose": lambda m, x: x.t().ravel(),
    "unflatten": lambda m, x: x.unflatten(0, (1, 3)),
    "broadcast_to": lambda m, x: x.broadcast_to(2, 3, 4),
    "broadcast_tensors": lambda m, x: m.broadcast_tensors(x, m.ones(2, 1, 1))[0],
    "meshgrid": lambda m, x: m.meshgrid(x[0], x[:, 0], indexing="ij")[1],
    "tensordot": lambda m, x: m.tensordot(x, x, ([1], [1])),
    "inner": lambda m, x: m.inner(x, x), "kron": lambda m, x: m.kron(x, x[:1]),
    "repeat_interleave": lambda m, x: x.repeat_interleave(2),
    "nonzero": lambda m, x: (x > 0).nonzero(), "argwhere": lambda m, x: m.argwhere(x > 0),
    "unfold": lambda m, x: x.unfold(1, 2, 1),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_views_and_layouts_are_pytorchs(torch, name):
    seen = {}
    for m in (torch, minigrad):
        x = m.tensor(A, requires_grad=True) * 1
        out = LAYOUTS[name](m, x)
        before = out._version
        x.add_(1) if out._base is not None else None
        seen[m.__name__] = (tuple(out.shape), out.stride(), out._base is not None,
                            out._base is x if out._base is not None else None,
                            out._version - before,
                            None if out.grad_fn is None else out.grad_fn.name())
    assert seen["minigrad"] == seen["torch"]


def test_a_tensor_already_broadcast_comes_back_as_itself(torch):
    for m in (torch, minigrad):
        x, y = m.ones(3, 4), m.ones(4)
        out = m.broadcast_tensors(x, y)
        assert out[0] is x and out[1] is not y
        assert m.atleast_1d(x) is x and m.atleast_2d(x) is x


# -- create_graph: the nodes the gradient's own graph is made of -------------------------

GRAPHS = {
    "flip": lambda m, x: x.flip(0).exp(), "roll": lambda m, x: x.roll(1, 1).exp(),
    "rot90": lambda m, x: x.rot90(1).exp(), "repeat": lambda m, x: x.repeat(2, 1).exp(),
    "tril": lambda m, x: x.tril().exp(), "diag_embed": lambda m, x: x.diag_embed().exp(),
    "diag": lambda m, x: x.diag().exp(),
    "gather": lambda m, x: x.gather(1, m.tensor([[0, 0], [3, 1], [2, 2]])).exp(),
    "index_select": lambda m, x: x.index_select(1, m.tensor([0, 0, 2])).exp(),
    "take": lambda m, x: x.take(m.tensor([0, 0, 5])).exp(),
    "index_fill": lambda m, x: x.index_fill(0, m.tensor([1]), 2.0).exp(),
    "slice_scatter": lambda m, x: x.slice_scatter(x[:, :2].exp(), 1, 0, 2).exp(),
    "unfold": lambda m, x: x.unfold(1, 3, 1).exp(),
}


def _nodes(grad) -> list:
    seen, stack = [], [grad.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node.name().split("::")[-1] in seen:
            continue
        seen.append(node.name().split("::")[-1])
        stack.extend(n for n, _ in node.next_functions)
    return sorted(seen)


@pytest.mark.parametrize("name", GRAPHS)
def test_double_backward_records_pytorchs_nodes(torch, name):
    seen = {}
    for m in (torch, minigrad):
        x = m.tensor(A, requires_grad=True)
        (g,) = m.autograd.grad(GRAPHS[name](m, x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        seen[m.__name__] = (_nodes(g), gg.detach().numpy())
    assert seen["minigrad"][0] == seen["torch"][0]
    assert_floats(seen["minigrad"][1], seen["torch"][1], CHAIN)


# flip lays its result out as PyTorch's `empty_like(self)`: a transposed input gives a
# transposed result (rot90, a flip then a transpose, follows), and the gradient
# flipped back keeps the layout of the one it flips: `sum()`'s gradient of a (1,) leaf
# has a 0 stride, so its flip does too, which the leaf's `.grad` may not keep (PyTorch
# copies it: version 1). minigrad's results were row-major. (Found by the random
# programs.)
FLIP_INPUTS = {
    "transposed": lambda m: m.tensor(np.arange(6.0).reshape(2, 3)).t(),
    "permuted 3-D": lambda m: m.tensor(np.arange(12.0).reshape(2, 3, 2)).permute(2, 0, 1),
    "strided (not dense)": lambda m: m.tensor(np.arange(12.0).reshape(3, 4))[:, ::2],
    "one element": lambda m: m.tensor([2.0]),
    "a (1, 1) matrix": lambda m: m.tensor([[2.0]]),
    "a (3, 1) column": lambda m: m.tensor([[1.0], [2.0], [3.0]]),
}
FLIPS = {"flip(0)": lambda t: t.flip(0), "flip(-1)": lambda t: t.flip(-1),
         "rot90": lambda t: t.rot90() if t.ndim > 1 else t.flip(0),
         "rot90(2)": lambda t: t.rot90(2) if t.ndim > 1 else t.flip(0)}


@pytest.mark.parametrize("flip", list(FLIPS))
@pytest.mark.parametrize("name", list(FLIP_INPUTS))
def test_flip_lays_out_its_result_and_gradient_as_pytorch(torch, name, flip):
    seen = []
    for m in (minigrad, torch):
        leaf = FLIP_INPUTS[name](m).requires_grad_()
        x = leaf * 1 if name in ("transposed", "permuted 3-D", "strided (not dense)") else leaf
        y = FLIPS[flip](x)
        y.sum().backward(retain_graph=True)
        first = leaf.grad._version
        y.sum().backward()
        seen.append((y.stride(), y.tolist(), leaf.grad.stride(), first, leaf.grad._version))
    assert seen[0] == seen[1]


# Ops that clone their input first (PyTorch's `clone(preserve_format)`, then an
# in-place fill) lay their result out as flip does; index_fill's was row-major, and
# its gradient of a (1,) leaf's spread-out gradient lost the 0 stride PyTorch's copy
# keeps (`.grad._version` 0, PyTorch's 1). (Found by the random programs.)
@pytest.mark.parametrize("name", list(FLIP_INPUTS))
def test_index_fill_lays_out_its_result_and_gradient_as_pytorch(torch, name):
    seen = []
    for m in (minigrad, torch):
        leaf = FLIP_INPUTS[name](m).requires_grad_()
        x = leaf * 1 if name in ("transposed", "permuted 3-D", "strided (not dense)") else leaf
        y = x.index_fill(-1, m.tensor([0]), 0.5)
        y.sum().backward()
        seen.append((y.stride(), y.tolist(), leaf.grad.stride(), leaf.grad._version))
    assert seen[0] == seen[1]


# repeat_interleave by an int is PyTorch's unsqueeze, expand, a row-major clone and
# flatten: the result is row-major whatever the input's layout (minigrad's clone had
# kept a transposed input's layout for one repeat: a transposed result, and for two a
# flatten that copied, UnsafeViewBackward0), and a leaf of no elements gets its
# gradient stolen from the squeezed sum (version 0, then 1 after a second backward;
# minigrad's squeeze of an empty array had zero strides, so it copied: version 1, 2).
@pytest.mark.parametrize("repeats", [1, 2])
@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("leaf", ["(2, 3)", "(3, 2).t()", "(0,)", "(2, 0)", "(0, 2).t()"])
def test_repeat_interleave_by_an_int_as_in_pytorch(torch, repeats, dim, leaf):
    import minigrad

    def run(m):
        shape = tuple(int(n) for n in leaf.split(")")[0].strip("(").split(",") if n.strip())
        x = (m.arange(float(math_prod(shape))).reshape(shape))
        x = (x.t() if leaf.endswith(".t()") else x).requires_grad_()
        y = x.repeat_interleave(repeats) if dim is None else x.repeat_interleave(repeats, dim)
        seen = [tuple(y.shape), y.stride(), type(y.grad_fn).__name__,
                type(y.grad_fn.next_functions[0][0]).__name__]
        for _ in range(2):
            (y * 2).sum().backward(retain_graph=True)
            seen += [x.grad._version, x.grad.stride(), x.grad.tolist()]
        return seen

    assert run(minigrad) == run(torch)


def math_prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n

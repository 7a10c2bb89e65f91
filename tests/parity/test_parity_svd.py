"""The singular value decomposition (`linalg.svd`, `linalg.svdvals`, `svd`) and the
norms made from it (`matrix_norm` / `linalg.norm` with ord "nuc", 2, -2, `norm(p="nuc")`)
against PyTorch where the OpInfo test does not look: forward mode, the graph (grad_fn
names, next_functions, saved values), errors and special inputs.

A singular vector is defined only up to its sign (LAPACK builds choose differently),
so, as PyTorch's OpInfo does, values are compared through functions that do not
depend on that choice: S, |U|, |Vh| and U @ Vh over the first k = min(m, n) columns
(rows) - their tangents and gradients too. Values within the float policy's CHAIN."""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats
from parity_harness import translate

import minigrad

SHAPES = [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 4)]


def _matrix(shape, seed=0) -> np.ndarray:
    """A matrix (batch) with well separated singular values, as the gradient needs."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    k = min(shape[-2:])
    return (u * np.linspace(3.0, 1.0, k)) @ vh


def _invariants(lib, U, S, Vh):  # noqa: N803
    """What does not depend on the signs of the singular vectors."""
    k = S.shape[-1]
    u, vh = U[..., :k], Vh[..., :k, :]
    return [S, u.abs(), vh.abs(), lib.matmul(u, vh)]


def _weighted(lib, ts):
    return sum((t * lib.tensor(np.linspace(0.5, 1.5, t.numel()).reshape(tuple(t.shape)),
                               dtype=t.dtype)).sum() for t in ts)


CALLS = {
    "svd": lambda L, a: _invariants(L, *L.linalg.svd(a)),
    "svd reduced": lambda L, a: _invariants(L, *L.linalg.svd(a, full_matrices=False)),
    "svdvals": lambda L, a: [L.linalg.svdvals(a)],
    "old svd": lambda L, a: _invariants(L, *(lambda r: (r.U, r.S, r.V.mT))(L.svd(a))),
    "old svd full": lambda L, a: _invariants(
        L, *(lambda r: (r.U, r.S, r.V.mT))(L.svd(a, some=False))),
    "nuc": lambda L, a: [L.linalg.matrix_norm(a, "nuc")],
    "2": lambda L, a: [L.linalg.matrix_norm(a, 2)],
    "-2 keepdim": lambda L, a: [L.linalg.matrix_norm(a, -2, keepdim=True)],
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_tangent_gradient_and_gradient_of_gradient(torch, name, shape):
    """The tangents (forward mode), the gradients and the gradients of gradients
    (create_graph=True) of sign-independent functions of the factors: PyTorch's."""
    a = _matrix(shape)
    t = np.random.default_rng(1).standard_normal(shape)
    got = {}
    for lib in (torch, minigrad):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            outs = CALLS[name](lib, fa.make_dual(lib.tensor(a), lib.tensor(t)))
            tangents = [fa.unpack_dual(o).tangent.numpy() for o in outs]
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(_weighted(lib, CALLS[name](lib, x)), x, create_graph=True)
        (g2,) = lib.autograd.grad(_weighted(lib, [g * g]), x)
        got[lib.__name__] = [*tangents, g.detach().numpy(), g2.numpy()]
    for i, (mine, theirs) in enumerate(zip(got["minigrad"], got["torch"], strict=True)):
        assert_floats(mine, theirs, CHAIN, err_msg=f"{name} {shape} value {i}")


def _chain(t) -> list[str]:
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(translate(fn.name()))
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


GRAPHS = {
    "svdvals": lambda L, x: L.linalg.svdvals(x),
    "svd U": lambda L, x: L.linalg.svd(x).U,
    "svd Vh reduced": lambda L, x: L.linalg.svd(x, full_matrices=False).Vh,
    "old svd V": lambda L, x: L.svd(x).V,
    "old svd S no uv": lambda L, x: L.svd(x, compute_uv=False).S,
    "nuc": lambda L, x: L.linalg.matrix_norm(x, "nuc"),
    "nuc keepdim": lambda L, x: L.linalg.matrix_norm(x, "nuc", dim=(0, 2), keepdim=True),
    "2": lambda L, x: L.linalg.norm(x, 2, dim=(2, 1)),
    "-2 keepdim": lambda L, x: L.linalg.matrix_norm(x, -2, keepdim=True),
    "norm nuc": lambda L, x: L.norm(x[0], p="nuc"),
    "nuc dtype": lambda L, x: L.linalg.matrix_norm(x.float(), "nuc", dtype=L.float64),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_and_saved_values(torch, name):
    """The nodes down to the leaf, each output's number, and what LinalgSvdBackward0
    saves (its names; the flags exactly, the factors through |.|)."""
    a = _matrix((2, 4, 3))
    seen = {}
    for lib in (torch, minigrad):
        y = GRAPHS[name](lib, lib.tensor(a, requires_grad=True))
        fn = y.grad_fn
        while fn.name() != "LinalgSvdBackward0":
            fn = fn.next_functions[0][0]
        saved = sorted(n for n in dir(fn) if n.startswith("_saved_"))
        flags = (fn._saved_full_matrices, fn._saved_S_sym_argsize_minus_1)
        factors = [fn._saved_S, fn._saved_U.abs(), fn._saved_Vh.abs()]
        # (the saved factors are the node's own outputs 0, 1, 2)
        owners = [(f.grad_fn.name(), f.output_nr) for f in
                  (fn._saved_U, fn._saved_S, fn._saved_Vh)]
        seen[lib.__name__] = (_chain(y), tuple(y.shape), str(y.dtype).split(".")[-1],
                              saved, flags, owners, [f.detach().numpy() for f in factors])
    *mine, mine_values = seen["minigrad"]
    *theirs, their_values = seen["torch"]
    assert mine == theirs
    for m, t in zip(mine_values, their_values, strict=True):
        assert_floats(m, t, CHAIN)


def test_svdvals_computes_factors_only_for_a_gradient(torch):
    """Without grad (no_grad, or an input that does not require it) svdvals records
    nothing; with it, S is output 1 of the node."""
    x = minigrad.tensor(_matrix((3, 2)), requires_grad=True)
    with minigrad.no_grad():
        assert minigrad.linalg.svdvals(x).grad_fn is None
    assert minigrad.linalg.svdvals(x.detach()).grad_fn is None
    assert minigrad.linalg.svdvals(x).output_nr == torch.linalg.svdvals(
        torch.tensor(_matrix((3, 2)), requires_grad=True)).output_nr == 1


def _outcome(lib, call):
    try:
        r = call(lib)
    except Exception as exc:  # noqa: BLE001 - what each library raises is compared
        return type(exc).__name__, translate(str(exc))
    rs = r if isinstance(r, tuple) else (r,)
    return [("value", str(t.dtype).split(".")[-1], tuple(t.shape),
             np.abs(t.detach().numpy()).round(12).tolist()) for t in rs]


def _t(L, rows, dt="float64"):  # noqa: N802
    return L.tensor(rows, dtype=getattr(L, dt))


nan, inf = float("nan"), float("inf")
BAD = {
    "svdvals 1d": lambda L: L.linalg.svdvals(L.ones(3)),
    "svd int": lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.int64)),
    "svd bool": lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.bool)),
    "old svd 1d": lambda L: L.svd(L.ones(3)),
    "old svd int": lambda L: L.svd(L.ones(2, 2, dtype=L.int64)),
    "driver": lambda L: L.linalg.svdvals(L.ones(2, 2), driver="gesvd"),
    "nan": lambda L: L.linalg.svdvals(_t(L, [[nan, 1.0], [1.0, 1.0]])),
    "nan batch": lambda L: L.linalg.svd(_t(L, [[[1.0, 0.0], [0.0, 1.0]], [[1.0, nan], [0, 1]]])),
    "inf": lambda L: L.linalg.svd(_t(L, [[1.0, inf], [1.0, 1.0]])),
    "inf svdvals": lambda L: L.linalg.svdvals(_t(L, [[1.0, inf], [1.0, 1.0]], "float32")),
    "empty rows": lambda L: L.linalg.svd(L.ones(0, 3, dtype=L.float64)),
    "empty cols": lambda L: L.linalg.svd(L.ones(3, 0, dtype=L.float64)),
    "empty reduced": lambda L: L.linalg.svd(L.ones(3, 0, dtype=L.float64), full_matrices=False),
    "empty batch": lambda L: L.linalg.svd(L.ones(0, 2, 3, dtype=L.float64)),
    "old svd no uv": lambda L: L.svd(L.ones(2, 3, dtype=L.float64), compute_uv=False),
    "old svd no uv full": lambda L: L.svd(L.ones(2, 3, dtype=L.float64), some=False,
                                          compute_uv=False),
    "norm 2 of none": lambda L: L.linalg.matrix_norm(L.ones(0, 3, requires_grad=True), 2),
    "norm -2 of none": lambda L: L.linalg.matrix_norm(L.ones(3, 0), -2),
    "nuc of none keepdim": lambda L: L.linalg.matrix_norm(L.ones(2, 0, 3), "nuc", (0, 2),
                                                          keepdim=True),
    "norm 2 int": lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.int64), 2),
    "norm nuc narrowing": lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.float64), "nuc",
                                                         dtype=L.float32),
    "norm nuc 3 dims": lambda L: L.norm(L.ones(2, 2, 2), p="nuc"),
    "norm 2 same dims": lambda L: L.linalg.matrix_norm(L.ones(2, 2), 2, dim=(1, -1)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_and_special_inputs(torch, name):
    """PyTorch's error (type and message), or its values (by size: signs aside)."""
    assert str(_outcome(minigrad, BAD[name])) == str(_outcome(torch, BAD[name]))

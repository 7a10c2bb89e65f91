"""The linear algebra ops against PyTorch where the OpInfo test does not look: forward
mode (tangents), gradients and gradients of gradients through `create_graph=True`
(compared within the float policy's CHAIN), and the errors (type and message) and
values of bad or special calls (PyTorch's rules for alpha and beta, singular and
non-positive-definite matrices, shapes and dtypes that do not fit)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats
from parity_harness import translate

import minigrad


def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# name -> (the call, in either library, and the shapes of its float64 inputs; "spd": a
# symmetric positive-definite 3x3 matrix)
PROGRAMS = {
    "mm": (lambda L, a, b: L.mm(a, b), [(2, 3), (3, 4)]),
    "mm_column_major": (lambda L, a, b: L.mm(a.t(), b.t()), [(3, 2), (4, 3)]),
    "mv": (lambda L, a, b: L.mv(a, b), [(3, 4), (4,)]),
    "dot": (lambda L, a, b: L.dot(a, b), [(4,), (4,)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "linear": (lambda L, a, b, c: L.nn.functional.linear(a, b, c), [(2, 4), (3, 4), (3,)]),
    "addmm_column_major": (
        lambda L, a, b, c: L.addmm(a, b.t(), c.t(), beta=2, alpha=-1), [(2, 3), (4, 2), (3, 4)]
    ),
    "addmm": (lambda L, a, b, c: L.addmm(a, b, c, beta=0.5, alpha=0.7), [(2, 3), (2, 4), (4, 3)]),
    "addmv": (lambda L, a, b, c: L.addmv(a, b, c, beta=0.5, alpha=0.7), [(3,), (3, 4), (4,)]),
    "addr": (lambda L, a, b, c: L.addr(a, b, c, beta=0.5, alpha=0.7), [(3, 4), (3,), (4,)]),
    "baddbmm": (
        lambda L, a, b, c: L.baddbmm(a, b, c, beta=0.5, alpha=0.7),
        [(2, 3, 4), (2, 3, 5), (2, 5, 4)],
    ),
    "addbmm": (
        lambda L, a, b, c: L.addbmm(a, b, c, beta=0.5, alpha=0.7),
        [(3, 4), (2, 3, 5), (2, 5, 4)],
    ),
    "vdot": (lambda L, a, b: L.vdot(a, b), [(4,), (4,)]),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), [(3, 4), (3, 4)]),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), [(2, 3), (2, 3)]),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 5)]),
    "mpow": (lambda L, a: L.linalg.matrix_power(a, -3), [(3, 3)]),
    "vander": (lambda L, a: L.linalg.vander(a), [(4,)]),
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "inv": (lambda L, a: L.linalg.inv(a), [(2, 3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)]),
    "solve_v": (lambda L, a, b: L.linalg.solve(a, b), [(3, 3), (3,)]),
    "solve_r": (lambda L, a, b: L.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "solve_triangular": (
        lambda L, a, b: L.linalg.solve_triangular(a + 3 * L.eye(3), b, upper=True),
        [(2, 3, 3), (2, 3, 2)],
    ),
    "solve_triangular_right_unit": (
        lambda L, a, b: L.linalg.solve_triangular(
            a, b, upper=False, left=False, unitriangular=True
        ),
        [(3, 3), (2, 3)],
    ),
    "chol": (lambda L, a: L.linalg.cholesky(a), ["spd"]),
    "chol_u": (lambda L, a: L.linalg.cholesky(a, upper=True), ["spd"]),
}


def _weights(shape):
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(0.5, 1.5, n).reshape(shape)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tangent_and_double_backward(torch, name):
    """The tangent of a random direction, the gradients of a weighted sum of the
    result and the gradients of the sum of those gradients' squares: PyTorch's."""
    f, shapes = PROGRAMS[name]
    rng = np.random.default_rng(0)
    primals = [_spd(rng, 3) if s == "spd" else rng.standard_normal(s) for s in shapes]
    tangents = [rng.standard_normal(p.shape) for p in primals]
    got = {}
    for lib in (torch, minigrad):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            duals = [fa.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in zip(primals, tangents)]
            tangent = fa.unpack_dual(f(lib, *duals)).tangent
        args = [lib.tensor(p, requires_grad=True) for p in primals]
        y = f(lib, *args)
        grads = lib.autograd.grad(
            (y * lib.tensor(_weights(tuple(y.shape)))).sum(), args, create_graph=True
        )
        total = sum((g * g).sum() for g in grads)
        grads2 = lib.autograd.grad(total, args, allow_unused=True)
        got[lib.__name__] = (
            [tangent.detach().numpy()]
            + [g.detach().numpy() for g in grads]
            + [None if g is None else g.numpy() for g in grads2]
        )
    for i, (mine, theirs) in enumerate(zip(got["minigrad"], got["torch"], strict=True)):
        assert (mine is None) == (theirs is None), f"{name} value {i}"
        if theirs is not None:
            assert_floats(mine, theirs, CHAIN, err_msg=f"{name} value {i}")


# The products' gradients, as their formulas lay them out: a column-major operand (a
# transposed view) gets a column-major gradient, in either dtype, with alpha and beta.
PRODUCTS = {
    "mm": lambda L, a, b, c: L.mm(a, b),
    "addmm": lambda L, a, b, c: L.addmm(c, a, b),
    "addmm scaled": lambda L, a, b, c: L.addmm(c, a, b, beta=0.5, alpha=-1.5),
    "matmul": lambda L, a, b, c: a @ b,
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layouts", ["rr", "rc", "cr", "cc", "r-", "-c"])
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_product_gradients_are_laid_out_as_in_pytorch(torch, name, layouts, dtype):
    """Each operand a row-major (`r`) or column-major (`c`) non-leaf, or not requiring
    grad (`-`): the gradient each one receives has PyTorch's strides and values."""
    rng = np.random.default_rng(1)
    shapes, got = [(5, 3), (3, 4), (5, 4)], {}
    data = [rng.standard_normal(s) for s in shapes]
    for lib in (torch, minigrad):
        seen, operands = {}, []
        for i, (how, values) in enumerate(zip(layouts + "r", data)):
            leaf = lib.tensor(values.T.copy() if how == "c" else values,
                              dtype=getattr(lib, dtype), requires_grad=how != "-")
            x = leaf.t() * 1 if how == "c" else leaf * 1
            if how != "-":
                x.register_hook(lambda g, i=i, seen=seen: seen.__setitem__(i, g))
            operands.append(x)
        out = PRODUCTS[name](lib, *operands)
        (out * lib.tensor(_weights(tuple(out.shape)), dtype=out.dtype)).sum().backward()
        got[lib.__name__] = {i: (tuple(g.shape), g.stride(), str(g.dtype).split(".")[-1],
                                 g.detach().double().numpy()) for i, g in seen.items()}
    assert got["minigrad"].keys() == got["torch"].keys()
    for i in got["torch"]:
        mine, theirs = got["minigrad"][i], got["torch"][i]
        assert mine[:3] == theirs[:3], f"operand {i}"
        tol = 1e-12 if dtype == "float64" else 1e-5
        np.testing.assert_allclose(mine[3], theirs[3], rtol=tol, atol=tol, err_msg=f"operand {i}")


def T(L, *s, dt="float64"):  # noqa: N802 - a tensor of ones in either library
    return L.ones(*s, dtype=getattr(L, dt))


# bad or special calls: each must raise PyTorch's error, or give PyTorch's values
CALLS = {
    "addmm self": lambda L: L.addmm(T(L, 3, 3), T(L, 2, 2), T(L, 2, 3)),
    "addmm dtype self": lambda L: L.addmm(
        T(L, 2, 3), T(L, 2, 2, dt="float32"), T(L, 2, 3, dt="float32")
    ),
    "addmm int float": lambda L: L.addmm(
        T(L, 2, 3, dt="int64"), T(L, 2, 2, dt="int64"), T(L, 2, 3, dt="int64"), alpha=0.6, beta=0.2
    ),
    "addmm nan beta0": lambda L: L.addmm(
        L.full((2, 3), float("nan"), dtype=L.float64), T(L, 2, 2), T(L, 2, 3), beta=0
    ),
    "addmv nan beta0": lambda L: L.addmv(
        L.full((2,), float("nan"), dtype=L.float64), T(L, 2, 2), T(L, 2), beta=0
    ),
    "addr nan beta0": lambda L: L.addr(
        L.full((2, 3), float("nan"), dtype=L.float64), T(L, 2), T(L, 3), beta=0
    ),
    "baddbmm nan beta0": lambda L: L.baddbmm(
        L.full((4, 2, 3), float("nan"), dtype=L.float64), T(L, 4, 2, 2), T(L, 4, 2, 3), beta=0
    ),
    "addbmm nan beta0": lambda L: L.addbmm(
        L.full((2, 3), float("nan"), dtype=L.float64), T(L, 4, 2, 2), T(L, 4, 2, 3), beta=0
    ),
    "addbmm m1m2": lambda L: L.addbmm(
        T(L, 2, 3, dt="float32"), T(L, 4, 2, 2), T(L, 4, 2, 3, dt="float32")
    ),
    "addmm self3d": lambda L: L.addmm(T(L, 1, 2, 3), T(L, 2, 2), T(L, 2, 3)),
    "addmm int beta": lambda L: L.addmm(
        T(L, 2, 3, dt="int64"), T(L, 2, 2, dt="int64"), T(L, 2, 3, dt="int64"), alpha=2, beta=3
    ),
    "inv_ex sing": lambda L: L.linalg.inv_ex(L.ones(2, 3, 3, dtype=L.float64), check_errors=True),
    "solve_ex sing": lambda L: L.linalg.solve_ex(
        L.ones(2, 3, 3, dtype=L.float64), T(L, 3), check_errors=True
    ),
    "chol_ex": lambda L: L.linalg.cholesky_ex(-L.eye(3, dtype=L.float64), check_errors=True),
    "solve left 1d": lambda L: L.linalg.solve(L.eye(3, dtype=L.float64), T(L, 3), left=False),
    "addmv bool": lambda L: L.addmv(T(L, 2, dt="bool"), T(L, 2, 2, dt="bool"), T(L, 2, dt="bool")),
    "addmv 2d self": lambda L: L.addmv(T(L, 2, 2), T(L, 2, 2), T(L, 2)),
    "addmv mixed": lambda L: L.addmv(T(L, 2, dt="float32"), T(L, 2, 2), T(L, 2)),
    "addmv vec2d": lambda L: L.addmv(T(L, 2), T(L, 2, 2), T(L, 2, 1)),
    "addmv self3": lambda L: L.addmv(T(L, 3), T(L, 2, 2), T(L, 2)),
    "addr float beta True": lambda L: L.addr(T(L, 2, 3), T(L, 2), T(L, 3), beta=True),
    "addr int beta": lambda L: L.addr(
        T(L, 2, 3, dt="int64"), T(L, 2, dt="int64"), T(L, 3, dt="int64"), beta=1.5
    ),
    "addr bool": lambda L: L.addr(
        T(L, 2, 3, dt="bool"), T(L, 2, dt="bool"), T(L, 3, dt="bool"), beta=0
    ),
    "addr bool f": lambda L: L.addr(
        T(L, 2, 3, dt="bool"), T(L, 2, dt="bool"), T(L, 3, dt="bool"), beta=False, alpha=True
    ),
    "addr shape": lambda L: L.addr(T(L, 3, 3), T(L, 2), T(L, 3)),
    "addr mixed": lambda L: L.addr(T(L, 2, 3), T(L, 2, dt="float32"), T(L, 3, dt="float32")),
    "baddbmm mixed": lambda L: L.baddbmm(
        T(L, 4, 2, 3), T(L, 4, 2, 2, dt="float32"), T(L, 4, 2, 3, dt="float32")
    ),
    "baddbmm mixed2": lambda L: L.baddbmm(
        T(L, 4, 2, 3), T(L, 4, 2, 2), T(L, 4, 2, 3, dt="float32")
    ),
    "baddbmm bool": lambda L: L.baddbmm(
        T(L, 4, 2, 3, dt="bool"), T(L, 4, 2, 2, dt="bool"), T(L, 4, 2, 3, dt="bool")
    ),
    "baddbmm shape": lambda L: L.baddbmm(T(L, 4, 2, 3), T(L, 4, 2, 2), T(L, 3, 2, 3)),
    "baddbmm 2d": lambda L: L.baddbmm(T(L, 4, 2, 3), T(L, 2, 2), T(L, 3, 2, 3)),
    "addbmm mixed": lambda L: L.addbmm(
        T(L, 2, 3), T(L, 4, 2, 2, dt="float32"), T(L, 4, 2, 3, dt="float32")
    ),
    "addbmm mixed2": lambda L: L.addbmm(T(L, 2, 3), T(L, 4, 2, 2), T(L, 4, 2, 3, dt="float32")),
    "addbmm bool": lambda L: L.addbmm(
        T(L, 2, 3, dt="bool"), T(L, 4, 2, 2, dt="bool"), T(L, 4, 2, 3, dt="bool")
    ),
    "addbmm empty": lambda L: L.addbmm(T(L, 2, 3), T(L, 0, 2, 2), T(L, 0, 2, 3)),
    "vdot 2d": lambda L: L.vdot(T(L, 2, 2), T(L, 2)),
    "vdot dtype": lambda L: L.vdot(T(L, 2), T(L, 2, dt="float32")),
    "vdot bool": lambda L: L.vdot(T(L, 2, dt="bool"), T(L, 2, dt="bool")),
    "vdot int": lambda L: L.vdot(T(L, 2, dt="int64"), T(L, 2, dt="int64")),
    "vecdot int/float": lambda L: L.linalg.vecdot(T(L, 2, dt="int64"), T(L, 2)),
    "det 1d": lambda L: L.linalg.det(T(L, 3)),
    "det rect": lambda L: L.linalg.det(T(L, 3, 4)),
    "det int": lambda L: L.linalg.det(T(L, 3, 3, dt="int64")),
    "det sing": lambda L: L.linalg.det(T(L, 3, 3)),
    "inv sing": lambda L: L.linalg.inv(T(L, 3, 3)),
    "inv sing b": lambda L: L.linalg.inv(L.stack([L.eye(3, dtype=L.float64), T(L, 3, 3)])),
    "solve sing": lambda L: L.linalg.solve(T(L, 3, 3), T(L, 3)),
    "solve shape": lambda L: L.linalg.solve(L.eye(3, dtype=L.float64), T(L, 4)),
    "solve shape2": lambda L: L.linalg.solve(L.eye(3, dtype=L.float64), T(L, 4, 2)),
    "solve shaper": lambda L: L.linalg.solve(L.eye(3, dtype=L.float64), T(L, 3, 2), left=False),
    "solve dtype": lambda L: L.linalg.solve(L.eye(3, dtype=L.float64), T(L, 3, dt="float32")),
    "solve bcast": lambda L: L.linalg.solve(
        L.eye(3, dtype=L.float64).expand(2, 3, 3), T(L, 4, 3, 1)
    ),
    "chol npd": lambda L: L.linalg.cholesky(-L.eye(3, dtype=L.float64)),
    "chol npd2": lambda L: L.linalg.cholesky(L.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=L.float64)),
    "chol npd b": lambda L: L.linalg.cholesky(
        L.stack([L.eye(2, dtype=L.float64), -L.eye(2, dtype=L.float64)])
    ),
    "mp rect": lambda L: L.linalg.matrix_power(T(L, 2, 3), 2),
    "mp int neg": lambda L: L.linalg.matrix_power(T(L, 3, 3, dt="int64"), -1),
    "vander bool": lambda L: L.linalg.vander(T(L, 3, dt="bool")),
    "vander 0d": lambda L: L.linalg.vander(L.tensor(2.0)),
    "cross ndim": lambda L: L.linalg.cross(T(L, 5, 3), T(L, 3)),
    "cross dt": lambda L: L.cross(T(L, 3, dt="int64"), T(L, 3), dim=0),
    "md dtype": lambda L: L.linalg.multi_dot([T(L, 2, 2), T(L, 2, 2, dt="float32")]),
    "md shapes": lambda L: L.linalg.multi_dot([T(L, 2), T(L, 3, 2)]),
}


CALLS.update(
    {
        "solve_triangular 1d": lambda L: L.linalg.solve_triangular(T(L, 3, 3), T(L, 3), upper=True),
        "solve_triangular shapes": lambda L: L.linalg.solve_triangular(
            T(L, 3, 3), T(L, 4, 2), upper=True
        ),
        "solve_triangular int": lambda L: L.linalg.solve_triangular(
            T(L, 3, 3, dt="int64"), T(L, 3, 2, dt="int64"), upper=True
        ),
        "solve_triangular zero diagonal": lambda L: L.linalg.solve_triangular(
            L.zeros(3, 3, dtype=L.float64), T(L, 3, 2), upper=True
        ),
        "solve_triangular batches": lambda L: L.linalg.solve_triangular(
            T(L, 2, 3, 3), T(L, 4, 3, 2), upper=True
        ),
    }
)


CALLS.update(
    {
        "slogdet rect": lambda L: L.linalg.slogdet(T(L, 3, 4)),
        "slogdet int": lambda L: L.linalg.slogdet(T(L, 3, 3, dt="int64")),
        "slogdet singular": lambda L: L.stack(list(L.linalg.slogdet(T(L, 3, 3)))),
        "slogdet batch": lambda L: L.stack(
            list(
                L.linalg.slogdet(
                    L.tensor([[[2.0, 1.0], [1.0, -3.0]], [[1.0, 0.0], [0.0, 4.0]]], dtype=L.float64)
                )
            )
        ),
        "logdet negative": lambda L: L.logdet(L.tensor([[2.0, 1.0], [1.0, -3.0]], dtype=L.float64)),
        "logdet singular": lambda L: L.logdet(T(L, 3, 3)),
        "logdet int": lambda L: L.logdet(T(L, 3, 3, dt="int64")),
        "logdet 1d": lambda L: L.logdet(T(L, 3)),
        "cholesky deprecated npd": lambda L: L.cholesky(-L.eye(3, dtype=L.float64)),
        "cholesky deprecated rect": lambda L: L.cholesky(T(L, 3, 4)),
        "cholesky deprecated 1d": lambda L: L.cholesky(T(L, 3)),
        "cholesky deprecated int": lambda L: L.cholesky(T(L, 3, 3, dt="int64")),
        "cholesky deprecated upper": lambda L: L.cholesky(
            L.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=L.float64), upper=True
        ),
    }
)


def test_slogdet_gradient_and_its_gradient(torch):
    """slogdet's two outputs share one node; the log's gradient is grad * A^-T."""
    a = np.array([[2.0, 1.0, 0.5], [1.0, -3.0, 0.0], [0.2, 0.1, 1.5]])
    got = {}
    for lib in (torch, minigrad):
        x = lib.tensor(a, requires_grad=True)
        sign, log = lib.linalg.slogdet(x)
        assert sign.grad_fn is log.grad_fn and sign.grad_fn.name() == "LinalgSlogdetBackward0"
        (g,) = lib.autograd.grad(sign * 2 + log * 3, x, create_graph=True)
        (g2,) = lib.autograd.grad((g * lib.tensor(_weights((3, 3)))).sum(), x)
        got[lib.__name__] = g.detach().numpy(), g2.numpy()
    for mine, theirs in zip(got["minigrad"], got["torch"], strict=True):
        assert_floats(mine, theirs, CHAIN)


def test_slogdet_forward_mode_is_refused_clearly():
    """Not yet: slogdet's two tangents (PyTorch has them) raise NotImplementedError."""
    fa = minigrad.autograd.forward_ad
    with fa.dual_level():
        a = fa.make_dual(minigrad.eye(2, dtype=minigrad.float64), minigrad.ones(2, 2))
        with pytest.raises(NotImplementedError, match="linalg_slogdet"):
            minigrad.linalg.slogdet(a)


def _outcome(lib, call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call(lib)
    except Exception as exc:  # noqa: BLE001 - what each library raises is compared
        return type(exc).__name__, translate(str(exc))
    r = r[0] if isinstance(r, tuple) else r
    return "value", str(r.dtype).split(".")[-1], r.numpy().tolist()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_errors_and_special_values(torch, name):
    mine, theirs = _outcome(minigrad, CALLS[name]), _outcome(torch, CALLS[name])
    assert str(mine) == str(theirs)


def test_linalg_error_is_a_runtime_error(torch):
    """minigrad.linalg.LinAlgError, like PyTorch's, is a RuntimeError."""
    assert issubclass(minigrad.linalg.LinAlgError, RuntimeError)
    with pytest.raises(minigrad.linalg.LinAlgError):
        minigrad.linalg.inv(minigrad.ones(2, 2))


def test_cross_without_dim_warns_once(torch):
    """cross without `dim` warns that this is deprecated, once per process (a fresh
    one, as PyTorch's TORCH_WARN_ONCE)."""
    import subprocess
    import sys

    code = (
        "import warnings, minigrad as m\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    m.cross(m.ones(2, 3), m.ones(2, 3)); m.cross(m.ones(2, 3), m.ones(2, 3))\n"
        "print(len(w), w[0].message)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("1 Using minigrad.cross without specifying the dim arg is deprecated.")


# A product of two 3-D stacks whose batch sizes differ, one of them a stack of one
# matrix that requires grad: PyTorch's matmul squeezes that stack to its matrix first,
# so the product folds into mm (its graph: SqueezeBackward1 into MmBackward0; its
# shape errors: mm's), where minigrad had broadcast both into bmm.
@pytest.mark.parametrize("which", ["left", "right", "both", "neither"])
@pytest.mark.parametrize("inner", [4, 3])
def test_matmul_squeezes_a_stack_of_one_that_requires_grad(torch, which, inner):
    import minigrad

    def run(m):
        a = m.ones(1, 0, 3).expand(2, 0, 3) if inner == 4 else m.ones(2, 3, 4)
        b = m.ones(1, inner if inner == 4 else 4, 5)
        if which in ("left", "both"):
            a = m.ones(1, *a.shape[1:]).requires_grad_() if which == "left" else a.requires_grad_()
        if which in ("right", "both"):
            b.requires_grad_()
        seen = []
        for x, y in ((a, b), (b.mT, a.mT)):
            try:
                out = m.matmul(x, y)
            except RuntimeError as error:
                seen.append(str(error))
                continue
            fn = out.grad_fn
            seen.append((tuple(out.shape), out.stride(), type(fn).__name__ if fn else None,
                         [type(f).__name__ for f, _ in fn.next_functions] if fn else None))
        return seen

    assert run(minigrad) == run(torch)

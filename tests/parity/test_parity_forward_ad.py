"""Forward-mode AD (`autograd.forward_ad`) against PyTorch's `torch.autograd.forward_ad`.

Every program runs under both libraries inside a dual level and returns tensors; each
is unpacked with `unpack_dual`, and the primals and tangents must be PyTorch's. The
tangent formulas are PyTorch's own, evaluated with the same ops in the same order; the
values they read (exp, tanh, a norm's sum, a matrix product) PyTorch computes with
vector math and summation orders that depend on the processor, so primals and tangents
are compared within the float policy's CHAIN (`float_policy.py`).
Views, in-place ops, errors, the named tuple, grad modes, saved-tensor hooks and
backward through dual tensors are compared too.
"""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import CHAIN, Tolerance, assert_floats
from parity_harness import raised

import minigrad
from minigrad.autograd import forward_ad as mf

RNG = np.random.default_rng(20)
A = RNG.standard_normal((3, 4))
TA = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
TB = RNG.standard_normal((4, 2))
V = RNG.standard_normal(4)
TV = RNG.standard_normal(4)
M3 = RNG.standard_normal((2, 3, 4))
TM3 = RNG.standard_normal((2, 3, 4))


def fad(m):
    return m.autograd.forward_ad


def _unpacked(m, outputs) -> list:
    """(primal values, tangent values or None) of each output."""
    found = []
    for out in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        primal, tangent = fad(m).unpack_dual(out)
        found.append((primal.detach().numpy().copy(),
                      None if tangent is None else tangent.detach().numpy().copy()))
    return found


def run(m, program):
    with fad(m).dual_level():
        return _unpacked(m, program(m))


def assert_same(expected: list, got: list, how: Tolerance = CHAIN) -> None:
    """Primals and tangents as the float policy says: within `how` (CHAIN: a tangent
    is a formula of several ops on values PyTorch's vector math library rounds by
    processor), None where PyTorch's tangent is None."""
    assert len(expected) == len(got)
    for (p_want, t_want), (p_got, t_got) in zip(expected, got):
        assert_floats(p_got, p_want, how, err_msg="primal")
        assert (t_want is None) == (t_got is None), (t_want, t_got)
        if t_want is not None:
            assert_floats(t_got, t_want, how, err_msg="tangent")


def check_forward(torch, program, how: Tolerance = CHAIN) -> None:
    assert_same(run(torch, program), run(minigrad, program), how)


def dual(m, values, tangent):
    return fad(m).make_dual(m.tensor(values), m.tensor(tangent))


# -- tangents of ops ----------------------------------------------------------------------

UNARY = ["exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt",
         "abs", "neg", "reciprocal", "floor", "ceil", "sign", "sgn"]


@pytest.mark.parametrize("name", UNARY)
def test_tangent_of_a_declared_element_wise_op(torch, name):
    positive = name in ("log", "log1p", "sqrt")

    def program(m):
        x = dual(m, np.abs(A) + 0.1 if positive else A, TA)
        return getattr(x, name)(), getattr(m, name)(x.t())

    check_forward(torch, program)


PROGRAMS = {
    # element-wise ops of two tensors, of a tensor and a number, broadcasting
    "mul": lambda m: dual(m, A, TA) * dual(m, A.T.copy(), TA.T.copy()).t(),
    "mul by a plain tensor": lambda m: dual(m, A, TA) * m.tensor(A + 1),
    "plain tensor times dual": lambda m: m.tensor(A) * dual(m, A, TA),
    "add and sub, alpha": lambda m: (m.add(dual(m, A, TA), m.tensor(A), alpha=2.5),
                                     m.sub(m.tensor(A), dual(m, A, TA), alpha=0.5)),
    "div": lambda m: (dual(m, A, TA) / dual(m, A + 3, TA * 2), m.tensor(A) / dual(m, A, TA)),
    "numbers": lambda m: (3 - dual(m, A, TA) * 2.5 + 1, dual(m, A, TA) / 4, 2 * dual(m, A, TA),
                          dual(m, A, TA) - 0.5),
    "broadcast": lambda m: (m.tensor(A) + dual(m, V, TV), dual(m, A, TA) * dual(m, V, TV),
                            dual(m, V, TV) / (m.tensor(A) ** 2 + 1)),
    "pow by a number": lambda m: (dual(m, A, TA) ** 3, dual(m, np.abs(A), TA) ** 2.5,
                                  dual(m, A, TA) ** 0),
    "atan2": lambda m: (m.atan2(dual(m, A, TA), dual(m, A.T.copy().T + 1, TA * 3)),
                        m.atan2(m.tensor(A), dual(m, A, TA))),
    "div rounded": lambda m: m.div(dual(m, A, TA), m.tensor(A + 3), rounding_mode="floor"),
    "chain": lambda m: ((dual(m, A, TA).sin() * 3 + 1).exp() / 10).tanh().relu(),
    # products
    "mm": lambda m: (dual(m, A, TA).mm(dual(m, B, TB)), m.mm(m.tensor(A), dual(m, B, TB))),
    "mv": lambda m: (dual(m, A, TA).mv(dual(m, V, TV)), m.tensor(A).mv(dual(m, V, TV))),
    "dot": lambda m: (m.dot(dual(m, V, TV), dual(m, V * 2, TV + 1)),
                      m.dot(m.tensor(V), dual(m, V, TV))),
    "matmul": lambda m: (dual(m, A, TA) @ dual(m, B, TB), dual(m, A, TA) @ m.tensor(V),
                         dual(m, M3, TM3) @ m.tensor(B), m.tensor(M3) @ dual(m, B, TB)),
    "bmm": lambda m: dual(m, M3, TM3).bmm(m.tensor(M3).transpose(1, 2)),
    "linear (addmm)": lambda m: m.nn.functional.linear(
        dual(m, A, TA), dual(m, B.T.copy(), TB.T.copy()), dual(m, np.ones(2), np.arange(2.0))),
    # reductions
    "sum": lambda m: (dual(m, A, TA).sum(), dual(m, A, TA).sum(1), dual(m, M3, TM3).sum((0, 2)),
                      dual(m, M3, TM3).sum(-1, keepdim=True)),
    "mean": lambda m: (dual(m, A, TA).mean(), dual(m, A, TA).mean(0),
                       dual(m, M3, TM3).mean((0, 1), keepdim=True)),
    # views and indexing: a view's tangent is the same view of its input's tangent
    "view and reshape": lambda m: (dual(m, A, TA).view(2, 6), dual(m, A, TA).t().reshape(-1),
                                   dual(m, A, TA).reshape(4, 3)),
    "transpose and permute": lambda m: (dual(m, M3, TM3).transpose(0, 2),
                                        dual(m, M3, TM3).permute(2, 0, 1), dual(m, A, TA).T),
    "select and slice": lambda m: (dual(m, A, TA)[1], dual(m, A, TA)[:, 1:3],
                                   dual(m, M3, TM3)[1, ::2, -1], dual(m, A, TA)[..., 0]),
    "unsqueeze, squeeze, expand": lambda m: (dual(m, V, TV).unsqueeze(0).expand(3, 4),
                                             dual(m, A, TA)[None, :, None].squeeze(),
                                             dual(m, A, TA)[:1].squeeze(0)),
    "diagonal": lambda m: (dual(m, A, TA).diagonal(1), dual(m, A, TA).t().diagonal(),
                           m.diagonal(dual(m, M3, TM3), -1, 1, 2)),
    "advanced indexing": lambda m: (dual(m, A, TA)[[2, 0, 2]], dual(m, A, TA)[m.tensor(A) > 0],
                                    dual(m, A, TA)[:, [1, 3]]),
    "clone, contiguous, to": lambda m: (dual(m, A, TA).t().clone(), dual(m, A, TA).t().contiguous(),
                                        dual(m, A, TA).float(), dual(m, A, TA).t().exp()),
    "where": lambda m: (m.where(m.tensor(A) > 0, dual(m, A, TA), m.tensor(V)),
                        m.where(m.tensor(A) > 0, m.tensor(A), dual(m, V, TV)),
                        m.where(m.tensor(V) > 0, dual(m, A, TA), 0.0)),
    "cumsum": lambda m: (dual(m, A, TA).cumsum(1), dual(m, M3, TM3).cumsum(0)),
    "ops on views": lambda m: (dual(m, A, TA).t().exp() * dual(m, A, TA)[0].unsqueeze(1)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_tangents_of_ops(torch, name):
    check_forward(torch, PROGRAMS[name])


def test_a_view_tangent_is_the_same_view_of_the_base_tangent(torch):
    for m in (torch, minigrad):
        with fad(m).dual_level():
            t = m.tensor(TA)
            d = fad(m).make_dual(m.tensor(A), t)
            view = d.t()[1:3]
            tangent = fad(m).unpack_dual(view).tangent
            assert tangent._base is t
            assert tangent.stride() == view.stride()
            assert fad(m).unpack_dual(d).tangent is t  # (laid out like its primal: kept)


def test_make_dual_copies_a_tangent_laid_out_otherwise(torch):
    for m in (torch, minigrad):
        with fad(m).dual_level():
            t = m.tensor(TA.T.copy()).t()  # (column-major)
            d = fad(m).make_dual(m.tensor(A), t)
            kept = fad(m).unpack_dual(d).tangent
            assert kept is not t and kept.stride() == (4, 1)
            assert np.array_equal(kept.numpy(), TA)
            # a view primal is in a larger memory: its tangent is copied too
            row = m.tensor(TA[0].copy())
            assert fad(m).unpack_dual(fad(m).make_dual(m.tensor(A)[1], row)).tangent is not row


# -- in-place ops -----------------------------------------------------------------------------

def _mul_by_a_number(m):
    d = dual(m, A, TA)
    return d.mul_(2), d


def _add_of_a_plain_tensor(m):
    return (dual(m, A, TA).add_(m.tensor(A), alpha=2),)


def _div_by_a_plain_tensor(m):
    return (dual(m, A, TA).div_(m.tensor(V) + 3),)


def _plain_tensor_div_by_a_dual(m):
    b = m.tensor(A)
    return b.div_(dual(m, V + 3, TV)), b


def _plain_tensor_add_of_a_broadcast_dual(m):
    return (m.tensor(A).add_(dual(m, V, TV)),)


def _pow_sin_exp(m):
    return (dual(m, A, TA).pow_(3).sin_().exp_(),)


def _exp_on_a_view_of_a_dual(m):
    d = dual(m, A, TA)
    return d[1].exp_(), d, d[0]


def _a_view_of_a_plain_tensor_mul_by_a_dual(m):
    b = m.tensor(A)
    return b[0].mul_(dual(m, V, TV)), b, b[1]


def _a_view_made_before_its_base_became_dual(m):
    b = m.tensor(A)
    v = b.t()
    return b.mul_(dual(m, A, TA)), v


def _copy_from_a_dual_and_from_a_plain_tensor(m):
    return dual(m, A, TA).copy_(dual(m, V, TV)), dual(m, A, TA).copy_(m.tensor(V))


def _zero_and_fill(m):
    return dual(m, A, TA).zero_(), dual(m, A, TA).fill_(2.0)


def _assignment_through_a_view(m):
    b = m.tensor(A)
    b[0, 1:3] = dual(m, V[:2], TV[:2])
    return (b,)


def _inplace_view_ops(m):
    d = dual(m, A, TA)
    return d.t_(), d.unsqueeze_(0), d.squeeze_()


def _relu_and_sigmoid_of_views(m):
    d = dual(m, A, TA)
    return d.t().relu_(), d[2].sigmoid_(), d


def _an_inplace_op_after_ops_that_read_its_input(m):
    d = dual(m, A, TA)
    y, z = d.sin(), d.sum(0)
    return d.mul_(3), y, z


INPLACE = {f.__name__[1:].replace("_", " "): f for f in (
    _mul_by_a_number, _add_of_a_plain_tensor, _div_by_a_plain_tensor,
    _plain_tensor_div_by_a_dual, _plain_tensor_add_of_a_broadcast_dual, _pow_sin_exp,
    _exp_on_a_view_of_a_dual, _a_view_of_a_plain_tensor_mul_by_a_dual,
    _a_view_made_before_its_base_became_dual, _copy_from_a_dual_and_from_a_plain_tensor,
    _zero_and_fill, _assignment_through_a_view, _inplace_view_ops,
    _relu_and_sigmoid_of_views, _an_inplace_op_after_ops_that_read_its_input)}


@pytest.mark.parametrize("name", list(INPLACE))
def test_tangents_of_inplace_ops(torch, name):
    check_forward(torch, INPLACE[name])


def test_an_inplace_op_writes_into_the_tangent_it_has(torch):
    for m in (torch, minigrad):
        with fad(m).dual_level():
            d = dual(m, A, TA)
            tangent = fad(m).unpack_dual(d).tangent
            d.add_(m.tensor(A))
            d.mul_(dual(m, A, TA))
            d.exp_()
            assert fad(m).unpack_dual(d).tangent is tangent
            assert tangent._version == 3


# -- the API: levels, make_dual, unpack_dual ---------------------------------------------------


def test_unpack_dual_returns_the_named_tuple(torch):
    for m in (torch, minigrad):
        unpacked_type = fad(m).UnpackedDualTensor
        assert unpacked_type.__name__ == "UnpackedDualTensor"
        assert unpacked_type._fields == ("primal", "tangent")
        x = m.tensor(A)
        outside = fad(m).unpack_dual(x)
        assert type(outside) is unpacked_type and outside.primal is x and outside.tangent is None
        with fad(m).dual_level() as level:
            assert level == 0
            t = m.tensor(TA)
            d = fad(m).make_dual(x, t)
            primal, tangent = fad(m).unpack_dual(d)
            assert tangent is t and primal is not d and primal._base is x
            assert fad(m).unpack_dual(primal).tangent is None
            assert fad(m).unpack_dual(x).tangent is None  # (make_dual gives x no tangent)
            assert d._base is x and not d.requires_grad
        # leaving the level drops every tangent
        assert fad(m).unpack_dual(d).tangent is None


def test_a_dual_tensor_prints_its_tangent(torch):
    def shown(m):
        with fad(m).dual_level():
            small = fad(m).make_dual(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0]))
            return [repr(small), repr(dual(m, A, TA).t()[:2] * 2), repr(small.sum())]

    assert shown(minigrad) == [text.replace("torch", "minigrad") for text in shown(torch)]


@pytest.mark.parametrize("lib", ["torch", "minigrad"])
def test_levels_enter_and_exit(torch, lib):
    m = torch if lib == "torch" else minigrad
    assert fad(m).enter_dual_level() == 0
    fad(m).exit_dual_level(level=0)

    @fad(m).dual_level()
    def decorated():
        return fad(m).unpack_dual(dual(m, A, TA).exp()).tangent is not None

    assert decorated()


def _error_cases(m):
    """Each bad use, a thunk (run outside any level unless it enters one)."""
    f = fad(m)
    x, t = m.tensor(A), m.tensor(TA)

    def inside(fn):
        def run():
            with f.dual_level():
                return fn()
        return run

    return {
        "make_dual outside a level": lambda: f.make_dual(x, t),
        "exit outside a level": lambda: f.exit_dual_level(),
        "nested dual_level": inside(lambda: f.dual_level().__enter__()),
        "nested enter_dual_level": inside(lambda: f.enter_dual_level()),
        "exit another level": inside(lambda: f.exit_dual_level(level=1)),
        "tangent of another size": inside(lambda: f.make_dual(x, m.tensor(V))),
        "integer primal": inside(lambda: f.make_dual(x.long(), t)),
        "integer tangent": inside(lambda: f.make_dual(x, t.long())),
        "a level that does not exist": inside(lambda: f.make_dual(x, t, level=1)),
        "make_dual of a dual": inside(lambda: f.make_dual(f.make_dual(x, t), t)),
        "unpack_dual at another level": inside(lambda: f.unpack_dual(f.make_dual(x, t), level=1)),
        "unpack_dual of a number": inside(lambda: f.unpack_dual(3)),
        "make_dual of a number": inside(lambda: f.make_dual(3, t)),
        "in-place op of a shape a dual cannot take": inside(
            lambda: f.make_dual(m.tensor(V), m.tensor(TV)).add_(x)),
        # (PyTorch gives these in-place forms no derivative, and says so in forward mode)
        **{f"{op}, in place": inside(lambda op=op: getattr(f.make_dual(x, t) * 1, op)())
           for op in ("asinh_", "arccosh_", "atanh_")},
    }


@pytest.mark.parametrize("name", list(_error_cases(minigrad)))
def test_errors(torch, name):
    assert raised(_error_cases(torch)[name]) == raised(_error_cases(minigrad)[name])
    # (a refused level leaves none behind)
    leftover = raised(lambda: mf.make_dual(minigrad.tensor(A), minigrad.tensor(TA)))
    assert leftover[0] == "RuntimeError"


def test_a_custom_function_refuses_a_dual_input(torch):
    def program(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with fad(m).dual_level():
            return Twice.apply(dual(m, A, TA))

    assert raised(lambda: program(torch)) == raised(lambda: program(minigrad))


# -- grad modes, backward, saved-tensor hooks -------------------------------------------------


def test_forward_ad_works_in_no_grad_mode(torch):
    def program(m):
        with m.no_grad():
            d = dual(m, A, TA)
            return (d.sin() * d).sum(0), d.t()[0].exp()

    check_forward(torch, program)


def _with_backward(m):
    """A dual tensor that requires grad: its tangent has a graph, backward is as ever."""
    x = m.tensor(A, requires_grad=True)
    with fad(m).dual_level():
        d = fad(m).make_dual(x, m.tensor(TA))
        y = (d.exp() * d).sum(1)
        primal, tangent = fad(m).unpack_dual(y)
        names = (d.grad_fn.name(), fad(m).unpack_dual(d).primal.grad_fn.name(),
                 y.grad_fn.name(), tangent.requires_grad, tangent.grad_fn.name())
        y.backward(m.tensor([0.5, 1.0, -2.0]), retain_graph=True)
        first = x.grad.numpy().copy()
        x.grad = None
        tangent.sum().backward()
    return names, first, x.grad.numpy().copy(), tangent.detach().numpy()


def test_a_dual_tensor_that_requires_grad_works_with_backward(torch):
    want, got = _with_backward(torch), _with_backward(minigrad)
    assert got[0] == tuple(n.replace("torch", "minigrad") if isinstance(n, str) else n
                           for n in want[0])
    for w, g in zip(want[1:], got[1:]):
        assert_floats(g, w, CHAIN)


def _packed(m):
    shapes = []
    x = m.tensor(A)
    with m.autograd.graph.saved_tensors_hooks(lambda a: shapes.append(tuple(a.shape)) or a,
                                              lambda a: a):
        with fad(m).dual_level():
            d = fad(m).make_dual(x, m.tensor(TA))
            (d.exp() * d).sin().sum(0)
            only_forward = list(shapes)
            d2 = fad(m).make_dual(x.clone().requires_grad_(), m.tensor(TA))
            assert fad(m).unpack_dual(d2.exp()).tangent is not None
    return only_forward, shapes


def test_saved_tensor_hooks_see_only_what_backward_saves(torch):
    assert _packed(minigrad) == _packed(torch)


def test_jvp_of_autograd_functional_is_unchanged(torch):
    def jvp(m):
        out, v = m.autograd.functional.jvp(lambda a: (a.exp() * a).sum(0), m.tensor(A),
                                           m.tensor(TA))
        return out.numpy(), v.numpy()

    for w, g in zip(jvp(torch), jvp(minigrad)):
        assert_floats(g, w, CHAIN)
    # and forward mode gives the same product, in one pass
    with mf.dual_level():
        y = (dual(minigrad, A, TA).exp() * dual(minigrad, A, TA)).sum(0)
        np.testing.assert_allclose(mf.unpack_dual(y).tangent.numpy(), jvp(minigrad)[1],
                                   rtol=1e-12)

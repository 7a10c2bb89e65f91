"""`gradcheck` and `gradgradcheck` against PyTorch, on custom Functions (right and
wrong ones, backward and jvp) and plain functions, in backward and forward mode: the
answer (True, False, or the error raised, type and text: the GradcheckError for a wrong
backward prints both Jacobians as each library prints tensors) and the warnings, in
order.
"""

from __future__ import annotations

import warnings

import pytest
from parity_harness import translate

import minigrad


def _outcome(m, case) -> tuple:
    """What `case(m)` answers or raises, and the warnings it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            answer = ("answer", case(m))
        except Exception as exc:  # noqa: BLE001 - comparing whatever each library raises
            answer = ("error", type(exc).__name__, translate(str(exc)))
    return answer, [(w.category.__name__, translate(str(w.message))) for w in caught
                    if not str(w.message).startswith(TORCH_INTERNAL_WARNING)]


# PyTorch's gradcheck with forward AD imports, the first time, a module of its own that
# uses `torch.jit.script`, which warns that it is deprecated: PyTorch's housekeeping,
# not an answer of gradcheck's, so it is not compared.
TORCH_INTERNAL_WARNING = "`torch.jit.script` is deprecated"


def _cube(m, name: str, backward):
    """A custom Function computing x ** 3 whose backward is `backward(grad, x)`."""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    def run_backward(ctx, grad):
        return backward(grad, ctx.saved_tensors[0])

    return type(name, (m.autograd.Function,), {"forward": staticmethod(forward),
                                               "backward": staticmethod(run_backward)})


def _mul_exp(m, name: str, grad_w):
    """A custom Function computing (x * w, exp(x)) whose gradient of w is
    `grad_w(g1, x)`."""

    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w, x.exp()

    def backward(ctx, g1, g2):
        x, w = ctx.saved_tensors
        return g1 * w + g2 * x.exp(), grad_w(g1, x)

    return type(name, (m.autograd.Function,), {"forward": staticmethod(forward),
                                               "backward": staticmethod(backward)})


def _functions(m) -> dict:
    """Custom Functions written once for both libraries: right and wrong backwards."""
    calls = [0]

    def drifting(grad, x):  # a little different each time it runs
        calls[0] += 1
        return grad * 3 * x ** 2 + grad * calls[0] * 1e-9

    cubes = [
        _cube(m, "Cube", lambda grad, x: grad * 3 * x ** 2),  # right, differentiable twice
        _cube(m, "WrongCube", lambda grad, x: grad * 2 * x ** 2),  # 2x² instead of 3x²
        # right once, but its own backward is a constant
        _cube(m, "DetachedCube", lambda grad, x: grad * 3 * x.detach() ** 2),
        # right Jacobian, but not linear in grad
        _cube(m, "Offset", lambda grad, x: (x * 0 + 1 if grad.abs().sum() == 0
                                           else grad * 3 * x ** 2)),
        _cube(m, "Drifting", drifting),
    ]

    two = [  # two inputs, two outputs
        _mul_exp(m, "MulExp", lambda g1, x: g1 * x),  # right
        _mul_exp(m, "MulExpWrongW", lambda g1, x: x * 1),  # the gradient of w forgets g1
    ]
    jvps = [  # x * 2 with a jvp for forward mode: right, and wrong (3 instead of 2)
        _doubled(m, "Doubled", 2.0),
        _doubled(m, "WrongJvp", 3.0),
    ]
    return {f.__name__: f for f in (*cubes, *two, *jvps)}


def _doubled(m, name: str, slope: float):
    """A custom Function computing x * 2, whose jvp multiplies the tangent by `slope`
    (reading x from `save_for_forward`, so that path is used too)."""

    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x * 2

    def backward(ctx, grad):
        return grad * 2

    def jvp(ctx, tangent):
        (x,) = ctx.saved_tensors
        return tangent * slope + x * 0

    return type(name, (m.autograd.Function,), {"forward": staticmethod(forward),
                                               "backward": staticmethod(backward),
                                               "jvp": staticmethod(jvp)})


def _x(m, dtype="float64"):
    return m.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=getattr(m, dtype), requires_grad=True)


def _w(m):
    return m.tensor([[1.5, 0.5], [-2.0, 3.0]], dtype=m.float64, requires_grad=True)


CASES = {
    "right Function": lambda m, f: m.autograd.gradcheck(f["Cube"].apply, (_x(m),)),
    "wrong backward": lambda m, f: m.autograd.gradcheck(f["WrongCube"].apply, (_x(m),)),
    "wrong backward, one tensor": lambda m, f: m.autograd.gradcheck(f["WrongCube"].apply,
                                                                     _x(m)),
    "wrong backward, no exception": lambda m, f: m.autograd.gradcheck(
        f["WrongCube"].apply, (_x(m),), raise_exception=False),
    "wrong backward within atol": lambda m, f: m.autograd.gradcheck(
        f["WrongCube"].apply, (_x(m) * 1e-3,), atol=1e-5),
    "wrong backward, loose tolerances": lambda m, f: m.autograd.gradcheck(
        f["WrongCube"].apply, (_x(m),), rtol=0.5, atol=0.0),
    "two inputs, two outputs": lambda m, f: m.autograd.gradcheck(f["MulExp"].apply,
                                                                  (_x(m), _w(m))),
    "wrong second input": lambda m, f: m.autograd.gradcheck(f["MulExpWrongW"].apply,
                                                             (_x(m), _w(m))),
    "an input not requiring grad": lambda m, f: m.autograd.gradcheck(
        f["MulExpWrongW"].apply, (_x(m), _w(m).detach())),
    "a number among the inputs": lambda m, f: m.autograd.gradcheck(
        lambda x, k: x * k, (_x(m), 2.5)),
    "float32 inputs": lambda m, f: m.autograd.gradcheck(lambda x: x.sin(), (_x(m, "float32"),),
                                                        raise_exception=False),
    "float32 and float64": lambda m, f: m.autograd.gradcheck(
        lambda x, w: x.double() * w, (_x(m, "float32"), _w(m))),
    "backward not multiplied by grad_output": lambda m, f: m.autograd.gradcheck(
        f["Offset"].apply, (_x(m),)),
    "non-reentrant backward": lambda m, f: m.autograd.gradcheck(f["Drifting"].apply, (_x(m),)),
    "non-reentrant within nondet_tol": lambda m, f: m.autograd.gradcheck(
        f["Drifting"].apply, (_x(m),), nondet_tol=1e-6),
    "an output that does not require grad": lambda m, f: m.autograd.gradcheck(
        lambda x: (x.exp(), x.detach() * 2), (_x(m),)),
    "no output requires grad": lambda m, f: m.autograd.gradcheck(lambda x: x.detach() * 2,
                                                                  (_x(m),)),
    "an integer output": lambda m, f: m.autograd.gradcheck(
        lambda x: (x * 3, x.detach().long()), (_x(m),)),
    "without the undefined-grad check": lambda m, f: m.autograd.gradcheck(
        f["MulExp"].apply, (_x(m), _w(m)), check_undefined_grad=False),
    "check_grad_dtypes": lambda m, f: m.autograd.gradcheck(
        f["Cube"].apply, (_x(m),), check_grad_dtypes=True),
    "ops of minigrad": lambda m, f: m.autograd.gradcheck(
        lambda x, w: (x.mm(w).tanh() * x.sigmoid()).sum(1), (_x(m), _w(m))),
    "a transposed input": lambda m, f: m.autograd.gradcheck(
        lambda x: x.exp() * 2, (_x(m).detach().t().requires_grad_(),)),
    "an expanded input": lambda m, f: m.autograd.gradcheck(
        lambda x: x * 2, (m.ones(1, dtype=m.float64).expand(3).requires_grad_(),)),
    "no input requires grad": lambda m, f: m.autograd.gradcheck(lambda x: x * 2,
                                                                 (_x(m).detach(),)),
    "neither forward nor backward AD": lambda m, f: m.autograd.gradcheck(
        lambda x: x, (_x(m),), check_backward_ad=False),
    "batched grad without backward AD": lambda m, f: m.autograd.gradcheck(
        lambda x: x, (_x(m),), check_batched_grad=True, check_backward_ad=False),
    "batched forward grad without forward AD": lambda m, f: m.autograd.gradcheck(
        lambda x: x, (_x(m),), check_batched_forward_grad=True),
    # gradgradcheck: the backward of the backward
    "gradgradcheck, right Function": lambda m, f: m.autograd.gradgradcheck(f["Cube"].apply,
                                                                            (_x(m),)),
    "gradgradcheck, constant backward": lambda m, f: m.autograd.gradgradcheck(
        f["DetachedCube"].apply, (_x(m),), raise_exception=False),
    "gradgradcheck, constant backward, the message": lambda m, f: _seeded(
        m, lambda: m.autograd.gradgradcheck(f["DetachedCube"].apply, (_x(m),))),
    "gradgradcheck, non-contiguous grad_outputs": lambda m, f: _seeded(
        m, lambda: m.autograd.gradgradcheck(f["DetachedCube"].apply, (_x(m),),
                                            gen_non_contig_grad_outputs=True)),
    "gradgradcheck, given grad_outputs": lambda m, f: m.autograd.gradgradcheck(
        f["DetachedCube"].apply, (_x(m),), (m.full((2, 2), 0.5, dtype=m.float64,
                                                   requires_grad=True),)),
    "gradgradcheck, two outputs": lambda m, f: m.autograd.gradgradcheck(
        f["MulExp"].apply, (_x(m), _w(m))),
    "gradgradcheck of ops": lambda m, f: m.autograd.gradgradcheck(
        lambda x: (x.exp() * x.sin()).sum(0), (_x(m),)),
    # forward mode: the Jacobian by tangents too
    "forward AD, ops": lambda m, f: m.autograd.gradcheck(
        lambda x, w: ((x * w).exp().sum(0), x.t().sin() @ w), (_x(m), _w(m)),
        check_forward_ad=True),
    "forward AD only": lambda m, f: m.autograd.gradcheck(
        lambda x, w: x * w + x.exp(), (_x(m), _w(m)), check_forward_ad=True,
        check_backward_ad=False),
    "forward AD, a transposed input": lambda m, f: m.autograd.gradcheck(
        lambda x: x.exp() * 2, (_x(m).detach().t().requires_grad_(),), check_forward_ad=True),
    "forward AD, an input not requiring grad": lambda m, f: m.autograd.gradcheck(
        lambda x, w: x * w, (_x(m), _w(m).detach()), check_forward_ad=True),
    "forward AD, a right jvp": lambda m, f: m.autograd.gradcheck(
        f["Doubled"].apply, (_x(m),), check_forward_ad=True),
    "forward AD, a wrong jvp": lambda m, f: m.autograd.gradcheck(
        f["WrongJvp"].apply, (_x(m),), check_forward_ad=True),
    "forward AD, a wrong jvp, no exception": lambda m, f: m.autograd.gradcheck(
        f["WrongJvp"].apply, (_x(m),), check_forward_ad=True, raise_exception=False),
    "forward AD, a wrong jvp, backward AD off": lambda m, f: m.autograd.gradcheck(
        f["WrongJvp"].apply, (_x(m),), check_forward_ad=True, check_backward_ad=False),
    "forward AD, a Function without jvp": lambda m, f: m.autograd.gradcheck(
        f["Cube"].apply, (_x(m),), check_forward_ad=True),
    "forward AD, no output requires grad": lambda m, f: m.autograd.gradcheck(
        lambda x: x.detach() * 2, (_x(m),), check_forward_ad=True),
    "gradgradcheck, forward over reverse": lambda m, f: _seeded(
        m, lambda: m.autograd.gradgradcheck(lambda x: (x.exp() * x).sum(0), (_x(m),),
                                            check_fwd_over_rev=True)),
    "gradgradcheck with neither check": lambda m, f: m.autograd.gradgradcheck(
        lambda x: x, (_x(m),), check_rev_over_rev=False),
    "gradgradcheck, undefined check without rev over rev": lambda m, f: (
        m.autograd.gradgradcheck(lambda x: x, (_x(m),), check_rev_over_rev=False,
                                 check_fwd_over_rev=True)),
}


def _seeded(m, fn):
    """Run `fn` after seeding the global generator: gradgradcheck's random
    grad_outputs (printed in its message) are then PyTorch's, bit for bit."""
    m.manual_seed(0)
    return fn()


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(torch, name):
    expected = _outcome(torch, lambda m: CASES[name](m, _functions(m)))
    assert _outcome(minigrad, lambda m: CASES[name](m, _functions(m))) == expected


def test_a_wrong_backward_is_caught_and_a_right_one_passes(torch):
    """The cases above do compare a failure (not only that both pass)."""
    answer, _ = _outcome(torch, lambda m: CASES["wrong backward"](m, _functions(m)))
    assert answer[:2] == ("error", "GradcheckError")
    assert answer[2].startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                                "numerical:tensor([[ 0.7500,")
    assert "analytical:tensor([[0.5000," in answer[2]
    assert _outcome(minigrad, lambda m: CASES["right Function"](m, _functions(m)))[0] == (
        "answer", True)


def test_the_module_paths_are_pytorchs():
    from minigrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

    assert minigrad.autograd.gradcheck is gradcheck  # (the function hides the module)
    assert minigrad.autograd.gradgradcheck is gradgradcheck
    assert issubclass(GradcheckError, RuntimeError)


@pytest.mark.parametrize("kwargs, what", [
    ({"check_forward_ad": True, "check_batched_forward_grad": True},
     "check_batched_forward_grad=True"),
    ({"check_batched_grad": True}, "check_batched_grad=True"),
    ({"fast_mode": True}, "fast_mode=True"),
])
def test_what_minigrad_lacks_is_refused_clearly(kwargs, what):
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"does not implement {what}"):
        minigrad.autograd.gradcheck(lambda x: x * 2, (x,), **kwargs)
    with pytest.raises(NotImplementedError, match=f"does not implement {what}"):
        minigrad.autograd.gradcheck(lambda x: x * 2, (x,), raise_exception=False, **kwargs)


def test_the_check_leaves_the_inputs_as_they_were():
    x = minigrad.tensor([0.5, -1.0], dtype=minigrad.float64, requires_grad=True)
    assert minigrad.autograd.gradcheck(lambda x: x.exp(), (x,))
    assert x.tolist() == [0.5, -1.0] and x._version == 0 and x.grad is None

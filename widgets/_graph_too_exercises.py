"""Exercises of lesson 11, "The backward pass is a graph too" (`create_graph=True`).

As everywhere in the course, each expected answer is computed by running minigrad,
and a coding exercise runs the learner's function on fresh inputs.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from ._exercise_kit import _choice, _code, _value


def _mg():
    import minigrad

    return minigrad


@_value("l11_cube_grad_fn",
        "type(g.grad_fn).__name__ for g, = autograd.grad((x ** 3).sum(), x, "
        "create_graph=True)",
        hint="The gradient is 3 * x**2 * grad, computed by PowBackward0's formula with "
             "ops that record; the last op applied names the node.",
        explain="pow's backward computes grad * (3 * x.pow(2)): the last op is a "
                "multiplication of two tensors, so g.grad_fn is MulBackward0.")
def _l11_cube_grad_fn():
    torch = _mg()
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    return type(g.grad_fn).__name__


@_value("l11_transfer_third_derivative",
        "the third derivative of sin at x = [0, 1] (a list), by three calls of "
        "autograd.grad",
        hint="Differentiate sin(x).sum() with create_graph=True, then the sum of that "
             "gradient, then the sum of the second one (the last call needs no graph).",
        explain="sin' = cos, sin'' = -sin, sin''' = -cos: [-1, -cos(1)] = [-1, -0.5403].")
def _l11_transfer_third_derivative():
    torch = _mg()
    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    (d1,) = torch.autograd.grad(x.sin().sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = torch.autograd.grad(d2.sum(), x)
    return d3.tolist()


_choice("l11_why_create_graph",
        "In the gradient penalty, why must the first autograd.grad (the gradient with "
        "respect to the input) be called with create_graph=True?",
        [("a", "Without it the input gradient is a plain tensor without grad_fn: the "
               "penalty computed from it has no graph leading back to the weights, so "
               "penalty.backward() cannot give them a gradient.", ""),
         ("b", "create_graph=True makes the input gradient more accurate.",
          "The values are the same either way; what differs is whether the ops of the "
          "backward pass are recorded."),
         ("c", "Without it the forward graph is freed, and the penalty's backward "
               "fails for that reason alone.",
          "retain_graph=True would keep the forward graph, and the penalty would still "
          "not reach the weights: the gradient it is computed from has no graph."),
         ("d", "Any second call of autograd.grad needs create_graph=True.",
          "A second call on a kept graph needs only retain_graph=True; create_graph is "
          "about differentiating the result of the call.")],
        correct="a",
        explain="create_graph=True records the backward pass itself, so the gradient is a "
                "function of the weights that backward can go through again.")


@contextlib.contextmanager
def _without_functional():
    """The ready-made helpers refuse to run: the exercise asks for double backward."""
    functional = _mg().autograd.functional
    names = ("hvp", "vhp", "hessian", "jacobian")
    saved = {name: getattr(functional, name) for name in names}

    def refuse(*args, **kwargs):
        raise AssertionError("uses autograd.functional")

    try:
        for name in names:
            setattr(functional, name, refuse)
        yield
    finally:
        for name, fn in saved.items():
            setattr(functional, name, fn)


_HVP_CASES = (
    (lambda t, x: (x**3).sum(), [1.0, -2.0, 0.5], [1.0, 0.0, 2.0]),
    (lambda t, x: t.tanh(x * x.sum()).sum(), [0.3, -0.1, 0.2], [1.0, -1.0, 0.5]),
    (lambda t, x: (x.sin() * x.exp()).sum() + (x[0] * x[1]) ** 2, [0.4, 1.2], [-1.0, 2.0]),
)


@_code("l11_grad_norm_grad",
       "grad_norm_grad(f, x): the gradient with respect to x of (g ** 2).sum(), g the "
       "gradient of the scalar f(x), by double backward (without autograd.functional)",
       hint="g, = torch.autograd.grad(f(x), x, create_graph=True), so that g has a graph; "
            "then differentiate (g ** 2).sum() with respect to x.",
       explain="The penalty's gradient goes back through the recorded backward pass: it is "
               "2 H g, found with two backward passes and never the Hessian.")
def _l11_grad_norm_grad(fn):
    torch = _mg()
    for i, (f, x_values, _) in enumerate(_HVP_CASES):
        x = torch.tensor(x_values, dtype=torch.float64, requires_grad=True)
        scalar = functools.partial(f, torch)  # scalar(x) is f(torch, x)
        (g,) = torch.autograd.grad(scalar(x), x)
        _, hg = torch.autograd.functional.hvp(scalar, x.detach(), g)
        want = 2 * hg
        try:
            with _without_functional():
                got = fn(scalar, x)
        except AssertionError as error:
            if "autograd.functional" in str(error):
                return ("compute it with two calls of torch.autograd.grad, not with "
                        "autograd.functional.")
            raise
        if not hasattr(got, "detach"):
            return f"case {i}: return a tensor, got {type(got).__name__}."
        got_values = np.asarray(got.detach().numpy(), np.float64)
        if got_values.shape != tuple(want.shape):
            return (f"case {i}: the gradient has x's shape {tuple(want.shape)}, yours has "
                    f"{got_values.shape}.")
        if not np.allclose(got_values, want.numpy(), rtol=1e-6, atol=1e-9):
            return (f"case {i}: got {np.round(got_values, 4).tolist()}, expected "
                    f"{np.round(want.numpy(), 4).tolist()}. Did the first grad use "
                    "create_graph=True, and the second differentiate (g ** 2).sum()?")
    return None

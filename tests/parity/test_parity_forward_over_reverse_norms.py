"""Forward over reverse through batch_norm and layer_norm, against PyTorch.

A backward through their nodes that records (create_graph=True, or dual tensors)
calls `native_batch_norm_backward` / `native_layer_norm_backward`, which have no
tangent formula: with a tangent on an input, both libraries run the op's
decomposition into smaller ops on the dual inputs (minigrad's is in
`minigrad/ops/normalization_decomposed.py`). The gradient keeps the op's own node.

Tolerance: PyTorch's decomposition takes mean and variance from one `var_mean` (a
running, Welford sum) and rstd from `rsqrt`; minigrad from `mean`, `var` and
`pow(-0.5)`. The statistics, and so the gradients and their tangents, can differ in
the last bits (a few units of 1e-16 of the largest value, here): compared to 1e-12
relative, and 1e-14 of the largest value absolute (float64).
"""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats
from parity_harness import raised

import minigrad
from minigrad.ops.formulas import BACKWARD_OPS

RNG = np.random.default_rng(7)
X2, TX2 = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 4))
X3, TX3 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 3, 4))
W4, TW4, B4 = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)
W3, TW3, B3 = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
W34, TW34 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
G3 = RNG.standard_normal((2, 3, 4))


def assert_close(got: np.ndarray, want: np.ndarray) -> None:
    """Equal but for the last bits: the float policy's CHAIN (see the module's
    docstring)."""
    assert_floats(got, want, CHAIN)


def fad(m):
    return m.autograd.forward_ad


def F(m):  # noqa: N802
    return m.nn.functional


def leaf(m, values):
    return m.tensor(values, requires_grad=True)


def dual(m, values, tangent):
    """A dual tensor whose primal is a leaf that requires grad."""
    return fad(m).make_dual(leaf(m, values), m.tensor(tangent))


def _layer_norm(shape_kind: str, affine: str):
    """grad of sum(layer_norm(x)**3) w.r.t. x (and the weight and bias if it has
    them), x and the weight dual. (Not of sum(y**2): that is nearly constant,
    n * var / (var + eps) per sample, and its gradient mostly rounding.)"""
    def program(m):
        x, tx = (X2, TX2) if shape_kind == "2d" else (X3, TX3)
        shape = (4,) if shape_kind != "last two dims" else (3, 4)
        w_val, w_tan = (W4, TW4) if shape == (4,) else (W34, TW34)
        w = dual(m, w_val, w_tan) if affine in ("weight", "weight and bias") else None
        b = leaf(m, np.ones(shape) * 0.3) if affine in ("bias", "weight and bias") else None
        xd = dual(m, x, tx)
        y = F(m).layer_norm(xd, shape, w, b)
        wanted = [t for t in (xd, w, b) if t is not None]
        return m.autograd.grad((y ** 3).sum(), wanted, create_graph=True)
    return program


def _batch_norm(mode: str, affine: bool, three_dims: bool = False):
    def program(m):
        # (N, C) = (5, 4) or (N, C, L) = (2, 3, 4)
        x, tx, w, tw, b = (X3, TX3, W3, TW3, B3) if three_dims else (X2, TX2, W4, TW4, B4)
        w, b = (dual(m, w, tw), leaf(m, b)) if affine else (None, None)
        xd = dual(m, x, tx)
        if mode == "train":
            y = F(m).batch_norm(xd, None, None, w, b, training=True)
        else:
            c = x.shape[1]
            y = F(m).batch_norm(xd, m.tensor(B4[:c] * 0.1), m.tensor(np.abs(W4[:c]) + 0.5),
                                w, b, training=False)
        wanted = [t for t in (xd, w, b) if t is not None]
        return m.autograd.grad((y * y.exp()).sum(), wanted, create_graph=True)
    return program


def _layer_norm_module(m):
    layer = m.nn.LayerNorm(4, dtype=m.float64)
    with m.no_grad():
        layer.weight.copy_(m.tensor(W4))
        layer.bias.copy_(m.tensor(B4))
    x = dual(m, X3, TX3)
    y = layer(x)
    return m.autograd.grad((y ** 3).sum(), [x, layer.weight, layer.bias], create_graph=True)


def _batch_norm_module(m, train: bool = True):
    layer = m.nn.BatchNorm1d(3, dtype=m.float64)
    with m.no_grad():
        layer.weight.copy_(m.tensor(W3))
        layer.bias.copy_(m.tensor(B3))
    if not train:
        layer(m.tensor(X3 * 2 + 1))  # (running statistics of their own)
        layer.eval()
    x = dual(m, X3, TX3)
    y = layer(x)
    return m.autograd.grad((y ** 3).sum(), [x, layer.weight], create_graph=True)


def _tangent_of_grad_out(m):
    """Only grad_out carries a tangent: the gradient is linear in it."""
    x = leaf(m, X3)
    y = F(m).layer_norm(x, (4,), leaf(m, W4))
    return m.autograd.grad(y, x, fad(m).make_dual(m.tensor(G3), m.tensor(TX3)),
                           create_graph=True)


PROGRAMS = {
    "layer_norm, 2d": _layer_norm("2d", "none"),
    "layer_norm, 3d": _layer_norm("3d", "none"),
    "layer_norm, last two dims": _layer_norm("last two dims", "none"),
    "layer_norm, weight": _layer_norm("3d", "weight"),
    "layer_norm, bias": _layer_norm("2d", "bias"),
    "layer_norm, weight and bias": _layer_norm("3d", "weight and bias"),
    "layer_norm, last two dims, weight and bias": _layer_norm("last two dims",
                                                              "weight and bias"),
    "batch_norm, training": _batch_norm("train", False),
    "batch_norm, training, affine": _batch_norm("train", True),
    "batch_norm, training, 3d, affine": _batch_norm("train", True, three_dims=True),
    "batch_norm, eval": _batch_norm("eval", False),
    "batch_norm, eval, affine, 3d": _batch_norm("eval", True, three_dims=True),
    "nn.LayerNorm": _layer_norm_module,
    "nn.BatchNorm1d": _batch_norm_module,
    "nn.BatchNorm1d, eval": lambda m: _batch_norm_module(m, train=False),
    "a tangent on grad_out only": _tangent_of_grad_out,
}


def _found(m, program) -> list:
    """Each gradient's node name, values, tangent values (None: none) and whether
    the tangent requires grad."""
    with fad(m).dual_level():
        found = []
        for g in program(m):
            primal, tangent = fad(m).unpack_dual(g)
            found.append((None if g.grad_fn is None else type(g.grad_fn).__name__,
                          primal.detach().numpy().copy(),
                          None if tangent is None else tangent.detach().numpy().copy(),
                          None if tangent is None else tangent.requires_grad))
        return found


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_tangent_of_a_normalizations_gradient_is_pytorchs(torch, name):
    want, got = _found(torch, PROGRAMS[name]), _found(minigrad, PROGRAMS[name])
    assert len(want) == len(got)
    for (w_node, w_p, w_t, w_rg), (g_node, g_p, g_t, g_rg) in zip(want, got):
        assert (g_node, g_rg) == (w_node, w_rg)
        assert_close(g_p, w_p)
        assert (g_t is None) == (w_t is None)
        if w_t is not None:
            assert_close(g_t, w_t)


@pytest.mark.parametrize("name", ["layer_norm, weight and bias", "batch_norm, training, affine"])
def test_the_tangent_is_the_hessian_times_the_direction(name):
    """Checked by central differences, without PyTorch."""
    f = {"layer_norm, weight and bias":
         lambda m, x: (F(m).layer_norm(x, (4,), m.tensor(W4), m.tensor(B4)) ** 3).sum(),
         "batch_norm, training, affine":
         lambda m, x: (F(m).batch_norm(x, None, None, m.tensor(W3), m.tensor(B3),
                                       training=True) ** 3).sum()}[name]
    m = minigrad
    with fad(m).dual_level():
        x = dual(m, X3, TX3)
        (g,) = m.autograd.grad(f(m, x), x, create_graph=True)
        tangent = fad(m).unpack_dual(g).tangent.detach().numpy()
    step, grads = 1e-6, []
    for sign in (1, -1):
        x = leaf(m, X3 + sign * step * TX3)
        grads.append(m.autograd.grad(f(m, x), x)[0].numpy())
    np.testing.assert_allclose(tangent, (grads[0] - grads[1]) / (2 * step), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("name", ["layer_norm, weight", "batch_norm, training, affine"])
def test_a_second_backward_keeps_the_double_backward_and_its_tangent(torch, name):
    """The gradient's node is still the op's: a second derivative goes through the
    double backward formulas, whose ops carry the tangents on."""
    def program(m):
        first = PROGRAMS[name](m)
        inputs = [t for t in first[0].grad_fn.next_functions]  # (only to be sure it ran)
        assert inputs
        x = _inputs_of(m, first)
        return m.autograd.grad(sum((g * g).sum() for g in first), x, create_graph=True)

    want, got = _found(torch, program), _found(minigrad, program)
    for (_, w_p, w_t, _), (_, g_p, g_t, _) in zip(want, got):
        assert_close(g_p, w_p)
        assert_close(g_t, w_t)


def _inputs_of(m, grads) -> list:
    """The leaves the gradients' graph reaches (the dual inputs' primals)."""
    leaves, seen, todo = [], set(), [g.grad_fn for g in grads]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        todo.extend(fn for fn, _ in node.next_functions)
    return sorted(leaves, key=lambda t: t.shape)[:1]


GRADCHECKS = {
    "layer_norm": lambda m, x, w: F(m).layer_norm(x, (4,), w, None),
    "layer_norm, last two dims": lambda m, x, w: F(m).layer_norm(x, (2, 4)) * w.sum(),
    "batch_norm, training": lambda m, x, w: F(m).batch_norm(
        x.transpose(1, 2), None, None, w, None, training=True),
    "batch_norm, eval": lambda m, x, w: F(m).batch_norm(
        x.transpose(1, 2), m.tensor(B4), m.tensor(np.abs(W4) + 1), w, None, training=False),
}


def _gradchecks(m, fn) -> tuple:
    x, w = leaf(m, X3[:, :2] * 0.5), leaf(m, W4)
    f = lambda x, w: fn(m, x, w)  # noqa: E731
    m.manual_seed(0)
    return (m.autograd.gradcheck(f, (x, w), check_forward_ad=True),
            m.autograd.gradgradcheck(f, (x, w), check_fwd_over_rev=True))


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck_and_gradgradcheck_forward_over_reverse_pass(torch, name):
    assert _gradchecks(minigrad, GRADCHECKS[name]) == _gradchecks(torch, GRADCHECKS[name])
    assert _gradchecks(minigrad, GRADCHECKS[name]) == (True, True)


def test_a_plain_backward_outside_forward_mode_keeps_the_fused_kernels(monkeypatch):
    """The decomposition runs only for tangents: create_graph=True outside a dual
    level still takes the fused numpy backward."""
    from minigrad.ops import normalization_backward

    def refuse(*args, **kwargs):
        raise AssertionError("the decomposition ran")

    monkeypatch.setattr(normalization_backward, "layer_norm_backward_decomposed", refuse)
    monkeypatch.setattr(normalization_backward, "batch_norm_backward_decomposed", refuse)
    m = minigrad
    x = leaf(m, X3)
    for y in (F(m).layer_norm(x, (4,), leaf(m, W4)),
              F(m).batch_norm(x, None, None, leaf(m, W3), None, training=True)):
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        assert type(g.grad_fn).__name__.endswith("NormBackwardBackward0")
    with fad(m).dual_level():  # (a level, but no dual tensor)
        (g,) = m.autograd.grad((F(m).layer_norm(x, (4,)) ** 2).sum(), x, create_graph=True)


def test_huber_loss_backward_still_refuses_forward_mode_as_pytorch_does(torch):
    """PyTorch has neither a formula nor a decomposition for huber_loss_backward."""
    def program(m):
        with fad(m).dual_level():
            x = dual(m, X2, TX2)
            loss = F(m).huber_loss(x, m.tensor(X2 * 0.3), delta=0.4)
            m.autograd.grad(loss, x, create_graph=True)

    kind, message = raised(lambda: program(minigrad))
    assert (kind, message) == (
        "NotImplementedError",
        "Trying to use forward AD with huber_loss_backward that does not support it because "
        "it has not been implemented yet in minigrad (HuberLossBackwardBackward0 has no "
        "tangent formula).")
    # (PyTorch's message goes on with where to ask for it)
    want_kind, want_message = raised(lambda: program(torch))
    assert want_kind == kind
    assert want_message.startswith(message.split(" in minigrad")[0])


# -- the ops themselves, on dual inputs --------------------------------------------------------


def _aten_op(m, name: str):
    return getattr(m.ops.aten, name) if m is not minigrad else BACKWARD_OPS[name]


def _batch_norm_backward(m, train: bool) -> list:
    """native_batch_norm_backward on dual grad_out, input and weight, with the saved
    statistics of PyTorch's forward (the same inputs for both libraries)."""
    x, g = X3, G3
    running_mean, running_var = B3 * 0.1, np.abs(W3) + 0.5
    save_mean, save_invstd = _torch_statistics(x, running_mean, running_var, train)
    with fad(m).dual_level():
        outs = _aten_op(m, "native_batch_norm_backward")(
            fad(m).make_dual(m.tensor(g), m.tensor(TX3 * 0.5)), fad(m).make_dual(
                m.tensor(x), m.tensor(TX3)), fad(m).make_dual(m.tensor(W3), m.tensor(TW3)),
            m.tensor(running_mean), m.tensor(running_var), m.tensor(np.asarray(save_mean)),
            m.tensor(np.asarray(save_invstd)), train, 1e-5, [True, True, True])
        return [[a.numpy().copy() for a in fad(m).unpack_dual(o)[:2]] for o in outs]


def _torch_statistics(x, running_mean, running_var, train):
    """The mean and invstd PyTorch's batch_norm saves."""
    import torch

    _, mean, invstd = torch.native_batch_norm(
        torch.tensor(x), None, None, torch.tensor(running_mean), torch.tensor(running_var),
        train, 0.1, 1e-5)
    return mean.numpy(), invstd.numpy()


def test_native_batch_norm_backward_in_eval_mode(torch):
    """With the running statistics (no var_mean): the weight's and bias's gradients
    and their tangents are sums over the batch, which PyTorch adds in an order of its
    own, so within the float policy's CHAIN like the rest."""
    for want, got in zip(_batch_norm_backward(torch, False), _batch_norm_backward(minigrad, False)):
        for w, g in zip(want, got):
            assert_close(g, w)


def test_native_batch_norm_backward_in_training(torch):
    for want, got in zip(_batch_norm_backward(torch, True), _batch_norm_backward(minigrad, True)):
        for w, g in zip(want, got):
            assert_close(g, w)

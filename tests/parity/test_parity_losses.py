"""binary_cross_entropy, binary_cross_entropy_with_logits, l1_loss, smooth_l1_loss,
huber_loss and their nn modules against PyTorch: values, gradients of input and
target, nodes, saved tensors, versions, warnings and errors."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare

P = [[0.2, 0.7, 0.9], [0.5, 0.01, 0.999]]
Y = [[0.0, 1.0, 1.0], [0.3, 0.0, 1.0]]
Z = [[-2.0, 0.5, 3.0], [0.0, -40.0, 25.0]]
W = [1.0, 2.0, 0.5]


def _f(c):
    return c.m.nn.functional


def _const(c, values, dtype="float64"):
    return c.leaf(values, dtype, requires_grad=False)


CASES = {
    "bce": lambda c: _f(c).binary_cross_entropy(c.leaf(P), c.leaf(Y)),
    "bce-const-target": lambda c: _f(c).binary_cross_entropy(c.leaf(P), _const(c, Y)),
    "bce-sum-weight": lambda c: _f(c).binary_cross_entropy(c.leaf(P), c.leaf(Y), _const(c, W),
                                                           reduction="sum"),
    "bce-none": lambda c: _f(c).binary_cross_entropy(c.leaf(P), _const(c, Y), reduction="none"),
    "bce-edges": lambda c: _f(c).binary_cross_entropy(c.leaf([0.0, 1.0, 0.5]),
                                                      _const(c, [1.0, 0.0, 0.5])),
    "bce-f32": lambda c: _f(c).binary_cross_entropy(c.leaf(P, "float32"),
                                                    _const(c, Y, "float32")),
    "bce-module": lambda c: c.m.nn.BCELoss(weight=_const(c, W))(c.leaf(P), _const(c, Y)),
    "bcel": lambda c: _f(c).binary_cross_entropy_with_logits(c.leaf(Z), c.leaf(Y)),
    "bcel-sum": lambda c: _f(c).binary_cross_entropy_with_logits(c.leaf(Z), _const(c, Y),
                                                                 reduction="sum"),
    "bcel-pos-weight": lambda c: _f(c).binary_cross_entropy_with_logits(
        c.leaf(Z), c.leaf(Y), pos_weight=_const(c, W)),
    "bcel-weights-none": lambda c: _f(c).binary_cross_entropy_with_logits(
        c.leaf(Z), c.leaf(Y), _const(c, [[2.0], [0.5]]), pos_weight=_const(c, W),
        reduction="none"),
    "bcel-f32": lambda c: _f(c).binary_cross_entropy_with_logits(c.leaf(Z, "float32"),
                                                                 _const(c, Y, "float32")),
    "bcel-module": lambda c: c.m.nn.BCEWithLogitsLoss(pos_weight=_const(c, W))(
        c.leaf(Z), _const(c, Y)),
    "bcel-after-sigmoid-changed": lambda c: _changed(c),
    "l1": lambda c: _f(c).l1_loss(c.leaf(Z), c.leaf(Y)),
    "l1-sum": lambda c: _f(c).l1_loss(c.leaf(Z), _const(c, Y), reduction="sum"),
    "l1-none": lambda c: _f(c).l1_loss(c.leaf(Z), c.leaf(Y), reduction="none"),
    "l1-broadcast": lambda c: _f(c).l1_loss(c.leaf(Z[0]), c.leaf(Y)),
    "l1-module": lambda c: c.m.nn.L1Loss(reduction="sum")(c.leaf(Z), c.leaf(Y)),
    "smooth-l1": lambda c: _f(c).smooth_l1_loss(c.leaf(Z), c.leaf(Y)),
    "smooth-l1-beta": lambda c: _f(c).smooth_l1_loss(c.leaf(Z), c.leaf(Y), beta=2.5,
                                                     reduction="none"),
    "smooth-l1-beta0": lambda c: _f(c).smooth_l1_loss(c.leaf(Z), c.leaf(Y), beta=0.0),
    "smooth-l1-f32": lambda c: _f(c).smooth_l1_loss(c.leaf(Z, "float32"),
                                                    _const(c, Y, "float32"), beta=0.5),
    "smooth-l1-module": lambda c: c.m.nn.SmoothL1Loss(beta=0.5, reduction="sum")(
        c.leaf(Z), c.leaf(Y)),
    "huber": lambda c: _f(c).huber_loss(c.leaf(Z), c.leaf(Y)),
    "huber-delta": lambda c: _f(c).huber_loss(c.leaf(Z), c.leaf(Y), delta=2.5, reduction="sum"),
    "huber-none": lambda c: _f(c).huber_loss(c.leaf(Z), _const(c, Y), reduction="none"),
    "huber-module": lambda c: c.m.nn.HuberLoss(delta=0.5)(c.leaf(Z), c.leaf(Y)),
    # a 0-d input with a pos_weight (found by the random programs): the backward's
    # `out=` steps met the scalar numpy makes of 0-d arrays ("return arrays must be of
    # ArrayType")
    "bcel-0d-pos-weight": lambda c: _0d_with_logits(c),
    # a 0-d tensor against itself (found by the random programs): the gradient was
    # numpy's scalar, so the second stream was added out of place (`.grad._version` 0,
    # PyTorch's 1)
    "huber-0d-self": lambda c: _0d_against_itself(c, "huber_loss"),
    "smooth-l1-0d-self": lambda c: _0d_against_itself(c, "smooth_l1_loss"),
}


def _0d_with_logits(c):
    x = c.leaf(0.3)
    return _f(c).binary_cross_entropy_with_logits(x, x.sigmoid(), pos_weight=_const(c, 1.5))


def _0d_against_itself(c, loss):
    x = c.leaf(0.3)
    return getattr(_f(c), loss)(x, x)


def _changed(c):
    x = c.leaf(Z)
    h = c.keep(x * 1.0)
    loss = _f(c).binary_cross_entropy_with_logits(h, _const(c, Y))
    h.mul_(2.0)  # the node saved h: backward must refuse
    return loss


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss(torch, case):
    check(torch, CASES[case])


S = "p = torch.tensor([0.2, 0.7, 0.9], requires_grad=True)\nF = torch.nn.functional\n"
ERRORS = {
    "bce_size": S + "F.binary_cross_entropy(p, torch.tensor([0.0, 1.0]))",
    "bce_range": S + "F.binary_cross_entropy(p * 2, torch.ones(3))",
    # the input and the target must lie in [0, 1], nan not: the first bad element
    # (the input's before the target's) is named (found by the random programs)
    "bce_input_nan": S + "F.binary_cross_entropy(p * float('nan'), torch.ones(3))",
    "bce_target_range": S + "F.binary_cross_entropy(p, torch.tensor([0.5, 1.5, 0.0]))",
    "bce_target_negative": S + "F.binary_cross_entropy(p, torch.tensor([-0.5, 1.0, 0.0]))",
    "bce_target_nan": S + "F.binary_cross_entropy(p, torch.tensor([0.5, float('nan'), 0.0]))",
    "bce_target_first": S + "F.binary_cross_entropy(p * torch.tensor([1.0, 1.0, 9.0]), "
                            "torch.tensor([0.5, -1.0, 0.0]))",
    "bce_input_first": S + "F.binary_cross_entropy(p * torch.tensor([1.0, 9.0, 1.0]), "
                           "torch.tensor([0.5, -1.0, 0.0]))",
    "bce_dtype": S + "F.binary_cross_entropy(p, torch.ones(3, dtype=torch.float64))",
    "bce_long_target": S + "F.binary_cross_entropy(p, torch.tensor([0, 1, 1]))",
    "bce_reduction": S + "F.binary_cross_entropy(p, torch.ones(3), reduction='x')",
    "bce_weight_shape": S + "F.binary_cross_entropy(p, torch.ones(3), weight=torch.ones(2))",
    "bcel_size": S + "F.binary_cross_entropy_with_logits(p, torch.ones(2))",
    "bcel_long_target": S + "F.binary_cross_entropy_with_logits(p, torch.tensor([0, 1, 1]))",
    "l1_broadcast_warns": S + "F.l1_loss(p, torch.ones(2, 3))",
    "smooth_negative_beta": S + "F.smooth_l1_loss(p, torch.ones(3), beta=-1)",
    "huber_zero_delta": S + "F.huber_loss(p, torch.ones(3), delta=0)",
    # A weight its backward has no formula for is refused when it requires grad (in
    # grad mode), before the dtype checks; under no_grad it is taken.
    "bce_weight_requires_grad": S + "F.binary_cross_entropy(p, torch.ones(3), weight="
                                    "torch.ones(3, dtype=torch.float64, requires_grad=True))",
    "bcel_weight_requires_grad": S + "F.binary_cross_entropy_with_logits(p, torch.ones(3), "
                                     "weight=torch.ones(3, requires_grad=True))",
    "bcel_pos_weight_requires_grad": S + "F.binary_cross_entropy_with_logits(p, torch.ones(3), "
                                         "pos_weight=torch.ones(3, requires_grad=True))",
    "nll_weight_requires_grad": S + "F.nll_loss(p.detach().view(1, 3), torch.tensor([7]), "
                                    "weight=torch.ones(3, requires_grad=True))",
    "ce_weight_requires_grad": S + "F.cross_entropy(p.view(1, 3), torch.tensor([1]), "
                                   "weight=torch.ones(3, requires_grad=True))",
    "weight_requires_grad_no_grad": S + "w = torch.ones(3, requires_grad=True)\n"
                                        "with torch.no_grad():\n"
                                        "    r = F.binary_cross_entropy(p, torch.ones(3), w)\n"
                                        "r",
    "legacy": S + "F.l1_loss(p, torch.ones(3), size_average=False)",
    "reprs": "[repr(m) for m in (torch.nn.BCELoss(), torch.nn.BCEWithLogitsLoss(), "
             "torch.nn.L1Loss(), torch.nn.SmoothL1Loss(beta=2), torch.nn.HuberLoss())]",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_loss_errors(torch, name):
    compare(torch, ERRORS[name])


REDUCED_LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", REDUCED_LOSSES)
def test_long_losses_reduce_as_pytorchs(torch, name, dtype, reduction):
    """A loss's "mean" and "sum" of thousands of per-element losses: PyTorch adds them
    in an order its vector width chooses, so the value is compared as the float
    policy's SUM (a few ulps of the summed magnitudes; the per-element losses are IEEE
    arithmetic, and nonnegative, so the magnitudes sum to the value itself)."""
    import numpy as np
    from float_policy import SUM, assert_floats

    import minigrad

    rng = np.random.default_rng(5)
    x, t = (rng.normal(0, 2, 3000).astype(dtype) for _ in range(2))
    want = getattr(torch.nn.functional, name)(torch.from_numpy(x), torch.from_numpy(t),
                                              reduction=reduction).numpy()
    got = getattr(minigrad.nn.functional, name)(minigrad.from_numpy(x),
                                                minigrad.from_numpy(t),
                                                reduction=reduction).numpy()
    assert_floats(got, want, SUM)

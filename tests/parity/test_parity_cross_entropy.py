"""nll_loss and cross_entropy (and nn.NLLLoss, nn.CrossEntropyLoss) against PyTorch:
values, gradients, the nodes PyTorch records (NllLossBackward0 over
LogSoftmaxBackward0; with probabilities or label smoothing, the ordinary ops it
composes), saved tensors, versions, warnings and errors."""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import check
from test_parity_bad_input import compare
from test_parity_joining_statistics import _leaf

X = [[1.0, 2.0, 3.0], [4.0, 5.0, 7.5], [-1.0, 0.25, -3.0], [0.5, 0.5, 0.5]]
P = [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.25, 0.25, 0.5]]
W = [1.0, 2.0, 0.5]


def _t(c, values=(2, 0, 1, 2)):
    return c.m.tensor(list(values))


def _w(c, dtype="float64"):
    return c.leaf(W, dtype, requires_grad=False)


CASES = {
    "nll": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c)),
    "nll-sum": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), reduction="sum"),
    "nll-none": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), reduction="none"),
    "nll-weight": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), weight=_w(c)),
    "nll-weight-none": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), _w(c),
                                                            reduction="none"),
    "nll-weight-sum": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), _w(c),
                                                           reduction="sum"),
    "nll-ignore": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), ignore_index=2),
    "nll-ignore-none": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), ignore_index=0,
                                                            reduction="none"),
    "nll-ignore-weight": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), _w(c),
                                                              ignore_index=0),
    "nll-all-ignored": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c, [1] * 4),
                                                            ignore_index=1),
    "nll-1d": lambda c: c.m.nn.functional.nll_loss(c.leaf(X[0]), c.m.tensor(1)),
    "nll-1d-none": lambda c: c.m.nn.functional.nll_loss(c.leaf(X[0]), c.m.tensor(1),
                                                        reduction="none"),
    "nll-empty": lambda c: c.m.nn.functional.nll_loss(c.leaf([[], []]).t(),
                                                      c.m.tensor([], dtype=c.m.int64)),
    "nll-f32": lambda c: c.m.nn.functional.nll_loss(c.leaf(X, "float32"), _t(c)),
    "nll-legacy": lambda c: c.m.nn.functional.nll_loss(c.leaf(X), _t(c), size_average=False),
    "nll-module": lambda c: c.m.nn.NLLLoss(weight=_w(c), ignore_index=1)(c.leaf(X), _t(c)),
    "ce": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), _t(c)),
    "ce-sum": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), _t(c), reduction="sum"),
    "ce-none": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), _t(c), reduction="none"),
    "ce-weight": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), _t(c), _w(c)),
    "ce-ignore": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), _t(c), ignore_index=2),
    "ce-1d": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X[1]), c.m.tensor(2)),
    "ce-f32": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X, "float32"), _t(c)),
    "ce-nonleaf": lambda c: c.m.nn.functional.cross_entropy(c.keep(c.leaf(X) * 2), _t(c)),
    "ce-smooth": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), _t(c),
                                                           label_smoothing=0.1),
    "ce-smooth-weight": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), _t(c), _w(c), label_smoothing=0.2),
    "ce-smooth-ignore": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), _t(c), ignore_index=2, label_smoothing=0.3),
    "ce-smooth-weight-ignore": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), _t(c), _w(c), ignore_index=0, label_smoothing=0.3),
    "ce-smooth-sum": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), _t(c), reduction="sum", label_smoothing=0.1),
    "ce-smooth-none": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), _t(c), reduction="none", label_smoothing=0.1, ignore_index=0),
    "ce-smooth-1d": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X[2]), c.m.tensor(0), label_smoothing=0.1),
    "ce-smooth-negative": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), _t(c), label_smoothing=-0.5),
    "ce-prob": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), c.leaf(P)),
    "ce-prob-grad-target": lambda c: c.m.nn.functional.cross_entropy(c.leaf(X), c.leaf(P)),
    "ce-prob-const": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), c.leaf(P, requires_grad=False)),
    "ce-prob-sum": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), c.leaf(P, requires_grad=False), reduction="sum"),
    "ce-prob-none": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), c.leaf(P, requires_grad=False), reduction="none"),
    "ce-prob-weight-smooth": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), c.leaf(P, requires_grad=False), _w(c), label_smoothing=0.2),
    "ce-prob-weight-none": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X), c.leaf(P, requires_grad=False), _w(c), reduction="none"),
    "ce-prob-1d": lambda c: c.m.nn.functional.cross_entropy(
        c.leaf(X[0]), c.leaf(P[0], requires_grad=False), _w(c)),
    "ce-module": lambda c: c.m.nn.CrossEntropyLoss()(c.leaf(X), _t(c)),
    "ce-module-options": lambda c: c.m.nn.CrossEntropyLoss(
        weight=_w(c), ignore_index=1, label_smoothing=0.05, reduction="sum")(c.leaf(X), _t(c)),
    "ce-module-legacy": lambda c: c.m.nn.CrossEntropyLoss(reduce=False)(c.leaf(X), _t(c)),
    "ce-then-logits-changed": lambda c: _changed_after(c),
}


# -- inputs of more than 2 dims (N, C, d1, ...): nll_loss2d, 4-D input as it is, others
# viewed as (N, C, 1, d1 * ...) (ViewBackward0 under NllLoss2DBackward0) -----------------------

def _targets(c, *shape, ignore=None):
    """Class indices 0, 1, 2 of `shape`, uneven; `ignore` replaces every fifth."""
    n = int(np.prod(shape))
    values = np.array([(i * 7 + 1) % 3 for i in range(n)])
    if ignore is not None:
        values[::5] = ignore
    return c.m.tensor(values.reshape(shape).tolist())


def _nd(c, *shape, dtype="float64"):
    return _leaf(c, *shape, dtype=dtype)


ND_CASES = {
    "nll-3d": lambda c: c.m.nn.functional.nll_loss(_nd(c, 2, 3, 4), _targets(c, 2, 4)),
    "nll-3d-none": lambda c: c.m.nn.functional.nll_loss(_nd(c, 2, 3, 4), _targets(c, 2, 4),
                                                        reduction="none"),
    "nll-3d-transposed": lambda c: c.m.nn.functional.nll_loss(
        _nd(c, 2, 4, 3).transpose(1, 2), _targets(c, 2, 4)),
    "nll-4d": lambda c: c.m.nn.functional.nll_loss(_nd(c, 2, 3, 2, 3), _targets(c, 2, 2, 3)),
    "nll-4d-none-weight-ignore": lambda c: c.m.nn.functional.nll_loss(
        _nd(c, 2, 3, 2, 3), _targets(c, 2, 2, 3, ignore=1), _w(c), ignore_index=1,
        reduction="none"),
    "nll-4d-weight-ignore": lambda c: c.m.nn.functional.nll_loss(
        _nd(c, 2, 3, 2, 3), _targets(c, 2, 2, 3, ignore=-100), _w(c)),
    "nll-4d-sum-f32": lambda c: c.m.nn.functional.nll_loss(
        _nd(c, 2, 3, 2, 3, dtype="float32"), _targets(c, 2, 2, 3), reduction="sum"),
    "nll-5d": lambda c: c.m.nn.functional.nll_loss(_nd(c, 2, 3, 2, 2, 2),
                                                   _targets(c, 2, 2, 2, 2), _w(c)),
    "nll-5d-none": lambda c: c.m.nn.functional.nll_loss(
        _nd(c, 2, 3, 2, 1, 2), _targets(c, 2, 2, 1, 2), reduction="none"),
    "nll-3d-empty": lambda c: c.m.nn.functional.nll_loss(_nd(c, 2, 3, 0),
                                                         _targets(c, 2, 0)),
    "nll-3d-empty-none": lambda c: c.m.nn.functional.nll_loss(
        _nd(c, 2, 3, 0), _targets(c, 2, 0), reduction="none"),
    "nll-4d-double-backward": lambda c: c.m.autograd.grad(
        c.m.nn.functional.nll_loss(c.keep(_nd(c, 2, 3, 2, 2) * 1.5), _targets(c, 2, 2, 2),
                                   _w(c)), c.kept[-1], create_graph=True),
    "ce-3d": lambda c: c.m.nn.functional.cross_entropy(_nd(c, 2, 3, 4), _targets(c, 2, 4)),
    "ce-4d-weight-none": lambda c: c.m.nn.functional.cross_entropy(
        _nd(c, 2, 3, 2, 2), _targets(c, 2, 2, 2), _w(c), reduction="none"),
    "ce-5d-ignore": lambda c: c.m.nn.functional.cross_entropy(
        _nd(c, 1, 3, 2, 2, 2), _targets(c, 1, 2, 2, 2, ignore=2), ignore_index=2),
    "ce-4d-smooth-weight-ignore": lambda c: c.m.nn.functional.cross_entropy(
        _nd(c, 2, 3, 2, 2), _targets(c, 2, 2, 2, ignore=0), _w(c), ignore_index=0,
        label_smoothing=0.2),
    "ce-3d-smooth-none": lambda c: c.m.nn.functional.cross_entropy(
        _nd(c, 2, 3, 4), _targets(c, 2, 4), reduction="none", label_smoothing=0.1),
    "ce-4d-prob-weight": lambda c: c.m.nn.functional.cross_entropy(
        _nd(c, 2, 3, 2, 2), c.m.softmax(_nd(c, 2, 3, 2, 2), 1).detach(), _w(c)),
    "ce-3d-prob-smooth-none": lambda c: c.m.nn.functional.cross_entropy(
        _nd(c, 2, 3, 4), c.m.softmax(_nd(c, 2, 3, 4), 1).detach(), reduction="none",
        label_smoothing=0.3),
    "ce-module-4d": lambda c: c.m.nn.CrossEntropyLoss(weight=_w(c), ignore_index=1)(
        _nd(c, 2, 3, 2, 2), _targets(c, 2, 2, 2, ignore=1)),
    "nll-module-3d": lambda c: c.m.nn.NLLLoss(reduction="sum")(
        _nd(c, 2, 3, 4), _targets(c, 2, 4)),
}
CASES.update(ND_CASES)


def _changed_after(c):
    x = c.leaf(X)
    h = c.keep(x * 1.0)
    loss = c.m.nn.functional.cross_entropy(h, _t(c))
    h.add_(1.0)  # log_softmax saved its output, not h: backward still works
    return loss


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss(torch, case):
    # (log_softmax's exp and log come from PyTorch's vector math library: within the
    # float policy's CHAIN, like any program's values and gradients)
    check(torch, CASES[case])


def test_float32_batch_total_is_bit_for_bit(torch):
    """nll_loss adds a batch's losses in PyTorch's cascade order: a float32 total of a
    long batch has PyTorch's exact bits."""
    import minigrad

    rng = np.random.default_rng(7)
    logp = rng.normal(size=(1000, 10)).astype(np.float32)
    target = rng.integers(0, 10, 1000)
    weight = rng.uniform(0.5, 2, 10).astype(np.float32)
    for kw in ({}, {"reduction": "sum"}, {"ignore_index": 3}):
        for w in (None, weight):
            got = [lib.nn.functional.nll_loss(lib.tensor(logp), lib.tensor(target),
                                              None if w is None else lib.tensor(w), **kw)
                   .numpy() for lib in (torch, minigrad)]
            assert got[0].tobytes() == got[1].tobytes(), (kw, w is None, got)


X2 = "x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 7.5]], requires_grad=True)\n" \
     "t = torch.tensor([2, 0])\nF = torch.nn.functional\n"
ERRORS = {
    "target_out_of_bounds": X2 + "F.nll_loss(x, torch.tensor([2, 3]))",
    "target_negative": X2 + "F.cross_entropy(x, torch.tensor([2, -1]))",
    "target_float": X2 + "F.nll_loss(x, torch.tensor([2.0, 0.0]))",
    "target_float_ce": X2 + "F.cross_entropy(x, t.float())",
    "batch_mismatch": X2 + "F.nll_loss(x, torch.tensor([2]))",
    "bad_reduction": X2 + "F.nll_loss(x, t, reduction='avg')",
    "bad_reduction_ce": X2 + "F.cross_entropy(x, t, reduction='bad')",
    "weight_size": X2 + "F.nll_loss(x, t, weight=torch.ones(2))",
    "weight_2d": X2 + "F.nll_loss(x, t, weight=torch.ones(3, 1))",
    "weight_dtype": X2 + "F.nll_loss(x, t, weight=torch.ones(3, dtype=torch.float64))",
    "weight_not_tensor": X2 + "F.cross_entropy(x, t, 0)",
    "weight_not_tensor_nll": X2 + "F.nll_loss(x, t, 1.5)",
    "weight_size_ce": X2 + "F.cross_entropy(x, t, weight=torch.ones(2))",
    "weight_size_prob": X2 + "F.cross_entropy(x, torch.ones(2, 3) / 3, weight=torch.ones(2))",
    "input_0d": "torch.nn.functional.nll_loss(torch.tensor(1.0), torch.tensor(0))",
    "target_2d": X2 + "F.nll_loss(x, t.view(2, 1))",
    "input_int": "torch.nn.functional.nll_loss(torch.tensor([[1, 2]]), torch.tensor([0]))",
    "prob_ignore_index": X2 + "F.cross_entropy(x, torch.ones(2, 3) / 3, ignore_index=1)",
    "prob_int_target": X2 + "F.cross_entropy(x, torch.tensor([[0, 0, 1], [1, 0, 0]]))",
    "smoothing_too_big": X2 + "F.cross_entropy(x, t, label_smoothing=1.5)",
    "legacy_warning": X2 + "F.cross_entropy(x, t, size_average=False)",
    "nd_target_size": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4), "
                      "torch.zeros(2, 5, dtype=torch.long))",
    "nd_target_size_5d": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5, 6), "
                         "torch.zeros(2, 4, 5, dtype=torch.long))",
    "4d_target_dims": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                      "torch.zeros(2, 4, dtype=torch.long))",
    "4d_size_mismatch": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                        "torch.zeros(2, 4, 6, dtype=torch.long))",
    "4d_batch_mismatch": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                         "torch.zeros(3, 4, 5, dtype=torch.long))",
    "4d_target_float_before_weight": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                                     "torch.zeros(2, 4, 5), torch.ones(4))",
    "4d_weight_size": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                      "torch.zeros(2, 4, 5, dtype=torch.long), torch.ones(4))",
    "4d_input_int": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5, dtype=torch.long), "
                    "torch.zeros(2, 4, 5, dtype=torch.long))",
    "4d_weight_dtype": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                       "torch.zeros(2, 4, 5, dtype=torch.long), torch.ones(3).double())",
    "4d_target_out_of_bounds": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4, 5), "
                               "torch.full((2, 4, 5), 3))",
    "3d_weight_requires_grad": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4), "
                               "torch.zeros(2, 4, dtype=torch.long), "
                               "torch.ones(3, requires_grad=True))",
    "3d_none_out_of_bounds": "torch.nn.functional.nll_loss(torch.ones(2, 3, 4), "
                             "torch.full((2, 4), -2), reduction='none')",
    "module_reprs": "repr(torch.nn.CrossEntropyLoss()), repr(torch.nn.NLLLoss(ignore_index=3))",
    "module_attrs": "m = torch.nn.CrossEntropyLoss(label_smoothing=0.1, reduction='sum')\n"
                    "(m.label_smoothing, m.reduction, m.ignore_index, m.weight)",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_loss_errors(torch, name):
    compare(torch, ERRORS[name])

"""nn.Dropout, nn.BatchNorm1d (buffers, running statistics, num_batches_tracked),
nn.LayerNorm, nn.Embedding, nn.LeakyReLU / F.leaky_relu (and in place), nn.GELU and
nn.ReLU(inplace=True) after a sigmoid, against PyTorch: values (dropout's masks bit
for bit after the same seed), gradients, nodes, saved values, versions and errors."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare
from test_parity_joining_statistics import _leaf


def _seeded(make):
    def program(c):
        c.m.manual_seed(3)
        return make(c)
    return program


DROPOUT = {
    "F.dropout": lambda c: c.m.nn.functional.dropout(_leaf(c, 4, 5), 0.3),
    "F.dropout float32": lambda c: c.m.nn.functional.dropout(_leaf(c, 40, dtype="float32"),
                                                             0.77),
    "F.dropout of a transposed tensor": lambda c: c.m.nn.functional.dropout(
        _leaf(c, 4, 5).t(), 0.5),
    "F.dropout p=1": lambda c: c.m.nn.functional.dropout(_leaf(c, 4), 1.0),
    "F.dropout p=0 is the input": lambda c: c.m.nn.functional.dropout(_leaf(c, 4), 0.0),
    "F.dropout not training is the input": lambda c: c.m.nn.functional.dropout(
        _leaf(c, 4), 0.5, training=False),
    "F.dropout in place": lambda c: c.m.nn.functional.dropout(c.keep(_leaf(c, 3, 3) * 1), 0.4,
                                                              inplace=True),
    "Dropout": lambda c: c.m.nn.Dropout(0.2)(_leaf(c, 6, 7)),
    "Dropout eval": lambda c: c.m.nn.Dropout(0.2).eval()(_leaf(c, 6, 7)),
    "Dropout, then randn continues the stream": lambda c: (
        c.m.nn.Dropout()(_leaf(c, 3)), c.m.randn(3, dtype=c.m.float64)),
    "Dropout of 3000 float32 values": lambda c: c.m.nn.Dropout(0.1)(
        _leaf(c, 1000, 3, dtype="float32")),
}


def _batch_norm(make, *shape, train=True, steps=1, dtype="float64"):
    def program(c):
        bn = make(c.m)
        if dtype == "float64":
            bn = bn.double()
        if not train:
            bn.eval()
        x = _leaf(c, *shape, dtype=dtype)
        outs = [bn(x if i == 0 else x * 2) for i in range(steps)]
        c.keep(*bn.state_dict().values())  # (running statistics and their versions)
        return outs
    return program


def _of_inf(c, bn, then_eval=False):
    """A batch with inf in one channel (inf - inf: nan statistics there)."""
    x = c.leaf([[0.0, 1.0, float("inf")], [0.5, -0.5, 2.0]])
    out = bn(x)
    if then_eval:
        out = bn.eval()(x)
    c.keep(*bn.state_dict().values())
    return out


def _load_state(c):
    """A trained BatchNorm1d's state loaded into a new one: every entry copied in place."""
    trained, fresh = c.m.nn.BatchNorm1d(3).double(), c.m.nn.BatchNorm1d(3).double()
    trained(_leaf(c, 4, 3))
    fresh.load_state_dict(trained.state_dict())
    return fresh(_leaf(c, 4, 3, shift=1)), c.keep(*fresh.state_dict().values())


LAYERS = {
    "BatchNorm1d": _batch_norm(lambda m: m.nn.BatchNorm1d(3), 4, 3),
    "BatchNorm1d float32": _batch_norm(lambda m: m.nn.BatchNorm1d(3), 4, 3, dtype="float32"),
    "BatchNorm1d of (N, C, L)": _batch_norm(lambda m: m.nn.BatchNorm1d(3), 2, 3, 4),
    "BatchNorm1d two steps": _batch_norm(lambda m: m.nn.BatchNorm1d(3), 5, 3, steps=2),
    "BatchNorm1d momentum=None": _batch_norm(lambda m: m.nn.BatchNorm1d(3, momentum=None),
                                             5, 3, steps=2),
    "BatchNorm1d eval": _batch_norm(lambda m: m.nn.BatchNorm1d(3), 4, 3, train=False),
    "BatchNorm1d affine=False": _batch_norm(lambda m: m.nn.BatchNorm1d(3, affine=False), 4, 3),
    "BatchNorm1d bias=False": _batch_norm(lambda m: m.nn.BatchNorm1d(3, bias=False), 4, 3),
    "BatchNorm1d without running stats": _batch_norm(
        lambda m: m.nn.BatchNorm1d(3, track_running_stats=False), 4, 3),
    "BatchNorm1d without running stats, eval": _batch_norm(
        lambda m: m.nn.BatchNorm1d(3, track_running_stats=False), 4, 3, train=False),
    "BatchNorm1d load_state_dict": _load_state,
    "F.batch_norm": lambda c: c.m.nn.functional.batch_norm(
        _leaf(c, 4, 3), c.keep(c.m.zeros(3, dtype=c.m.float64)),
        c.keep(c.m.ones(3, dtype=c.m.float64)), _leaf(c, 3, shift=1), _leaf(c, 3, shift=2),
        True),
    "LayerNorm": lambda c: c.m.nn.LayerNorm(3).double()(_leaf(c, 4, 3)),
    "LayerNorm float32": lambda c: c.m.nn.LayerNorm(3)(_leaf(c, 4, 3, dtype="float32")),
    "LayerNorm of two dims, no affine": lambda c: c.m.nn.LayerNorm(
        [4, 3], elementwise_affine=False).double()(_leaf(c, 2, 4, 3)),
    "LayerNorm bias=False": lambda c: c.m.nn.LayerNorm(3, bias=False).double()(_leaf(c, 2, 3)),
    "F.layer_norm": lambda c: c.m.nn.functional.layer_norm(
        _leaf(c, 2, 5), (5,), _leaf(c, 5, shift=1), _leaf(c, 5, shift=2)),
    "Embedding": _seeded(lambda c: c.m.nn.Embedding(5, 3).double()(
        c.m.tensor([[0, 2], [2, 4]]))),
    "Embedding padding_idx": _seeded(lambda c: c.m.nn.Embedding(5, 3, padding_idx=2).double()(
        c.m.tensor([0, 2, 2, 1]))),
    "Embedding negative padding_idx": _seeded(lambda c: c.m.nn.Embedding(
        5, 3, padding_idx=-1)(c.m.tensor([4, 3]))),
    "F.embedding": lambda c: c.m.nn.functional.embedding(c.m.tensor([1, 1, 0]), _leaf(c, 3, 2)),
    "F.leaky_relu": lambda c: c.m.nn.functional.leaky_relu(_leaf(c, 4, 3), 0.2),
    "LeakyReLU": lambda c: c.m.nn.LeakyReLU()(_leaf(c, 4, 3)),
    "F.leaky_relu in place": lambda c: c.m.nn.functional.leaky_relu(
        c.keep(_leaf(c, 4, 3) * 1), 0.2, inplace=True),
    "LeakyReLU in place": lambda c: c.m.nn.LeakyReLU(0.1, inplace=True)(
        c.keep(_leaf(c, 4, 3) * 1)),
    "leaky_relu_ with a negative slope fails in backward": lambda c: (
        c.m.nn.functional.leaky_relu_(c.keep(_leaf(c, 4, 3) * 1), -0.2)),
    "leaky_relu_ of a leaf": lambda c: c.m.nn.functional.leaky_relu_(_leaf(c, 4, 3), 0.2),
    "F.gelu": lambda c: c.m.nn.functional.gelu(_leaf(c, 4, 3)),
    "GELU tanh": lambda c: c.m.nn.GELU("tanh")(_leaf(c, 4, 3)),
    "GELU float32": lambda c: c.m.nn.GELU()(_leaf(c, 4, 3, dtype="float32")),
    "GELU tanh float32": lambda c: c.m.nn.GELU(approximate="tanh")(
        _leaf(c, 4, 3, dtype="float32")),
    "ReLU(inplace=True) after a sigmoid": lambda c: c.m.nn.ReLU(inplace=True)(
        c.keep(_leaf(c, 4, 3).sigmoid())),
    "ReLU(inplace=True) after a product": lambda c: c.m.nn.ReLU(inplace=True)(
        c.keep(_leaf(c, 4, 3) * 2)),
    # a 0-d input gives a 0-d output (found by the random programs)
    "GELU of a number": lambda c: c.m.nn.GELU()(c.leaf(1.5)),
    "GELU tanh of a number": lambda c: c.m.nn.GELU("tanh")(c.leaf(-0.5)),
    "LeakyReLU of a number": lambda c: c.m.nn.LeakyReLU(0.2)(c.leaf(-1.5)),
    "LeakyReLU in place of a number": lambda c: c.m.nn.LeakyReLU(0.2, inplace=True)(
        c.keep(c.leaf(-1.5) * 1)),
    "Flatten(0) of a number": lambda c: c.m.nn.Flatten(0)(c.leaf(2.5)),
    # inf in the input: nan statistics, without numpy's warnings
    "BatchNorm1d of inf": lambda c: _of_inf(c, c.m.nn.BatchNorm1d(3, dtype=c.m.float64)),
    "BatchNorm1d of inf, then eval": lambda c: _of_inf(
        c, c.m.nn.BatchNorm1d(3, dtype=c.m.float64), then_eval=True),
    "LayerNorm of inf": lambda c: c.m.nn.LayerNorm(3, dtype=c.m.float64)(
        c.leaf([[0.0, 1.0, float("inf")], [0.5, -0.5, 2.0]])),
}


@pytest.mark.parametrize("case", list(DROPOUT))
def test_dropout(torch, case):
    check(torch, _seeded(DROPOUT[case]))


@pytest.mark.parametrize("case", list(LAYERS))
def test_layers(torch, case):
    check(torch, LAYERS[case])


A = "a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], requires_grad=True)\n"
ERRORS = {
    "dropout p": A + "torch.nn.functional.dropout(a, 1.5)",
    "Dropout p": "torch.nn.Dropout(-0.1)",
    "Dropout repr": "repr(torch.nn.Dropout(0.3)), repr(torch.nn.Dropout(inplace=True))",
    "BatchNorm1d of 1-D input": "torch.nn.BatchNorm1d(3)(torch.randn(3))",
    "BatchNorm1d one value per channel": "torch.nn.BatchNorm1d(3)(torch.randn(1, 3))",
    "BatchNorm1d channels": "torch.nn.BatchNorm1d(3)(torch.randn(2, 4))",
    "BatchNorm1d eval, one value": "torch.nn.BatchNorm1d(3).eval()(torch.ones(1, 3)).shape",
    "BatchNorm1d repr": "repr(torch.nn.BatchNorm1d(3)), repr(torch.nn.BatchNorm1d(4, eps=1e-3, "
                        "momentum=None, affine=False, track_running_stats=False))",
    "BatchNorm1d state_dict keys": "list(torch.nn.BatchNorm1d(3).state_dict().keys())",
    "BatchNorm1d buffers": "[n for n, b in torch.nn.BatchNorm1d(3).named_buffers()]",
    "BatchNorm1d num_batches_tracked": "torch.nn.BatchNorm1d(3).num_batches_tracked",
    "LayerNorm shape": "torch.nn.LayerNorm(3)(torch.randn(2, 4))",
    "LayerNorm repr": "repr(torch.nn.LayerNorm(3)), repr(torch.nn.LayerNorm([2, 3], eps=1e-3, "
                      "elementwise_affine=False))",
    "layer_norm weight shape": "torch.nn.functional.layer_norm(torch.randn(2, 3), (3,), "
                               "torch.ones(4))",
    "layer_norm of no dims": "torch.nn.functional.layer_norm(torch.randn(2, 3), ())",
    "LayerNorm of no dims": "m = torch.nn.LayerNorm(())\n"
                            "m.weight.shape, m.bias.shape, m(torch.tensor(1.5))",
    "Flatten of a number from dim 1": "torch.nn.Flatten()(torch.tensor(2.0))",
    "flatten of a number to dim 1": "torch.flatten(torch.tensor(2.0), 0, 1)",
    "flatten of a number from dim -2": "torch.tensor(2.0).flatten(-2)",
    "Embedding of floats": "torch.nn.Embedding(5, 3)(torch.tensor([1.0]))",
    "Embedding index range": "torch.nn.Embedding(5, 3)(torch.tensor([5]))",
    "Embedding negative index": "torch.nn.Embedding(5, 3)(torch.tensor([-1]))",
    "Embedding padding_idx range": "torch.nn.Embedding(5, 3, padding_idx=5)",
    "Embedding negative padding_idx range": "torch.nn.Embedding(5, 3, padding_idx=-6)",
    "Embedding repr": "repr(torch.nn.Embedding(5, 3)), "
                      "repr(torch.nn.Embedding(5, 3, padding_idx=-1))",
    "leaky_relu of integers": "torch.nn.functional.leaky_relu(torch.tensor([1, -2]))",
    "LeakyReLU repr": "repr(torch.nn.LeakyReLU()), repr(torch.nn.LeakyReLU(0.2, inplace=True))",
    "gelu approximate": A + "torch.nn.functional.gelu(a, approximate='fast')",
    "GELU repr": "repr(torch.nn.GELU()), repr(torch.nn.GELU('tanh'))",
    "gelu of integers": "torch.nn.functional.gelu(torch.tensor([1, 2]))",
    "register_buffer of a number": "torch.nn.Module().register_buffer('x', 3)",
    "register_buffer name with a dot": "torch.nn.Module().register_buffer('a.b', None)",
    "assign a number to a buffer": "m = torch.nn.BatchNorm1d(2)\nm.running_mean = 3",
    "leaky_relu_ of a leaf": A + "torch.nn.functional.leaky_relu_(a)",
    # Parameters of another dtype than the input: the first one given decides whether
    # PyTorch takes its "mixed type" path (needing float32 parameters and a half input)
    "BatchNorm1d of a double input": "torch.nn.BatchNorm1d(3)(torch.ones(2, 3).double())",
    "batch_norm, double bias": "torch.nn.functional.batch_norm(torch.ones(2, 3), None, None, "
                               "torch.ones(3), torch.zeros(3).double(), training=True)",
    "batch_norm, double statistics": "torch.nn.functional.batch_norm(torch.ones(2, 3), "
                                     "torch.zeros(3).double(), torch.ones(3).double())",
    "batch_norm, float statistics of a double input": (
        "torch.nn.functional.batch_norm(torch.ones(2, 3).double(), torch.zeros(3), "
        "torch.ones(3), training=True)"),
    "LayerNorm of a double input": "torch.nn.LayerNorm(3)(torch.ones(2, 3).double())",
    "layer_norm, double weight": "torch.nn.functional.layer_norm(torch.ones(2, 3), (3,), "
                                 "torch.ones(3).double(), torch.zeros(3))",
    "layer_norm, float bias of a double input": (
        "torch.nn.functional.layer_norm(torch.ones(2, 3).double(), (3,), "
        "torch.ones(3).double(), torch.zeros(3))"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_layer_errors(torch, name):
    compare(torch, ERRORS[name])


def test_batch_norm_state_round_trips_through_save_and_load(tmp_path):
    import minigrad

    bn = minigrad.nn.BatchNorm1d(2)
    bn(minigrad.tensor([[1.0, 2.0], [3.0, 5.0]]))
    minigrad.save(bn.state_dict(), tmp_path / "bn.pt")
    fresh = minigrad.nn.BatchNorm1d(2)
    fresh.load_state_dict(minigrad.load(tmp_path / "bn.pt"))
    for name, value in bn.state_dict().items():
        got = fresh.state_dict()[name]
        assert got.dtype == value.dtype and got.tolist() == value.tolist(), name
    assert fresh.num_batches_tracked.item() == 1


def test_double_converts_float_buffers_only():
    import minigrad

    bn = minigrad.nn.BatchNorm1d(2).double()
    assert bn.running_mean.dtype is minigrad.float64
    assert bn.num_batches_tracked.dtype is minigrad.int64

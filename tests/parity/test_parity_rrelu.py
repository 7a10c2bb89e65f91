"""rrelu against PyTorch: in training, slopes drawn from the generator as PyTorch's
kernel draws them (one double per element <= 0, in row-major order), kept as the
node's `noise`; in evaluation, leaky_relu by (lower + upper) / 2. The node
(RreluWithNoiseBackward0), its gradient (`grad * noise`, or leaky_relu's), the
RreluWithNoiseBackwardBackward0 a `create_graph=True` backward records, nn.RReLU."""

from __future__ import annotations

import pytest
from parity_harness import check, raised

import minigrad

V = [[0.5, -1.0, 0.0, -2.0], [3.0, -0.5, 1.5, -0.25], [-3.0, 2.0, 0.75, -1.25]]

LAYOUTS = {
    "row-major": lambda t: t,
    "transposed": lambda t: t.t(),
    "a strided slice": lambda t: t[:, ::2],
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("bounds", [(1 / 8, 1 / 3), (0.1, 0.9), (0.25, 0.25)], ids=str)
def test_rrelu_in_training(torch, layout, bounds, dtype):
    def program(c):
        c.m.manual_seed(7)
        x = c.leaf(V, dtype)
        y = c.m.nn.functional.rrelu(LAYOUTS[layout](x * 2), *bounds, training=True)
        after = c.m.rand(3, dtype=c.m.float64)  # (the generator moved on as PyTorch's)
        return c.keep(y * y), c.keep(after)

    check(torch, program)


@pytest.mark.parametrize("order", [2, 3])
def test_rrelu_in_training_differentiated_again(torch, order):
    def program(c):
        c.m.manual_seed(3)
        x = c.leaf(V)
        y = c.m.rrelu(x * x - 1, 0.2, 0.6, training=True)
        (g,) = c.m.autograd.grad((y * y * y).sum(), x, create_graph=True)
        if order == 3:
            (g,) = c.m.autograd.grad((g * g).sum(), x, create_graph=True)
        return c.keep(g)

    check(torch, program)


def _evaluated(m, layout: str, dtype: str):
    """rrelu in evaluation, described (its noise is uninitialised memory in both)."""
    x = m.tensor(V, dtype=getattr(m, dtype), requires_grad=True)
    y = m.nn.functional.rrelu(LAYOUTS[layout](x * 2), 0.1, 0.3)
    node = y.grad_fn
    saved = (node.name(), node._saved_lower, node._saved_upper, node._saved_training,
             node._saved_self.tolist(), tuple(node._saved_noise.shape))
    (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = m.autograd.grad((g * g).sum(), x)
    return (y.tolist(), y.stride(), saved, g.tolist(), g.grad_fn.name(), gg.tolist(),
            gg.stride())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_rrelu_in_evaluation(torch, layout, dtype):
    assert _evaluated(minigrad, layout, dtype) == _evaluated(torch, layout, dtype)


def test_rrelu_module(torch):
    def run(m):
        m.manual_seed(5)
        layer = m.nn.RReLU(0.2, 0.5)
        x = m.tensor(V, dtype=m.float64)
        trained = layer(x).tolist()
        layer.eval()
        return repr(layer), repr(m.nn.RReLU(inplace=True)), trained, layer(x).tolist()

    assert run(minigrad) == run(torch)


def test_rrelu_in_place_is_refused():
    with pytest.raises(NotImplementedError, match="in-place rrelu"):
        minigrad.nn.functional.rrelu(minigrad.ones(3), inplace=True)


BAD = {
    "bounds reversed": lambda m: m.nn.functional.rrelu(m.ones(3), 0.5, 0.1),
    "bounds reversed, training": lambda m: m.nn.functional.rrelu(m.ones(3), 0.5, 0.1, True),
    "integers": lambda m: m.rrelu(m.ones(3, dtype=m.int64)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_rrelu_errors(torch, case):
    assert raised(lambda: BAD[case](minigrad)) == raised(lambda: BAD[case](torch)) != (
        "no error", "")


@pytest.mark.parametrize("training", [False, True])
def test_rrelu_tangent(torch, training):
    def run(m):
        m.manual_seed(2)
        fa = m.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(m.tensor(V, dtype=m.float64), m.ones(3, 4, dtype=m.float64) * 0.5)
            y = fa.unpack_dual(m.nn.functional.rrelu(x, 0.1, 0.3, training=training))
            return y.primal.tolist(), y.tangent.tolist()

    assert run(minigrad) == run(torch)

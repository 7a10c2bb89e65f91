"""Every binary and reduction op minigrad declares, on shapes drawn by hypothesis,
against PyTorch: forward values, gradients, `grad_fn` names, saved values, shapes,
dtypes, errors and warnings (the parity harness's comparison).

The shapes are where broadcasting and reductions meet their edges: size-1 dims on
either side (`(2, 1)` with `(3,)`), 0-d tensors, and empty dims (`(0, 3)`). Values
come from a small set with zeros, negatives and repeats, so divisions by zero, ties
of max/min and zero factors of prod come up.

The ops are found in minigrad's registry (`ops/declaration.py`), not listed here, so
a new op is picked up: a binary op is a declared function that broadcasts two float
tensors to their common shape; a reduction one that takes `dim=` and drops it.

`make test` runs a few derandomized examples per op; MINIGRAD_PROPERTY_EXAMPLES=500
runs more (and random ones).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parity_harness import check

import minigrad
from minigrad.ops.declaration import DECLARATIONS

EXAMPLES = int(os.environ.get("MINIGRAD_PROPERTY_EXAMPLES", "0"))
SETTINGS = settings(max_examples=EXAMPLES or 12, derandomize=not EXAMPLES, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck))
VALUES = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0]


def _public_functions() -> dict:
    """Every declared function of the namespace (not the in-place ones), by name."""
    return {name: fn for d in DECLARATIONS for name, fn in d.functions.items()
            if not name.endswith("_")}


def _makes(fn, *args, shape, **kwargs) -> bool:
    """Whether `fn(*args, **kwargs)` gives a tensor (or a values/indices pair, not a
    plain tuple of tensors as unbind's) of `shape`."""
    try:
        out = fn(*args, **kwargs)
    except Exception:  # noqa: BLE001 - an op that does not take these arguments
        return False
    if isinstance(out, tuple) and hasattr(out, "values"):
        out = out.values
    return isinstance(out, minigrad.Tensor) and tuple(out.shape) == shape


def _binary_ops() -> list[str]:
    a = minigrad.ones(2, 1, dtype=minigrad.float64)
    b = minigrad.ones(3, dtype=minigrad.float64)
    return sorted(name for name, fn in _public_functions().items()
                  if _makes(fn, a, b, shape=(2, 3)))


def _reductions() -> list[str]:
    x = minigrad.ones(2, 3, dtype=minigrad.float64)
    return sorted(name for name, fn in _public_functions().items()
                  if _makes(fn, x, dim=1, shape=(2,)) and _makes(fn, x, dim=0, shape=(3,)))


BINARY = _binary_ops()
REDUCTIONS = _reductions()

# Differences these properties found that are not fixed yet: each runs as a strict xfail,
# so the day it matches PyTorch the test says so.
KNOWN_DIFFERENCES: dict[str, str] = {}


def _params(names: list) -> list:
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[n]))
            if n in KNOWN_DIFFERENCES else n for n in names]


def test_the_registry_gives_the_ops_expected():
    # (a check that the probes above find what they should: the well-known ops at least)
    assert {"add", "sub", "mul", "div", "pow", "atan2", "maximum", "eq", "lt"} <= set(BINARY)
    assert {"sum", "mean", "prod", "max", "min", "argmax", "var", "std", "all", "any"} <= set(
        REDUCTIONS)


def _shape(draw) -> list:
    return draw(st.lists(st.integers(0, 3), max_size=3))


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: a common shape of 0 to 3 dims (sizes 0 to 3), each
    operand taking every dim as it is or as 1 (so an empty dim can be stretched from
    1, and a size-1 dim sit next to an empty one), and perhaps dropping leading dims
    (to none: a 0-d operand)."""
    full = _shape(draw)
    shapes = []
    for _ in range(2):
        kept = [draw(st.sampled_from([n, 1])) for n in full]
        shapes.append(tuple(kept[draw(st.integers(0, len(kept))):]))
    return shapes


def _values(draw, shape) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.array(draw(st.lists(st.sampled_from(VALUES), min_size=n, max_size=n)),
                    np.float64).reshape(shape)


def _leaf(c, values: np.ndarray, from_array: bool = False):
    # (from Python lists, or for an empty shape zeros or, `from_array`, a numpy array,
    # whose strides PyTorch keeps: (0, 0) for a (0, 3) array)
    if values.size:
        return c.keep(c.m.tensor(values.tolist(), dtype=c.m.float64, requires_grad=True))
    if from_array:
        return c.keep(c.m.tensor(values, dtype=c.m.float64, requires_grad=True))
    return c.keep(c.m.zeros(values.shape, dtype=c.m.float64, requires_grad=True))


@pytest.mark.parametrize("name", _params(BINARY))
def test_binary_op_broadcasts_as_in_torch(torch, name):
    @SETTINGS
    @given(st.data())
    def run(data):
        shape_a, shape_b = data.draw(broadcast_pair())
        a, b = _values(data.draw, shape_a), _values(data.draw, shape_b)
        from_array = data.draw(st.booleans())

        def program(c):
            return getattr(c.m, name)(_leaf(c, a, from_array), _leaf(c, b, from_array))

        check(torch, program)

    run()


@pytest.mark.parametrize("name", _params(REDUCTIONS))
def test_reduction_as_in_torch(torch, name):
    @SETTINGS
    @given(st.data())
    def run(data):
        shape = tuple(_shape(data.draw))
        x = _values(data.draw, shape)
        ndim = len(shape)
        dim = data.draw(st.one_of(st.none(), st.integers(-max(ndim, 1), max(ndim, 1) - 1)))
        keepdim = data.draw(st.booleans())
        from_array = data.draw(st.booleans())

        def program(c):
            fn = getattr(c.m, name)
            leaf = _leaf(c, x, from_array)
            return fn(leaf) if dim is None else fn(leaf, dim=dim, keepdim=keepdim)

        check(torch, program)

    run()


def test_empty_results_with_size_one_dims_as_in_torch(torch):
    # (PyTorch's element-wise ops lay such a result out by the operands' strides:
    # (2, 0, 1) / (0, 1) has strides (0, 1, 0))
    def program(c):
        return c.m.div(_leaf(c, np.zeros((2, 0, 1))), _leaf(c, np.zeros((0, 1))))

    check(torch, program)

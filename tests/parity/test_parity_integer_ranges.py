"""`arange` and `linspace` with an integer dtype against PyTorch: PyTorch truncates the
bounds (and arange's step) to integers before counting, checks the bounds as given
first, and raises ValueError for a step that truncates to 0; linspace's integer points
are computed from the truncated bounds, one point for `steps=1`, none for Bool.

The linspace cases take steps whose points are exact in float64, so PyTorch's vector
width (which changes how it rounds points near an integer) cannot change them."""

from __future__ import annotations

import pytest
from parity_harness import raised

import minigrad

ARANGE = [
    (0.0, -8.000001, -4.0), (1.0, 5.000001, 2.0), (-0.9, 2.1, 2.0), (0.1, -7.9, -4.0),
    (0.5, 5.7, 1.5), (-3.7, 3.7, 1.9), (3.1,), (0, 5, 0.5), (0, 5, 0), (5.5, 5.2, 1),
    (0, float("inf"), 1), (2.5, 0.5, 0.5), (0, 1e30, 1), (1e30, 0, 1), (0, 5, 1e30),
    (0, 5, float("nan")), (0, 5, float("inf")),
]


@pytest.mark.parametrize("args", ARANGE, ids=str)
def test_arange_int64(torch, args):
    def run(m):
        return m.arange(*args, dtype=m.int64).tolist()

    assert raised(lambda: run(minigrad)) == raised(lambda: run(torch))
    if raised(lambda: run(torch))[0] == "no error":
        assert run(minigrad) == run(torch)


LINSPACE = [(4.3, -3, 50), (1.9, 3.9, 5), (-2.5, 6.9, 9), (7.9, -0.5, 15), (5, -5, 1),
            (5.5, -5.5, 0), (0.9, 8.9, 2)]


@pytest.mark.parametrize("args", LINSPACE, ids=str)
def test_linspace_int64(torch, args):
    assert (minigrad.linspace(*args, dtype=minigrad.int64).tolist()
            == torch.linspace(*args, dtype=torch.int64).tolist())


def test_linspace_bool_and_bad_bounds(torch):
    for call in (lambda m: m.linspace(0, 1, 3, dtype=m.bool),
                 lambda m: m.linspace(m.tensor([1.0]), m.tensor([2.0]), 3),
                 lambda m: m.linspace(m.tensor(1.0), m.tensor([2.0, 3.0]), 3),
                 lambda m: m.linspace(m.tensor([1.0]), 2.0, 3),
                 lambda m: m.linspace(1.0, m.tensor([[2.0]]), 3)):
        assert raised(lambda call=call: call(minigrad)) == raised(lambda call=call: call(torch))

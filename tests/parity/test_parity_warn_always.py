"""`set_warn_always`: the warnings PyTorch gives once per process (TORCH_WARN_ONCE)
come every time while it is on, in minigrad as in PyTorch. The parity harness turns it
on, so a program's warnings do not depend on which tests ran before it."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from parity_harness import check, translate

import minigrad
from minigrad.autograd import entry_points


def _read_only(m):
    a = np.ones(2)
    a.setflags(write=False)
    return m.from_numpy(a)


def _cycle(m):
    x = m.ones(2, requires_grad=True)
    (x * x).sum().backward(create_graph=True)


# The library's warn-once warnings, each made by one call.
ONCE = {
    "backward(create_graph=True)": _cycle,
    "cholesky": lambda m: m.cholesky(m.eye(2)),
    "cross without dim": lambda m: m.cross(m.ones(2, 3), m.ones(2, 3)),
    "scatter with reduce": lambda m: m.zeros(3).scatter(0, m.tensor([0]), m.ones(1),
                                                        reduce="add"),
    "conv1d padding='same', even kernel": lambda m: m.nn.functional.conv1d(
        m.ones(1, 1, 5), m.ones(1, 1, 2), padding="same"),
    "from_numpy of a read-only array": _read_only,
    "float() of a tensor requiring grad": lambda m: float(m.ones((), requires_grad=True)),
}


def _warned_twice(m, make) -> list:
    was = m.is_warn_always_enabled()
    m.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make(m)
            make(m)
    finally:
        m.set_warn_always(was)
    return [(w.category.__name__, translate(str(w.message))) for w in caught
            if "(Deprecated NumPy" not in str(w.message)]


@pytest.mark.parametrize("name", list(ONCE))
def test_warn_always_repeats_a_once_per_process_warning(torch, name):
    want = _warned_twice(torch, ONCE[name])
    assert len(want) == 2
    assert _warned_twice(minigrad, ONCE[name]) == want


def test_warn_always_does_not_use_up_the_once(torch):
    """A warning given while warn-always is on still comes once after it is off; then
    not again."""
    code = (
        "import warnings, {lib} as m\n"
        "warnings.simplefilter('always')\n"
        "x = m.ones(2, requires_grad=True)\n"
        "counts = []\n"
        "for always in (True, False, False):\n"
        "    m.set_warn_always(always)\n"
        "    with warnings.catch_warnings(record=True) as w:\n"
        "        (x * x).sum().backward(create_graph=True)\n"
        "    counts.append(len(w))\n"
        "print(counts, m.is_warn_always_enabled())\n"
    )

    def run(lib):
        return subprocess.run([sys.executable, "-c", code.format(lib=lib)],
                              capture_output=True, text=True, check=True).stdout

    assert run("torch") == "[1, 1, 0] False\n"
    assert run("minigrad") == run("torch")


@pytest.mark.parametrize("value", [1, "yes", None])
def test_set_warn_always_takes_only_a_bool(torch, value):
    with pytest.raises(RuntimeError) as want:
        torch.set_warn_always(value)
    with pytest.raises(RuntimeError) as got:
        minigrad.set_warn_always(value)
    assert str(got.value) == str(want.value)
    assert not minigrad.is_warn_always_enabled()


def _backward_creating_a_graph(c):
    x = c.leaf([0.5, -1.5, 2.0])
    (x * x * x).sum().backward(create_graph=True)
    g, x.grad = x.grad, None
    return c.keep(g)


def test_harness_compares_the_cycle_warning_whatever_ran_before(torch):
    """Both libraries have warned of the reference cycle before (an earlier test of the
    process): the harness still sees both warn in the program."""
    _cycle(torch)
    _cycle(minigrad)
    assert entry_points._CYCLE.warned
    check(torch, _backward_creating_a_graph)


def test_harness_fails_where_minigrad_does_not_warn(torch, monkeypatch):
    class Never:  # (a minigrad that never warns of the cycle)
        def due(self) -> bool:
            return False

    monkeypatch.setattr(entry_points, "_CYCLE", Never())
    with pytest.raises(AssertionError, match="warnings"):
        check(torch, _backward_creating_a_graph)

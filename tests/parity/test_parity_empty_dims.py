"""Tensors of no elements, compared with PyTorch: their strides, and the versions and
strides of the `.grad` a leaf of no elements gets.

A tensor of no elements walks no memory, so its strides are whatever PyTorch's rules
make them, and they show: in `stride()`, in what a leaf keeps as its `.grad` (the
gradient layout contract decides between keeping the gradient, version 0, and
copying it, version 1) and in PyTorch's warning when a `.grad` breaks that contract.
The rules: a tensor made from a numpy array keeps numpy's strides ((0, 0) for a
fresh (0, 3) array); a fresh tensor is row-major, an empty dim counted as 1; an
element-wise op over operands of different shapes sorts the result's dims by the
operands' strides and counts an empty dim as 0 (`zeros(0, 1) / 2` has (1, 0));
`unsqueeze` gives the new dim the extent of the next one (0 before an empty dim).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from parity_harness import translate

# name -> program of (library, make), `make(shape)` a float64 leaf of that shape made
# from a numpy array; the program returns a tensor whose strides are compared.
STRIDES = {
    "from a numpy array": lambda m, make: make((0, 3)),
    "from a numpy slice": lambda m, make: m.tensor(np.zeros((2, 3))[:0]),
    "from a numpy array, 1-D": lambda m, make: make((0,)),
    "zeros": lambda m, make: m.zeros(3, 0),
    "over a number": lambda m, make: m.zeros(0, 1) / 2,
    "a number minus": lambda m, make: 1 - m.zeros(2, 0, 1),
    "to a number's power": lambda m, make: m.zeros(0, 1) ** 2,
    "a number to its power": lambda m, make: 2 ** m.zeros(0, 1),
    "plus a broadcast row": lambda m, make: m.zeros(0, 1) + m.zeros(1),
    "times a broadcast column": lambda m, make: m.zeros(3, 1) * m.zeros(3, 0),
    "of one shape": lambda m, make: m.zeros(0, 1) * m.zeros(0, 1),
    "exp": lambda m, make: m.zeros(0, 1).exp(),
    "numpy's plus a number": lambda m, make: make((0, 3)) + 1,
    "numpy's exp": lambda m, make: make((0, 3)).exp(),
    "unsqueeze before an empty dim": lambda m, make: m.zeros(3, 0).unsqueeze(1),
    "unsqueeze an empty dim": lambda m, make: m.zeros(0, 3).unsqueeze(0),
    "None index": lambda m, make: m.zeros(3, 0)[:, None],
    "transpose": lambda m, make: m.zeros(0, 3).t(),
    "numpy's transpose": lambda m, make: make((3, 0)).t(),
    "expand": lambda m, make: m.zeros(0, 1).expand(0, 3),
}


def _strides(m, name: str):
    def make(shape):
        return m.tensor(np.zeros(shape), dtype=m.float64, requires_grad=True)

    return STRIDES[name](m, make).stride()


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(STRIDES))
def test_strides_of_tensors_of_no_elements_as_in_torch(torch, name):
    import minigrad

    assert _strides(minigrad, name) == _strides(torch, name)


# name -> program of (library, a, b), `a` and `b` leaves of no elements made from numpy
# arrays (strides 0) or by `zeros` (row-major), shapes as the name says; returns the
# tensor backward runs from (twice).
GRADS = {
    "abs, numpy (0, 3)": ((0, 3), True, lambda m, a, b: a.abs()),
    "abs, zeros (0, 3)": ((0, 3), False, lambda m, a, b: a.abs()),
    "sum, numpy (0,)": ((0,), True, lambda m, a, b: a),
    "sum, zeros (0,)": ((0,), False, lambda m, a, b: a),
    "a + b, numpy (2, 0)": ((2, 0), True, lambda m, a, b: a + b),
    "a + b, zeros (2, 0)": ((2, 0), False, lambda m, a, b: a + b),
    "mean over dim 0, zeros (0, 0, 1)": ((0, 0, 1), False, lambda m, a, b: a.mean(0)),
    "mean over dim 1, numpy (2, 0, 3)": ((2, 0, 3), True, lambda m, a, b: a.mean(1)),
    "cat of empty vectors": ((0,), False, lambda m, a, b: m.cat([a, b])),
    "cat of an empty vector, reshaped": ((0,), True,
                                         lambda m, a, b: m.cat([a.reshape(-1), m.ones(2)])),
    "divided by a number, numpy (0, 1)": ((0, 1), True, lambda m, a, b: a / 2),
}


def _grads(m, name: str) -> list:
    shape, from_array, program = GRADS[name]

    def leaf():
        if from_array:
            return m.tensor(np.zeros(shape), dtype=m.float64, requires_grad=True)
        return m.zeros(shape, dtype=m.float64, requires_grad=True)

    a, b = leaf(), leaf()
    loss = program(m, a, b).sum()
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (see the layout contract's own test below)
        for _ in range(2):
            loss.backward(retain_graph=True)
            seen.append([None if t.grad is None else (t.grad.stride(), t.grad._version)
                         for t in (a, b)])
    return seen


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads_of_leaves_of_no_elements_as_in_torch(torch, name):
    # (after each of two backward passes: the first decides between keeping the
    # gradient and copying it, the second adds into it)
    import minigrad

    assert _grads(minigrad, name) == _grads(torch, name)


@pytest.mark.parity
def test_autograd_grad_keeps_the_strides_of_a_gradient_of_no_elements(torch):
    import minigrad

    def strides(m):
        a = m.zeros(0, 0, 1, dtype=m.float64, requires_grad=True)
        out = a.mean(0)
        seed = m.tensor(np.zeros((0, 1)) + np.zeros((1, 1)), dtype=m.float64)
        return m.autograd.grad(out, a, seed)[0].stride()

    assert strides(minigrad) == strides(torch)


_CONTRACT_PROGRAM = """
import warnings
import numpy as np
import {lib} as m
warnings.simplefilter("always")
for _ in range(2):  # (two leaves: the warning comes once a process)
    x = m.tensor(np.zeros((0, 1)), requires_grad=True)
    loss = x.abs().sum()
    loss.backward(retain_graph=True)
    loss.backward()
"""


@pytest.mark.parity
def test_layout_contract_warning_is_once_per_process_as_in_torch(torch):
    # A leaf of no elements from a numpy array has strides (0, 0); its `.grad` (0, 0)
    # too, which on a size-1 dim PyTorch takes for an expanded view: adding into it
    # breaks the contract, and PyTorch warns, once a process.
    def warned(lib):
        run = subprocess.run([sys.executable, "-c", _CONTRACT_PROGRAM.format(lib=lib)],
                             capture_output=True, text=True, check=True)
        return [translate(line) for line in run.stderr.splitlines()
                if "Warning" in line and "compiling kernels" not in line]

    minigrad_lines, torch_lines = warned("minigrad"), warned("torch")
    assert len(torch_lines) == 1 and "gradient layout contract" in torch_lines[0]
    assert [line.split(": ", 1)[1] for line in minigrad_lines] == [
        line.split(": ", 1)[1] for line in torch_lines]


# name -> (shape, index): advanced indexing where a dim or the result has no elements
INDEXING = {
    "an index into an empty dim": ((0, 3), lambda m: [0]),
    "an index into an empty second dim": ((2, 0), lambda m: (slice(None), [0])),
    "an index into an empty vector": ((0,), lambda m: [0]),
    "two indices, one dim empty": ((2, 0), lambda m: ([0, 0], [0])),
    "out of range, no elements to read": ((3, 0), lambda m: [5]),
    "out of range along a full dim": ((0, 3), lambda m: (slice(None), [5])),
    "out of range, elements to read": ((2, 3), lambda m: [5]),
    "an empty index": ((2, 3), lambda m: ([],)),
    "an empty mask": ((0, 3), lambda m: m.zeros(0, 3, dtype=m.bool)),
}


def _indexed(m, name: str):
    shape, index = INDEXING[name]
    x = m.zeros(shape, requires_grad=True)
    try:
        out = x[index(m)]
    except IndexError as exc:
        return ("IndexError", translate(str(exc)))
    out.sum().backward()
    return tuple(out.shape), tuple(x.grad.shape)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_with_no_elements_as_in_torch(torch, name):
    # (PyTorch refuses any index into a dim of size 0, and checks no index at all
    # when the result has no elements to read)
    import minigrad

    assert _indexed(minigrad, name) == _indexed(torch, name)

"""The strides of views and copies of tensors with dims of size 1, compared with PyTorch.

A dim of size 1 has a stride nobody walks, so numpy chooses it freely (its reshape,
`expand_dims` and copies give the row-major one); PyTorch's rules keep or compute it:
`unsqueeze(d)` gives the new dim the extent of the dim it goes before (1 at the end),
`squeeze` drops dims and keeps the others' strides, and a copy of a dense tensor
(`clone`, `to`, the `*_like` factories) takes its strides exactly, 0 or odd ones of
size-1 dims included. Every layout of small shapes is tried: permuted, strided, or both.
"""

from __future__ import annotations

import itertools
import math

import pytest


def _layouts(ndim: int):
    """(shape, permutation, steps) for every shape of 1s and 3s, every order of the
    dims and every choice of step 1 or 2 along each."""
    for shape in itertools.product((1, 3), repeat=ndim):
        for perm in itertools.permutations(range(ndim)):
            for steps in itertools.product((1, 2), repeat=ndim):
                yield shape, perm, steps


def _make(m, shape: tuple, perm: tuple, steps: tuple):
    big = tuple(n * k for n, k in zip(shape, steps))
    x = m.arange(float(math.prod(big))).reshape(big)
    return x[tuple(slice(None, None, k) for k in steps)].permute(*perm)


def _dims(x, extra: int = 0):
    return range(-x.dim() - extra, x.dim() + extra)


VIEWS = {
    "unsqueeze": lambda m, x: [x.unsqueeze(d) for d in _dims(x, 1)],
    "unsqueeze_": lambda m, x: [x.detach().unsqueeze_(d) for d in _dims(x, 1)],
    "None": lambda m, x: [x[None], x[..., None], x[:, None], x[None, :, None]],
    "atleast_3d": lambda m, x: [m.atleast_3d(x)],
    "unsqueeze twice": lambda m, x: [x.unsqueeze(0).unsqueeze(-1), x.unsqueeze(1).unsqueeze(1)],
    "squeeze": lambda m, x: [x.squeeze()] + [x.squeeze(d) for d in _dims(x)],
    "squeeze dims": lambda m, x: [x.squeeze(tuple(range(x.dim()))),
                                  x.squeeze((0, -1) if x.dim() > 1 else 0)],
    "squeeze_": lambda m, x: [x.detach().squeeze_(), x.detach().squeeze_(0)],
    "unsqueeze then squeeze": lambda m, x: [x.unsqueeze(d).squeeze(d) for d in _dims(x, 1)],
    "view": lambda m, x: [x.reshape((1,) + tuple(x.shape)), x.reshape(tuple(x.shape) + (1,)),
                          x.reshape(-1)],
    "unflatten": lambda m, x: [x.unflatten(0, (1, -1)), x.unflatten(-1, (-1, 1))],
    "expand": lambda m, x: [x.expand((2,) + tuple(x.shape)),
                            x.expand(*[2 if n == 1 else n for n in x.shape])],
    "movedim": lambda m, x: [x.movedim(0, -1), x.movedim(-1, 0)],
}

COPIES = {
    "clone": lambda m, x: [x.clone(), x.contiguous()],
    "to another dtype": lambda m, x: [x.double(), x.to(m.int64)],
    "*_like": lambda m, x: [m.zeros_like(x), m.empty_like(x).fill_(1.0), m.full_like(x, 2.0)],
    "of a 0-stride size-1 dim": lambda m, x: [x[..., :1].expand(*x.shape[:-1], 1).clone()],
}


def _strides(m, shape, perm, steps, program) -> list:
    x = _make(m, shape, perm, steps)
    return [(tuple(y.shape), y.stride(), y.reshape(-1).tolist()) for y in program(m, x)]


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("op", list(VIEWS) + list(COPIES))
def test_views_and_copies_keep_pytorchs_strides(torch, op, ndim):
    import minigrad

    program = VIEWS.get(op) or COPIES[op]
    for layout in _layouts(ndim):
        mg = _strides(minigrad, *layout, program)
        pt = _strides(torch, *layout, program)
        assert mg == pt, layout


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unsqueeze_of_a_row_with_unit_strides(torch, dim):
    # `rand(3, 1).t()`: a (1, 3) tensor with strides (1, 1); the new dim's stride is
    # size * stride of the dim it goes before, 1 at the end: (1, 1, 1) for dim 0
    # (numpy's expand_dims had given (3, 3, 1)).
    import minigrad

    def run(m):
        x = m.arange(3.0).reshape(3, 1).t().requires_grad_()
        y = x.unsqueeze(dim)
        y.sum().backward()
        return y.stride(), y._version, x.grad.stride(), y.grad_fn.name()

    assert run(minigrad) == run(torch)


def _squeeze_a_number(m) -> list:
    """Every dim form squeeze takes on a 0-d tensor (dims 0 and -1, as a one-dim
    tensor's), each differentiated, and the ones it refuses."""
    results = []
    for args in [(0,), (-1,), ((0,),), ((-1,),), ((0, -1),), (1,), ((1,),)]:
        x = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        try:
            y = x.squeeze(*args)
            y.backward()
            results.append((tuple(y.shape), type(y.grad_fn).__name__, y.stride(), x.grad.item()))
        except (RuntimeError, IndexError) as error:
            results.append((type(error).__name__, str(error)))
    z = m.tensor(2.0).clone()
    results.append((tuple(z.squeeze_(0).shape), z._version))
    return results


def test_squeeze_of_a_0d_tensor(torch):
    import minigrad

    assert _squeeze_a_number(minigrad) == _squeeze_a_number(torch)

"""sort, topk, kthvalue, median, mode, amax, amin, aminmax, logsumexp, cummax, cummin,
cumprod, logcumsumexp, nansum, nanmean, std_mean and var_mean against PyTorch: what the
OpInfo test does not look at. Their forward-mode tangents, the `_saved_*` values their
nodes show, and the names of the nodes a `create_graph=True` backward records.
(Values, gradients, second derivatives and errors: `test_parity_opinfo.py`.)
"""

from __future__ import annotations

import numpy as np
import pytest
from float_policy import CHAIN, assert_floats

import minigrad

X = np.array([[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.5, 3.0], [-2.0, 1.0, 0.125, -0.75]])
T = np.arange(12.0).reshape(3, 4) / 7 - 0.5
NAN_X = np.where(np.eye(3, 4, 1) > 0, np.nan, X)
TIES = np.array([[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 1.0, 3.0], [0.0, 0.0, 0.0, 0.0]])


def _first(result):
    return result[0] if isinstance(result, tuple) else result


# (name, the program: lib and a tensor -> a tensor, or a tuple whose first is differentiable)
PROGRAMS = {
    "sort": lambda m, x: m.sort(x, 1),
    "sort_descending_stable": lambda m, x: m.sort(x, dim=0, descending=True, stable=True),
    "msort": lambda m, x: m.msort(x),
    "topk": lambda m, x: m.topk(x, 2),
    "topk_smallest": lambda m, x: m.topk(x, 2, dim=0, largest=False),
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1, True),
    "median": lambda m, x: m.median(x),
    "median_dim": lambda m, x: m.median(x, 0),
    "nanmedian": lambda m, x: m.nanmedian(x),
    "nanmedian_dim": lambda m, x: m.nanmedian(x, 1, keepdim=True),
    "mode": lambda m, x: m.mode(x, 1),
    "amax": lambda m, x: m.amax(x, 1),
    "amax_all": lambda m, x: m.amax(x),
    "amin": lambda m, x: m.amin(x, (0, 1), keepdim=True),
    "aminmax": lambda m, x: m.aminmax(x, dim=0),
    "logsumexp": lambda m, x: m.logsumexp(x, 1),
    "cummax": lambda m, x: m.cummax(x, 1),
    "cummin": lambda m, x: m.cummin(x, 0),
    "cumprod": lambda m, x: m.cumprod(x, 1),
    "logcumsumexp": lambda m, x: m.logcumsumexp(x, 1),
    "nansum": lambda m, x: m.nansum(x, 1),
    "nanmean": lambda m, x: m.nanmean(x, 0, keepdim=True),
    "std_mean": lambda m, x: m.std_mean(x, 1),
    "var_mean": lambda m, x: m.var_mean(x, 0, correction=0),
}
# inputs with ties (the gradient is shared, or goes to the element PyTorch picks)
WITH_TIES = {"amax", "amax_all", "amin", "aminmax", "median", "cummax", "cummin"}
# no forward-mode formula in minigrad (several outputs of one node)
NO_TANGENT = {"aminmax", "std_mean", "var_mean"}


def _input(name: str) -> np.ndarray:
    if name.startswith("nan"):
        return NAN_X
    return TIES if name in WITH_TIES else X


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - NO_TANGENT))
def test_tangent(torch, name):
    """The tangent of the first output (forward mode) is PyTorch's."""
    got, want = [], []
    for lib, out in ((minigrad, got), (torch, want)):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(_input(name)), lib.tensor(T))
            tangent = fwad.unpack_dual(_first(PROGRAMS[name](lib, x))).tangent
            out.append(tangent.detach().numpy())
    assert_floats(got[0], want[0], CHAIN, err_msg=name)


@pytest.mark.parametrize("name", sorted(NO_TANGENT))
def test_no_tangent_is_a_clear_error(name):
    """Where minigrad has no forward-mode formula, forward mode says so."""
    fwad = minigrad.autograd.forward_ad
    with fwad.dual_level(), pytest.raises(NotImplementedError, match="forward AD"):
        x = fwad.make_dual(minigrad.tensor(X), minigrad.tensor(T))
        fwad.unpack_dual(_first(PROGRAMS[name](minigrad, x)))


def _saved(node) -> dict:
    values = {}
    for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
        value = getattr(node, attr)
        values[attr] = value.detach().numpy().tolist() if hasattr(value, "numpy") else value
    return values


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_saved_values(torch, name):
    """The node's `_saved_*` names and values (dims as PyTorch's unsigned ints, the
    indices, the outputs) are PyTorch's."""
    nodes = []
    for lib in (minigrad, torch):
        x = lib.tensor(_input(name), requires_grad=True)
        nodes.append(_saved(_first(PROGRAMS[name](lib, x)).grad_fn))
    mine, theirs = nodes
    assert mine.keys() == theirs.keys()
    for key, want in theirs.items():
        if isinstance(want, list):
            np.testing.assert_allclose(mine[key], want, rtol=1e-12, err_msg=key)
        else:
            assert mine[key] == want, key


def _node_names(grad) -> list[str]:
    names, seen, stack = [], set(), [grad.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().split("::")[-1])
        stack.extend(n for n, _ in node.next_functions)
    return sorted(names)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_create_graph_records_pytorchs_nodes(torch, name):
    """A create_graph=True backward records the same nodes as PyTorch's."""
    recorded = []
    for lib in (minigrad, torch):
        x = lib.tensor(_input(name), requires_grad=True)
        result = PROGRAMS[name](lib, x)
        outs = result if isinstance(result, tuple) else (result,)
        loss = sum(((o * (i + 2)) ** 2).sum() for i, o in enumerate(outs)
                   if o.dtype.is_floating_point)
        grad = lib.autograd.grad(loss, x, create_graph=True)[0]
        recorded.append(_node_names(grad))
    assert recorded[0] == recorded[1]


DTYPE_PROGRAMS = {
    "sum": lambda m, x: x.sum(dtype=m.float64),
    "sum_dim": lambda m, x: m.sum(x, 1, True, dtype=m.float64),
    "mean": lambda m, x: x.mean(dtype=m.float64),
    "mean_dim": lambda m, x: m.mean(x, (0, 1), dtype=m.float64),
}


@pytest.mark.parametrize("name", sorted(DTYPE_PROGRAMS))
def test_sum_and_mean_take_a_dtype(torch, name):
    """sum(dtype=) and mean(dtype=) of a float32 tensor: a float64 result of the
    converted values, PyTorch's node, and a float32 gradient (cast back)."""
    seen = []
    for lib in (minigrad, torch):
        x = lib.tensor(X.astype(np.float32), requires_grad=True)
        out = DTYPE_PROGRAMS[name](lib, x)
        (out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape)
                          + 1)).sum().backward()
        seen.append((str(out.dtype).split(".")[-1], out.grad_fn.name(),
                     str(x.grad.dtype).split(".")[-1], out.detach().numpy(),
                     x.grad.numpy()))
    mine, theirs = seen
    assert mine[:3] == theirs[:3]
    assert_floats(mine[3], theirs[3], CHAIN)
    assert_floats(mine[4], theirs[4], CHAIN)


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_sum_and_mean_refuse_an_integer_dtype_as_pytorch(torch, op):
    errors = []
    for lib in (minigrad, torch):
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError) as caught:
            getattr(x, op)(dtype=lib.int64)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


# sort's results are laid out as the input where it is dense (PyTorch's `empty_like`
# rule): transposed for a transposed input, and with the input's strides for one of no
# elements, whatever they are (a numpy array's zeros). minigrad's were row-major.
# (Found by the random programs.)
SORT_INPUTS = {
    "transposed": lambda lib: lib.tensor(X).t(),
    "permuted 3-D": lambda lib: lib.tensor(X.reshape(3, 2, 2)).permute(2, 0, 1),
    "strided (not dense)": lambda lib: lib.tensor(X)[:, ::2],
    "no elements, from numpy": lambda lib: lib.tensor(np.zeros((0, 3))),
    "no elements, transposed": lambda lib: lib.zeros(3, 0, dtype=lib.float64).t(),
}


@pytest.mark.parametrize("name", list(SORT_INPUTS))
@pytest.mark.parametrize("op", ["sort", "argsort", "msort"])
def test_sort_lays_its_results_out_as_pytorch(torch, name, op):
    seen = []
    for lib in (minigrad, torch):
        x = SORT_INPUTS[name](lib)
        out = getattr(x, op)()
        seen.append([(t.stride(), t.tolist()) for t in (out if op == "sort" else [out])])
    assert seen[0] == seen[1]


@pytest.mark.parametrize(("shape", "dim"), [((0, 3), 0), ((0,), -1), ((3, 0), 1), ((0, 3), 1)])
def test_kthvalue_over_an_empty_dim_is_an_index_error_as_in_pytorch(torch, shape, dim):
    # (minigrad raised its k-out-of-range RuntimeError first)
    seen = []
    for lib in (minigrad, torch):
        try:
            out = lib.zeros(*shape).kthvalue(1, dim)
            seen.append(("no error", tuple(out.values.shape)))
        except Exception as exc:  # noqa: BLE001 - comparing what each raises
            seen.append((type(exc).__name__, str(exc)))
    assert seen[0] == seen[1]

"""Reductions, relu/abs/clamp edge cases, tensor creation, backward's root checks and
repr line wrapping, compared with PyTorch (see `parity_harness`)."""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest
from parity_harness import check, translate

NAN = math.nan
M22 = [[1.0, 2.0], [3.0, 4.0]]


PROGRAMS = {
    # 1. an empty dim list reduces every dim
    "sum_dim_empty_tuple": lambda c: c.leaf(M22).sum(dim=()),
    "sum_dim_empty_list": lambda c: c.leaf(M22).sum(dim=[]),
    "sum_dim_empty_keepdim": lambda c: c.leaf(M22).sum(dim=(), keepdim=True),
    "mean_dim_empty_tuple": lambda c: c.leaf(M22).mean(dim=()),
    "mean_dim_empty_keepdim": lambda c: c.leaf(M22).mean(dim=[], keepdim=True),
    "sum_int_dim_empty": lambda c: c.m.tensor([[1, 2], [3, 4]]).sum(dim=()),
    "sum_0d_dim_empty": lambda c: c.leaf(2.0).sum(dim=()),
    "sum_dup_dims": lambda c: c.leaf([[[1.0]]]).sum((0, -1, 2)),
    # 2. NaN in max/min
    "max_nan": lambda c: c.leaf([1.0, NAN, 3.0]).max(),
    "min_nan": lambda c: c.leaf([1.0, NAN, 3.0]).min(),
    "max_two_nans": lambda c: c.leaf([NAN, 1.0, NAN]).max(),
    "max_tie": lambda c: c.leaf([3.0, 1.0, 3.0]).max(),
    "max_dim_nan": lambda c: c.leaf([[1.0, NAN, 3.0], [5.0, 2.0, NAN]]).max(dim=1),
    "min_dim_nan": lambda c: c.leaf([[1.0, NAN, 3.0], [NAN, NAN, 0.0]]).min(dim=1),
    # 3. relu / abs of NaN and zeros
    "relu_nan": lambda c: c.leaf([NAN, -1.0, 1.0, 0.0, -0.0]).relu(),
    "relu_f32": lambda c: c.leaf([NAN, -1.0, 2.0], "float32").relu(),
    "abs_special": lambda c: c.leaf([NAN, -1.0, 1.0, 0.0, -0.0]).abs(),
    # 4. clamp with a NaN bound
    "clamp_min_nan": lambda c: c.leaf([NAN, -1.0, 1.0, 0.0]).clamp(min=NAN),
    "clamp_max_nan": lambda c: c.leaf([NAN, -1.0, 1.0, 0.0]).clamp(max=NAN),
    "clamp_both_nan": lambda c: c.leaf([NAN, -1.0, 1.0]).clamp(min=NAN, max=NAN),
    "clamp_nan_and_0": lambda c: c.leaf([NAN, -1.0, 1.0]).clamp(min=NAN, max=0.0),
    "clamp_0_and_nan": lambda c: c.leaf([NAN, -1.0, 1.0]).clamp(min=0.0, max=NAN),
    "clamp_f32_nan": lambda c: c.leaf([1.0, 2.0], "float32").clamp(min=NAN),
    "clamp_lo_above_hi": lambda c: c.leaf([NAN, -1.0, 2.0, 0.5]).clamp(min=1.0, max=0.0),
    "clamp_inplace_nan": lambda c: c.leaf([1.0, 2.0], requires_grad=False).clamp_(min=NAN),
    # 5. reducing along dim 0 (or -1) of a 0-d tensor
    "sum_0d_dim0": lambda c: c.leaf(2.0).sum(0),
    "sum_0d_dim_neg": lambda c: c.leaf(2.0).sum(-1),
    "sum_0d_tuple": lambda c: c.leaf(2.0).sum((0,), keepdim=True),
    "sum_0d_bad_dim": lambda c: c.leaf(2.0).sum(1),
    "sum_0d_dup": lambda c: c.leaf(2.0).sum((0, -1)),
    "max_0d_dim0": lambda c: c.leaf(2.0).max(0),
    "min_0d_dim_neg_keepdim": lambda c: c.leaf(2.0).min(-1, keepdim=True),
    "max_0d_bad_dim": lambda c: c.leaf(2.0).max(1),
    "mean_0d_dim0": lambda c: c.leaf(2.0).mean(0),
    "mean_0d_dim_neg": lambda c: c.leaf(2.0).mean(-1),
    # 6. an explicit dim=None
    "sum_dim_none": lambda c: c.leaf(M22).sum(dim=None),
    "sum_dim_none_keepdim": lambda c: c.leaf(M22).sum(dim=None, keepdim=True),
    "mean_dim_none": lambda c: c.leaf(M22).mean(dim=None),
    "mean_dim_none_keepdim": lambda c: c.leaf(M22).mean(dim=None, keepdim=True),
    "sum_namespace_none": lambda c: c.m.sum(c.leaf(M22), None),
    "sum_keepdim_without_dim": lambda c: c.leaf(M22).sum(keepdim=True),
    "mean_keepdim_without_dim": lambda c: c.leaf(M22).mean(keepdim=True),
    # 7. max/min along a dim of an empty tensor
    "max_empty_other_dim": lambda c: c.keep(c.m.zeros(2, 0, requires_grad=True)).max(dim=0),
    "max_empty_keepdim": lambda c: c.m.zeros(2, 0).max(dim=0, keepdim=True),
    "max_empty_reduced_dim": lambda c: c.m.zeros(0, 2).max(0),
    "min_empty_reduced_neg": lambda c: c.m.zeros(0, 2).min(-2),
    "max_empty_bad_dim": lambda c: c.m.zeros(0, 2).max(2),
    "min_empty_bad_dim": lambda c: c.m.zeros(2, 0).min(-3),
    "max_empty_all": lambda c: c.m.zeros(2, 0).max(),
    "mean_empty_dim": lambda c: c.keep(c.m.zeros(0, 2, requires_grad=True)).mean(0),
    # 8. argmax / argmin
    "argmax_keepdim": lambda c: c.m.argmax(c.leaf([[1.0, 5.0], [3.0, 4.0]]),
                                                      keepdim=True),
    "argmin_keepdim": lambda c: c.m.argmin(c.leaf([[1.0, 5.0], [3.0, 4.0]]),
                                                      keepdim=True),
    "argmax_dim_keepdim": lambda c: c.m.argmax(c.leaf(M22), -1, keepdim=True),
    "argmax_nan": lambda c: c.m.argmax(c.leaf([[1.0, NAN, 3.0], [5, 2, NAN]]), 1),
    "argmin_nan_all": lambda c: c.m.argmin(c.leaf([1.0, NAN, 3.0])),
    "argmax_bad_dim": lambda c: c.m.argmax(c.leaf(M22), 2),
    "argmin_bad_dim": lambda c: c.m.argmin(c.leaf(M22), -3),
    "argmax_empty": lambda c: c.m.argmax(c.m.zeros(0)),
    "argmin_empty_2d": lambda c: c.m.argmin(c.m.zeros(2, 0)),
    "argmax_empty_ok_dim": lambda c: c.m.argmax(c.m.zeros(2, 0), 0),
    "argmax_empty_reduced_dim": lambda c: c.m.argmax(c.m.zeros(2, 0), -1),
    "argmax_bool": lambda c: c.m.argmax(c.m.tensor([True, False])),
    "argmin_bool_dim": lambda c: c.m.argmin(c.m.tensor([True, False]), 0),
    "argmax_0d": lambda c: c.m.argmax(c.leaf(2.0), 0, keepdim=True),
    "argmax_0d_bad_dim": lambda c: c.m.argmax(c.leaf(2.0), 1),
    "argmax_int": lambda c: c.m.argmax(c.m.tensor([1, 3, 2])),
    # 9. relu / abs of bool
    "relu_bool": lambda c: c.m.tensor([True]).relu(),
    "relu_bool_inplace": lambda c: c.m.tensor([True]).relu_(),
    "abs_bool": lambda c: c.m.tensor([True]).abs(),
    "abs_bool_inplace": lambda c: c.m.tensor([True]).abs_(),
    "exp_inplace_bool": lambda c: c.m.tensor([True]).exp_(),
    "relu_int": lambda c: c.m.tensor([-1, 2]).relu(),
    "abs_int": lambda c: c.m.tensor([-3, 0, 4]).abs(),
    # 10. creation
    "tensor_np_float64": lambda c: c.m.tensor(np.float64(1.5)),
    "tensor_list_np_float64": lambda c: c.m.tensor([1.0, np.float64(1.5)]),
    "tensor_list_np_float32": lambda c: c.m.tensor([np.float32(1.5)]),
    "tensor_np_f32_f64": lambda c: c.m.tensor([np.float32(1.5), np.float64(1.0)]),
    "tensor_np_int64": lambda c: c.m.tensor(np.int64(3)),
    "tensor_np_bool_and_float": lambda c: c.m.tensor([np.bool_(True), 2.0]),
    "tensor_bool_and_int": lambda c: c.m.tensor([True, 2]),
    "tensor_0d_float64_in_list": lambda c: c.m.tensor([c.m.tensor(1.0, dtype=c.m.float64), 2.0]),
    "tensor_ragged": lambda c: c.m.tensor([[1, 2], [3]]),
    "tensor_ragged_longer": lambda c: c.m.tensor([[1], [3, 4]]),
    "tensor_ragged_deep": lambda c: c.m.tensor([[[1, 2]], [[3, 4], [5, 6]]]),
    "tensor_ragged_tuple": lambda c: c.m.tensor([[1, 2], (3,)]),
    "tensor_scalar_then_list": lambda c: c.m.tensor([[1, 2], 3]),
    "tensor_list_where_int": lambda c: c.m.tensor([1, [3, 4]]),
    "tensor_list_where_float": lambda c: c.m.tensor([1.0, [3, 4]]),
    "tensor_nan_to_int": lambda c: c.m.tensor([NAN], dtype=c.m.int64),
    "tensor_nan_scalar_to_int": lambda c: c.m.tensor(NAN, dtype=c.m.int64),
    "tensor_inf_to_int": lambda c: c.m.tensor([math.inf], dtype=c.m.int64),
    "tensor_huge_float_to_int": lambda c: c.m.tensor([1e30], dtype=c.m.int64),
    "tensor_int_overflow": lambda c: c.m.tensor([2**63]),
    "tensor_none": lambda c: c.m.tensor(None),
    "tensor_list_none": lambda c: c.m.tensor([None]),
    "tensor_str": lambda c: c.m.tensor("abc"),
    "tensor_list_str": lambda c: c.m.tensor(["abc"]),
    "tensor_dict": lambda c: c.m.tensor({}),
    "arange_int_tensor": lambda c: c.m.arange(c.m.tensor(3)),
    "arange_float_tensor": lambda c: c.m.arange(c.m.tensor(1.0), 3),
    "arange_np_int": lambda c: c.m.arange(np.int64(3)),
    "arange_bad_sign": lambda c: c.m.arange(0, 5, -1),
    "arange_bad_sign_up": lambda c: c.m.arange(5, 0, 1),
    "arange_down": lambda c: c.m.arange(5, 0, -1),
    "randint_high_size": lambda c: c.m.randint(5, (2, 3)).shape,
    "randint_high_size_kw": lambda c: c.m.randint(5, size=(2, 3)).dtype,
    "randint_float": lambda c: c.m.randint(5, (2,), dtype=c.m.float32).dtype,
    "randint_no_size": lambda c: c.m.randint(5),
    "eye_negative_n": lambda c: c.m.eye(-1),
    "eye_negative_m": lambda c: c.m.eye(2, -1),
    "linspace_negative": lambda c: c.m.linspace(0, 1, -1),
    "linspace_zero": lambda c: c.m.linspace(0, 1, 0),
    "zeros_negative": lambda c: c.m.zeros(-1),
    "zeros_negative_2d": lambda c: c.m.zeros(2, -1),
    "ones_negative": lambda c: c.m.ones((2, -3)),
    "empty_negative": lambda c: c.m.empty(-1),
    "full_int_size": lambda c: c.m.full(2, 3.0),
    "full_list_size": lambda c: c.m.full([2], 3),
    "zeros_no_size": lambda c: c.m.zeros(),
    "ones_no_size": lambda c: c.m.ones(),
    "empty_no_size": lambda c: c.m.empty(),
    "zeros_empty_tuple": lambda c: c.m.zeros(()),
    "zeros_float_size": lambda c: c.m.zeros(2.0),
    "ones_float_in_size": lambda c: c.m.ones(2, 2.0),
    "randn_no_size": lambda c: c.m.randn(),
    "rand_no_size": lambda c: c.m.rand(),
    # 11. backward's checks on its roots, in PyTorch's order
    "backward_no_grad_vector": lambda c: c.m.tensor([1.0, 2.0]).backward(),
    "backward_no_grad_int": lambda c: c.m.tensor(1).backward(),
    "backward_list_gradient": lambda c: (c.leaf([1.0, 2.0]) * 2).backward([1.0, 1.0]),
    "backward_second_root_no_grad": lambda c: c.m.autograd.backward(
        [c.leaf(1.0) * 2, c.m.tensor([1.0, 2.0])]),
    "backward_too_few_gradients": lambda c: c.m.autograd.backward(
        [c.leaf(1.0) * 2, c.leaf(1.0) * 3], [None]),
    "backward_extra_gradients": lambda c: c.m.autograd.backward([c.leaf(1.0) * 2], [None, None]),
    "backward_no_grad_then_vector": lambda c: c.m.autograd.backward(
        [c.m.tensor([1.0, 2.0]), c.leaf([1.0, 2.0]) * 2]),
    "backward_no_grad_shape_first": lambda c: c.m.tensor([1.0, 2.0]).backward(
        c.m.tensor([1.0, 2.0, 3.0])),
    "grad_extra_outputs": lambda c: c.m.autograd.grad(
        [c.keep(c.leaf(1.0)) * 2], [c.tensors[0]], grad_outputs=[None, None]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(torch, name):
    check(torch, PROGRAMS[name])


# -- what the harness cannot see: the dtype of `float`, signs of zero ----------------------

DTYPE_FLOAT = {
    "tensor_dtype_float": lambda m: m.tensor([1, 2], dtype=float).dtype,
    "zeros_dtype_float": lambda m: m.zeros(2, dtype=float).dtype,
    "to_float": lambda m: m.tensor([1, 2]).to(float).dtype,
}


@pytest.mark.parametrize("name", sorted(DTYPE_FLOAT))
def test_python_float_means_float64(torch, name):
    import minigrad

    assert str(DTYPE_FLOAT[name](minigrad)) == translate(str(DTYPE_FLOAT[name](torch)))


def test_python_int_and_bool_dtypes(torch):
    import minigrad

    for m in (torch, minigrad):
        assert str(m.tensor([1.5, 2.0], dtype=int).dtype).endswith(".int64")
        assert str(m.tensor([1, 0], dtype=bool).dtype).endswith(".bool")


def test_from_numpy_rejects_a_list(torch):
    import minigrad

    with pytest.raises(TypeError, match=r"^expected np.ndarray \(got list\)$"):
        torch.from_numpy([1, 2])
    with pytest.raises(TypeError, match=r"^expected np.ndarray \(got list\)$"):
        minigrad.from_numpy([1, 2])


def test_from_numpy_warns_once_of_a_read_only_array(torch):
    """PyTorch shares a read-only array and warns, once per process: each library runs
    in a fresh process, so the first warning is its first."""
    import json
    import subprocess
    import sys

    script = (
        "import json, warnings, numpy as np, {lib} as m\n"
        "a = np.arange(3.0)\n"
        "a.flags.writeable = False\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    shared = m.from_numpy(a)\n"
        "    m.from_numpy(a)\n"
        "    m.tensor(a)\n"
        "print(json.dumps([[w.category.__name__, str(w.message)] for w in seen]))\n"
        "print(json.dumps([shared.tolist(), bool(np.shares_memory(shared.numpy(), a))]))\n"
    )
    seen = {}
    for lib in ("torch", "minigrad"):
        done = subprocess.run([sys.executable, "-c", script.format(lib=lib)],
                              capture_output=True, text=True, check=True)
        warned, shared = (json.loads(line) for line in done.stdout.splitlines())
        seen[lib] = [[name, translate(text)] for name, text in warned], shared
    assert seen["minigrad"] == seen["torch"]
    assert len(seen["torch"][0]) == 1 and seen["torch"][1] == [[0.0, 1.0, 2.0], True]


SIGNED_ZEROS = {
    "relu": lambda m: m.relu(m.tensor([-0.0, 0.0, NAN, -1.0])),
    "relu_inplace": lambda m: m.tensor([-0.0, 0.0, NAN]).relu_(),
    "abs": lambda m: m.abs(m.tensor([-0.0, 0.0, -2.0])),
    "abs_inplace": lambda m: m.tensor([-0.0, 0.0]).abs_(),
    "sqrt": lambda m: m.sqrt(m.tensor([-0.0, 0.0])),
    "clamp": lambda m: m.tensor([-0.0, 0.0]).clamp(min=-1.0),
}


@pytest.mark.parametrize("name", sorted(SIGNED_ZEROS))
def test_signed_zeros_print_like_torch(torch, name):
    import minigrad

    assert repr(SIGNED_ZEROS[name](minigrad)) == translate(repr(SIGNED_ZEROS[name](torch)))


# -- repr: where the dtype / grad_fn / requires_grad suffixes wrap --------------------------


def _random_case(rng: random.Random):
    """A random tensor description: shape, dtype, values, and how it was made."""
    nd = rng.choice([0, 1, 1, 1, 2, 2, 3])
    shape = tuple(rng.randint(0, 3) if rng.random() < 0.05 else rng.randint(1, 14 if nd > 1 else 40)
                  for _ in range(nd))
    if rng.random() < 0.02:
        shape = (rng.randint(1001, 1100),)  # summarised with "..."
    dt = rng.choice(["float32", "float64", "int64", "bool"])
    n = int(np.prod(shape)) if shape else 1
    if dt == "bool":
        vals = np.array([rng.random() < 0.5 for _ in range(n)])
    elif dt == "int64":
        mag = rng.choice([1, 10, 1000, 10**6, 10**12])
        vals = np.array([rng.randint(-mag, mag) for _ in range(n)], np.int64)
    else:
        kind = rng.choice(["int", "frac", "big", "small", "special"])
        pick = {
            "int": lambda: float(rng.randint(-200, 200)),
            "frac": lambda: rng.uniform(-100, 100),
            "big": lambda: rng.uniform(-1, 1) * 10 ** rng.randint(3, 12),
            "small": lambda: rng.uniform(-1, 1) * 10 ** -rng.randint(1, 8),
            "special": lambda: rng.choice([NAN, math.inf, -math.inf, 0.0, 1.5, -3.0]),
        }[kind]
        vals = np.array([pick() for _ in range(n)], np.dtype(dt))
    how = rng.choice(["plain", "leaf", "mul", "clone", "param"]) if dt[0] == "f" else "plain"
    return vals.reshape(shape), dt, how


def _make(m, vals, dt, how):
    t = m.tensor(vals.copy(), dtype=getattr(m, dt), requires_grad=how != "plain")
    if how == "mul":
        return t * 1
    if how == "clone":
        return t.clone()
    if how == "param":
        return m.nn.Parameter(t.detach())
    return t


def test_repr_wrapping_matches_torch_on_random_tensors(torch, monkeypatch):
    """2000 random tensors print exactly as in PyTorch. minigrad's dtype names are three
    characters longer ("minigrad.float64"), which moves the wrap point, so for this
    comparison minigrad is made to name dtypes "torch.*": the texts must then be equal,
    byte for byte (the wrapping rule itself is the same on either text)."""
    import minigrad
    from minigrad import _dtype

    monkeypatch.setattr(_dtype.dtype, "__repr__", lambda self: f"torch.{self.name}")
    rng = random.Random(1234)
    wrapped = 0
    for _ in range(2000):
        vals, dt, how = _random_case(rng)
        expected = repr(_make(torch, vals, dt, how))
        assert repr(_make(minigrad, vals, dt, how)) == expected, (vals.shape, dt, how)
        wrapped += bool(re.search(r",\n {7}(dtype|grad_fn|requires_grad|size)=", expected))
    assert wrapped > 200  # the sample really exercises the wrapping


def test_repr_wraps_on_minigrads_own_text(torch):
    import minigrad

    t = minigrad.tensor([1.5, -2.0, 3.25], dtype=minigrad.float64, requires_grad=True) * 1
    assert repr(t) == ("tensor([ 1.5000, -2.0000,  3.2500], dtype=minigrad.float64,\n"
                       "       grad_fn=<MulBackward0>)")
    expected = repr(torch.tensor([1.5, -2.0, 3.25], dtype=torch.float64, requires_grad=True) * 1)
    assert repr(t) == translate(expected)


def _hook_calls(m, use_grad: bool) -> tuple:
    """Which hooks run when a leaf's gradient is asked for with `autograd.grad` or
    `backward(inputs=...)`, and what the leaves' `.grad` end up as."""
    v = m.tensor([1.0, 2.0], requires_grad=True)
    u = m.tensor([3.0, 4.0], requires_grad=True)
    out = (v * 2 + u).sum()
    calls = []
    v.register_hook(lambda g: calls.append("tensor") or g * 10)
    acc_v = out.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    acc_u = out.grad_fn.next_functions[0][0].next_functions[1][0]
    acc_v.register_prehook(lambda g: calls.append("v pre"))
    acc_v.register_hook(lambda gi, go: calls.append("v post"))
    acc_u.register_prehook(lambda g: calls.append("u pre"))
    if use_grad:
        result = m.autograd.grad(out, v)[0].tolist()
    else:
        out.backward(inputs=[v])
        result = v.grad.tolist()
    return calls, result, u.grad is None


@pytest.mark.parametrize("use_grad", [True, False], ids=["autograd.grad", "backward_inputs"])
def test_leaf_accumulator_hooks_run_only_when_gradients_accumulate(torch, use_grad):
    # autograd.grad only captures the leaf's gradient (its tensor hooks apply), it does
    # not run the leaf's AccumulateGrad or that node's hooks; backward(inputs=) does.
    import minigrad

    assert _hook_calls(minigrad, use_grad) == _hook_calls(torch, use_grad)

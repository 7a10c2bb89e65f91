"""Bad input and edge cases: each snippet runs under PyTorch and under minigrad, and
the two must raise the same exception (type and text, `torch` read as `minigrad`),
warn the same warnings (category and text, in order), and otherwise give the same
result (for a tensor: shape, dtype, values, requires_grad and grad_fn's name).

A snippet is Python run with `torch` bound to the library (and `np`, `threading`);
when its last statement is an expression, that is its result. Allocations too large
for any machine run in a subprocess with a time limit (`test_huge_sizes`), so a hang
or a memory storm shows as a failure instead of taking the suite down.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
from parity_harness import translate

# -- running a snippet -----------------------------------------------------------------------


def _message(text: str) -> str:
    """PyTorch's text as minigrad prints it. A C++ `c10::Error` raised while PyTorch
    unpacks an argument carries a stack trace ("Exception raised from ...") inside the
    message; minigrad keeps the sentence and closes its quote."""
    text = re.sub(r"\nException raised from .*\n(?=\"$)", "", text, flags=re.S)
    return translate(text)


def describe(v) -> object:
    """A plain-data description of a snippet's result."""
    if hasattr(v, "grad_fn") and hasattr(v, "detach"):
        fn = v.grad_fn
        return ("tensor", tuple(v.shape), str(v.dtype).split(".")[-1],
                repr(v.detach().numpy().tolist()), v.requires_grad,
                None if fn is None else type(fn).__name__)
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [describe(x) for x in v])
    if isinstance(v, str):
        return ("str", translate(v))
    if v is None or isinstance(v, (bool, int, float)):
        return (type(v).__name__, repr(v))
    if hasattr(v, "is_floating_point"):  # a dtype
        return ("dtype", str(v).split(".")[-1])
    return ("other", translate(type(v).__name__))


def run(m, code: str) -> dict:
    """Run snippet `code` with `torch` bound to module `m`; describe what happened."""
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    ns = {"torch": m, "np": np, "threading": threading}
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(tree, "<snippet>", "exec"), ns)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<snippet>", "eval"), ns)
                out["result"] = describe(value)
        except Exception as exc:
            out["error"] = (type(exc).__name__, _message(str(exc)))
    out["warnings"] = [(w.category.__name__, _message(str(w.message))) for w in caught]
    return out


def compare(torch, code: str) -> None:
    import minigrad

    expected = run(torch, code)
    got = run(minigrad, code)
    assert got == expected, f"\n{code}\n torch:    {expected}\n minigrad: {got}"


# -- the snippets ---------------------------------------------------------------------------

F = "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
M = "x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])\n"
I = "x = torch.tensor([1, 2, 3])\n"  # noqa: E741

FACTORIES = {
    # tensor(): data
    "tensor_mixed_str": "torch.tensor([1, 'a'])",
    "tensor_str": "torch.tensor('abc')",
    "tensor_str_list": "torch.tensor(['a', 'b'])",
    "tensor_none": "torch.tensor(None)",
    "tensor_none_in_list": "torch.tensor([1.0, None])",
    "tensor_set": "torch.tensor({1, 2})",
    "tensor_dict": "torch.tensor({'a': 1})",
    "tensor_bytes": "torch.tensor(b'ab')",
    "tensor_object": "torch.tensor(object())",
    "tensor_ragged": "torch.tensor([[1, 2], [3]])",
    "tensor_ragged_deep": "torch.tensor([[[1, 2]], [[3]]])",
    "tensor_list_then_number": "torch.tensor([[1, 2], 3])",
    "tensor_number_then_list": "torch.tensor([1, [2]])",
    "tensor_number_then_list_float": "torch.tensor([1.0, [2.0]])",
    "tensor_empty": "torch.tensor([])",
    "tensor_empty_nested": "torch.tensor([[]])",
    "tensor_empty_nested2": "torch.tensor([[], []])",
    "tensor_bool_int": "torch.tensor([True, 2])",
    "tensor_int_float": "torch.tensor([1, 2.0])",
    "tensor_range": "torch.tensor(range(3))",
    "tensor_tuple": "torch.tensor((1, 2))",
    "tensor_nested_tuple": "torch.tensor(((1, 2), [3, 4]))",
    "tensor_generator": "torch.tensor(i for i in range(3))",
    "tensor_numpy_list": "torch.tensor([np.float64(1.5), 2])",
    "tensor_numpy_int": "torch.tensor(np.int64(3))",
    "tensor_numpy_float32": "torch.tensor(np.float32(2.5))",
    "tensor_numpy_array": "torch.tensor(np.array([[1.0, 2.0]]))",
    "tensor_numpy_bool": "torch.tensor(np.array([True, False]))",
    "tensor_0d_tensors": "torch.tensor([torch.tensor(1.0), torch.tensor(2.0)])",
    "tensor_multi_elem_tensors": "torch.tensor([torch.ones(2), torch.ones(2)])",
    "tensor_of_tensor_warns": "torch.tensor(torch.ones(2))",
    "tensor_of_grad_tensor_warns": "torch.tensor(torch.ones(2, requires_grad=True))",
    # tensor(): dtype and requires_grad
    "tensor_dtype_str": "torch.tensor([1.0], dtype='float32')",
    "tensor_dtype_int_builtin": "torch.tensor([1.5], dtype=int)",
    "tensor_dtype_float_builtin": "torch.tensor([1], dtype=float)",
    "tensor_dtype_bool_builtin": "torch.tensor([0, 2], dtype=bool)",
    "tensor_dtype_numpy": "torch.tensor([1], dtype=np.float32)",
    "tensor_dtype_number": "torch.tensor([1], dtype=3)",
    "tensor_dtype_none": "torch.tensor([1], dtype=None)",
    "tensor_float_to_int": "torch.tensor([1.7, -1.7], dtype=torch.int64)",
    "tensor_nan_to_int": "torch.tensor(float('nan'), dtype=torch.int64)",
    "tensor_nan_list_to_int": "torch.tensor([float('nan')], dtype=torch.int64)",
    "tensor_inf_to_int": "torch.tensor([float('inf')], dtype=torch.int64)",
    "tensor_float_to_bool": "torch.tensor([0.0, 0.5], dtype=torch.bool)",
    "tensor_int_requires_grad": "torch.tensor([1, 2], requires_grad=True)",
    "tensor_bool_requires_grad": "torch.tensor([True], requires_grad=True)",
    "tensor_requires_grad_str": "torch.tensor([1.0], requires_grad='yes')",
    "tensor_requires_grad_none": "torch.tensor([1.0], requires_grad=None)",
    "tensor_requires_grad_int": "torch.tensor([1.0], requires_grad=1)",
    "tensor_device_cpu": "torch.tensor([1.0], device='cpu')",
    "tensor_no_args": "torch.tensor()",
    "tensor_two_positional": "torch.tensor([1.0], torch.float64)",
    "tensor_unknown_kwarg": "torch.tensor([1.0], foo=1)",
    # tensor(): overflow
    "tensor_1e40": "torch.tensor([1e40])",
    "tensor_1e40_scalar": "torch.tensor(1e40)",
    "tensor_neg_1e40": "torch.tensor([-1e40, 1.0])",
    "tensor_1e40_f64": "torch.tensor([1e40], dtype=torch.float64)",
    "tensor_1e40_f32": "torch.tensor([1e40], dtype=torch.float32)",
    "tensor_1e_minus_50": "torch.tensor([1e-50])",
    "tensor_int_2_63": "torch.tensor([2**63])",
    "tensor_int_2_63_scalar": "torch.tensor(2**63)",
    "tensor_int_2_64": "torch.tensor(2**64)",
    "tensor_int_min": "torch.tensor([-2**63])",
    "tensor_int_below_min": "torch.tensor([-2**63 - 1])",
    "tensor_int_max": "torch.tensor([2**63 - 1])",
    "tensor_big_int_as_float": "torch.tensor([2**63], dtype=torch.float32)",
    "tensor_huge_int_as_float": "torch.tensor([2**70], dtype=torch.float64)",
    "tensor_big_int_mixed": "torch.tensor([2**63, 1.0])",
    "tensor_1e19_to_int": "torch.tensor([1e19], dtype=torch.int64)",
    "tensor_complex": "torch.tensor(1 + 2j)",
    "np_str_array": "torch.tensor(np.array(['a']))",
    "np_object_array": "torch.tensor(np.array([1, 'a'], dtype=object))",
    "np_empty": "torch.tensor(np.array([]))",
    "np_0d": "torch.tensor(np.array(2.5))",
    "np_f32_list": "torch.tensor([np.float32(1.5), 2.0])",
    "np_bool_scalar": "torch.tensor(np.bool_(True))",
    "np_nan_int": "torch.tensor(np.array([np.nan]), dtype=torch.int64).shape",
    "np_big_to_f32": "torch.tensor(np.array([1e40]), dtype=torch.float32)",
    "tensor_nested_0d": "torch.tensor([[torch.tensor(1.0)], [torch.tensor(2.0)]])",
    "tensor_list_of_int_tensors": "torch.tensor([torch.tensor(1), torch.tensor(2)])",
    "tensor_list_mixed_tensor_float": "torch.tensor([torch.tensor(1), 2.5])",
    "tensor_of_tensor_dtype": "torch.tensor(torch.ones(2), dtype=torch.int64)",
    "tensor_inf_bool": "torch.tensor([float('inf')], dtype=torch.bool)",
    "tensor_neg_int_bool": "torch.tensor([-3], dtype=torch.bool)",
    "tensor_big_to_f32_list": "torch.tensor([1, 2**100], dtype=torch.float32)",
    "tensor_deep": "torch.tensor([[[[[[1.0]]]]]]).shape",
    "as_float_of_int": "float(torch.tensor(3))",
    "int_of_float": "int(torch.tensor(2.7))",
    "int_of_nan": "int(torch.tensor(float('nan')))",
    "int_of_inf": "int(torch.tensor(float('inf')))",
    "index_of_float": "[1, 2, 3][torch.tensor(1.0)]",
    "index_of_int": "[1, 2, 3][torch.tensor(1)]",
    "range_of_tensor": "list(range(torch.tensor(3)))",
    "item_int": "torch.tensor([5]).item()",
    "complex_of": "complex(torch.tensor(1.0))",

    # zeros / ones / empty: sizes
    "zeros_str": "torch.zeros('a')",
    "zeros_float": "torch.zeros(2.5)",
    "zeros_float_in_tuple": "torch.zeros((2, 3.0))",
    "zeros_float_second": "torch.zeros(2, 3.0)",
    "zeros_none": "torch.zeros(None)",
    "zeros_none_in_tuple": "torch.zeros((2, None))",
    "zeros_neg": "torch.zeros(-1)",
    "zeros_neg_tuple": "torch.zeros((2, -1))",
    "zeros_str_second": "torch.zeros(2, 'a')",
    "zeros_list": "torch.zeros([2, 3])",
    "zeros_nested": "torch.zeros([[2]])",
    "zeros_no_size": "torch.zeros()",
    "zeros_empty_tuple": "torch.zeros(())",
    "zeros_zero": "torch.zeros(0)",
    "zeros_bool_size": "torch.zeros(True)",
    "zeros_tensor_size": "torch.zeros(torch.tensor(3))",
    "zeros_float_tensor_size": "torch.zeros(torch.tensor(3.0))",
    "zeros_numpy_size": "torch.zeros(np.int64(2), 2)",
    "zeros_size_object": "torch.zeros(torch.Size([2, 1]))",
    "zeros_tuple_and_int": "torch.zeros((2, 3), 4)",
    "zeros_dtype_str": "torch.zeros(2, dtype='float32')",
    "zeros_dtype_builtin_int": "torch.zeros(2, dtype=int)",
    "zeros_dtype_builtin_float": "torch.zeros(2, dtype=float)",
    "zeros_requires_grad_str": "torch.zeros(2, requires_grad='x')",
    "zeros_int_requires_grad": "torch.zeros(2, dtype=torch.int64, requires_grad=True)",
    "zeros_2_63": "torch.zeros(2**63)",
    "zeros_below_min": "torch.zeros(-2**63 - 1)",
    "ones_neg": "torch.ones(-2)",
    "ones_neg_second": "torch.ones(3, -2)",
    "ones_str": "torch.ones('3')",
    "ones_float": "torch.ones(1.0)",
    "ones_bool_requires_grad": "torch.ones(2, dtype=torch.bool, requires_grad=True)",
    "empty_neg": "torch.empty(-1)",
    "empty_float": "torch.empty(2.0)",
    "empty_shape": "torch.empty(2, 0).shape",
    # full
    "full_str": "torch.full((2,), 'a')",
    "full_none": "torch.full((2,), None)",
    "full_int_size": "torch.full(2, 1.0)",
    "full_float_size": "torch.full((2.5,), 1.0)",
    "full_list_value": "torch.full((2,), [1, 2])",
    "full_tensor_value": "torch.full((2,), torch.tensor(1.5))",
    "full_tensor_vector_value": "torch.full((2,), torch.ones(2))",
    "full_bool": "torch.full((2,), True)",
    "full_int": "torch.full((2,), 3)",
    "full_2_63": "torch.full((2,), 2**63)",
    "full_below_min": "torch.full((2,), -2**63 - 1)",
    "full_2_64": "torch.full((2,), 2**64)",
    "full_1e40": "torch.full((2,), 1e40)",
    "full_1e40_f64": "torch.full((2,), 1e40, dtype=torch.float64)",
    "full_inf": "torch.full((2,), float('inf'))",
    "full_float_as_int": "torch.full((2,), 1.5, dtype=torch.int64)",
    "full_nan_as_int": "torch.full((2,), float('nan'), dtype=torch.int64)",
    "full_2_63_float_dtype": "torch.full((2,), 2**63, dtype=torch.float32)",
    "full_neg_size": "torch.full((-1,), 1.0)",
    "full_missing_value": "torch.full((2,))",
    "full_int_requires_grad": "torch.full((2,), 1, requires_grad=True)",
    "full_dtype_str": "torch.full((2,), 1.0, dtype='float64')",
    # eye
    "eye_neg": "torch.eye(-1)",
    "eye_neg_m": "torch.eye(2, -1)",
    "eye_float": "torch.eye(2.5)",
    "eye_str": "torch.eye('a')",
    "eye_none": "torch.eye(None)",
    "eye_float_m": "torch.eye(2, 3.0)",
    "eye_m_none": "torch.eye(2, None)",
    "eye_zero": "torch.eye(0)",
    "eye_int_requires_grad": "torch.eye(2, dtype=torch.int64, requires_grad=True)",
    "eye_2_63": "torch.eye(2**63)",
    # arange
    "arange_zero_step": "torch.arange(0, 10, 0)",
    "arange_wrong_sign": "torch.arange(10, 0)",
    "arange_wrong_sign_neg": "torch.arange(0, 10, -1)",
    "arange_huge_step": "torch.arange(0, 10, 2**63)",
    "arange_2_63_end": "torch.arange(2**63)",
    "arange_2_64_end": "torch.arange(2**64)",
    "arange_str": "torch.arange('a')",
    "arange_none": "torch.arange(None)",
    "arange_end_none": "torch.arange(0, None)",
    "arange_inf": "torch.arange(0, float('inf'))",
    "arange_nan": "torch.arange(0, float('nan'))",
    "arange_nan_step": "torch.arange(0, 1, float('nan'))",
    "arange_float": "torch.arange(1.5)",
    "arange_float_step": "torch.arange(0.0, 1.0, 0.25)",
    "arange_bool_dtype": "torch.arange(3, dtype=torch.bool)",
    "arange_int_float_dtype": "torch.arange(3, dtype=torch.float64)",
    "arange_float_int_dtype": "torch.arange(0.5, 3, dtype=torch.int64)",
    "arange_dtype_str": "torch.arange(5, dtype='int64')",
    "arange_int_requires_grad": "torch.arange(3, requires_grad=True)",
    "arange_float_requires_grad": "torch.arange(3.0, requires_grad=True)",
    "arange_tensor_args": "torch.arange(torch.tensor(1), torch.tensor(4))",
    "arange_neg_step": "torch.arange(3, 0, -1)",
    "arange_empty": "torch.arange(0)",
    "arange_no_args": "torch.arange()",
    "arange_list": "torch.arange([1, 2])",
    # linspace
    "linspace_neg": "torch.linspace(0, 1, -1)",
    "linspace_float_steps": "torch.linspace(0, 1, 2.5)",
    "linspace_str_steps": "torch.linspace(0, 1, 'a')",
    "linspace_missing_steps": "torch.linspace(0, 1)",
    "linspace_int_dtype": "torch.linspace(0, 10, 5, dtype=torch.int64)",
    "linspace_one": "torch.linspace(2, 3, 1)",
    "linspace_zero": "torch.linspace(2, 3, 0)",
    "linspace_str_start": "torch.linspace('a', 1, 3)",
    "linspace_none_end": "torch.linspace(0, None, 3)",
    "linspace_requires_grad": "torch.linspace(0, 1, 3, requires_grad=True)",
    # *_like
    "zeros_like_int": "torch.zeros_like(3)",
    "ones_like_list": "torch.ones_like([1.0, 2.0])",
    "empty_like_none": "torch.empty_like(None)",
    "full_like_str": F + "torch.full_like(x, 'a')",
    "full_like_2_63": I + "torch.full_like(x, 2**63)",
    "full_like_float_into_int": I + "torch.full_like(x, 2.5)",
    "zeros_like_dtype_str": F + "torch.zeros_like(x, dtype='float64')",
    "zeros_like_int_requires_grad": I + "torch.zeros_like(x, requires_grad=True)",
    "zeros_like_keeps_no_grad": F + "torch.zeros_like(x)",
    "ones_like_requires_grad": F + "torch.ones_like(x, requires_grad=True)",
}

DTYPES = {
    "to_str": F + "x.to('float32')",
    "to_dtype_kw_str": F + "x.to(dtype='float64')",
    "to_int": F + "x.to(torch.int64)",
    "to_none": F + "x.to(None)",
    "to_number": F + "x.to(3)",
    "long_of_nan": "torch.tensor([float('nan'), 1.5, -1.5]).long().shape",
    "long_of_big": "torch.tensor([1.5e19]).long().shape",
    "float_of_int": I + "x.float()",
    "float_of_huge_double": "torch.tensor([1e300, -1e300], dtype=torch.float64).float()",
    "long_of_inf": "torch.tensor([float('inf')]).long().shape",
    "bool_of_nan": "torch.tensor([float('nan'), 0.0]).bool()",
    "double_of_bool": "torch.tensor([True, False]).double()",
    "bool_of_float": "torch.tensor([0.0, 0.1]).bool()",
    "int_tensor_requires_grad_": I + "x.requires_grad_()",
    "requires_grad_str": F + "x.requires_grad = 'yes'",
    "requires_grad_none": F + "x.requires_grad = None",
    "requires_grad_one": F + "x.requires_grad = 1",
    "requires_grad_zero": F + "x.requires_grad = 0",
    "requires_grad_numpy_bool": F + "x.requires_grad = np.bool_(True)",
    "requires_grad_tensor": F + "x.requires_grad = torch.tensor(True)",
    "requires_grad__str": F + "x.requires_grad_('yes')",
    "requires_grad__none": F + "x.requires_grad_(None)",
    "requires_grad__int": F + "x.requires_grad_(0)",
    "requires_grad_int_tensor_set": I + "x.requires_grad = True",
    "requires_grad_false_int": I + "x.requires_grad = False\nx.requires_grad",
    "nonleaf_requires_grad_false": F + "y = x * 2\ny.requires_grad = False",
    "nonleaf_requires_grad_true": F + "y = x * 2\ny.requires_grad = True",
    "nonleaf_requires_grad__false": F + "y = x * 2\ny.requires_grad_(False)",
    "int_add_float": I + "x + 0.5",
    "int_div_int": I + "x / 2",
    "int_floordiv_zero": I + "x // 0",
    "int_floordiv_zero_tensor": I + "x // torch.tensor(0)",
    "int_rem_zero": I + "x % 0",
    "int_div_zero": I + "x / 0",
    "float_floordiv_zero": F + "x.detach() // 0",
    "float_rem_zero": F + "x.detach() % 0",
    "float_div_zero": F + "x.detach() / 0",
    "zero_div_zero": "torch.tensor([0.0]) / 0",
    "int_pow_neg": I + "x ** -1",
    "int_pow_neg_tensor": I + "x ** torch.tensor(-1)",
    "int_pow_float": I + "x ** 0.5",
    "bool_sub": "torch.tensor([True]) - torch.tensor([False])",
    "bool_neg": "-torch.tensor([True])",
    "bool_add": "torch.tensor([True]) + torch.tensor([True])",
    "int_mean": I + "x.mean()",
    "int_exp": I + "x.exp()",
    "int_sqrt": I + "x.sqrt()",
    "int_sum": I + "x.sum()",
    "bool_sum": "torch.tensor([True, True]).sum()",
    "f32_plus_f64": "torch.ones(2) + torch.ones(2, dtype=torch.float64)",
    "f32_plus_f64_0d": "torch.ones(2) + torch.tensor(1.0, dtype=torch.float64)",
    "int_plus_float_0d": I + "x + torch.tensor(1.5)",
    "int_matmul_float": "torch.ones(2, 2, dtype=torch.int64) @ torch.ones(2, 2)",
    "is_floating_point": I + "x.is_floating_point()",
    "dtype_of_int": I + "x.dtype",
    "dtype_itemsize": "torch.float64.itemsize",
    "dtype_is_floating": "torch.int64.is_floating_point",
    "int_backward": I + "x.sum().backward()",
    "float_backward_of_int_output": F + "(x > 1).sum().backward()",
}

DIMS = {
    "sum_dim_str": M + "x.sum(dim='a')",
    "sum_dim_out_of_range": M + "x.sum(2)",
    "sum_dim_neg_out_of_range": M + "x.sum(-3)",
    "sum_dim_float": M + "x.sum(1.5)",
    "sum_dim_dup": M + "x.sum(dim=(0, 0))",
    "sum_dim_dup_neg": M + "x.sum(dim=(1, -1))",
    "sum_dim_list": M + "x.sum(dim=[0, 1])",
    "sum_dim_none_in_tuple": M + "x.sum(dim=(0, None))",
    "sum_keepdim_str": M + "x.sum(0, keepdim='yes')",
    "mean_dim_out_of_range": M + "x.mean(5)",
    "max_dim_out_of_range": M + "x.max(dim=2)",
    "max_dim_str": M + "x.max(dim='a')",
    "max_two_dims": M + "x.max(dim=(0, 1))",
    "argmax_out_of_range": M + "x.argmax(3)",
    "view_wrong_size": M + "x.view(4)",
    "view_two_minus_one": M + "x.view(-1, -1)",
    "view_str": M + "x.view('a')",
    "view_float": M + "x.view(2.0, 3)",
    "view_neg": M + "x.view(-2, 3)",
    "view_none": M + "x.view(None)",
    "view_tuple": M + "x.view((3, 2))",
    "view_zero": M + "x.view(0, 6)",
    "view_non_contiguous": M + "x.t().view(6)",
    "reshape_wrong": M + "x.reshape(3, 3)",
    "reshape_two_minus_one": M + "x.reshape(-1, -1)",
    "reshape_str": M + "x.reshape('a')",
    "reshape_float": M + "x.reshape(6.0)",
    "reshape_minus_one_bad": M + "x.reshape(4, -1)",
    "reshape_empty_minus_one": "torch.ones(0, 3).reshape(-1, 0)",
    "transpose_out_of_range": M + "x.transpose(0, 2)",
    "transpose_str": M + "x.transpose(0, 'a')",
    "transpose_one_arg": M + "x.transpose(0)",
    "t_3d": "torch.ones(2, 2, 2).t()",
    "t_1d": "torch.ones(3).t()",
    "permute_too_few": M + "x.permute(0)",
    "permute_dup": M + "x.permute(0, 0)",
    "permute_out_of_range": M + "x.permute(0, 2)",
    "permute_str": M + "x.permute('a', 0)",
    "unsqueeze_out_of_range": M + "x.unsqueeze(3)",
    "unsqueeze_neg_out_of_range": M + "x.unsqueeze(-4)",
    "unsqueeze_float": M + "x.unsqueeze(1.0)",
    "squeeze_out_of_range": M + "x.squeeze(5)",
    "squeeze_str": M + "x.squeeze('a')",
    "squeeze_not_one": M + "x.squeeze(0)",
    "unbind_out_of_range": M + "x.unbind(2)",
    "unbind_0d": "torch.tensor(1.0).unbind()",
    "flatten_bad": M + "x.flatten(3)",
    "expand_fewer_dims": M + "x.expand(3)",
    "expand_wrong": M + "x.expand(3, 3)",
    "expand_neg_new_dim": M + "x.expand(-1, 2, 3)",
    "expand_str": M + "x.expand('a')",
    "expand_minus_two": M + "x.expand(2, -2)",
    "matmul_mismatch": M + "x @ x",
    "matmul_number": M + "x @ 2",
    "matmul_str": M + "x @ 'a'",
    "matmul_0d": "torch.tensor(1.0) @ torch.tensor(2.0)",
    "mm_1d": "torch.mm(torch.ones(2), torch.ones(2))",
    "mm_mismatch": "torch.mm(torch.ones(2, 3), torch.ones(2, 3))",
    "mv_mismatch": "torch.mv(torch.ones(2, 3), torch.ones(2))",
    "dot_mismatch": "torch.dot(torch.ones(2), torch.ones(3))",
    "dot_2d": "torch.dot(torch.ones(2, 2), torch.ones(2))",
    "dot_dtype_mismatch": "torch.dot(torch.ones(2), torch.ones(2, dtype=torch.float64))",
    "broadcast_mismatch": "torch.ones(2) + torch.ones(3)",
    "broadcast_mismatch_2d": "torch.ones(2, 3) * torch.ones(3, 2)",
    "add_str": M + "x + 'a'",
    "add_none": M + "x + None",
    "add_list": M + "x + [1.0, 2.0, 3.0]",
    "mul_tuple": M + "x * (1, 2)",
    "radd_str": M + "'a' + x",
    "eq_none": M + "x == None",
    "lt_str": M + "x < 'a'",
    "add_2_64": M + "x + 2**64",
    "add_2_63": I + "x + 2**63",
    "mul_1e40_float32": "torch.ones(2) * 1e40",
    "cat_mismatch": "torch.cat([torch.ones(2), torch.ones(2, 2)])",
    "stack_mismatch": "torch.stack([torch.ones(2), torch.ones(3)])",
    "cat_empty_list": "torch.cat([])",
    "cat_not_tensors": "torch.cat([1, 2])",
    "item_multi": M + "x.item()",
    "item_empty": "torch.ones(0).item()",
    "float_multi": M + "float(x)",
    "int_multi": M + "int(x)",
    "bool_multi": "bool(torch.ones(2))",
    "bool_empty": "bool(torch.ones(0))",
    "bool_one": "bool(torch.ones(1))",
    "len_0d": "len(torch.tensor(1.0))",
    "iter_0d": "iter(torch.tensor(1.0))",
    "numpy_requires_grad": F + "x.numpy()",
    "numpy_positional": M + "x.numpy(True)",
    "numpy_two_positional": M + "x.numpy(True, False)",
    "numpy_unknown_keyword": M + "x.numpy(copy=True)",
    "numpy_force_not_bool": M + "x.numpy(force=1)",
    "numpy_force": F + "x.numpy(force=True).shape",
    "tolist_requires_grad": F + "x.tolist()",
    "float_requires_grad": "float(torch.tensor(2.0, requires_grad=True))",
    "index_0d_tensor": "torch.tensor(1.0)[0]",
    "size_out_of_range": M + "x.size(2)",
    "size_str": M + "x.size('a')",
    "shape_neg": M + "x.shape[-1]",
    "stride_out_of_range": M + "x.stride(5)",
    "clamp_none_none": F + "x.clamp()",
    "clamp_str": F + "x.clamp(min='a')",
    "clamp_2_63": "torch.tensor([1, 2]).clamp(min=2**63)",
    "pow_str": F + "x ** 'a'",
    "pow_none": F + "x ** None",
    "view_str_second": M + "x.view(2, 'a')",
    "view_tuple_str": M + "x.view((2, 'a'))",
    "view_neg_second": M + "x.view(-1, -2)",
    "view_2_63": M + "x.view(2**63)",
    "reshape_str_second": M + "x.reshape(2, 'a')",
    "reshape_float_in_tuple": M + "x.reshape((2, 3.0))",
    "reshape_none": M + "x.reshape(None)",
    "reshape_neg": M + "x.reshape(-3, 2)",
    "expand_str_second": M + "x.expand(2, 'a')",
    "expand_none": M + "x.expand(None)",
    "expand_2_63": M + "x.expand(2**63, 3)",
    "unsqueeze_str": M + "x.unsqueeze('a')",
    "unsqueeze_none": M + "x.unsqueeze(None)",
    "unsqueeze_2_63": M + "x.unsqueeze(2**63)",
    "transpose_float": M + "x.transpose(0.0, 1)",
    "transpose_none": M + "x.transpose(None, 1)",
    "size_float": M + "x.size(1.0)",
    "size_none": M + "x.size(None)",
    "clamp_max_2_63": "torch.tensor([1, 2]).clamp(max=2**63)",
    "clamp_2_64": "torch.tensor([1, 2]).clamp(min=2**64)",
    "clamp_below_min": "torch.tensor([1, 2]).clamp(min=-2**63 - 1)",
    "clamp_1e40": M + "x.clamp(1e40)",
    "clamp_positional_str": M + "x.clamp('a')",
    "clamp_list": M + "x.clamp(min=[1])",
    "clamp_inplace_2_63": "torch.tensor([1, 2]).clamp_(min=2**63)",
    "clamp_inplace_str": M + "x.clamp_(min='a')",
    "clamp_tensor_bound": M + "x.clamp(min=torch.tensor(2.5))",
}

INDICES = {
    "index_out_of_range": M + "x[5]",
    "index_neg_out_of_range": M + "x[-5]",
    "index_str": M + "x['a']",
    "index_two_ellipsis": M + "x[..., ...]",
    "index_two_ellipsis_int": M + "x[..., 0, ...]",
    "index_none": M + "x[None]",
    "index_none_ellipsis": M + "x[None, ..., None]",
    "index_float": M + "x[1.5]",
    "index_float_in_tuple": M + "x[0, 1.0]",
    "index_list_out_of_range": M + "x[[0, 5]]",
    "index_tensor_out_of_range": M + "x[torch.tensor([0, 5])]",
    "index_neg_list": M + "x[[-1, -2]]",
    "index_mask_wrong_size": M + "x[torch.tensor([True])]",
    "index_mask_right_size": M + "x[torch.tensor([True, False])]",
    "index_bool_list": M + "x[[True, False]]",
    "index_too_many": M + "x[:, :, :]",
    "index_too_many_ints": M + "x[0, 0, 0]",
    "index_float_tensor": M + "x[torch.tensor(1.0)]",
    "index_float_tensor_list": M + "x[torch.tensor([0.0, 1.0])]",
    "index_int_0d_tensor": M + "x[torch.tensor(1)]",
    "index_negative_step": M + "x[::-1]",
    "index_zero_step": M + "x[::0]",
    "index_str_slice": M + "x['a':]",
    "index_float_slice": M + "x[0.5:]",
    "index_none_slice": M + "x[None:None]",
    "index_tensor_slice": M + "x[torch.tensor(1):]",
    "index_lists_mismatch": M + "x[[0, 1], [0, 1, 2]]",
    "index_lists_broadcast": M + "x[[[0], [1]], [0, 2]]",
    "index_tuple_ints": M + "x[(0, 1)]",
    "index_nested_list": M + "x[[[0]]]",
    "index_mixed_list": M + "x[[0, 'a']]",
    "index_list_of_floats": M + "x[[0.0, 1.0]]",
    "index_empty_list": M + "x[[]]",
    "index_dict": M + "x[{}]",
    "index_set": M + "x[{0}]",
    "index_numpy_int": M + "x[np.int64(1)]",
    "index_numpy_array": M + "x[np.array([1, 0])]",
    "index_numpy_bool_array": M + "x[np.array([True, False])]",
    "index_bool_scalar": M + "x[True]",
    "index_false": M + "x[False]",
    "index_ellipsis_out_of_range": M + "x[..., 3]",
    "index_2_63": M + "x[2**63]",
    "index_big_slice": M + "x[2**63:]",
    "index_slice_huge_stop": M + "x[:10**30]",
    "index_0d_int": "torch.tensor(1.0)[None]",
    "index_0d_ellipsis": "torch.tensor(1.0)[...]",
    "index_0d_bool": "torch.tensor(1.0)[True]",
    "setitem_wrong_shape": M + "x[0] = torch.ones(5)",
    "setitem_str": M + "x[0] = 'a'",
    "setitem_none": M + "x[0] = None",
    "setitem_list": M + "x[0] = [1.0, 2.0, 3.0]\nx",
    "setitem_list_wrong": M + "x[0] = [1.0, 2.0]",
    "setitem_out_of_range": M + "x[2] = 1.0",
    "setitem_float_index": M + "x[1.0] = 1.0",
    "setitem_str_index": M + "x['a'] = 1.0",
    "setitem_2_63": I + "x[0] = 2**63",
    "setitem_1e40": M + "x[0] = 1e40\nx",
    "setitem_float_into_int": I + "x[0] = 2.7\nx",
    "setitem_nan_into_int": I + "x[0] = float('nan')\nx.shape",
    "setitem_two_ellipsis": M + "x[..., ...] = 0.0\nx",
    "setitem_negative_step": M + "x[::-1] = 0.0",
    "setitem_mask_wrong": M + "x[torch.tensor([True])] = 0.0",
    "setitem_leaf": F + "x[0] = 5.0",
    "setitem_tensor_dtype": I + "x[0] = torch.tensor(2.5)\nx",
    "index_true_backward": F + "y = x[True]\ny.sum().backward()\ny, x.grad",
    "index_false_backward": F + "y = x[False]\ny.sum().backward()\ny, x.grad",
    "index_true_0d_backward": ("x = torch.tensor(2.0, requires_grad=True)\ny = x[True]\n"
                               "(y * 3).sum().backward()\ny, x.grad"),
    "index_float_list_backward": F + "y = x[[0.0, 2.9]]\n(y * y).sum().backward()\ny, x.grad",
    "index_two_ellipsis_grad_fn": F + "y = x[..., ...]\ny.sum().backward()\ny, x.grad",
    "index_ellipsis_none_ellipsis": M + "x[..., None, ...].shape",
    "index_nested_list_backward": F + "y = x[[[0, 1]]]\ny.sum().backward()\ny, x.grad",
    "index_bool_0d_tensor": M + "x[torch.tensor(True)].shape",
    "index_true_with_int": M + "x[True, 0]",
    "index_int_with_true": M + "x[0, True]",
    "index_list_with_none": M + "x[[None, 0]]",
    "index_list_with_slice": M + "x[[slice(None), 0]]",
    "index_range": M + "x[range(2)]",
    "index_bool_list_mixed": M + "x[[True, 1]]",
    "index_list_2_63": M + "x[[2**63]]",
    "index_below_min": M + "x[-2**63 - 1]",
    "setitem_true": M + "x[True] = 0.0\nx",
    "setitem_tuple_value": M + "x[0] = (1.0, 2.0, 3.0)",
    "setitem_mask_1e40": M + "x[[0]] = 1e40",
    "setitem_list_index_none": M + "x[[0]] = None",
    "setitem_inf_into_int": I + "x[0] = float('inf')",
    "setitem_bool_into_float": M + "x[0] = True\nx",
    "setitem_numpy_float": M + "x[0] = np.float64(2.5)\nx",
    "setitem_numpy_float32": M + "x[0] = np.float32(2.5)",
    "setitem_numpy_int": M + "x[0] = np.int64(3)\nx",
    "setitem_numpy_bool": M + "x[0] = np.bool_(True)",
    "setitem_numpy_array": M + "x[0] = np.array([1.0, 2.0, 3.0])",
    "setitem_numpy_0d": M + "x[0] = np.array(2.0)",
    "setitem_complex": M + "x[0] = 1 + 2j",
}

INPLACE = {
    "leaf_add_": F + "x.add_(1)",
    "leaf_view_mul_": F + "x[0].mul_(2)",
    "leaf_zero_": F + "x.zero_()",
    "leaf_fill_": F + "x.fill_(1.0)",
    "leaf_iadd": F + "x += 1",
    "leaf_add_no_grad": F + "with torch.no_grad():\n    x.add_(1)\nx",
    "exp_then_backward": F + "y = x.exp()\ny.add_(1)\ny.sum().backward()",
    "sigmoid_then_backward": F + "y = x * 1\nz = y.sigmoid()\ny.mul_(2)\nz.sum().backward()",
    "int_add_float_": I + "x.add_(0.5)",
    "int_mul_float_tensor_": I + "x.mul_(torch.tensor(1.5))",
    "int_div_": I + "x.div_(2)",
    "bool_add_int_": "torch.tensor([True]).add_(1)",
    "float32_add_float64_": "torch.ones(2).add_(torch.ones(2, dtype=torch.float64))",
    "inplace_broadcast_into_smaller": "torch.ones(1).add_(torch.ones(2))",
    "inplace_broadcast_2d": "torch.ones(2, 1).mul_(torch.ones(2, 3))",
    "inplace_str": M + "x.mul_('a')",
    "inplace_none": M + "x.add_(None)",
    "fill_str": M + "x.fill_('a')",
    "fill_2_63": I + "x.fill_(2**63)",
    "fill_vector": M + "x.fill_(torch.ones(2))",
    "fill_1e40": M + "x.fill_(1e40)\nx",
    "fill_none": M + "x.fill_(None)",
    "fill_float_into_int": I + "x.fill_(1.5)\nx",
    "fill_below_min": I + "x.fill_(-2**63 - 1)",
    "fill_2_64": M + "x.fill_(2**64)",
    "fill_nan_into_int": I + "x.fill_(float('nan'))",
    "fill_bool": M + "x.fill_(True)\nx",
    "fill_0d_tensor": M + "x.fill_(torch.tensor(2.0))\nx",
    "data_str": F + "x.data = 'a'",
    "data_other_shape": F + "x.data = torch.ones(5)\nx.shape",
    "data_int": F + "x.data = torch.tensor([1, 2])",
    "grad_wrong_size": F + "x.grad = torch.ones(5)",
    "grad_str": F + "x.grad = 'a'",
    "grad_wrong_dtype": F + "x.grad = torch.ones(3, dtype=torch.float64)",
    "grad_int": F + "x.grad = torch.ones(3, dtype=torch.int64)",
    "grad_none": F + "x.grad = None\nx.grad",
    "grad_of_nonleaf_warns": F + "y = x * 2\ny.grad",
    "grad_of_nonleaf_retained": F + "y = x * 2\ny.retain_grad()\ny.grad",
    "detach_add_": F + "d = x.detach()\nd.add_(1)\nx",
    "detach_then_backward": F + "y = x.exp()\nd = y.detach()\nd.zero_()\ny.sum().backward()",
    "unbind_output_inplace": F + "y = x * 1\na, b, c = y.unbind()\na.mul_(2)",
    "view_of_nograd_view": F + "y = x * 1\nwith torch.no_grad():\n    v = y[:2]\nv.mul_(2)",
    "retain_grad_no_grad": "torch.ones(2).retain_grad()",
    "zero_grad_none": F + "x.grad.zero_()",
    "t_inplace_1d": F + "x.detach().t_()",
    "t_inplace_3d": "torch.ones(2, 2, 2).t_()",
    "clamp_inplace_leaf": F + "x.clamp_(0, 1)",
    "relu_inplace_leaf": F + "x.relu_()",
    "inplace_in_no_grad_then_backward": F + ("y = x * x\nwith torch.no_grad():\n    x.mul_(2)\n"
                                             "y.sum().backward()"),
    "backward_twice": F + "y = x.exp().sum()\ny.backward()\ny.backward()",
    "backward_twice_retain": F + "y = (x * 2).sum()\ny.backward(retain_graph=True)\n"
                                 "y.backward()\nx.grad",
    "version_after_add_": F + "y = x * 1\ny.add_(1)\ny.add_(1)\ny._version",
}

HOOKS = {
    "hook_str": F + "x.register_hook('a')",
    "hook_none": F + "x.register_hook(None)",
    "hook_int_tensor": I + "x.register_hook(lambda g: g)",
    "hook_no_grad_tensor": "torch.ones(2).register_hook(lambda g: g)",
    "hook_wrong_shape": F + "x.register_hook(lambda g: torch.ones(5))\n(x * 2).sum().backward()",
    "hook_returns_str": F + "x.register_hook(lambda g: 'a')\n(x * 2).sum().backward()",
    "hook_returns_int": F + "x.register_hook(lambda g: 1)\n(x * 2).sum().backward()",
    "hook_wrong_dtype": F + ("x.register_hook(lambda g: g.double())\n(x * 2).sum().backward()\n"
                             "x.grad"),
    "hook_int_grad": F + ("x.register_hook(lambda g: g.long())\n(x * 2).sum().backward()"),
    "hook_raises": F + ("def h(g):\n    raise ValueError('mine')\n"
                        "x.register_hook(h)\n(x * 2).sum().backward()"),
    "hook_remove_twice": F + "h = x.register_hook(lambda g: g)\nh.remove()\nh.remove()\nx",
    "hook_grad_mode": F + ("seen = []\ny = x * 2\n"
                           "y.register_hook(lambda g: seen.append(torch.is_grad_enabled()))\n"
                           "y.sum().backward()\nseen"),
    "hook_records_nothing": F + ("w = torch.ones(3, requires_grad=True)\nkept = []\ny = x * 2\n"
                                 "y.register_hook(lambda g: kept.append(g * w))\n"
                                 "y.sum().backward()\nkept"),
    "hook_enable_grad_inside": F + ("w = torch.ones(3, requires_grad=True)\nkept = []\n"
                                    "def h(g):\n    with torch.enable_grad():\n"
                                    "        kept.append(g * w)\ny = x * 2\ny.register_hook(h)\n"
                                    "y.sum().backward()\nkept"),
    "hook_backward_inside": F + ("w = torch.ones(3, requires_grad=True)\n"
                                 "def h(g):\n    (w * 2).sum().backward()\n"
                                 "y = x * 2\ny.register_hook(h)\ny.sum().backward()"),
    "node_hook_grad_mode": F + ("seen = []\ny = x * 2\ny.grad_fn.register_hook(lambda gi, go: "
                                "seen.append(torch.is_grad_enabled()))\ny.sum().backward()\nseen"),
    "node_prehook_grad_mode": F + ("seen = []\ny = x * 2\ny.grad_fn.register_prehook(lambda go: "
                                   "seen.append(torch.is_grad_enabled()))\ny.sum().backward()\n"
                                   "seen"),
    "grad_mode_after_backward": F + "(x * 2).sum().backward()\ntorch.is_grad_enabled()",
    "grad_mode_after_backward_in_no_grad": F + ("y = (x * 2).sum()\nwith torch.no_grad():\n"
                                                "    y.backward()\n"
                                                "    r = torch.is_grad_enabled()\nr, x.grad"),
    "node_hook_str": F + "(x * 2).grad_fn.register_hook('a')",
    "node_prehook_str": F + "(x * 2).grad_fn.register_prehook(1)",
    "node_hook_wrong_count": F + ("y = x * 2\ny.grad_fn.register_hook("
                                  "lambda gi, go: (gi[0], gi[0]))\ny.sum().backward()"),
    "node_prehook_wrong_count": F + ("y = x * 2\ny.grad_fn.register_prehook("
                                     "lambda go: (go[0], go[0]))\ny.sum().backward()"),
    "node_hook_wrong_shape": F + ("y = x * 2\ny.grad_fn.register_hook(lambda gi, go: "
                                  "(torch.ones(4), None))\ny.sum().backward()"),
    "hook_on_nonleaf_after_backward": F + (
        "y = x * 2\n"
        "z = y.sum()\n"
        "z.backward()\n"
        "y.register_hook(lambda g: g)"),
    "hook_returns_none_chain": F + (
        "x.register_hook(lambda g: None)\n"
        "(x * 2).sum().backward()\n"
        "x.grad"),
    "hook_modifies_inplace": F + (
        "y = x * 2\n"
        "y.register_hook(lambda g: g.mul_(2))\n"
        "y.sum().backward()\n"
        "x.grad"),
    "two_hooks_order": F + (
        "out = []\n"
        "x.register_hook(lambda g: out.append(1))\n"
        "x.register_hook(lambda g: out.append(2))\n"
        "(x * 2).sum().backward()\n"
        "out"),
    "hook_on_leaf_no_grad_mode": F + (
        "with torch.no_grad():\n"
        "    h = x.register_hook(lambda g: g * 2)\n"
        "(x * 1).sum().backward()\n"
        "x.grad"),
    "retain_grad_then_hook": F + (
        "y = x * 2\n"
        "y.retain_grad()\n"
        "y.register_hook(lambda g: g * 3)\n"
        "y.sum().backward()\n"
        "y.grad, x.grad"),
    "grad_fn_hook_returns_wrong_type": F + (
        "y = x * 2\n"
        "y.grad_fn.register_hook(lambda gi, go: 'a')\n"
        "y.sum().backward()"),
    "prehook_returns_wrong_type": F + (
        "y = x * 2\n"
        "y.grad_fn.register_prehook(lambda go: 'a')\n"
        "y.sum().backward()"),
    "hook_in_thread_enable": F + (
        "seen = []\n"
        "def h(g):\n"
        "    seen.append(torch.is_grad_enabled())\n"
        "x.register_hook(h)\n"
        "with torch.no_grad():\n"
        "    pass\n"
        "(x * 2).sum().backward()\n"
        "seen"),
    "inplace_on_leaf_in_hook": F + (
        "w = torch.ones(3, requires_grad=True)\n"
        "def h(g):\n"
        "    w.add_(1)\n"
        "y = x * 2\n"
        "y.register_hook(h)\n"
        "y.sum().backward()\n"
        "w"),
    "detach_in_hook": F + (
        "y = x * 2\n"
        "kept = []\n"
        "y.register_hook(lambda g: kept.append(g.requires_grad))\n"
        "y.sum().backward()\n"
        "kept"),
    "autograd_grad_in_hook": F + (
        "w = torch.ones(3, requires_grad=True)\n"
        "def h(g):\n"
        "    torch.autograd.grad((w * 2).sum(), w)\n"
        "y = x * 2\n"
        "y.register_hook(h)\n"
        "y.sum().backward()"),
    "backward_in_no_grad_of_graph": F + (
        "y = (x * 2).sum()\n"
        "with torch.no_grad():\n"
        "    y.backward()\n"
        "x.grad"),
    "grad_of_grad": F + (
        "(x * x).sum().backward()\n"
        "x.grad.requires_grad, x.grad.grad_fn"),
    "zero_grad_inplace_then_backward": F + (
        "(x * x).sum().backward()\n"
        "x.grad.zero_()\n"
        "(x * 2).sum().backward()\n"
        "x.grad"),
    "backward_grad_tensor_requires_grad": F + (
        "g = torch.ones(3, requires_grad=True)\n"
        "(x * 2).backward(g)\n"
        "x.grad"),
    "inference_then_backward": F + (
        "with torch.inference_mode():\n"
        "    y = x * 2\n"
        "y.sum().backward()"),
    "no_grad_requires_grad_leaf": (
        "with torch.no_grad():\n"
        "    x = torch.ones(2, requires_grad=True)\n"
        "x.requires_grad, (x * 2).requires_grad"),
    "set_grad_in_hook": F + (
        "def h(g):\n"
        "    torch.set_grad_enabled(True)\n"
        "y = x * 2\n"
        "y.register_hook(h)\n"
        "y.sum().backward()\n"
        "torch.is_grad_enabled()"),
    "retain_grad_int": I + "x.retain_grad()",
    "retain_grad_leaf": F + "x.retain_grad()\nx.retain_grad()\nx",
}

GRAD_MODES = {
    "set_grad_enabled_str": "torch.set_grad_enabled('yes')",
    "set_grad_enabled_int": "torch.set_grad_enabled(1)",
    "set_grad_enabled_none": "torch.set_grad_enabled(None)",
    "set_grad_enabled_ctx": F + "with torch.set_grad_enabled(False):\n    y = x * 2\n"
                                "y, torch.is_grad_enabled()",
    "set_grad_enabled_call": F + ("torch.set_grad_enabled(False)\ny = x * 2\n"
                                  "torch.set_grad_enabled(True)\ny"),
    "set_grad_enabled_decorator": F + ("@torch.set_grad_enabled(False)\ndef f(t):\n"
                                       "    return t * 2, torch.is_grad_enabled()\n"
                                       "r = torch.is_grad_enabled()\n"
                                       "f(x), r, torch.is_grad_enabled()"),
    "set_grad_enabled_nested": F + ("with torch.no_grad():\n"
                                    "    with torch.set_grad_enabled(True):\n"
                                    "        y = x * 2\n    r = torch.is_grad_enabled()\ny, r"),
    "enable_grad_decorator": F + ("@torch.enable_grad()\ndef f(t):\n    return t * 2\n"
                                  "with torch.no_grad():\n    y = f(x)\ny"),
    "no_grad_backward": F + "with torch.no_grad():\n    y = x * 2\ny.sum().backward()",
    "no_grad_decorator": F + "@torch.no_grad()\ndef f(t):\n    return t * 2\nf(x)",
    "no_grad_bare_decorator": F + "@torch.no_grad\ndef f(t):\n    return t * 2\nf(x)",
    "enable_grad_in_no_grad": F + ("with torch.no_grad():\n    with torch.enable_grad():\n"
                                   "        y = x * 2\ny"),
    "inference_mode": F + "with torch.inference_mode():\n    y = x * 2\ny.requires_grad",
    "inference_mode_false": F + "with torch.inference_mode(False):\n    y = x * 2\ny",
    "inference_mode_enabled": ("with torch.inference_mode():\n"
                               "    r = torch.is_inference_mode_enabled()\n"
                               "r, torch.is_inference_mode_enabled()"),
    "inference_mode_bare_decorator": F + ("@torch.inference_mode\ndef f(t):\n"
                                          "    return torch.is_grad_enabled()\nf(x)"),
    "no_grad_exception_restores": ("try:\n    with torch.no_grad():\n        raise KeyError(1)\n"
                                   "except KeyError:\n    pass\ntorch.is_grad_enabled()"),
    "anomaly_enabled_default": "torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()",
    "anomaly_set": ("with torch.autograd.set_detect_anomaly(True, check_nan=False):\n"
                    "    r = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())\n"
                    "r, torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()"),
    "anomaly_str": "torch.autograd.set_detect_anomaly('yes')",
    "anomaly_check_nan_int": "torch.autograd.set_detect_anomaly(True, check_nan=1)",
    "detect_anomaly_warns": ("with torch.autograd.detect_anomaly():\n"
                             "    r = torch.is_anomaly_enabled()\nr"),
    "backward_non_scalar": F + "(x * 2).backward()",
    "backward_wrong_shape": F + "(x * 2).backward(torch.ones(2))",
    "backward_str_gradient": F + "(x * 2).backward('a')",
    "backward_list_gradient": F + "(x * 2).backward([1.0, 1.0, 1.0])",
    "backward_int_gradient": F + "(x * 2).sum().backward(torch.tensor(1))\nx.grad",
    "backward_no_grad_leaf": "torch.ones(2).sum().backward()",
    "backward_leaf_itself": "x = torch.tensor(2.0, requires_grad=True)\nx.backward()\nx.grad",
    "backward_empty": "x = torch.ones(0, requires_grad=True)\nx.sum().backward()\nx.grad",
    "autograd_grad_no_grad": F + "torch.autograd.grad((x * 2).sum(), torch.ones(2))",
    "autograd_grad_empty": F + "torch.autograd.grad((x * 2).sum(), [])",
    "autograd_grad_unused": F + ("w = torch.ones(2, requires_grad=True)\n"
                                 "torch.autograd.grad((x * 2).sum(), [x, w])"),
    "autograd_grad_str": F + "torch.autograd.grad((x * 2).sum(), 'a')",
    "autograd_backward_str": "torch.autograd.backward('a')",
    "autograd_backward_empty_inputs": F + "(x * 2).sum().backward(inputs=[])",
}

THREADS = {
    "thread_starts_with_grad": ("out = []\nwith torch.no_grad():\n"
                                "    t = threading.Thread(target=lambda: "
                                "out.append(torch.is_grad_enabled()))\n"
                                "    t.start(); t.join()\nout"),
    "thread_set_grad_enabled_stays": ("t = threading.Thread(target=lambda: "
                                      "torch.set_grad_enabled(False))\nt.start(); t.join()\n"
                                      "torch.is_grad_enabled()"),
    "thread_no_grad_elsewhere": F + (
        "inside, release = threading.Event(), threading.Event()\n"
        "def hold():\n    with torch.no_grad():\n        inside.set(); release.wait(10)\n"
        "t = threading.Thread(target=hold); t.start(); inside.wait(10)\n"
        "y = x * 2\nrelease.set(); t.join()\ny"),
    "thread_records": F + ("out = []\nt = threading.Thread(target=lambda: out.append(x * 2))\n"
                           "t.start(); t.join()\nout"),
    "thread_anomaly_global": ("out = []\nwith torch.autograd.set_detect_anomaly(True):\n"
                              "    t = threading.Thread(target=lambda: "
                              "out.append(torch.is_anomaly_enabled()))\n"
                              "    t.start(); t.join()\nout"),
    "thread_inference_mode": ("out = []\nwith torch.inference_mode():\n"
                              "    t = threading.Thread(target=lambda: "
                              "out.append(torch.is_inference_mode_enabled()))\n"
                              "    t.start(); t.join()\nout"),
    "thread_backward": F + ("t = threading.Thread(target=lambda: (x * 3).sum().backward())\n"
                            "t.start(); t.join()\nx.grad"),
    "thread_two_modes_at_once": F + (
        "barrier = threading.Barrier(2)\nout = {}\n"
        "def run(name, mode):\n    with mode():\n        barrier.wait(10)\n"
        "        y = x * 2\n        barrier.wait(10)\n"
        "        out[name] = (y.requires_grad, torch.is_grad_enabled())\n"
        "a = threading.Thread(target=run, args=('off', torch.no_grad))\n"
        "b = threading.Thread(target=run, args=('on', torch.enable_grad))\n"
        "a.start(); b.start(); a.join(); b.join()\nout['off'], out['on']"),
    "thread_inference_mode_elsewhere": F + (
        "inside, release = threading.Event(), threading.Event()\nout = []\n"
        "def hold():\n    with torch.inference_mode():\n        inside.set()\n"
        "        out.append((x * 2).requires_grad)\n        release.wait(10)\n"
        "t = threading.Thread(target=hold); t.start(); inside.wait(10)\n"
        "r = (torch.is_inference_mode_enabled(), (x * 3).requires_grad)\n"
        "release.set(); t.join()\nr, out"),
    "thread_decorated_no_grad": F + (
        "@torch.no_grad()\ndef f():\n    return x * 2\nout = []\n"
        "t = threading.Thread(target=lambda: out.append(f()))\nt.start(); t.join()\n"
        "out, (x * 2).requires_grad"),
    "thread_hook_grad_mode": F + (
        "seen = []\ny = x * 2\ny.register_hook(lambda g: seen.append(torch.is_grad_enabled()))\n"
        "t = threading.Thread(target=lambda: y.sum().backward())\nt.start(); t.join()\n"
        "seen, torch.is_grad_enabled()"),
}

REPRS = {
    "repr_inf": "repr(torch.tensor([1e40, -1e40, 1.0]))",
    "repr_nan": "repr(torch.tensor([float('nan'), 1.5]))",
    "repr_big_int": "repr(torch.tensor([2**62, -5]))",
    "repr_int_min": "repr(torch.tensor([-2**63]))",
    "repr_tiny": "repr(torch.tensor([1e-40, 1.0]))",
    "repr_f64_big": "repr(torch.tensor([1e300, 1.0], dtype=torch.float64))",
    "repr_empty_2d": "repr(torch.zeros(0, 3))",
    "repr_empty_int": "repr(torch.zeros(2, 0, dtype=torch.int64))",
    "repr_bool": "repr(torch.tensor([True, False]))",
    "repr_0d_bool": "repr(torch.tensor(True))",
    "repr_0d_inf": "repr(torch.tensor(float('inf')))",
    "repr_all_nan": "repr(torch.tensor([float('nan')] * 3))",
    "repr_inf_only": "repr(torch.tensor([float('inf'), float('-inf')]))",
    "repr_mixed_scale": "repr(torch.tensor([1e-5, 1e5]))",
    "repr_neg_zero": "repr(torch.tensor([-0.0, 0.0]))",
    "repr_int_float": "repr(torch.tensor([1.0, 2.0, 1e10]))",
    "repr_requires": "repr(torch.tensor([1.0, 2.0], requires_grad=True) * 2)",
    "repr_f64_req": "repr(torch.tensor([1.0], dtype=torch.float64, requires_grad=True))",
    "repr_large_rows": "repr(torch.arange(2000.0))",
    "repr_large_2d": "repr(torch.ones(1001, 3))",
    "repr_huge_values": "repr(torch.tensor([123456789.0, 1.0]))",
    "repr_f32_max": "repr(torch.tensor([3.4e38]))",
    "str_nan_int": "str(torch.tensor([1, 2]) * 1)",
    "repr_1e16": "repr(torch.tensor([1e16, 1.0], dtype=torch.float64))",
    "repr_neg_inf_nan": "repr(torch.tensor([float('-inf'), float('nan'), 2.0]))",
    "repr_size": "repr(torch.zeros(2, 3).shape)",
    "repr_dtype": "repr(torch.float64), str(torch.int64)",
    "repr_grad_fn_none": "repr(torch.ones(2).grad_fn)",
}

# Argument parsing: PyTorch's parser reads positional and keyword arguments apart, and
# an overloaded op's error lists its signatures with why each did not match.
ARGUMENTS = {
    "args_sum_positional_keepdim_str": M + "x.sum(0, 'yes')",
    "args_sum_three": M + "x.sum(0, True, 1)",
    "args_max_three": M + "x.max(0, True, 1)",
    "args_sum_dim_twice": M + "x.sum(0, dim=1)",
    "args_max_keepdim_twice": M + "x.max(0, True, keepdim=True)",
    "args_sum_list_dim": M + "x.sum([0, 1]).item()",
    "args_mean_dim_str": M + "x.mean(dim='a')",
    "args_mean_positional": M + "x.mean(1, True).shape",
    "args_max_positional_str": M + "x.max('a')",
    "args_max_tensor": M + "x.max(torch.zeros(2, 3)).tolist()",
    "args_min_keepdim_str": M + "x.min(0, keepdim=1)",
    "args_view_str": M + "x.view('a')",
    "args_view_str_first": M + "x.view('a', 3)",
    "args_view_none_second": M + "x.view(2, None)",
    "args_transpose_none": M + "x.transpose()",
    "args_permute_one_str": M + "x.permute('a')",
    "args_permute_tuple_str": M + "x.permute((0, 'a'))",
    "args_squeeze_float": M + "x.squeeze(1.5)",
    "args_squeeze_kw_str": M + "x.squeeze(dim='a')",
    "args_squeeze_kw": M + "x.unsqueeze(1).squeeze(dim=1).shape",
    "args_clamp_three": M + "x.clamp(0, 1, 2)",
    "args_clamp_str_int": M + "x.clamp('a', 1)",
    "args_clamp_min_positional_max_kw": M + "x.clamp(2, max=4).tolist()",
    "args_clamp_inplace_str": M + "x.clamp_('a')",
    "args_to_unknown_device": M + "x.to('xyz')",
    "args_to_negative_index": M + "x.to(-1)",
    "args_to_device_kw_number": M + "x.to(device=3)",
    "args_to_cpu_index": M + "x.to('cpu:0').dtype",
    "args_pow_method_str": M + "x.pow('a')",
    "args_pow_function_str": M + "torch.pow(x, 'a')",
    "args_add_function_str": M + "torch.add(x, 'a')",
    "args_sub_method_list": M + "x.sub([1.0])",
    "args_divide_str": M + "x.divide('a')",
    "args_subtract_str": M + "x.subtract('a')",
    "args_multiply_str": M + "x.multiply('a')",
    "args_true_divide_none": M + "x.true_divide(None)",
    "args_iadd_str": M + "x += 'a'",
    "args_rtruediv_str": M + "'a' / x",
    "args_matmul_method_number": M + "x.matmul(2)",
    "args_matmul_function_number": M + "torch.matmul(x, 2)",
    "args_prehook_unbind_count": F + ("a, b, c = x.unbind(0)\na.grad_fn.register_prehook("
                                      "lambda go: (go[0],))\na.sum().backward()"),
    "args_prehook_split_full": F + ("p = x.split(1)\np[0].grad_fn.register_prehook("
                                    "lambda go: tuple(go))\np[0].sum().backward()\nx.grad"),
    "args_grad_inputs_list_str": F + "torch.autograd.grad((x * 2).sum(), [x, 'a'])",
    "args_grad_outputs_str": F + "torch.autograd.grad('a', x)",
    "args_float32_times_huge_int": "torch.ones(2) * 10**40",
    "args_float32_minus_huge": "torch.ones(2) - 1e39",
}

_GROUPS = (FACTORIES, DTYPES, DIMS, INDICES, INPLACE, HOOKS, GRAD_MODES, THREADS, REPRS,
           ARGUMENTS)
SUITES = {name: code for group in _GROUPS for name, code in group.items()}
assert len(SUITES) == sum(map(len, _GROUPS)), "a snippet name is used twice"


# What minigrad deliberately lacks: it must say so with a NotImplementedError.
DELIBERATE = {"tensor_complex"}

# Differences that remain, each with where its fix belongs: strict xfails, so a fix
# makes the test pass and then the entry must go. (None remain.)
KNOWN_GAPS: dict[str, str] = {}


def _case(name: str):
    if name in KNOWN_GAPS:
        return pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True))
    return name


@pytest.mark.parametrize("name", [_case(n) for n in sorted(set(SUITES) - DELIBERATE)])
def test_bad_input(torch, name):
    compare(torch, SUITES[name])


@pytest.mark.parametrize("name", sorted(DELIBERATE))
def test_what_minigrad_lacks_says_so(name):
    import minigrad

    got = run(minigrad, SUITES[name])
    assert got.get("error", ("",))[0] == "NotImplementedError", got


def test_every_listed_case_exists():
    assert DELIBERATE <= set(SUITES) and set(KNOWN_GAPS) <= set(SUITES)
    assert len(SUITES) >= 300


# -- sizes no machine can allocate, in a subprocess ------------------------------------------

HUGE = {
    "zeros_1e12": "torch.zeros(10**12)",
    "ones_1e12": "torch.ones(10**12)",
    "empty_1e12_f64": "torch.empty(10**12, dtype=torch.float64)",
    "zeros_2d_1e6": "torch.zeros(10**6, 10**6, dtype=torch.float64)",
    "zeros_bool_1e12": "torch.zeros(10**12, dtype=torch.bool)",
    "full_1e12": "torch.full((10**12,), 1.0)",
    "arange_1e12": "torch.arange(10**12)",
    "arange_float_1e13": "torch.arange(0, 1e13, 1.0)",
    "linspace_1e12": "torch.linspace(0, 1, 10**12)",
    "eye_1e7": "torch.eye(10**7)",
    "zeros_2_60": "torch.zeros(2**60)",
    "zeros_2_61_minus_1": "torch.zeros(2**61 - 1)",
    "zeros_2_61": "torch.zeros(2**61)",
    "empty_2_62": "torch.empty(2**62)",
    "ones_overflow_product": "torch.ones(10**10, 10**10)",
    "zeros_2_32_squared": "torch.zeros(2**32, 2**32, dtype=torch.bool)",
    "zeros_max_bool": "torch.zeros(2**63 - 1, dtype=torch.bool)",
    "zeros_stride_overflow": "torch.zeros(0, 2**62, 2**62)",
    "zeros_like_huge_expand": "torch.zeros_like(torch.zeros(1).expand(10**12))",
    "full_like_huge_expand": "torch.full_like(torch.zeros(1).expand(10**12), 2.0)",
}

_CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import {lib} as lib
from test_parity_bad_input import run
cases = json.loads(sys.stdin.read())
print(json.dumps({{name: run(lib, code) for name, code in cases.items()}}))
"""


def _start_child(lib: str, cases: dict) -> tuple:
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD.format(here=here, lib=lib)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    return proc, json.dumps(cases)


def _result(child: tuple) -> dict:
    proc, payload = child
    try:
        out, err = proc.communicate(payload, timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the huge-size snippets did not finish within 60 s") from None
    assert proc.returncode == 0, err[-2000:]
    return json.loads(out)


def test_huge_sizes(torch):
    """Every snippet of HUGE, under both libraries, each in a child process with a time
    limit: PyTorch's allocator error (or its overflow check), never numpy's."""
    children = [_start_child(lib, HUGE) for lib in ("torch", "minigrad")]  # side by side
    expected, got = (_result(child) for child in children)
    diffs = [f"{name}:\n torch:    {expected[name]}\n minigrad: {got[name]}"
             for name in HUGE if expected[name] != got[name]]
    assert not diffs, "\n".join(diffs)


# index_select's errors for indices out of range come from PyTorch's CPU kernel, and
# name what its path saw: a vector's, and dim 0's copy of whole slices, raise
# IndexError "index out of range in self"; another dim of a matrix (or an input of no
# elements) raises RuntimeError naming the first bad index. (Found by the random
# programs, with a permuted input's gradient checks: minigrad always said the first.)
INDEX_SELECTS = [((3, 1, 4), 1, [1, 0, 1]), ((3, 4), 0, [5]), ((3, 4), 1, [5]),
                 ((3, 4), -1, [1, 9, -5]), ((3, 4), 1, [-5, 9]), ((3,), 0, [5]),
                 ((2, 2), 1, [-1]), ((0, 3), 0, [0]), ((0, 3), 1, [5]), ((2, 0), 0, [5]),
                 ((2, 0), 0, [1]), ((0, 3), 0, []), ((), 0, [1])]


@pytest.mark.parametrize(("shape", "dim", "index"), INDEX_SELECTS, ids=str)
def test_index_select_out_of_range_as_in_pytorch(torch, shape, dim, index):
    import minigrad

    def run(m):
        try:
            return tuple(m.zeros(shape).index_select(dim, m.tensor(index, dtype=m.int64)).shape)
        except (IndexError, RuntimeError) as error:
            return type(error).__name__, str(error)

    assert run(minigrad) == run(torch)

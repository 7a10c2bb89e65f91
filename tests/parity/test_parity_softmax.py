"""softmax and log_softmax (functions, methods, `nn.functional`, `nn.Softmax`,
`nn.LogSoftmax`) against PyTorch: values, gradients, SoftmaxBackward0 /
LogSoftmaxBackward0 with `_saved_dim` and `_saved_result`, versions, errors and the
implicit-dim warning."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare

M = [[1.0, 2.0, 3.0], [4.0, 5.0, 7.5], [-1.0, 0.25, -3.0]]
B = [[[0.5, -1.0, 2.0, 0.0], [1.5, 3.0, -2.0, 1.0]],
     [[-0.5, 4.0, 1.0, 2.5], [0.0, 0.0, 0.0, 0.0]]]


def _both(name: str):
    return [name, "log_" + name]


CASES = {
    "fn-last": lambda c, f: getattr(c.m, f)(c.leaf(M), 1),
    "fn-neg": lambda c, f: getattr(c.m, f)(c.leaf(M), -1),
    "fn-first": lambda c, f: getattr(c.m, f)(c.leaf(M), 0),
    "fn-3d-mid": lambda c, f: getattr(c.m, f)(c.leaf(B), 1),
    "fn-3d-first": lambda c, f: getattr(c.m, f)(c.leaf(B), 0),
    "fn-3d-last": lambda c, f: getattr(c.m, f)(c.leaf(B), 2),
    "method": lambda c, f: getattr(c.leaf(M), f)(dim=1),
    "f32": lambda c, f: getattr(c.m, f)(c.leaf(B, "float32"), -1),
    "f32-first": lambda c, f: getattr(c.m, f)(c.leaf(B, "float32"), 0),
    "dtype-up": lambda c, f: getattr(c.m, f)(c.leaf(M, "float32"), 1, dtype=c.m.float64),
    "dtype-same": lambda c, f: getattr(c.m, f)(c.leaf(M), 1, c.m.float64),
    "dtype-of-int": lambda c, f: getattr(c.m, f)(c.m.tensor([[1, 2], [3, 5]]), 1,
                                                 dtype=c.m.float32),
    "transposed": lambda c, f: getattr(c.m, f)(c.leaf(M).t(), 1),
    "nonleaf": lambda c, f: getattr(c.m, f)(c.keep(c.leaf(M) * 2), 0),
    "0d": lambda c, f: getattr(c.m, f)(c.leaf(2.5), 0),
    "1d": lambda c, f: getattr(c.m, f)(c.leaf([1.0, -2.0, 0.5, 8.0]), 0),
    "empty": lambda c, f: getattr(c.m, f)(c.leaf([[], []]), 1),
    "inf": lambda c, f: getattr(c.m, f)(c.leaf([[float("-inf"), 1.0], [float("-inf")] * 2,
                                                [float("inf"), 0.0]]), 1),
    "big": lambda c, f: getattr(c.m, f)(c.leaf([[1000.0, 1000.5, 999.0]]), 1),
    "no-grad": lambda c, f: getattr(c.m, f)(c.leaf(M, requires_grad=False), 1),
    "functional": lambda c, f: getattr(c.m.nn.functional, f)(c.leaf(M), dim=0),
    "functional-dtype": lambda c, f: getattr(c.m.nn.functional, f)(
        c.leaf(M, "float32"), 1, dtype=c.m.float64),
    "functional-implicit": lambda c, f: getattr(c.m.nn.functional, f)(c.leaf(M)),
    "functional-implicit-3d": lambda c, f: getattr(c.m.nn.functional, f)(c.leaf(B)),
    "module": lambda c, f: (c.m.nn.Softmax if f == "softmax" else c.m.nn.LogSoftmax)(1)(
        c.leaf(M)),
    "module-implicit": lambda c, f: (c.m.nn.Softmax if f == "softmax"
                                     else c.m.nn.LogSoftmax)()(c.leaf(B)),
    "then-sum": lambda c, f: getattr(c.m, f)(c.leaf(M), 1).sum(),
    "result-changed": lambda c, f: getattr(c.m, f)(c.leaf(M), 1).mul_(2),
    "chain": lambda c, f: getattr(c.m, f)(getattr(c.m, f)(c.leaf(M), 1), 0),
}


@pytest.mark.parametrize("fn", _both("softmax"))
@pytest.mark.parametrize("case", sorted(CASES))
def test_softmax(torch, case, fn):
    check(torch, lambda c: CASES[case](c, fn))


X = "x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)\n"
ERRORS = {
    "no_dim": X + "torch.softmax(x)",
    "method_no_dim": X + "x.log_softmax()",
    "dim_float": X + "torch.softmax(x, 0.5)",
    "dim_bool": X + "torch.log_softmax(x, True)",
    "dim_none_kw": X + "torch.softmax(x, dim=None)",
    "method_dim_float": X + "x.softmax(0.5)",
    "method_dim_kw_float": X + "x.softmax(dim=0.5)",
    "dim_range": X + "torch.softmax(x, 2)",
    "dim_range_neg": X + "x.log_softmax(-3)",
    "dtype_int_pos": X + "torch.softmax(x, 1, 2)",
    "dtype_str_kw": X + "torch.softmax(x, 0, dtype='a')",
    "method_dtype_int": X + "x.softmax(0, 3)",
    "method_dtype_kw": X + "x.softmax(0, dtype=3)",
    "method_dtype_none": X + "x.softmax(0, None)",
    "unexpected_kw": X + "torch.softmax(x, 0, foo=1)",
    "too_many": X + "torch.softmax(x, 0, torch.float32, 1)",
    "twice": X + "torch.softmax(x, 0, dim=1)",
    "int_last": "torch.softmax(torch.tensor([1, 2]), 0)",
    "int_first": "torch.log_softmax(torch.tensor([[1, 2]]), 0)",
    "bool": "torch.softmax(torch.tensor([True]), 0)",
    "dtype_int": X + "torch.log_softmax(x, 0, dtype=torch.int64)",
    "functional_dim_float": X + "torch.nn.functional.softmax(x, 0.5)",
    "functional_dim_kw_float": X + "torch.nn.functional.softmax(x, dim=0.5)",
    "functional_bad_dtype": X + "torch.nn.functional.log_softmax(x, None, 3, 'a')",
    "functional_range": X + "torch.nn.functional.softmax(x, 5)",
    "module_repr": "repr(torch.nn.Softmax(dim=1)), repr(torch.nn.LogSoftmax())",
    "backward_twice": X + "y = x.softmax(1).sum()\ny.backward()\ny.backward()",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_softmax_errors(torch, name):
    compare(torch, ERRORS[name])

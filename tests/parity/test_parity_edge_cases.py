"""Edge cases that once differed from PyTorch: a size-1 operand summed back over a
broadcast, empty tensors, a max whose value no longer matches, reflected
subtraction of tensors, round's two overloads, keyword bounds of arange, prod's
dtype, 0-d transposes and means, and autograd.grad's argument checks.

Graph-level cases run through the parity harness (values, nodes, saved values,
gradients, warnings); the others are snippets compared as in
`test_parity_bad_input.py` (result, error text, warnings)."""

from __future__ import annotations

import pytest
from parity_harness import check
from test_parity_bad_input import compare

# -- programs: the whole graph compared ---------------------------------------------------


def _size_one_operand_over_a_matrix(c):
    t = c.leaf([2.0])
    return (c.m.ones(2, 2, dtype=c.m.float64) * t).sum()


def _size_one_operand_over_rows(c):
    t = c.leaf([[2.0]])
    return c.m.ones(3, 2, dtype=c.m.float64) * t + c.leaf([1.0])


def _empty_expression(c):
    x = c.keep(c.m.zeros(0, 3, dtype=c.m.float64, requires_grad=True))
    y = (x * 2 + 1).exp().sigmoid().tanh() - x.abs()
    return c.keep(y).sum() + c.keep(y.mean(0)).sum()


def _max_matching_nothing(c):
    a = c.leaf([1.0, 3.0, 2.0])
    m = a.max()
    m.data.mul_(2)
    return m


def _rsub_of_tensors(c):
    a, b = c.leaf([1.0, 3.0]), c.leaf([[2.0], [5.0]])
    return a.__rsub__(b)


def _round_with_zero_decimals(c):
    a = c.leaf([1.5, 2.5, -0.5])
    return c.m.round(a, decimals=0) + a.round() + a.round(decimals=1)


def _round_in_place_with_zero_decimals(c):
    a = c.leaf([1.5, 2.5, -0.5])
    return c.keep(a * 1).round_(decimals=0)


def _prod_in_another_dtype(c):
    x = c.leaf([[1.0, 2.0, 3.0], [4.0, 0.0, 6.0]], "float32")
    return c.m.prod(x, 1, dtype=c.m.float64), x.prod(dtype=c.m.float64)


def _transpose_of_a_scalar(c):
    a = c.leaf(2.0)
    return a.transpose(0, 0) * a.transpose(-1, 0)


def _zero_function(c):
    x = c.keep(c.leaf([1.0, 2.0]) * 3)
    return c.m.zero_(x)


def _sum_of_a_size_one_leaf(c):
    return c.leaf([-2.0]).sum()


def _sum_over_dim_of_a_size_one_leaf(c):
    return c.leaf([-2.0]).sum(0)


def _sum_over_dim_of_a_scalar(c):
    return c.leaf(-2.0).sum(0), c.leaf(1.5).mean(0)


def _sum_of_an_empty_leaf(c):
    return c.keep(c.m.zeros(0, 1, dtype=c.m.float64, requires_grad=True)).sum()


def _var_of_empty_rows(c):
    x = c.keep(c.m.zeros(0, 2, dtype=c.m.float64, requires_grad=True))
    return x.var(1), x.std(0)


def _in_place_on_an_empty_tensor(c):
    x = c.keep(c.m.zeros(0, 3, dtype=c.m.float64, requires_grad=True))
    return c.keep(x.exp()).add_(0.5), c.keep(x * 1).mul_(2)


PROGRAMS = {
    "sum of a (1,) leaf": _sum_of_a_size_one_leaf,
    "sum(0) of a (1,) leaf": _sum_over_dim_of_a_size_one_leaf,
    "sum(0) and mean(0) of 0-d leaves": _sum_over_dim_of_a_scalar,
    "sum of an empty leaf": _sum_of_an_empty_leaf,
    "var and std of empty rows": _var_of_empty_rows,
    "in-place op on an empty tensor": _in_place_on_an_empty_tensor,
    "size-1 operand over a matrix": _size_one_operand_over_a_matrix,
    "size-1 operand over rows": _size_one_operand_over_rows,
    "an expression of empty tensors": _empty_expression,
    "max matching nothing after .data changed": _max_matching_nothing,
    "rsub of two tensors": _rsub_of_tensors,
    "round with decimals=0": _round_with_zero_decimals,
    "round_ with decimals=0": _round_in_place_with_zero_decimals,
    "prod with dtype": _prod_in_another_dtype,
    "transpose of a 0-d tensor": _transpose_of_a_scalar,
    "torch.zero_": _zero_function,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_as_in_torch(torch, name):
    check(torch, PROGRAMS[name])


# -- snippets: result, error and warnings compared -----------------------------------------

A = "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
S = "s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)\n"
X = "x = torch.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True)\n"

SNIPPETS = {
    # empty tensors
    "sigmoid of (1, 0)": "torch.sigmoid(torch.zeros(1, 0))",
    "sigmoid of (0,) float64": "torch.zeros(0, dtype=torch.float64).sigmoid()",
    "max backward, no warning": ("a = torch.tensor([1.0, 3.0], requires_grad=True)\nm = a.max()\n"
                                 "m.data.mul_(2)\nm.backward()\na.grad"),
    # arange's bounds by keyword
    "arange end=": "torch.arange(end=3)",
    "arange start, end=": "torch.arange(0, end=3)",
    "arange start=, end=": "torch.arange(start=1, end=3)",
    "arange step=": "torch.arange(1, 5, step=2)",
    "arange all keywords": "torch.arange(start=1, end=5, step=2)",
    "arange start= only": "torch.arange(start=1)",
    "arange end twice": "torch.arange(0, 3, end=3)",
    "arange end=, step=": "torch.arange(step=2, end=4)",
    "arange end and start=": "torch.arange(5, start=1)",
    # prod's dtype
    "prod dim dtype": "torch.prod(torch.ones(2, 3), 1, dtype=torch.float64)",
    "prod dim keepdim dtype": "torch.prod(torch.tensor([[1, 2, 3]]), 1, True, dtype=torch.float32)",
    "prod dtype of ints": "torch.prod(torch.tensor([1, 2, 3]), dtype=torch.float32)",
    "prod to int of a float": "torch.prod(torch.tensor([1.5, 2.5]), dtype=torch.int64)",
    "prod to int requiring grad": A + "torch.prod(a, 0, dtype=torch.int64)",
    "prod to int in no_grad": A + "with torch.no_grad():\n    r = a.prod(dtype=torch.int64)\nr",
    "prod dtype python float": A + "a.prod(dtype=float)",
    "cumsum to int requiring grad": A + "torch.cumsum(a, 0, dtype=torch.int64)",
    # 0-d tensors
    "transpose(0, 0) backward": S + "s.transpose(0, 0).backward()\ns.grad",
    "mean(dim=0) create_graph": S + ("y = s.mean(dim=0)\n"
                                     "g, = torch.autograd.grad(y * s, s, create_graph=True)\n"
                                     "(y, g)"),
    "mean(dim=0) create_graph, constant": S + ("g, = torch.autograd.grad(s.mean(dim=0), s, "
                                               "create_graph=True)\ng"),
    # autograd.grad's and backward's arguments
    "grad of an output needing none": "t = torch.ones(2)\ntorch.autograd.grad(t.sum(), t)",
    "grad of a float": A + "torch.autograd.grad(3.0, a)",
    "grad for a float": A + "torch.autograd.grad(a.sum(), 3.0)",
    "grad for a float in a list": A + "torch.autograd.grad(a.sum(), [a, 3.0])",
    "grad of a list with a float": A + "torch.autograd.grad([3.0], a)",
    "grad, output first": A + "torch.autograd.grad(torch.ones(2).sum(), [a, 3.0])",
    "grad for None": A + "torch.autograd.grad(a.sum(), None)",
    "grad for an input needing none": A + "torch.autograd.grad((a * 2).sum(), [a, torch.ones(2)])",
    "grad_outputs a float": A + "torch.autograd.grad(a.sum(), a, grad_outputs=3.0)",
    "backward of a float": "torch.autograd.backward(3.0)",
    "backward gradient a float": A + "a.sum().backward(3.0)",
    "backward inputs a float": A + "a.sum().backward(inputs=[3.0])",
    "backward of a tuple": A + "torch.autograd.backward((a.sum(), (a * 2).sum()))\na.grad",
    # batch norm of an empty batch: PyTorch's answer before any check
    "batch_norm empty, training": ("x = torch.zeros(0, 3, requires_grad=True)\n"
                                   "w = torch.ones(3, requires_grad=True)\n"
                                   "b = torch.zeros(3, requires_grad=True)\n"
                                   "rm, rv = torch.zeros(3), torch.ones(3)\n"
                                   "y = torch.nn.functional.batch_norm(x, rm, rv, w, b, "
                                   "training=True)\n"
                                   "y.sum().backward()\n(y, x.grad, w.grad, b.grad, rm, rv)"),
    "batch_norm empty, eval, weight only": (
        "x = torch.zeros(0, 3, 4, requires_grad=True)\nw = torch.ones(3, requires_grad=True)\n"
        "y = torch.nn.functional.batch_norm(x, None, None, w, training=False)\n"
        "y.sum().backward()\n(y, w.grad)"),
    "batch_norm empty, no parameters": ("torch.nn.functional.batch_norm(torch.zeros(0, 3), None, "
                                        "None, training=True)"),
    "batch_norm no channels": ("torch.nn.functional.batch_norm(torch.zeros(2, 0, 3), None, None, "
                               "training=True)"),
    "batch_norm no channels, weight": (
        "w = torch.ones(0, requires_grad=True)\n"
        "torch.nn.functional.batch_norm(torch.zeros(2, 0), torch.zeros(0), torch.ones(0), w, w, "
        "training=True)"),
    "batch_norm empty, wrong stats size": ("torch.nn.functional.batch_norm(torch.zeros(0, 3), "
                                           "torch.zeros(2), torch.ones(3), training=True)"),
    "batch_norm empty, float64 weight": (
        "torch.nn.functional.batch_norm(torch.zeros(0, 3, 4), torch.zeros(3), torch.ones(3), "
        "torch.ones(3, dtype=torch.float64), training=True)"),
    "batch_norm 1-d empty": ("torch.nn.functional.batch_norm(torch.zeros(0), torch.zeros(3), "
                             "torch.ones(3), training=True)"),
    "batch_norm one value per channel": ("torch.nn.functional.batch_norm(torch.zeros(1, 3), "
                                         "torch.zeros(3), torch.ones(3), training=True)"),
    "BatchNorm1d empty batch": ("bn = torch.nn.BatchNorm1d(3)\n"
                                "y = bn(torch.zeros(0, 3, requires_grad=True))\n"
                                "(y, bn.running_mean, bn.running_var, bn.num_batches_tracked)"),
    "layer_norm of no elements": "torch.nn.functional.layer_norm(torch.zeros(2, 0), (0,))",
    # anomaly mode during backward only: no forward traceback to show
    "anomaly, forward outside": ("x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                 "y = x.exp()\ny.add_(1)\n"
                                 "with torch.autograd.detect_anomaly():\n"
                                 "    y.sum().backward()"),
    # devices, to(), legacy Functions, numpy float16
    "tensor on cuda": "torch.tensor([1.0], device='cuda')",
    "zeros on cuda:0": "torch.zeros(2, device='cuda:0')",
    "randn on cuda": "torch.randn(2, device='cuda')",
    "to cuda": "torch.ones(2).to('cuda')",
    "to device=cuda": "torch.ones(2).to(device='cuda')",
    "new_zeros on cuda": "torch.ones(2).new_zeros(2, device='cuda')",
    "device cuda named": "d = torch.device('cuda')\n(str(d), repr(d), d.type, d.index)",
    "device cuda:1": "d = torch.device('cuda:1')\n(str(d), repr(d), d.type, d.index)",
    "device cuda, 2": "d = torch.device('cuda', 2)\n(str(d), repr(d), d.index)",
    "device cpu:0": "d = torch.device('cpu:0')\n(str(d), repr(d), d.index)",
    "device of a device": "repr(torch.device(torch.device('mps')))",
    "device type and index keywords": "repr(torch.device(type='cpu', index=0))",
    "device equality": ("(torch.device('cpu') == torch.device('cpu'), "
                        "torch.device('cpu') == torch.device('cpu:0'), "
                        "torch.device('cuda', 1) == torch.device('cuda:1'), "
                        "torch.device('cpu') == 'cpu', "
                        "hash(torch.device('cuda:1')) == hash(torch.device('cuda', 1)))"),
    "device unknown type": "torch.device('foo')",
    "device upper case": "torch.device('CPU')",
    "device bad index": "torch.device('cpu:x')",
    "device two indices": "torch.device('cuda:0:1')",
    "device leading zero": "torch.device('cpu:01')",
    "device index twice": "torch.device('cuda:0', 1)",
    "device negative index": "torch.device('cpu', -1)",
    "device bare index": "torch.device(0)",
    "device index as text": "torch.device('cpu', '0')",
    "device index as bool": "torch.device('cpu', True)",
    "device of nothing": "torch.device()",
    "device of None": "torch.device(None)",
    "device of a float": "torch.device(1.5)",
    "zeros on cpu:0": "torch.zeros(2, device='cpu:0')",
    "zeros on device cpu, 0": "torch.zeros(2, device=torch.device('cpu', 0))",
    "tensor.cuda()": "torch.ones(2).cuda()",
    "tensor.cuda(0)": "torch.ones(2).cuda(0)",
    "Linear.cuda()": "torch.nn.Linear(2, 2).cuda()",
    "ReLU.cuda() has nothing to move": "str(torch.nn.ReLU().cuda())",
    "Linear.cpu()": "m = torch.nn.Linear(2, 2)\nm.cpu() is m",
    "new_ones requires_grad": "torch.ones(2).new_ones(2, requires_grad=True)",
    "to requires_grad": "torch.ones(2).to(requires_grad=True)",
    "to unknown keyword": "torch.ones(2).to(foo=1)",
    "legacy Function called": (
        "class F(torch.autograd.Function):\n    def forward(self, x):\n        return x\n"
        "    def backward(self, g):\n        return g\nF()(torch.ones(2))"),
    # all, any, equal
    "all": X + "x.all()",
    "any": X + "x.any()",
    "all(0)": X + "x.all(0)",
    "all(1, keepdim=True)": X + "x.all(1, keepdim=True)",
    "torch.all(dim=1)": X + "torch.all(x, dim=1)",
    "torch.all(input=)": X + "torch.all(input=x)",
    "all over a tuple": X + "torch.all(x, dim=(0, 1))",
    "any over a tuple, kept": X + "x.any(dim=(0,), keepdim=True)",
    "any over a list": X + "x.any(dim=[1])",
    "any(dim=None)": X + "x.any(dim=None)",
    "any(None)": X + "x.any(None)",
    "any(dim=())": X + "x.any(dim=())",
    "all(-1)": X + "x.all(-1)",
    "all(keepdim=True)": X + "x.all(keepdim=True)",
    "all dim out of range": X + "x.all(2)",
    "all dim out of range, negative": X + "x.all(-3)",
    "all of a float dim": X + "x.all(1.5)",
    "all of a str dim": X + "x.all('a')",
    "all repeated dim": X + "x.all((0, 0))",
    "all three arguments": X + "x.all(0, True, 1)",
    "any unknown keyword": X + "x.any(foo=1)",
    "torch.all of a float": "torch.all(1.0)",
    "torch.any of a list": "torch.any([1.0])",
    "all of ints": "torch.tensor([1, 2]).all()",
    "any of ints along 1": "torch.tensor([[1, 0]]).any(1)",
    "all of bools": "torch.tensor([True, False]).all()",
    "all of nothing": "torch.zeros(0, 3).all()",
    "any of nothing": "torch.zeros(0, 3).any()",
    "all of nothing along 0": "torch.zeros(0, 3).all(0)",
    "any of nothing along 1": "torch.zeros(0, 3).any(1)",
    "all of a 0-d tensor": "torch.tensor(2.0).all(0)",
    "any of a 0-d tensor, kept": "torch.tensor(0.0).any(-1, keepdim=True)",
    "any of a 0-d tensor, dim 1": "torch.tensor(0.0).any(1)",
    "all of nan": "torch.tensor([float('nan')]).all()",
    "dropout identity check": ("torch.manual_seed(0)\nx = torch.randn(3, 4)\n"
                               "(torch.nn.functional.dropout(x, 0.5, training=False) == x).all()"),
    "equal method": X + "x.equal(x)",
    "equal of int and float": "torch.equal(torch.tensor([1]), torch.tensor([1.0]))",
    "equal float32 and float64": ("torch.tensor([1.0]).equal(torch.tensor([1.0], "
                                  "dtype=torch.float64))"),
    "equal of shapes": "torch.equal(torch.tensor([1.0]), torch.tensor([[1.0]]))",
    "equal nan": "torch.equal(torch.tensor([float('nan')]), torch.tensor([float('nan')]))",
    "equal to a number": "torch.equal(torch.tensor([1.0]), 1.0)",
    "equal method to a number": "torch.tensor([1.0]).equal(1)",
    "equal -0": "torch.equal(torch.tensor([0.0]), torch.tensor([-0.0]))",
}


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet_as_in_torch(torch, name):
    compare(torch, SNIPPETS[name])


def test_anomaly_mode_in_forward_shows_where_the_node_was_made(torch):
    import warnings

    import minigrad

    for m in (torch, minigrad):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly(), pytest.raises(RuntimeError):
                y = x.exp()
                y.add_(1)
                y.sum().backward()
        texts = [str(w.message) for w in caught if "Error detected" in str(w.message)]
        assert len(texts) == 1 and texts[0].startswith(
            "Error detected in ExpBackward0. Traceback of forward call that caused the error:\n"
        ), (m.__name__, texts)
        assert "y = x.exp()" in texts[0]

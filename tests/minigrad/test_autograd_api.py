"""The autograd surface: grad_fn names, next_functions, AccumulateGrad, saved attributes,
requires_grad rules, autograd.grad options and the errors PyTorch raises.

Expected names, structures and messages are the ones printed by PyTorch 2.13.0 for the
same programs (probed with the installed torch; AccumulateGrad is spelled
`torch::autograd::AccumulateGrad` there and `minigrad::autograd::AccumulateGrad` here).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad as torch

ACC = "minigrad::autograd::AccumulateGrad"
SECOND_TIME = "Trying to backward through the graph a second time"


def edges(t):
    return [(None if n is None else n.name(), i) for n, i in t.grad_fn.next_functions]


@pytest.fixture
def x():
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda x: 2 - x, "RsubBackward1"),
        (lambda x: 2 + x, "AddBackward0"),
        (lambda x: 2 / x, "MulBackward0"),  # torch computes scalar / x as reciprocal * scalar
        (lambda x: 2**x, "PowBackward2"),
        (lambda x: x**2, "PowBackward0"),
        (lambda x: x**x, "PowBackward1"),
        (lambda x: -x, "NegBackward0"),
        (lambda x: x @ x, "DotBackward0"),
        (lambda x: torch.ones(2, 3) @ x, "MvBackward0"),
        (lambda x: x.reshape(3, 1) @ x.reshape(1, 3), "MmBackward0"),
        (lambda x: x.reshape(1, 3).max(dim=1)[0], "MaxBackward0"),
        (lambda x: x.max(), "MaxBackward1"),
        (lambda x: x.chunk(2)[0], "SplitBackward0"),
    ],
)
def test_grad_fn_names(x, build, name):
    assert build(x).grad_fn.name() == name


def test_next_functions_hold_none_for_inputs_without_grad(x):
    assert edges(x * torch.tensor([1.0, 2.0, 3.0])) == [(ACC, 0), (None, 0)]
    assert edges(x * 2) == [(ACC, 0), (None, 0)]


def test_multi_output_nodes_number_their_outputs(x):
    parts = x.unbind()
    assert [(p.grad_fn.name(), p.output_nr) for p in parts] == [
        ("UnbindBackward0", 0), ("UnbindBackward0", 1), ("UnbindBackward0", 2),
    ]
    assert parts[0].grad_fn is parts[2].grad_fn
    assert edges(parts[0] + parts[2]) == [("UnbindBackward0", 0), ("UnbindBackward0", 2)]
    pieces = x.split(2)
    assert edges(pieces[1] * 2) == [("SplitBackward0", 1), (None, 0)]


def test_accumulate_grad_is_one_node_per_leaf(x):
    first = (x * 2).grad_fn.next_functions[0][0]
    second = (x * 3).grad_fn.next_functions[0][0]
    assert first is second
    assert first.variable is x
    assert first.name() == ACC


def test_is_leaf_and_requires_grad_propagation(x):
    plain = torch.tensor([1.0, 2.0, 3.0])
    with torch.no_grad():
        made_without_grad = x * 2
    assert (made_without_grad.requires_grad, made_without_grad.is_leaf) == (False, True)
    assert made_without_grad.grad_fn is None
    assert ((x * 2).is_leaf, plain.is_leaf, (plain * 2).is_leaf) == (False, True, True)
    assert (x * plain).requires_grad and not (plain * 2).requires_grad
    assert x.detach().is_leaf and not x.detach().requires_grad


def test_requires_grad_setting_rules(x):
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype"):
        torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require"):
        torch.tensor([1, 2]).requires_grad_()
    y = x * 2
    with pytest.raises(RuntimeError, match=r"leaf variables\. If you want to use a computed"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match=r"^you can only change requires_grad flags of leaf "
                                           r"variables\.$"):
        y.requires_grad = True
    assert y.requires_grad_(True) is y
    with pytest.raises(RuntimeError, match="leaf variables. If you want"):
        y.requires_grad_(False)


def test_saved_attributes_match_pytorch(x):
    const = torch.tensor([1.0, 2.0, 3.0])
    mul = (x * const).grad_fn
    assert mul._saved_other.tolist() == [1.0, 2.0, 3.0]
    assert mul._saved_self is None  # torch saves self only when other needs a gradient
    square = (x * x).grad_fn
    assert square._saved_self is x  # a saved input comes back as the very same tensor
    e = x.exp()
    assert e.grad_fn._saved_result is not e  # a saved output does not (no cycle through it)
    scalar_mul = (x * 2).grad_fn._saved_other
    assert (scalar_mul.item(), scalar_mul.dtype) == (2, torch.int64)  # torch: tensor(2)
    np.testing.assert_allclose((x.exp()).grad_fn._saved_result.tolist(),
                               [2.7182817459106445, 7.389056205749512, 20.08553695678711])
    assert (x**3).grad_fn._saved_exponent == 3
    assert x.sum().grad_fn._saved_self_sym_sizes == (3,)
    clamp = x.clamp(0, 2).grad_fn
    assert (clamp._saved_min, clamp._saved_max) == (0, 2)
    for op in ("sigmoid", "tanh", "relu"):
        assert hasattr(getattr(x, op)().grad_fn, "_saved_result")
    maxed = x.reshape(1, 3).max(dim=1)[0].grad_fn
    for name in ("_saved_dim", "_saved_indices", "_saved_keepdim", "_saved_self_sym_sizes"):
        assert hasattr(maxed, name)


def test_saved_values_are_released_after_backward(x):
    y = x * x
    z = x.exp()
    (y.sum() + z.sum()).backward()
    for read in (lambda: y.grad_fn._saved_self, lambda: z.grad_fn._saved_result):
        with pytest.raises(RuntimeError, match=SECOND_TIME):
            read()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        y.sum().backward()


def test_non_leaf_grad_warns_and_retain_grad(x):
    a = x * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert a.grad is None
    a.retain_grad()
    b = x * 3
    (a + b).sum().backward()
    assert (a.retains_grad, b.retains_grad, x.retains_grad) == (True, False, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.grad.tolist() == [1.0, 1.0, 1.0]
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_backward_arguments_and_errors(x):
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    (leaf * leaf).backward(gradient=torch.tensor([1.0, 10.0]))
    assert leaf.grad.tolist() == [2.0, 40.0]
    with pytest.raises(RuntimeError, match=r"^Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"minigrad\.Size\(\[3\]\) and output\[0\] has a shape "
                                           r"of minigrad\.Size\(\[2\]\)\.$"):
        (leaf * leaf).backward(gradient=torch.tensor([1.0, 10.0, 3.0]))
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and "
                                           "does not have a grad_fn$"):
        torch.tensor([1.0]).sum().backward()


def test_accumulation_across_calls_and_retain_graph(x):
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]  # 2 * (2x)


def test_autograd_grad_unused_inputs():
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor([2.0, 1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The differentiated Tensor at index 1 appears to "
                                           r"not have been used in the graph\. Set "
                                           r"allow_unused=True"):
        torch.autograd.grad(a * 2, [a, b])
    grads = torch.autograd.grad(a * 2, [a, b], allow_unused=True)
    assert grads[0].item() == 2.0 and grads[1] is None
    grads = torch.autograd.grad(a * 2, [a, b], materialize_grads=True)
    assert grads[1].tolist() == [0.0, 0.0] and grads[1].dtype == torch.float32
    with pytest.raises(ValueError, match="^Expected allow_unused to be True or not passed when "
                                         "materialize_grads=True, but got: allow_unused=False."):
        torch.autograd.grad(a * 2, [a, b], allow_unused=False, materialize_grads=True)
    with pytest.raises(RuntimeError, match="^One of the differentiated Tensors does not require "
                                           "grad$"):
        torch.autograd.grad(a * 2, [torch.tensor(2.0)])
    assert a.grad is None and b.grad is None

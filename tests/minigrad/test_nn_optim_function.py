"""nn, optim and custom Functions without PyTorch: the formulas and the rules."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import minigrad as torch
from minigrad import nn
from minigrad.autograd import Function


def test_linear_forward_is_x_wT_plus_b_and_versions_start_at_one():
    layer = nn.Linear(3, 2)
    assert (layer.weight._version, layer.bias._version) == (1, 1)
    bound = 1 / np.sqrt(3)
    assert np.all(np.abs(layer.weight.detach().numpy()) <= bound)
    x = torch.randn(5, 3)
    expected = x.numpy() @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
    np.testing.assert_allclose(layer(x).detach().numpy(), expected, rtol=1e-6)
    assert layer(x).grad_fn.name() == "AddmmBackward0"


def test_module_registers_nested_parameters_once():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    model.extra = nn.Parameter(torch.zeros(1))
    assert "extra" in dict(model.named_parameters())
    with pytest.raises(TypeError, match="cannot assign 'minigrad.FloatTensor' as parameter"):
        model.extra = torch.zeros(1)
    del model.extra
    assert "extra" not in dict(model.named_parameters())


def test_train_eval_reach_every_submodule():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh()))
    assert model.eval() is model
    assert [m.training for m in model.modules()] == [False] * 4
    model.train()
    assert all(m.training for m in model.modules())


def test_parameter_of_computed_tensor_is_a_new_leaf_sharing_memory():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    p = nn.Parameter(w * 3)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    (p * p).sum().backward()
    assert w.grad is None
    np.testing.assert_allclose(p.grad.numpy(), [6.0, 12.0])
    base = torch.zeros(2)
    q = nn.Parameter(base)
    base.add_(1)
    assert q.tolist() == [1.0, 1.0] and q._version == 1  # shared memory and counter


def test_sgd_momentum_matches_the_update_rule_by_hand():
    p = nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.5, weight_decay=0.1)
    value, buf = np.array([1.0, -2.0]), None
    for step in range(3):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        d = 2 * value + 0.1 * value
        buf = d if buf is None else 0.5 * buf + d
        value = value - 0.1 * buf
        np.testing.assert_allclose(p.detach().numpy(), value, rtol=1e-12)
        assert p._version == step + 1
    assert p.grad is not None
    opt.zero_grad()
    assert p.grad is None


def test_adam_first_step_moves_each_weight_by_lr():
    p = nn.Parameter(torch.tensor([3.0, -1.0, 0.5], dtype=torch.float64))
    opt = torch.optim.Adam([p], lr=0.01)
    (p * p * p).sum().backward()
    opt.step()
    # After one step Adam's update is lr * sign(grad) (up to eps).
    np.testing.assert_allclose(p.detach().numpy(), [2.99, -1.01, 0.49], rtol=1e-7)
    assert float(opt.state[p]["step"]) == 1.0


def test_step_runs_without_recording_and_skips_params_without_grad():
    a = nn.Parameter(torch.ones(2))
    b = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([a, b], lr=1.0)
    (a * 2).sum().backward()
    opt.step()
    assert a.grad_fn is None and a.tolist() == [-1.0, -1.0]
    assert b.tolist() == [1.0, 1.0] and b._version == 0


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad


def test_custom_function_node_gradient_and_release():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    node = y.grad_fn
    assert type(node).__name__ == "CubeBackward" and node.needs_input_grad == (True,)
    assert node.saved_tensors[0] is x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        _ = node.saved_tensors


def test_custom_function_version_check_is_lazy_and_names_the_function():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = Cube.apply(h)
    h.add_(1)  # fine until backward reads ctx.saved_tensors
    # The message names h's producer now (the add_), as PyTorch does.
    with pytest.raises(RuntimeError, match=r"output 0 of Add, is at version 1; expected "
                                           r"version 0"):
        y.sum().backward()


def test_custom_function_keeps_no_cycle_through_a_saved_output():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.saved_tensors[0]

    gc.disable()
    try:
        x = torch.ones(3, requires_grad=True)
        y = Exp.apply(x)
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_no_graph_without_inputs_requiring_grad():
    y = Cube.apply(torch.ones(2))
    assert y.grad_fn is None and not y.requires_grad


def test_reassigning_a_parameter_or_child_keeps_its_place():
    layer = nn.Linear(2, 3)
    layer.weight = nn.Parameter(torch.ones(3, 2))
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    model = nn.Sequential(nn.ReLU(), nn.Tanh())
    setattr(model, "0", nn.Sigmoid())  # noqa: B010 - the name is not an identifier
    assert [type(m).__name__ for m in model] == ["Sigmoid", "Tanh"]
    shared = nn.Linear(1, 1)
    assert len(list(nn.Sequential(shared, shared).children())) == 1


def test_optimizer_options_state_and_decoupled_weight_decay():
    p = nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = torch.optim.SGD([p], lr=0.1)
    p.grad = torch.ones(2, dtype=torch.float64)
    opt.step()
    assert len(opt.state) == 0 and opt.state[p] == {}  # no momentum: no state kept
    with pytest.raises(NotImplementedError, match="foreach=True"):
        torch.optim.SGD([p], foreach=True)
    with pytest.raises(NotImplementedError, match="fused=True"):
        torch.optim.Adam([p], fused=True)
    # AdamW: the weights shrink by (1 - lr * wd) before the usual Adam step.
    q = nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    adamw = torch.optim.Adam([q], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)
    q.grad = torch.tensor([0.0, 0.0], dtype=torch.float64)
    adamw.step()
    np.testing.assert_allclose(q.detach().numpy(), [0.95, -1.9])
    assert q._version == 2  # mul_ and addcdiv_


def test_zero_grad_keeping_tensors_accepts_a_gradient_that_requires_grad():
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2, requires_grad=True) * 3
    torch.optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    assert p.grad.grad_fn is None and not p.grad.requires_grad
    assert p.grad.tolist() == [0.0, 0.0]


def test_load_state_dict_returns_the_unmatched_keys():
    layer = nn.Linear(2, 1)
    result = layer.load_state_dict({"weight": torch.zeros(1, 2)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == []
    assert repr(layer.load_state_dict(layer.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias". '):
        layer.load_state_dict({"weight": torch.zeros(1, 2)})

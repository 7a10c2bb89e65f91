"""Hooks, retain_grad, grad modes and anomaly mode."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minigrad as torch


def test_tensor_hook_can_replace_the_gradient_and_be_removed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and len(seen) == 1


def test_retain_grad_sees_the_gradient_after_tensor_hooks():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 100)  # registered after retain_grad, still runs before it
    (h * 1).sum().backward()
    assert h.grad.tolist() == [100.0, 100.0]  # as PyTorch 2.x
    assert x.grad.tolist() == [200.0, 200.0]
    assert h.retains_grad and not x.retains_grad


def test_node_hooks_see_inputs_and_outputs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: calls.append(("post", len(gi), len(go))))
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", 1, 1)]


def test_non_leaf_grad_warns_and_retain_grad_on_leaf_is_noop():
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None
    x.retain_grad()
    assert x.grad is None


def test_grad_modes_nest_and_restore():
    x = torch.tensor([1.0], requires_grad=True)
    assert torch.is_grad_enabled()
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert (x * 2).grad_fn is None
        with torch.enable_grad():
            assert (x * 2).grad_fn is not None
        with torch.set_grad_enabled(True):
            assert torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    with torch.inference_mode():
        assert not (x * 2).requires_grad

    @torch.no_grad()
    def f():
        return x * 2

    assert f().grad_fn is None and torch.is_grad_enabled()


def test_in_place_rules_under_no_grad_and_on_leaves():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        w.add_(1)
    with torch.no_grad():
        w.add_(1)  # allowed: this is how optimizers update
    assert w._version == 1 and w.grad_fn is None
    with torch.no_grad():
        v = w[0:1]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        v.mul_(2)


def test_anomaly_mode_prints_forward_trace_and_catches_nan():
    x = torch.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            y = x.sqrt() * 0  # d sqrt/dx at 0 is inf; inf * 0 = nan
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                y.sum().backward()
    trace = [str(w.message) for w in caught if "Traceback of forward call" in str(w.message)]
    assert trace and "x.sqrt()" in trace[0]
    assert not torch.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_without_nan_check():
    torch.autograd.set_detect_anomaly(True, check_nan=False)
    try:
        x = torch.tensor([0.0], requires_grad=True)
        (x.sqrt() * 0).sum().backward()
        assert math.isnan(x.grad.item())
    finally:
        torch.autograd.set_detect_anomaly(False)


def test_requires_grad_rules():
    i = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        i.requires_grad_()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        torch.tensor([1, 2], requires_grad=True)
    y = torch.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False
    assert (y + torch.ones(1)).requires_grad
    np.testing.assert_equal((i > 1).numpy(), [False, True])


def test_anomaly_mode_checks_nan_in_a_graph_built_before_it_was_on():
    # The check happens at backward time, as in PyTorch: nodes recorded outside
    # anomaly mode are checked too (they carry no forward trace, so no warning).
    x = torch.tensor([0.0], requires_grad=True)
    y = x.sqrt() * 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan"):
                y.sum().backward()
    assert not [w for w in caught if "Traceback of forward call" in str(w.message)]


def test_hooks_attached_after_recording_still_run():
    # A node made without hooks is "plain" until one is attached; the engine must
    # then run it the long way (hooks, retained gradient) even outside tracing.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y.sin()
    calls = []
    z.grad_fn.register_prehook(lambda grads: calls.append("pre"))
    z.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    z.sum().backward()
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(y.grad.numpy(), np.cos([3.0, 6.0]) * 10)
    np.testing.assert_allclose(x.grad.numpy(), np.cos([3.0, 6.0]) * 30)


def test_leaf_hooks_registered_after_its_accumulator_exists_still_run():
    # A leaf's AccumulateGrad is plain (the engine's short path) while neither it nor
    # its leaf has hooks; a hook on the leaf registered once the graph (and so the
    # accumulator) exists must still run, before the node's own hooks.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3).sum()
    acc = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc._plain
    calls = []
    x.register_hook(lambda g: calls.append("tensor") or g + 1)
    acc.register_prehook(lambda grads: calls.append("pre"))
    loss.backward(retain_graph=True)
    assert calls == ["tensor", "pre"]
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])
    # A plain accumulator with no hooks at all takes the gradient over or adds it.
    y = torch.tensor([1.0, 2.0], requires_grad=True)
    out = (y * 2).sum()
    out.backward(retain_graph=True)
    out.backward()
    np.testing.assert_allclose(y.grad.numpy(), [4.0, 4.0])
    assert y.grad._version == 1


def test_leaf_hook_alone_registered_after_recording_runs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3).sum()
    x.register_hook(lambda g: g * 10)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])

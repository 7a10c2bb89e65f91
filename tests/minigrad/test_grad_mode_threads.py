"""Grad mode during backward and across threads (issue 21 items 1 and 2)."""

from __future__ import annotations

import threading

import pytest

import minigrad as torch
from minigrad.autograd import backward_events


def _in_thread(fn):
    """Run `fn` in a new thread and return what it returned (or raise what it raised)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # handed back to the test thread
            out["error"] = exc

    th = threading.Thread(target=run)
    th.start()
    th.join(10)
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_hooks_run_with_grad_mode_off():
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    seen = []

    def tensor_hook(g):
        seen.append(("tensor", torch.is_grad_enabled(), (g * w).grad_fn))
        return g

    y = x * 2
    y.register_hook(tensor_hook)
    y.grad_fn.register_prehook(lambda go: seen.append(("pre", torch.is_grad_enabled(), None)))
    y.grad_fn.register_hook(lambda gi, go: seen.append(("post", torch.is_grad_enabled(), None)))
    y.sum().backward()
    assert seen == [("tensor", False, None), ("pre", False, None), ("post", False, None)]
    assert torch.is_grad_enabled()  # restored afterwards


def test_backward_inside_a_hook_is_refused():
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)

    def hook(g):
        (w * 2).sum().backward()  # built with grad mode off: no graph

    y = x * 2
    y.register_hook(hook)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        y.sum().backward()
    assert torch.is_grad_enabled()
    assert w.grad is None


def test_grad_mode_is_the_callers_between_traced_steps():
    x = torch.ones(2, requires_grad=True)
    inside = []
    y = x * 2
    y.register_hook(lambda g: inside.append(torch.is_grad_enabled()))
    events = backward_events((y.sum(),), trace=True)
    between = []
    for _ in events:
        between.append(torch.is_grad_enabled())
    assert inside == [False]
    assert between and all(between)
    with torch.no_grad():
        z = (x * 3).sum()
    assert z.grad_fn is None


def test_no_grad_in_another_thread_does_not_stop_recording():
    x = torch.ones(2, requires_grad=True)
    entered, release = threading.Event(), threading.Event()

    def hold_no_grad():
        with torch.no_grad():
            entered.set()
            release.wait(10)
            return torch.is_grad_enabled()

    th_result: dict = {}
    th = threading.Thread(target=lambda: th_result.update(v=hold_no_grad()))
    th.start()
    entered.wait(10)
    y = x * 2
    release.set()
    th.join(10)
    assert y.requires_grad and y.grad_fn is not None
    assert th_result["v"] is False


@pytest.mark.parametrize("mode", [
    lambda: torch.no_grad(), lambda: torch.set_grad_enabled(False),
    lambda: torch.inference_mode(),
])
def test_a_new_thread_starts_with_grad_mode_on(mode):
    with mode():
        assert not torch.is_grad_enabled()
        assert _in_thread(torch.is_grad_enabled) is True
        assert _in_thread(torch.is_inference_mode_enabled) is False
        y = _in_thread(lambda: torch.ones(2, requires_grad=True) * 2)
    assert y.grad_fn is not None


def test_set_grad_enabled_in_a_thread_stays_there():
    _in_thread(lambda: torch.set_grad_enabled(False))
    assert torch.is_grad_enabled()


def test_anomaly_mode_is_one_switch_for_every_thread():
    assert not torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert _in_thread(torch.is_anomaly_enabled) is True
        assert _in_thread(torch.is_anomaly_check_nan_enabled) is False
    assert torch.is_anomaly_check_nan_enabled() is True
    with torch.autograd.set_detect_anomaly(False):
        _in_thread(lambda: torch.autograd.set_detect_anomaly(True))
        assert torch.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled()


def test_mode_switches_take_bools_only():
    with pytest.raises(TypeError, match=r"set_grad_enabled\(\): argument 'enabled' "
                                        r"\(position 1\) must be bool, not str"):
        torch.set_grad_enabled("no")
    with pytest.raises(TypeError, match="argument 'check_nan' \\(position 2\\) must be bool"):
        torch.autograd.set_detect_anomaly(True, check_nan=1)
    assert torch.is_grad_enabled() and not torch.is_anomaly_enabled()


def test_no_grad_without_parentheses_decorates():
    @torch.no_grad
    def f():
        return torch.is_grad_enabled()

    @torch.inference_mode
    def g():
        return torch.is_inference_mode_enabled()

    assert f() is False and g() is True

"""Grad-mode switches used as functions, context managers and decorators, and anomaly
mode's forward traceback on a version error."""

from __future__ import annotations

import warnings

import pytest

import minigrad as torch


def test_set_grad_enabled_as_a_plain_call_and_nested():
    x = torch.tensor([1.0], requires_grad=True)
    try:
        torch.set_grad_enabled(False)
        assert not torch.is_grad_enabled() and (x * 2).grad_fn is None
        with torch.enable_grad():
            assert (x * 2).grad_fn.name() == "MulBackward0"
    finally:
        torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        with torch.set_grad_enabled(True):
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_modes_restore_after_an_exception():
    with pytest.raises(ValueError), torch.no_grad():
        raise ValueError
    assert torch.is_grad_enabled()
    with pytest.raises(ValueError), torch.inference_mode():
        assert not torch.is_grad_enabled()
        raise ValueError
    assert torch.is_grad_enabled()


def test_enable_grad_decorator_inside_no_grad():
    x = torch.tensor([1.0], requires_grad=True)

    @torch.enable_grad()
    def tracked():
        return x * 2

    with torch.no_grad():
        assert tracked().requires_grad


def test_anomaly_mode_names_the_forward_line_of_a_version_error():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            assert torch.autograd.is_anomaly_enabled()
            y = x.exp()  # the line the trace must point at
            y.add_(1)
            with pytest.raises(RuntimeError, match="output 0 of Exp, is at version 1"):
                y.sum().backward()
    traces = [str(w.message) for w in caught if "Traceback of forward call" in str(w.message)]
    assert traces and "y = x.exp()" in traces[0]
    assert not torch.autograd.is_anomaly_enabled()

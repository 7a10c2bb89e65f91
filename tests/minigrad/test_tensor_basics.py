"""Tensors: factories, dtypes, shape helpers, conversion and printing."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as torch


def test_factories_and_default_dtype():
    assert torch.tensor([1.0, 2.0]).dtype is torch.float32
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([True]).dtype is torch.bool
    assert torch.zeros(2, 3).shape == (2, 3) and torch.ones(4).sum().item() == 4.0
    assert torch.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert torch.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert torch.arange(3).tolist() == [0, 1, 2] and torch.arange(3).dtype is torch.int64
    assert torch.zeros_like(torch.ones(2, dtype=torch.float64)).dtype is torch.float64
    torch.manual_seed(3)
    a = torch.randn(4)
    torch.manual_seed(3)
    assert torch.randn(4).tolist() == a.tolist()  # seeded: reproducible
    assert 0 <= torch.rand(100).min().item() and torch.rand(100).max().item() < 1


def test_shape_helpers_and_conversions():
    t = torch.arange(6.0).view(2, 3)
    assert t.size() == (2, 3) and t.size(1) == 3 and t.ndim == 2 and t.numel() == 6
    assert t.T.shape == (3, 2) and repr(t.shape) == "minigrad.Size([2, 3])"
    assert t[1, 2].item() == 5.0 and t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    arr = t.numpy()
    arr[0, 0] = 9.0
    assert t[0, 0].item() == 9.0  # numpy() shares memory
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted"):
        t.item()


def test_repr_matches_pytorch_style():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    assert repr(a) == "tensor([1., 2.], requires_grad=True)"
    assert repr(a * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.tensor([0.5], dtype=torch.float64)) == (
        "tensor([0.5000], dtype=torch.float64)".replace("torch.", "minigrad."))
    assert repr(torch.tensor(3.25)) == "tensor(3.2500)"


def test_unsupported_dtypes_and_devices_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="float16"):
        torch.float16  # noqa: B018
    with pytest.raises(RuntimeError, match="CPU only"):
        torch.zeros(2, device="mps")
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        torch.zeros(2, device="cuda")  # (PyTorch's own error on a CPU build)


def test_broadcasting_and_python_scalars_on_either_side():
    a = torch.tensor([[1.0], [2.0]], requires_grad=True)
    b = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)
    out = (2 - a) * b / 4 + 1
    assert out.shape == (2, 3)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[-15.0], [-15.0]])
    np.testing.assert_allclose(b.grad.numpy(), [0.25, 0.25, 0.25])
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        torch.ones(2, 3) + torch.ones(2, 2)


def test_missing_pytorch_names_say_minigrad_has_part_of_the_api():
    t = torch.ones(2)
    with pytest.raises(AttributeError, match=r"'Tensor' object has no attribute 'lgamma_' "
                                             r"\(minigrad has part of PyTorch's API"):
        t.lgamma_()
    with pytest.raises(AttributeError, match=r"module 'minigrad' has no attribute 'lgamma' \("):
        torch.lgamma  # noqa: B018
    # Private names (which Python, numpy and IPython probe for) keep the plain message.
    with pytest.raises(AttributeError) as info:
        t._repr_html_  # noqa: B018
    assert str(info.value) == "'Tensor' object has no attribute '_repr_html_'"
    assert not hasattr(t, "lgamma_") and hasattr(t, "exp_")


def test_numpy_float16_is_refused_the_same_way_wherever_it_comes_in():
    # PyTorch would keep float16; minigrad has no float16, and says so in one way.
    half = np.ones(2, np.float16)
    for make in (lambda: torch.tensor(half), lambda: torch.from_numpy(half),
                 lambda: torch.tensor(np.float16(1)), lambda: torch.ones(2) + half):
        with pytest.raises(NotImplementedError, match="numpy float16 data would keep its dtype"):
            make()

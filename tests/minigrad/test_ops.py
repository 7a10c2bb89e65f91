"""Op values and gradients against their closed forms, plus dtype promotion, repr and
conversion errors. Closed forms are the textbook derivatives; dtypes, reprs and messages
are those PyTorch 2.13.0 prints for the same code."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as torch

X = [0.5, 1.5, 2.5]


def grad_of(fn, values=X, dtype=None):
    x = torch.tensor(values, requires_grad=True, dtype=dtype or torch.float64)
    out = fn(x)
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy()


v = np.array(X)


@pytest.mark.parametrize(("fn", "value", "grad"), [
    (lambda x: x.exp(), np.exp(v), np.exp(v)),
    (lambda x: x.log(), np.log(v), 1 / v),
    (lambda x: x.sin(), np.sin(v), np.cos(v)),
    (lambda x: x.cos(), np.cos(v), -np.sin(v)),
    (lambda x: x.tanh(), np.tanh(v), 1 - np.tanh(v) ** 2),
    (lambda x: x.sigmoid(), 1 / (1 + np.exp(-v)), np.exp(-v) / (1 + np.exp(-v)) ** 2),
    (lambda x: (x - 1).relu(), np.maximum(v - 1, 0), (v > 1).astype(float)),
    (lambda x: x.sqrt(), np.sqrt(v), 0.5 / np.sqrt(v)),
    (lambda x: (x - 1).abs(), np.abs(v - 1), np.sign(v - 1)),
    (lambda x: x.neg(), -v, -np.ones(3)),
    (lambda x: x.pow(3), v**3, 3 * v**2),
    (lambda x: x.clamp(1, 2), np.clip(v, 1, 2), ((v >= 1) & (v <= 2)).astype(float)),
    (lambda x: 2 - x, 2 - v, -np.ones(3)),
    (lambda x: 2 / x, 2 / v, -2 / v**2),
    (lambda x: 2**x, 2**v, np.log(2) * 2**v),
    (lambda x: x**x, v**v, v**v * (np.log(v) + 1)),
    (lambda x: x * x + x / 4, v * v + v / 4, 2 * v + 0.25),
])
def test_elementwise_values_and_gradients(fn, value, grad):
    out, g = grad_of(fn)
    np.testing.assert_allclose(out, value, rtol=1e-12)
    np.testing.assert_allclose(g, grad, rtol=1e-12)


def test_reductions_with_dim_and_keepdim():
    m = np.arange(6.0).reshape(2, 3)
    x = torch.tensor(m.tolist(), requires_grad=True)
    assert x.sum(dim=1).tolist() == [3.0, 12.0]
    assert x.sum(dim=0, keepdim=True).shape == (1, 3)
    assert x.mean().item() == 2.5
    values, indices = x.max(dim=1)
    assert values.tolist() == [2.0, 5.0] and indices.tolist() == [2, 2]
    assert x.min().item() == 0.0
    (x.mean() + values.sum()).backward()
    expected = np.full((2, 3), 1 / 6)
    expected[:, 2] += 1
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_matmul_forms_and_gradients():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = np.array([1.0, -1.0, 2.0])
    ta = torch.tensor(a.tolist(), requires_grad=True, dtype=torch.float64)
    tb = torch.tensor(b.tolist(), requires_grad=True, dtype=torch.float64)
    mv = ta @ tb
    np.testing.assert_allclose(mv.detach().numpy(), a @ b)
    mm = ta @ ta.t()
    np.testing.assert_allclose(mm.detach().numpy(), a @ a.T)
    dot = tb @ tb
    (mv.sum() + mm.sum() + dot).backward()
    # d(1ᵀ A b)/dA = 1 bᵀ ; d(1ᵀ A Aᵀ 1)/dA = 2 (1 1ᵀ) A ; d(bᵀb)/db = 2b
    np.testing.assert_allclose(ta.grad.numpy(), np.outer([1, 1], b) + 2 * np.ones((2, 2)) @ a)
    np.testing.assert_allclose(tb.grad.numpy(), a.sum(axis=0) + 2 * b)


def test_broadcasting_gradients_are_summed_back():
    row = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    col = torch.tensor([[1.0], [10.0]], requires_grad=True)
    out = row * col
    assert out.shape == (2, 3)
    out.sum().backward()
    assert row.grad.tolist() == [11.0, 11.0, 11.0]
    assert col.grad.tolist() == [[6.0], [6.0]]


def test_indexing_forms_and_their_gradients():
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], requires_grad=True)
    assert x[1].tolist() == [5.0, 6.0, 7.0, 8.0]
    assert x[:, ::2].tolist() == [[1.0, 3.0], [5.0, 7.0]]
    assert x[..., -1].tolist() == [4.0, 8.0]
    assert x[0, [0, 0, 3]].tolist() == [1.0, 1.0, 4.0]
    assert x[x > 6].tolist() == [7.0, 8.0]
    (x[0, [0, 0, 3]].sum() + x[:, ::2].sum()).backward()
    assert x.grad.tolist() == [[3.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0]]


def test_dtype_promotion_like_pytorch():
    ints = torch.tensor([1, 2])
    assert (ints + 1.5).dtype == torch.float32
    assert (ints * torch.tensor([1.0])).dtype == torch.float32
    assert (torch.tensor([1.0], dtype=torch.float64) + torch.tensor([1.0])).dtype == torch.float64
    assert (ints / 2).dtype == torch.float32
    assert (torch.arange(3).dtype, torch.arange(3.0).dtype) == (torch.int64, torch.float32)
    assert (ints > 1).dtype == torch.bool and torch.tensor(True).dtype == torch.bool


def test_repr_in_pytorch_style():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert repr(torch.tensor([2.0, 4.0], requires_grad=True) * 2) == (
        "tensor([4., 8.], grad_fn=<MulBackward0>)")
    assert repr(torch.tensor(3.5)) == "tensor(3.5000)"
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.tensor([True, False])) == "tensor([ True, False])"
    assert repr(torch.tensor([1.0, 2.0], dtype=torch.float64)) == (
        "tensor([1., 2.], dtype=minigrad.float64)")
    assert repr(torch.zeros(2, 2)) == "tensor([[0., 0.],\n        [0., 0.]])"
    assert repr(x) == "tensor([1., 2., 3.], requires_grad=True)"
    assert repr(x.sum()) == "tensor(6., grad_fn=<SumBackward0>)"
    assert repr(torch.tensor([1.5, 2.25])) == "tensor([1.5000, 2.2500])"


def test_conversions_and_their_errors():
    assert torch.tensor([2.5]).item() == 2.5
    assert torch.tensor(3).item() == 3 and isinstance(torch.tensor(3).item(), int)
    assert torch.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert isinstance(torch.tensor([1.0]).numpy(), np.ndarray)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a Tensor with 3 elements cannot be converted to "
                                           "Scalar$"):
        x.item()
    with pytest.raises(RuntimeError, match=r"^Can't call numpy\(\) on Tensor that requires grad\. "
                                           r"Use tensor\.detach\(\)\.numpy\(\) instead\.$"):
        x.numpy()
    shared = torch.tensor([1.0, 2.0])
    shared.numpy()[0] = 9.0  # numpy() shares memory, as in torch
    assert shared.tolist() == [9.0, 2.0]


def test_integer_powers_wrap_and_truncate_like_pytorch():
    # a negative exponent gives 1 / base**-exp cut to an integer: 0 even for base 0
    base = torch.tensor([0, 0, 2, 1, -1, -1])
    exponent = torch.tensor([-1, -2, -1, -5, -3, -4])
    assert (base ** exponent).tolist() == [0, 0, 0, 1, -1, 1]
    assert (0 ** torch.tensor([-1, 0, 3])).tolist() == [0, 1, 0]
    # repeated squaring wraps around in int64: 3 ** 2**62 is 1 modulo 2**64
    assert (torch.tensor([2, 3]) ** 2**62).tolist() == [0, 1]


def test_number_base_gradient_at_zero_and_below():
    x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (0.0 ** x).sum().backward()
    assert x.grad.tolist() == [-np.inf, 0.0, 0.0]
    x.grad = None
    ((-2.0) ** x).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_square_root_exponents_follow_sqrt():
    x = torch.tensor([-np.inf, -0.0, 4.0])
    half, minus_half = (x ** 0.5).numpy(), (x ** -0.5).numpy()
    assert np.isnan(half[0]) and np.signbit(half[1]) and half[2] == 2.0
    assert np.isnan(minus_half[0]) and minus_half[1] == -np.inf and minus_half[2] == 0.5


def test_inplace_casts_within_a_category_only():
    a = torch.ones(2)
    a.add_(torch.tensor([0.5, 1.5], dtype=torch.float64))
    assert a.dtype is torch.float32 and a.tolist() == [1.5, 2.5]
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                           "output type Long"):
        torch.tensor([1, 2]).mul_(torch.tensor([1.0, 2.0], dtype=torch.float64))


def test_number_first_function_forms_promote_as_numbers():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.mul(2, x)
    assert out.dtype is torch.float32 and out.tolist() == [2.0, 4.0]
    assert out.grad_fn.next_functions[0] == (None, 0)
    assert torch.add(2.5, torch.tensor([1, 2])).dtype is torch.float32
    assert torch.sub(2, x).tolist() == [1.0, 0.0]
    assert torch.pow(2, x).grad_fn.name() == "PowBackward2"


def test_bitwise_operators_on_integers_and_bools():
    assert (torch.tensor([12, 10]) & torch.tensor([10, 6])).tolist() == [8, 2]
    assert (3 & torch.tensor([12, 10])).tolist() == [0, 2]
    assert (torch.tensor([True, False]) | 3).tolist() == [3, 3]
    with pytest.raises(NotImplementedError, match="'Double'"):
        torch.tensor([1.0], dtype=torch.float64) ^ 1


def test_rounded_division():
    assert torch.tensor([5, -7]).div(2, rounding_mode="trunc").tolist() == [2, -3]
    assert torch.tensor([5.0, -7.0]).div(2, rounding_mode="floor").tolist() == [2.0, -4.0]
    assert (torch.tensor([5.0, -7.0]) // 2).tolist() == [2.0, -4.0]
    assert (torch.tensor([5, -7]) % 3).tolist() == [2, 2]

"""PyTorch's answers to bad input in the factories, tensor(), indexing and the argument
checks of a few ops (issue 21 items 3 and 4). The texts are PyTorch 2.13.0's (with
`minigrad` for `torch`); tests/parity/test_parity_bad_input.py compares them with the
real thing when it is installed."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import minigrad as torch


def raises(exc: type, text: str):
    return pytest.raises(exc, match="^" + re.escape(text) + "$")


def test_requires_grad_takes_bools_only():
    x = torch.ones(2)
    for value in ("yes", None, 1, np.bool_(True)):
        with raises(RuntimeError, "requires_grad must be a bool"):
            x.requires_grad = value
    with raises(TypeError, "requires_grad_(): argument 'requires_grad' (position 1) must be "
                           "bool, not str"):
        x.requires_grad_("yes")
    assert not x.requires_grad
    with raises(TypeError, "tensor(): argument 'requires_grad' must be bool, not str"):
        torch.tensor([1.0], requires_grad="yes")
    with raises(TypeError, "zeros(): argument 'requires_grad' must be bool, not int"):
        torch.zeros(2, requires_grad=1)


@pytest.mark.parametrize("call, fn", [
    (lambda: torch.tensor([1.0], dtype="float32"), "tensor"),
    (lambda: torch.zeros(2, dtype=np.float32), "zeros"),
    (lambda: torch.full((2,), 1.0, dtype="float64"), "full"),
    (lambda: torch.zeros_like(torch.ones(2), dtype="float64"), "zeros_like"),
])
def test_dtype_must_be_a_dtype(call, fn):
    with pytest.raises(TypeError, match=rf"^{fn}\(\): argument 'dtype' must be minigrad.dtype"):
        call()


def test_python_types_are_dtypes():
    assert torch.tensor([1], dtype=float).dtype is torch.float64
    assert torch.zeros(2, dtype=int).dtype is torch.int64


@pytest.mark.parametrize("call, exc, text", [
    (lambda: torch.arange(0, 10, 2**63), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: torch.arange(2**63), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: torch.arange(2**64), OverflowError, "int too big to convert"),
    (lambda: torch.full((2,), 2**63), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: torch.full((2,), -2**63 - 1), OverflowError,
     "can't convert negative int to unsigned"),
    (lambda: torch.full((2,), 1e40), RuntimeError,
     "value cannot be converted to type float without overflow"),
    (lambda: torch.full((2,), float("nan"), dtype=torch.int64), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: torch.tensor([1, 2]).fill_(2**63), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: torch.tensor([1, 2]).clamp(max=2**63), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    (lambda: torch.zeros(2**63), TypeError,
     "zeros(): argument 'size' failed to unpack the object at pos 1 with error "
     '"Overflow when unpacking long long"'),
])
def test_numbers_too_large_for_the_dtype(call, exc, text):
    with raises(exc, text):
        call()


def test_full_keeps_what_fits():
    assert torch.full((2,), 2**63, dtype=torch.float64).tolist() == [2.0**63] * 2
    assert torch.full((2,), 1.5, dtype=torch.int64).tolist() == [1, 1]
    assert torch.full((1,), float("inf")).tolist() == [float("inf")]


@pytest.mark.parametrize("call, exc, text", [
    (lambda: torch.tensor([1, "a"]), TypeError, "new(): invalid data type 'str'"),
    (lambda: torch.tensor(b"ab"), TypeError, "new(): invalid data type 'bytes'"),
    (lambda: torch.tensor(["a", "b"]), ValueError, "too many dimensions 'str'"),
    (lambda: torch.tensor([1, "a"], dtype=torch.float32), TypeError,
     "must be real number, not str"),
    (lambda: torch.tensor([torch.ones(2), torch.ones(2)]), ValueError,
     "only one element tensors can be converted to Python scalars"),
    (lambda: torch.tensor(), TypeError, 'tensor() missing 1 required positional arguments: "data"'),
    (lambda: torch.tensor([1.0], torch.float64), TypeError,
     "tensor() takes 1 positional argument but 2 were given"),
    (lambda: torch.full((2,), "a"), TypeError,
     "full(): argument 'fill_value' (position 2) must be Number, not str"),
    (lambda: torch.full((2,), None), TypeError,
     "full(): argument 'fill_value' (position 2) must be Number, not NoneType"),
    (lambda: torch.zeros(True), TypeError,
     "zeros(): argument 'size' (position 1) must be tuple of ints, not bool"),
    (lambda: torch.zeros([[2]]), TypeError,
     "zeros(): argument 'size' (position 1) must be tuple of ints, but found element of type "
     "list at pos 0"),
    (lambda: torch.eye(2.5), TypeError, "eye(): argument 'n' (position 1) must be int, not float"),
    (lambda: torch.arange("a"), TypeError,
     "arange(): argument 'end' (position 1) must be Number, not str"),
    (lambda: torch.arange(0, float("inf")), RuntimeError, "unsupported range: 0 -> inf"),
    (lambda: torch.arange(3, dtype=torch.bool), NotImplementedError,
     "\"arange_cpu\" not implemented for 'Bool'"),
    (lambda: torch.zeros_like(3), TypeError,
     "zeros_like(): argument 'input' (position 1) must be Tensor, not int"),
    (lambda: torch.ones(2, 3).view(-2, 3), RuntimeError,
     "invalid shape dimension -2 at index 0 of shape [-2, 3]"),
    (lambda: torch.ones(2, 3).reshape(None), TypeError,
     "reshape(): argument 'shape' (position 1) must be tuple of ints, not NoneType"),
    (lambda: torch.ones(2, 3).unsqueeze(1.0), TypeError,
     "unsqueeze(): argument 'dim' (position 1) must be int, not float"),
    (lambda: torch.ones(2, 3).size("a"), TypeError,
     "size(): argument 'dim' (position 1) must be int, not str"),
])
def test_pytorch_errors_not_numpys(call, exc, text):
    with raises(exc, text):
        call()


def test_eye_and_linspace_list_their_signatures():
    with pytest.raises(TypeError, match=r"^eye\(\) received an invalid combination of arguments "
                                        r"- got \(int, NoneType\), but expected one of:\n"):
        torch.eye(2, None)
    with pytest.raises(TypeError, match=r"^linspace\(\) received an invalid combination"):
        torch.linspace(0, 1, 2.5)


def test_large_float_is_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = torch.tensor([1e40, -1e40])
    assert t.dtype is torch.float32 and t.tolist() == [float("inf"), float("-inf")]


def test_copy_constructing_from_a_tensor_warns():
    with pytest.warns(UserWarning, match=r"^To copy construct from a tensor, it is recommended "
                                         r"to use sourceTensor.detach\(\).clone\(\)"):
        t = torch.tensor(torch.ones(2, requires_grad=True))
    assert not t.requires_grad


# (Sizes the system refuses only when asked, like 10**12, run in a child process in
# tests/parity/test_parity_bad_input.py; these are refused before any memory is asked for.)
@pytest.mark.parametrize("call, text", [
    (lambda: torch.zeros(2**61),
     "Storage size calculation overflowed with sizes=[2305843009213693952]"),
    (lambda: torch.zeros(0, 2**62, 2**62), "Stride calculation overflowed"),
])
def test_impossible_sizes(call, text):
    with raises(RuntimeError, text):
        call()


def test_sizes_parse_like_pytorch():
    assert torch.zeros(2, True).shape == (2, 1)
    assert torch.zeros(torch.tensor(3)).shape == (3,)
    assert torch.zeros_like(torch.tensor(1.0)).shape == ()
    assert torch.eye(2, 3).shape == (2, 3)
    assert torch.arange(torch.tensor(1), torch.tensor(4)).tolist() == [1, 2, 3]


def test_indexing_like_pytorch():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x[..., ...].shape == (2, 3)
    assert x[..., 0, ...].tolist() == [1.0, 4.0]
    assert x[True].shape == (1, 2, 3) and x[False].shape == (0, 2, 3)
    assert x[[0.0, 1.9]].tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert x[[]].shape == (0, 3)
    with pytest.warns(UserWarning, match="^Using a non-tuple sequence for multidimensional"):
        y = x[[[0]]]
    assert y.shape == (1, 3)
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("index, exc, text", [
    (torch.tensor(1.0), IndexError, "tensors used as indices must be long, int, byte or bool "
                                    "tensors"),
    (2**63, ValueError, "Overflow when unpacking long long"),
    (([0, 1], [0, 1, 2]), IndexError, "shape mismatch: indexing tensors could not be broadcast "
                                      "together with shapes [2], [3]"),
])
def test_index_errors(index, exc, text):
    with raises(exc, text):
        torch.ones(2, 3)[index]


@pytest.mark.parametrize("value, exc, text", [
    ("a", TypeError, "can't assign a str to a minigrad.FloatTensor"),
    (None, TypeError, "can't assign a NoneType to a minigrad.FloatTensor"),
    ([1.0, 2.0, 3.0], TypeError, "can't assign a list to a minigrad.FloatTensor"),
    (1e40, RuntimeError, "value cannot be converted to type float without overflow"),
    (2**63, ValueError, "Overflow when unpacking long long"),
])
def test_assignment_errors(value, exc, text):
    x = torch.ones(2, 3)
    with raises(exc, text):
        x[0] = value
    assert x.tolist() == [[1.0] * 3] * 2

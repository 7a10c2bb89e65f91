"""Edge cases of reductions, relu/abs/clamp, creation and backward's root checks, with
the values PyTorch 2.13 gives written out (no torch needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import reductions

NAN = math.nan


def _grad(fn, values, seed=None):
    x = mg.tensor(values, dtype=mg.float64, requires_grad=True)
    y = fn(x)
    y.backward(seed)
    return y, x.grad.tolist()


def test_empty_dim_list_reduces_everything():
    y, g = _grad(lambda x: x.sum(dim=()), [[1.0, 2.0], [3.0, 4.0]])
    assert y.item() == 10.0 and type(y.grad_fn).__name__ == "SumBackward1"
    assert y.grad_fn._saved_dim == () and g == [[1.0, 1.0], [1.0, 1.0]]
    y, g = _grad(lambda x: x.mean(dim=[], keepdim=True), [[1.0, 2.0], [3.0, 4.0]],
                 mg.ones(1, 1, dtype=mg.float64))
    assert y.shape == (1, 1) and y.item() == 2.5 and g == [[0.25, 0.25], [0.25, 0.25]]


def test_explicit_dim_none_is_recorded_as_dim_none():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert type(x.sum().grad_fn).__name__ == "SumBackward0"
    y = x.sum(dim=None, keepdim=True)
    assert y.shape == (1, 1) and type(y.grad_fn).__name__ == "SumBackward1"
    assert y.grad_fn._saved_dim is None
    assert x.mean(dim=None).grad_fn._saved_dim is None
    with pytest.raises(TypeError, match=r"^sum\(\) received an invalid combination"):
        x.sum(keepdim=True)


def test_nan_takes_the_gradient_of_max_and_min():
    assert _grad(lambda x: x.max(), [1.0, NAN, 3.0])[1] == [0.0, 1.0, 0.0]
    assert _grad(lambda x: x.min(), [1.0, NAN, 3.0])[1] == [0.0, 1.0, 0.0]
    assert _grad(lambda x: x.max(), [NAN, 1.0, NAN])[1] == [0.5, 0.0, 0.5]
    r = mg.tensor([[1.0, NAN, 3.0], [NAN, NAN, 0.0]]).max(dim=1)
    assert r.indices.tolist() == [1, 0] and np.isnan(r.values.numpy()).all()


def test_reducing_dim_0_of_a_0d_tensor():
    for fn in (lambda x: x.sum(0), lambda x: x.sum(-1), lambda x: x.mean(-1),
               lambda x: x.max(0)[0], lambda x: x.min(-1, keepdim=True)[0]):
        y, g = _grad(fn, 2.0)
        assert y.shape == () and y.item() == 2.0 and g == 1.0
    assert reductions.argmax(mg.tensor(2.0), 0).tolist() == 0
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1\)$"):
        mg.tensor(2.0).sum(1)
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times"):
        mg.tensor(2.0).sum((0, -1))


def test_max_along_a_dim_of_an_empty_tensor():
    r = mg.zeros(2, 0).max(dim=0)
    assert r.values.shape == (0,) and r.indices.dtype == mg.int64
    with pytest.raises(IndexError, match=r"^max\(\): Expected reduction dim 0 to have non-zero"):
        mg.zeros(0, 2).max(-2)
    with pytest.raises(IndexError, match="^Dimension out of range"):
        mg.zeros(0, 2).min(2)


def test_argmax_and_argmin():
    x = mg.tensor([[1.0, 5.0], [3.0, 4.0]])
    assert reductions.argmax(x, keepdim=True).tolist() == [[1]]
    assert reductions.argmin(x, 1, keepdim=True).tolist() == [[0], [0]]
    with pytest.raises(IndexError, match=r"^Dimension out of range .*\[-2, 1\], but got 2\)$"):
        reductions.argmax(x, 2)
    with pytest.raises(IndexError, match=r"^argmin\(\): Expected reduction dim to be specified"):
        reductions.argmin(mg.zeros(0))
    with pytest.raises(RuntimeError, match=r"^argmax\(\): does not support bool input$"):
        reductions.argmax(mg.tensor([True, False]))


def test_relu_abs_clamp_special_values():
    y, g = _grad(lambda x: x.relu(), [NAN, -1.0, 1.0, -0.0], mg.ones(4, dtype=mg.float64))
    assert np.isnan(y[0].item()) and g == [1.0, 0.0, 1.0, 0.0]
    assert np.signbit(y.detach().numpy()[3])  # relu(-0.) is -0.
    assert not np.signbit(mg.tensor([-0.0, 0.0]).abs().numpy()).any()
    assert np.isnan(mg.tensor([-1.0, 1.0]).clamp(min=NAN).numpy()).all()
    assert np.isnan(mg.tensor([-1.0, 1.0]).clamp(min=0.0, max=NAN).numpy()).all()
    with pytest.raises(RuntimeError, match="^Boolean inputs not supported for relu$"):
        mg.tensor([True]).relu_()
    with pytest.raises(NotImplementedError, match="^\"abs_cpu\" not implemented for 'Bool'$"):
        mg.tensor([True]).abs()


def test_creation_dtypes_and_errors():
    assert mg.tensor(np.float64(1.5)).dtype == mg.float64
    assert mg.tensor([1.0, np.float64(1.5)]).dtype == mg.float64
    assert mg.tensor([np.float32(1.5), 2]).dtype == mg.float32
    assert mg.arange(mg.tensor(3)).tolist() == [0, 1, 2]
    assert mg.randint(5, (2, 3)).shape == (2, 3)
    cases = [
        (lambda: mg.tensor([[1, 2], [3]]), ValueError,
         r"^expected sequence of length 2 at dim 1 \(got 1\)$"),
        (lambda: mg.tensor([NAN], dtype=mg.int64), RuntimeError, "^value cannot be converted"),
        (lambda: mg.tensor(None), RuntimeError, "^Could not infer dtype of NoneType$"),
        (lambda: mg.tensor("abc"), TypeError, r"^new\(\): invalid data type 'str'$"),
        (lambda: mg.arange(0, 5, -1), RuntimeError, "^upper bound and lower bound inconsistent"),
        (lambda: mg.eye(-1), RuntimeError, "^n must be greater or equal to 0, got -1$"),
        (lambda: mg.linspace(0, 1, -1), RuntimeError, "^number of steps must be non-negative$"),
        (lambda: mg.zeros(-1), RuntimeError, r"^zeros: Dimension size must be non-negative\.$"),
        (lambda: mg.zeros(), TypeError, r'^zeros\(\) missing 1 required positional arguments'),
        (lambda: mg.full(2, 3.0), TypeError, r"^full\(\): argument 'size' \(position 1\) must"),
    ]
    for make, exc, message in cases:
        with pytest.raises(exc, match=message):
            make()


def test_backward_reports_no_grad_before_shape():
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad"):
        mg.tensor([1.0, 2.0]).backward()
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad"):
        mg.tensor(1).backward()
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="^gradients can be either Tensors or None, but got float$"):
        (x * 2).backward([1.0, 1.0])
    with pytest.raises(RuntimeError, match="^got 2 tensors and 1 gradients$"):
        mg.autograd.backward([x.sum(), x.sum()], [None])


def test_repr_moves_a_long_suffix_to_its_own_line():
    t = mg.tensor([1.5, -2.0, 3.25], dtype=mg.float64, requires_grad=True) * 1
    assert repr(t) == ("tensor([ 1.5000, -2.0000,  3.2500], dtype=minigrad.float64,\n"
                       "       grad_fn=<MulBackward0>)")
    assert repr(mg.tensor([1.0, 2.0], requires_grad=True)) == \
        "tensor([1., 2.], requires_grad=True)"


@pytest.mark.parametrize("np_dtype", [np.int32, np.uint8, np.int16, np.float16])
def test_numpy_data_of_another_width_is_refused_not_widened(np_dtype):
    # PyTorch would keep int32 / uint8 / float16; minigrad has none of them, so it says
    # so instead of quietly making an int64 or float32 tensor.
    data = np.array([1, 2], dtype=np_dtype)
    for make in (lambda: mg.tensor(data), lambda: mg.tensor([data[0], data[1]]),
                 lambda: mg.tensor(data[0])):
        with pytest.raises(NotImplementedError, match=f"numpy {np.dtype(np_dtype)} data"):
            make()
    # Asked for a dtype minigrad has, the data is converted, as in PyTorch.
    assert mg.tensor(data, dtype=mg.float64).dtype is mg.float64
    assert mg.tensor(data, dtype=mg.int64).tolist() == [1, 2]


def test_numpy_complex_data_is_refused():
    with pytest.raises(NotImplementedError, match="not complex numbers"):
        mg.tensor(np.array([1 + 2j]))


def test_a_product_with_inf_and_zero_is_nan_without_a_warning_or_a_changed_error_state():
    """Products run `quietly`: numpy is silenced for the one product (PyTorch gives no warning)
    and leaves numpy's error settings as they were."""
    import warnings

    import numpy as np

    import minigrad

    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = minigrad.tensor([[float("inf"), 1.0]]) @ minigrad.tensor([[0.0], [1.0]])
    assert np.isnan(out.item())
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning):  # (numpy itself still warns, outside minigrad)
        np.array([[np.inf, 1.0]]) @ np.array([[0.0], [1.0]])

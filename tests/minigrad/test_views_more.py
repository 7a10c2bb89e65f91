"""Views and in-place ops: overlapping views, retained gradients that follow a
tensor, views that require grad through their base, hook checks and engine errors
(values PyTorch 2.13 gives, written out so these run without it)."""

from __future__ import annotations

import pytest

import minigrad as torch

U64_MINUS_1 = 2**64 - 1


def test_expanded_view_gradient_sums_the_repeats_after_base_inplace():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    e = x.expand(3, 2)
    x.mul_(2)
    assert e.grad_fn.name() == "AsStridedBackward0"
    e.sum().backward()
    assert a.grad.tolist() == [6.0, 6.0]

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    e = x[:, None].expand(2, 4)
    x.mul_(2)
    (e * torch.arange(8.0).view(2, 4)).sum().backward()
    assert a.grad.tolist() == [12.0, 44.0]


@pytest.mark.parametrize("modify", [
    lambda w: w[0].mul_(2),
    lambda w: w.add_(1),
    lambda w: w.t().zero_(),
])
def test_in_place_on_a_leaf_view_is_refused_even_if_the_base_needs_no_grad(modify):
    w = torch.arange(1.0, 4.0).view(3).requires_grad_()
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad"):
        modify(w)


def test_retained_gradient_follows_a_view_whose_base_changed():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = a * 1
    v = x[0:2]
    v.retain_grad()
    x.mul_(2)
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0]


def test_retained_gradient_follows_a_base_whose_view_changed():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = a * 1
    x.retain_grad()
    x[0].mul_(5)
    assert x.grad_fn.name() == "minigrad::autograd::CopySlices"
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert a.grad.tolist() == [10.0, 2.0, 2.0]


def test_copy_into_an_integer_tensor_records_nothing():
    b = torch.tensor([1.5, 2.5], requires_grad=True)
    c = torch.zeros(2, dtype=torch.int64)
    c.copy_(b)
    assert c.grad_fn is None and not c.requires_grad
    assert c.tolist() == [1, 2] and c._version == 1


def test_index_put_wants_matching_dtypes():
    c = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="got Long for the destination and Float for the"):
        c[[0]] = torch.tensor([1.5])


@pytest.mark.parametrize("hook, message", [
    (lambda g: g.double(), "hook '<lambda>' has changed the type of value (was "
                           "minigrad.FloatTensor got minigrad.DoubleTensor)"),
    (lambda g: g.sum(), "hook '<lambda>' has changed the size of value"),
])
def test_a_tensor_hook_may_not_change_type_or_size(hook, message):
    e = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    e.register_hook(hook)
    with pytest.raises(RuntimeError) as info:
        (e * 1).sum().backward()
    assert str(info.value) == message


def test_a_hook_must_return_a_tensor():
    e = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    e.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        e.sum().backward()


def test_post_hook_runs_before_saved_tensors_are_released():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    e = a * b
    seen = []
    e.grad_fn.register_hook(lambda gi, go: seen.append(e.grad_fn._saved_self.tolist()))
    e.sum().backward()
    assert seen == [[1.0, 2.0]]


def test_op_on_a_no_grad_view_is_recorded_without_edges():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    with torch.no_grad():
        v = x[0:1]
    y = v * 3
    assert y.requires_grad and y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions == ((None, 0), (None, 0))
    w = v[0:1]
    assert w.grad_fn.name() == "SliceBackward0" and not w.is_leaf
    with pytest.raises(RuntimeError, match="^Output 0 of Slice is a view of a view which was "
                                           "created in no_grad mode and is being modified"):
        w.add_(1)


def test_view_made_before_its_base_required_grad():
    x = torch.zeros(3)
    v = x[1:]
    x.requires_grad_()
    y = v * 2
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert x.grad is None


def test_detach_inplace_refuses_every_view():
    for v in (torch.zeros(3)[1:], torch.arange(3)[1:]):
        with pytest.raises(RuntimeError, match="^Can't detach views in-place"):
            v.detach_()


def test_data_of_a_grad_tensor_must_stay_floating_point():
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        b.data = torch.tensor([1, 2])
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        b.data = 3


def test_engine_argument_errors():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot be empty"):
        torch.autograd.grad(a.sum(), [])
    with pytest.raises(RuntimeError, match="^`inputs` argument to `backward\\(\\)` cannot be"):
        a.sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="^can't retain_grad on Tensor that has requires_grad"):
        a.sum().backward(inputs=[torch.zeros(2)])


def test_backward_inputs_retains_a_non_leaf_gradient():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    (y * 3).sum().backward(inputs=[y], retain_graph=True)
    assert y.retains_grad and y.grad.tolist() == [3.0, 3.0] and a.grad is None
    (y * 3).sum().backward()
    assert y.grad.tolist() == [6.0, 6.0]


def test_saved_dims_keep_their_sign_as_unsigned():
    x = torch.ones(2, 3, requires_grad=True) * 1
    assert x.permute(-1, 0).grad_fn._saved_dims == (U64_MINUS_1, 0)
    node = x.select(-1, -2).grad_fn
    assert (node._saved_dim, node._saved_index) == (U64_MINUS_1, U64_MINUS_1 - 1)
    node = x.narrow(1, -2, 1).grad_fn
    assert (node._saved_dim, node._saved_start, node._saved_end) == (1, 1, 2)
    assert x.narrow(1, -1, 1).shape == (2, 1)


def test_version_error_names_the_tensor_pytorch_checks_first():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    x, y = a.exp(), a.sin()
    z = x * y
    with torch.no_grad():
        x.add_(1)
        y.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of Sin,"):
        z.sum().backward()


def test_slicing_a_zero_dim_tensor():
    t = torch.tensor(1.0)
    with pytest.raises(IndexError, match="^slice\\(\\) cannot be applied to a 0-dim tensor"):
        t[0:1]
    with pytest.raises(IndexError, match="^invalid index of a 0-dim tensor"):
        t[0]
    with pytest.raises(IndexError, match="^too many indices for tensor of dimension 0"):
        t[0:1,]

"""In-place ops: version counter numbers, the leaf/view/multi-output/no_grad-view errors and
the CopySlices rebase. Expected numbers and messages are PyTorch 2.13.0's for the same code."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as torch


@pytest.fixture
def x():
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_version_numbers_step_by_step():
    a = torch.zeros(3)
    seen = []
    a.add_(1)
    seen.append(a._version)
    a += 1
    seen.append(a._version)
    a[0] = 5
    seen.append(a._version)
    a.zero_()
    seen.append(a._version)
    a.fill_(2)
    seen.append(a._version)
    a.copy_(torch.ones(3))
    seen.append(a._version)
    a.requires_grad_()  # changes a flag, not the data: no bump
    seen.append(a._version)
    view, detached, data, cloned = a.view(3), a.detach(), a.data, a.clone()
    with torch.no_grad():
        a.mul_(2)
    seen.append((view._version, detached._version, data._version, cloned._version))
    assert seen == [1, 2, 3, 4, 5, 6, 6, (7, 7, 0, 0)]  # torch prints the same list


def test_in_place_on_a_leaf_that_requires_grad(x):
    with pytest.raises(RuntimeError, match=r"^a leaf Variable that requires grad is being used "
                                           r"in an in-place operation\.$"):
        x.add_(1)
    with pytest.raises(RuntimeError, match=r"^a view of a leaf Variable that requires grad is "
                                           r"being used in an in-place operation\.$"):
        x[0].mul_(2)
    assert x._version == 0 and x.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(("split", "op_name"), [
    (lambda t: t.unbind(), "Unbind"),
    (lambda t: t.split(2), "Split"),
])
def test_in_place_on_an_output_of_a_multi_view_op(x, split, op_name):
    parts = split(x * 1)
    with pytest.raises(RuntimeError, match=rf"^Output 0 of {op_name} is a view and is being "
                                           r"modified inplace\. This view is the output of a "
                                           r"function that returns multiple views\."):
        parts[0].mul_(2)


def test_in_place_on_a_view_made_under_no_grad(x):
    a = x * 1
    with torch.no_grad():
        view = a[0:2]
    with pytest.raises(RuntimeError, match=r"^A view was created in no_grad mode and is being "
                                           r"modified inplace with grad mode enabled\."):
        view.mul_(2)


def test_in_place_on_a_view_rebases_onto_copyslices(x):
    a = x * 1
    view = a[1:]
    view.mul_(2)
    assert a.grad_fn.name() == "minigrad::autograd::CopySlices"
    assert view.grad_fn.name() == "AsStridedBackward0"
    assert (a._version, view._version) == (1, 1)
    assert [(n.name(), i) for n, i in [e for e in a.grad_fn.next_functions if e[0]]] == [
        ("MulBackward0", 0)]
    assert a.grad_fn.next_functions[1] == (None, 0)
    assert view.grad_fn.next_functions[0][0] is a.grad_fn
    (a.sum() + view.exp().sum()).backward()
    # d/dx of x0 + 2 x1 + 2 x2 + exp(2 x1) + exp(2 x2)
    expected = [1.0, 2 + 2 * np.exp(4.0), 2 + 2 * np.exp(6.0)]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_modified_saved_input_fails_at_backward_with_versions(x):
    y = x * 1
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"^one of the variables needed .* output 0 of Add, "
                                           r"is at version 1; expected version 0 instead"):
        z.sum().backward()


def test_in_place_under_no_grad_is_allowed_on_leaves_and_bumps(x):
    with torch.no_grad():
        x.mul_(2)
    assert x._version == 1 and x.tolist() == [2.0, 4.0, 6.0] and x.is_leaf

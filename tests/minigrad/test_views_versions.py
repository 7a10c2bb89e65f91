"""Views share their base's version counter; in-place ops bump it by one; history is
rebased through CopySlices and AsStridedBackward0."""

from __future__ import annotations

import pytest

import minigrad as torch


def test_every_in_place_op_bumps_by_one():
    x = torch.zeros(3)
    ops = [lambda: x.add_(1), lambda: x.sub_(1), lambda: x.mul_(2), lambda: x.div_(2),
           lambda: x.pow_(2), lambda: x.exp_(), lambda: x.clamp_(0, 1), lambda: x.zero_(),
           lambda: x.fill_(2.0), lambda: x.copy_(torch.ones(3)), lambda: x.__iadd__(1),
           lambda: x.__isub__(1), lambda: x.__imul__(2), lambda: x.__itruediv__(2)]
    for n, op in enumerate(ops, start=1):
        op()
        assert x._version == n


def test_views_share_the_counter_data_and_clone_do_not():
    base = torch.arange(6.0).view(2, 3)
    shared = [base[0], base[:, 1:], base.view(6), base.t(), base.transpose(0, 1),
              base.unsqueeze(0), base.detach(), base.reshape(6), base.permute(1, 0)]
    separate = [base.data, base.clone()]
    base.add_(1)
    assert all(v._version == 1 for v in shared)
    assert all(v._version == 0 for v in separate)
    shared[0].mul_(2)
    assert base._version == 2


def test_in_place_on_a_view_rebases_base_and_view():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x * 1
    view = base[1:]
    view.mul_(10)
    assert type(base.grad_fn).__name__ == "CopySlices"
    assert view.grad_fn.name() == "AsStridedBackward0"
    base.sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 10.0]


def test_setitem_goes_through_copyslices():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    u = x * 2
    u[0] = 666
    assert type(u.grad_fn).__name__ == "CopySlices" and u._version == 1
    u.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0]


def test_saved_tensor_version_check():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h ** 2  # saves h at version 0
    h.add_(1)
    with pytest.raises(RuntimeError, match=r"\[minigrad.FloatTensor \[2\]\], which is output 0 "
                                           r"of Add, is at version 1; expected version 0"):
        y.sum().backward()


def test_unbind_outputs_share_one_node_and_refuse_in_place():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b, c, d = a.unbind()
    assert b.grad_fn is c.grad_fn and [b.output_nr, c.output_nr, d.output_nr] == [0, 1, 2]
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
        c.add_(1)
    parts = a.split(2)
    assert [p.shape for p in parts] == [(2,), (1,)] and parts[0].grad_fn.name() == "SplitBackward0"
    (b * d).backward()
    assert a.grad.tolist() == [3.0, 0.0, 1.0]


def test_data_setter_replaces_values_without_history():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    w.data = torch.tensor([5.0, 6.0])
    assert w.tolist() == [5.0, 6.0] and w.requires_grad and w.is_leaf
    y = w * 2
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf

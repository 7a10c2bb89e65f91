"""Hooks on tensors and on nodes: order, retain_grad's place after every tensor hook,
removal, accumulation into a retained grad. Expected logs are PyTorch 2.13.0's output
for the same program."""

from __future__ import annotations

import pytest

import minigrad as torch


def test_hook_order_retain_grad_last_and_removal():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    log = []
    a.retain_grad()  # registered first, yet it sees the gradient after every tensor hook
    first = a.register_hook(lambda g: log.append(("t1", g.tolist())) or g + 1)
    a.register_hook(lambda g: log.append(("t2", g.tolist())) or g * 3)
    a.grad_fn.register_prehook(lambda gi: log.append(("pre", gi[0].tolist())))
    a.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist(), go[0].tolist())))
    a.sum().backward(retain_graph=True)
    assert log == [("t1", [1.0, 1.0]), ("t2", [2.0, 2.0]), ("pre", [6.0, 6.0]),
                   ("post", [12.0, 12.0], [6.0, 6.0])]
    assert (a.grad.tolist(), x.grad.tolist()) == ([6.0, 6.0], [12.0, 12.0])
    first.remove()
    log.clear()
    a.sum().backward()
    assert log == [("t2", [1.0, 1.0]), ("pre", [3.0, 3.0]), ("post", [6.0, 6.0], [3.0, 3.0])]
    # a retained grad accumulates across calls like a leaf's
    assert (a.grad.tolist(), x.grad.tolist()) == ([9.0, 9.0], [18.0, 18.0])


def test_hook_on_a_leaf_changes_what_accumulates():
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    leaf.register_hook(lambda g: g * 2)
    (leaf * 3).sum().backward()
    assert leaf.grad.tolist() == [6.0, 6.0]


def test_hook_needs_a_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match="^cannot register a hook on a tensor that doesn't "
                                           "require gradient$"):
        torch.tensor([1.0]).register_hook(lambda g: g)

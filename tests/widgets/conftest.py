"""Fixtures for the widget tests: the same textbook graphs built with real torch and
with minigrad, since the widgets read both through the same public surface."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture(params=["torch", "minigrad"])
def lib(request):
    """The tensor library graphs are built with (torch skips when it is not installed)."""
    if request.param == "torch":
        return request.getfixturevalue("torch")
    return importlib.import_module("minigrad")


@pytest.fixture
def mg():
    """minigrad itself, for what only minigrad can do (its engine events)."""
    return importlib.import_module("minigrad")


class Textbook:
    """Small graphs every autograd course draws. Each returns (roots, names)."""

    def __init__(self, lib) -> None:
        self.lib = lib

    def chain(self):
        """loss = (a * b * c).sum()"""
        lib = self.lib
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
        c = lib.tensor([7.0, 8.0, 9.0], requires_grad=True)
        loss = (a * b * c).sum()
        return (loss,), {"a": a, "b": b, "c": c, "loss": loss}

    def leaf_two_ops(self):
        """One leaf feeding two operations: loss = (x.exp() + x.sin()).sum()"""
        x = self.lib.tensor([0.5, 1.0], requires_grad=True)
        loss = (x.exp() + x.sin()).sum()
        return (loss,), {"x": x, "loss": loss}

    def unbind_two_muls(self):
        """A multi-output node: p, q = x.unbind(0); loss = (p * 2 + q * 3).sum()"""
        x = self.lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        p, q = x.unbind(0)
        loss = (p * 2 + q * 3).sum()
        return (loss,), {"x": x, "p": p, "q": q, "loss": loss}

    def shared_two_losses(self):
        """Two losses sharing y = t @ a (t needs no grad, so MmBackward0 has a (None, 0))."""
        lib = self.lib
        t = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        a = lib.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
        y = t @ a
        l1 = y.sum()
        l2 = (y * y).mean()
        return (l1, l2), {"t": t, "a": a, "y": y, "l1": l1, "l2": l2}

    def modified_in_place(self):
        """The classic: exp saves its result, which is then changed in place."""
        t = self.lib.arange(3.0, requires_grad=True)
        u = 2 * t
        e = u.exp()
        loss = e.sum()
        e[0] = 6
        return (loss,), {"t": t, "u": u, "loss": loss}

    def unbind_three(self):
        """Lesson 5: b, c, d = a.unbind(); e = b * c * d (outputs 0, 1, 2 of one node)."""
        a = self.lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
        b, c, d = a.unbind()
        e = b * c * d
        return (e,), {"a": a, "b": b, "c": c, "d": d, "e": e}

    def retain_graph_loop(self):
        """Lesson 3: y = t @ a built once outside the loop, reused by each iteration's loss."""
        lib = self.lib
        x = lib.tensor([1.0, 0.0], dtype=lib.float64)
        t = lib.eye(2, dtype=lib.float64, requires_grad=True)
        a = lib.ones(2, dtype=lib.float64, requires_grad=True)
        y = t @ a
        loss = ((t @ (x + y) - x) ** 2).mean()
        return (loss,), {"x": x, "t": t, "a": a, "y": y}

    def copy_slices(self):
        """Lesson 4: writing into a slice of u = 2 * t turns u's grad_fn into CopySlices."""
        t = self.lib.arange(3.0, requires_grad=True)
        u = 2 * t
        u[0] = 666
        return (u,), {"t": t, "u": u}


@pytest.fixture
def textbook(lib):
    return Textbook(lib)


@pytest.fixture
def mg_textbook(mg):
    return Textbook(mg)


@pytest.fixture
def torch_textbook(torch):
    """The textbook graphs built with real torch (skips when torch is not installed)."""
    return Textbook(torch)

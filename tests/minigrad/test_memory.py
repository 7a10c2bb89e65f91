"""Memory: saved tensors are released by backward, graphs are freed by reference
counting alone (no cycles), and a long training loop holds memory flat."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import minigrad as torch


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_backward_releases_saved_tensors(no_gc):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = h.exp()  # saves its result
    z = (y * h).sum()  # saves both operands
    saved = [s for node in (y.grad_fn, z.grad_fn.next_functions[0][0])
             for _, s in node.saved_items()]
    assert saved and not any(s.is_released for s in saved)
    result_array = weakref.ref(y.grad_fn._raw_saved_result._data)
    del y
    z.backward()
    assert all(s.is_released for s in saved)
    assert result_array() is None  # the exp result's memory is gone, not just hidden


def test_retain_graph_keeps_them(no_gc):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward(retain_graph=True)
    assert not y.grad_fn._raw_saved_result.is_released
    y.sum().backward()
    assert y.grad_fn._raw_saved_result.is_released


def test_dropping_the_output_frees_the_whole_graph(no_gc):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(50):
        y = (y * 1.5).sigmoid()  # sigmoid saves its own output: a cycle would keep it
    nodes = []
    node = y.grad_fn
    while node is not None and node.next_functions:
        nodes.append(weakref.ref(node))
        node = node.next_functions[0][0]
    del y, node
    assert all(ref() is None for ref in nodes)


def test_long_training_loop_holds_memory_flat(no_gc):
    w = torch.tensor(np.linspace(-1, 1, 16), requires_grad=True)
    x = torch.tensor(np.linspace(0, 1, 16))

    def step():
        loss = ((w * x).tanh() - 0.5).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w.sub_(0.01 * w.grad)
        w.grad = None

    for _ in range(2_000):  # numpy fills its small internal caches first
        step()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(10_000):
            step()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # One leaked 16-element array per step would be > 1 MB; allow allocator noise only.
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 10 000 steps"


def _graph_with_every_kind_of_node():
    """A graph with views, a CopySlices rebase, a multi-output node, hooks and saved
    inputs/outputs; returns the output and weak references to everything inside."""
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g)
    h[1:3].mul_(3)  # CopySlices + AsStridedBackward0
    parts = h.unbind()
    e = parts[0].exp()  # saves its own result
    out = (e + parts[3].sigmoid() * h.sum()).tanh()
    refs = [weakref.ref(t) for t in (h, e, *parts)]
    nodes, stack = [], [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or any(r() is node for r in nodes):
            continue
        nodes.append(weakref.ref(node))
        stack.extend(n for n, _ in node.next_functions)
        if hasattr(node, "saved_items"):
            for _, saved in node.saved_items():
                # SavedTensor has __slots__ without __weakref__: watch what it holds instead
                held = saved._tensor if saved._tensor is not None else saved._data
                if held is not None and held is not x:  # scalars are stored elsewhere
                    refs.append(weakref.ref(held))
    return x, out, refs, nodes


def test_a_rich_graph_is_freed_by_refcounting_alone(no_gc):
    x, out, refs, nodes = _graph_with_every_kind_of_node()
    names = {ref().name() for ref in nodes}
    assert {"TanhBackward0", "UnbindBackward0", "minigrad::autograd::CopySlices",
            "ExpBackward0", "SigmoidBackward0"} <= names
    assert len(refs) > 8
    del out
    # Everything goes, even the leaf's AccumulateGrad while x lives: like torch, a leaf
    # holds its AccumulateGrad only weakly.
    assert [ref() for ref in refs + nodes if ref() is not None] == []
    assert x.grad is None


def test_saved_tensor_objects_die_with_the_graph_after_backward(no_gc):
    x, out, refs, nodes = _graph_with_every_kind_of_node()
    out.backward()
    assert x.grad is not None
    del out
    assert all(ref() is None for ref in refs)

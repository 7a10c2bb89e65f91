"""The backward engine: order, dependency counting, the event stream, deep graphs."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as torch
from minigrad.autograd import backward_events
from minigrad.autograd import events as ev


def _names(events, kind):
    return [e.node.name() for e in events if isinstance(e, kind)]


def test_event_stream_of_a_small_graph():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0], requires_grad=True)
    loss = (a * b).exp().sum()
    events = list(backward_events(loss))
    assert isinstance(events[0], ev.BackwardStarted) and isinstance(events[-1], ev.BackwardFinished)
    assert _names(events, ev.NodeStarted) == [
        "SumBackward0", "ExpBackward0", "MulBackward0",
        "minigrad::autograd::AccumulateGrad", "minigrad::autograd::AccumulateGrad",
    ]
    assert events[-1].nodes_run == 5
    unpacked = [(e.node.name(), e.name, e.saved_version, e.current_version)
                for e in events if isinstance(e, ev.SavedTensorUnpacked)]
    assert ("ExpBackward0", "result", 0, 0) in unpacked
    assert {("MulBackward0", "self"), ("MulBackward0", "other")} <= {u[:2] for u in unpacked}
    released = {e.node.name(): set(e.names) for e in events
                if isinstance(e, ev.SavedTensorsReleased)}
    assert released == {"ExpBackward0": {"result"}, "MulBackward0": {"self", "other"}}
    accumulated = [e for e in events if isinstance(e, ev.GradAccumulated)]
    assert [e.tensor is a for e in accumulated] == [True, False]  # as in PyTorch: a first
    av, bv = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), bv * np.exp(av * bv), rtol=1e-6)


def test_node_runs_once_after_all_its_gradients_arrived():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    loss = (h * 2 + h.sin()).sum()
    events = list(backward_events(loss))
    started = _names(events, ev.NodeStarted)
    assert started.count("ExpBackward0") == 1
    exp_event = next(e for e in events if isinstance(e, ev.NodeStarted)
                     and e.node.name() == "ExpBackward0")
    hv = np.exp([1.0, 2.0])
    np.testing.assert_allclose(exp_event.grads_in[0].numpy(), 2 + np.cos(hv))


def test_events_report_the_failing_node():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    events = []
    with pytest.raises(RuntimeError, match="output 0 of Exp, is at version 1"):
        for e in backward_events(y.sum()):
            events.append(e)
    failed = events[-1]
    assert isinstance(failed, ev.EngineFailed) and failed.node.name() == "ExpBackward0"


def test_hundred_thousand_op_chain_has_no_recursion_limit():
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_accumulation_across_backward_calls_and_set_to_none():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (w * 3).sum().backward()
    assert w.grad.tolist() == [9.0, 9.0]
    w.grad = None
    (w * w).sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_backward_with_gradient_argument_and_errors():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.backward(torch.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()


def test_autograd_grad_does_not_touch_dot_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = torch.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    (gx,) = torch.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [2.0, 4.0] and x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        torch.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = torch.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None
    gx, gz = torch.autograd.grad(y, [x, z], allow_unused=True, materialize_grads=True)
    assert gz.tolist() == [0.0]


def test_create_graph_through_a_node_without_a_formula_is_refused_clearly():
    # A node with no formula as minigrad code: a clear error naming the node, never a
    # gradient that silently cannot be differentiated.
    from minigrad.autograd.graph import Node
    from minigrad.autograd.record import record

    class TwiceBackward0(Node):
        def backward(self, grad):
            return (grad * 2,)

    x = torch.tensor([1.0, 3.0], requires_grad=True)
    y = torch.Tensor._make(x.detach().numpy() * 2)
    record(TwiceBackward0, y, x)
    with pytest.raises(NotImplementedError, match="backward of TwiceBackward0 yet"):
        torch.autograd.grad(y.sum(), x, create_graph=True, retain_graph=True)
    # A plain backward of the same graph still works.
    (gx,) = torch.autograd.grad(y.sum(), x)
    assert gx.tolist() == [2.0, 2.0]


def test_create_graph_gradient_can_be_differentiated_again():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad
    (gg,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    assert gg.tolist() == [6.0, 12.0]
    (ggg,) = torch.autograd.grad(gg.sum(), x)
    assert ggg.tolist() == [6.0, 6.0] and not ggg.requires_grad


def test_retain_graph_allows_a_second_pass_and_default_does_not():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        y.backward()


# -- AccumulateGrad keeps an unshared gradient instead of copying it -------------------
#
# A leaf's `.grad` must own its memory: the next backward adds into it in place. The
# engine keeps the incoming array itself only when nothing else refers to it; these
# tests pin down the cases where it must copy.


def test_a_fresh_gradient_is_kept_not_copied():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    kept = []
    y = x * 2.0
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs[0]))
    y.sum().backward()
    # the hook's caller still holds MulBackward0's result, so the leaf gets a copy ...
    assert not np.shares_memory(x.grad.numpy(), kept[0].numpy())
    assert x.grad.tolist() == kept[0].tolist() == [2.0, 2.0, 2.0]
    # ... and once it lets go, a new graph's fresh result is kept as it is
    x.grad = None
    (x * 2.0).sum().backward()
    assert x.grad.numpy().base is None and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_one_gradient_flowing_to_two_leaves_gives_each_its_own_array():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    ((a + b) * 1.0).sum().backward()  # AddBackward0 hands the same array to both
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    (a + b).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [2.0, 2.0]


def test_the_callers_gradient_tensor_is_never_taken_over():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seed = torch.tensor([1.0, 1.0])
    (x + 0.0).backward(seed)  # AddBackward0 passes the seed straight through
    assert not np.shares_memory(x.grad.numpy(), seed.numpy())
    (x + 0.0).backward(seed)
    assert seed.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]


def test_a_hook_result_the_user_keeps_is_not_taken_over():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    kept = torch.tensor([5.0, 5.0])
    x.register_hook(lambda g: kept)
    (x * 1.0).sum().backward()
    (x * 1.0).sum().backward()
    assert kept.tolist() == [5.0, 5.0] and x.grad.tolist() == [10.0, 10.0]


def test_a_custom_function_returning_a_kept_tensor_is_not_taken_over():
    kept = torch.tensor([7.0, 7.0])

    class Const(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, grad):
            return kept

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    Const.apply(x).sum().backward()
    Const.apply(x).sum().backward()
    assert kept.tolist() == [7.0, 7.0] and x.grad.tolist() == [14.0, 14.0]


def test_the_stepper_trace_never_hands_its_recorded_arrays_to_grad():
    from minigrad.autograd import backward_events

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    events = list(backward_events((x * 3.0).sum(), trace=True))
    recorded = [e for e in events if type(e).__name__ == "NodeFinished"]
    x_grad_before = x.grad.tolist()
    (x * 3.0).sum().backward()  # adds into x.grad in place
    assert x_grad_before == [3.0, 3.0] and x.grad.tolist() == [6.0, 6.0]
    for e in recorded:
        for t in e.grads_out:
            assert t is None or t.tolist() != [6.0, 6.0]


def test_streams_summed_in_place_never_touch_an_array_someone_else_holds():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seed = torch.tensor([1.0, 1.0])
    y = x * 1.0
    (y + y).backward(seed)  # both streams into MulBackward0 are the caller's seed
    assert seed.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]
    kept = []
    y = x * 2.0
    z = y * 1.0
    z.grad_fn.register_hook(lambda gi, go: kept.append(gi[0]))
    (z + y * 3.0).sum().backward()  # y's first stream is still held by `kept`
    assert kept[0].tolist() == [1.0, 1.0]
    assert x.grad.tolist() == [2.0 + 8.0, 2.0 + 8.0]


def test_a_linear_layers_weight_gradient_is_kept_not_copied():
    # MmBackward0 computes the gradient of `w.t()` column-major (as PyTorch does, from
    # the saved strides), so TBackward0 hands `w` a row-major whole-buffer view.
    w = torch.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    x = torch.tensor(np.linspace(-1.0, 1.0, 15).reshape(5, 3))
    (x @ w.t()).sum().backward()
    g = w.grad.numpy()
    assert g.base is not None and g.flags.c_contiguous
    np.testing.assert_allclose(g, np.ones((5, 4)).T @ x.numpy())
    (x @ w.t()).sum().backward()  # accumulates into that same memory
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.ones((5, 4)).T @ x.numpy())


def test_a_view_whose_array_someone_else_holds_is_copied():
    w = torch.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    x = torch.tensor(np.linspace(-1.0, 1.0, 15).reshape(5, 3))
    kept = []
    y = x @ w.t()
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs[1]))
    y.sum().backward()
    assert not np.shares_memory(w.grad.numpy(), kept[0].numpy())
    before = kept[0].tolist()
    (x @ w.t()).sum().backward()
    assert kept[0].tolist() == before


def test_elementwise_nodes_keep_input_shapes_only_where_the_gradient_needs_work():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, 0.25, 2.0], requires_grad=True)
    batch = torch.ones(2, 3, requires_grad=True)
    # Like the output: nothing for the engine to check.
    assert (x * 2.0).grad_fn._input_meta is None
    assert (x * w).grad_fn._input_meta is None
    assert x.sin().grad_fn._input_meta is None
    # Broadcast or promoted inputs: the engine sums / casts their gradients back.
    assert (batch * x).grad_fn._input_meta == (((2, 3), np.float32), ((3,), np.float32))
    scalar64 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    assert (x * scalar64).grad_fn._input_meta[1] == ((), np.float64)
    (batch * x + x * scalar64).sum().backward()  # x * scalar64 is broadcast to (2, 3)
    assert x.grad.shape == (3,) and x.grad.dtype is torch.float32
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0, 6.0])
    assert scalar64.grad.dtype is torch.float64 and scalar64.grad.item() == 12.0


def test_exact_nodes_keep_no_input_shapes_and_their_gradients_fit():
    # t, mm and full sums / means always return gradients of their inputs' shapes and
    # dtypes, so the engine has nothing to check for them.
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64,
                     requires_grad=True)
    x = torch.ones(4, 3, dtype=torch.float64)
    wt = w.t()
    product = x @ wt
    loss = product.mean() + wt.sum()
    for node in (wt.grad_fn, product.grad_fn, loss.grad_fn.next_functions[0][0],
                 loss.grad_fn.next_functions[1][0]):
        assert type(node).exact and node._input_meta is None
    loss.backward()
    assert w.grad.shape == (2, 3) and w.grad.dtype is torch.float64
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 3), 4 / 8 + 1))


def test_scaled_sum_and_difference_gradients_keep_the_input_dtype():
    # alpha as a numpy float64 must not turn a float32 gradient into float64.
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    (x.add(y, alpha=np.float64(2.5)) + x.sub(y, alpha=np.float64(0.5))).sum().backward()
    assert y.grad.dtype is torch.float32
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_in_place_sum_counts_live_only_as_long_as_their_arrays():
    # The count of streams summed into an array in place (the `_version` its tensor
    # gets) is kept by the array's id: it must go when the array does, or a new
    # array at the same address would inherit it.
    from minigrad.autograd import graph

    before = len(graph._VERSIONS)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2 + x * 3 + x * 4).sum().backward()
    assert x.grad._version == 2
    assert len(graph._VERSIONS) == before + 1
    data = x.grad._data
    del x
    assert len(graph._VERSIONS) == before + 1  # (the array lives on in `data`)
    del data
    assert len(graph._VERSIONS) == before
    fresh = torch.tensor([1.0, 2.0], requires_grad=True)
    (fresh * 2).sum().backward()
    assert fresh.grad._version == 0


def _edges_counted_by_hand(roots):
    """Every node reachable from `roots`, with how many edges from reachable nodes
    point at it: the plain definition, by a walk that visits each node once."""
    seen, todo, counts = set(), list(roots), {}
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                counts[nxt] = counts.get(nxt, 0) + 1
                todo.append(nxt)
    return counts


def test_dependencies_count_every_edge_of_chains_branches_and_shared_roots():
    from minigrad.autograd.engine import _dependencies

    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = torch.tensor([1.5, 0.25, -0.5], requires_grad=True)
    a = (x * 2.0).sin()  # a chain
    b = a * w + a.exp()  # a diamond: `a` feeds two branches
    parts = b.unbind(0)  # one node, three outputs
    c = parts[0] * parts[2] + (x * w).sum()  # a leaf reached along several paths
    d = (c * 3.0).cos()  # a root that leads to another root (`c`)
    for roots in ([d.grad_fn], [d.grad_fn, c.grad_fn], [c.grad_fn, b.grad_fn, d.grad_fn]):
        assert _dependencies(roots) == _edges_counted_by_hand(roots)

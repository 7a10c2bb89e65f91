"""More views, in-place ops and engine rules, compared with PyTorch.

Gradients through expanded views whose base changed, the "view of a leaf" rule,
retained gradients that follow a tensor to its new `grad_fn`, copying into integer
tensors, hooks that change a gradient's type or size, views that require grad only
through their base, saved dims as PyTorch stores them, which saved tensor the
version error names, and the engine's argument errors.
"""

from __future__ import annotations

import pytest
from parity_harness import check

CASES = {}


def _program(fn):
    CASES[fn.__name__] = fn
    return fn


# -- 1. the gradient of an expanded view after its base changed ---------------------------


@_program
def expand_after_base_inplace(c):
    a = c.leaf([1.0, 2.0])
    x = c.keep(a * 1)
    e = c.keep(x.expand(3, 2))
    x.mul_(2)
    return e


@_program
def unsqueeze_expand_after_base_inplace(c):
    a = c.leaf([1.0, 2.0])
    x = c.keep(a * 1)
    e = c.keep(x[:, None].expand(2, 4))
    x.mul_(2)
    return e


@_program
def sliced_expand_after_base_inplace(c):
    a = c.leaf([[1.0, 2.0], [3.0, 4.0]])
    x = c.keep(a * 1)
    e = c.keep(x[:, 1:].expand(2, 3))
    x.mul_(2)
    return e


# -- 2. in-place on a view of a leaf ----------------------------------------------------------


def _leaf_view(c, shape=(3,)):
    n = 1
    for s in shape:
        n *= s
    return c.keep(c.m.arange(1.0, n + 1).view(*shape).requires_grad_())


@_program
def view_of_leaf_view_mul_(c):
    _leaf_view(c)[0].mul_(2)


@_program
def leaf_view_add_(c):
    _leaf_view(c).add_(1)


@_program
def leaf_view_t_zero_(c):
    _leaf_view(c).t().zero_()


@_program
def leaf_view_setitem(c):
    w = _leaf_view(c, (2, 2))
    w[0, 0] = 5.0


@_program
def leaf_view_in_no_grad(c):
    w = _leaf_view(c)
    with c.m.no_grad():
        w[0].mul_(2)
    return w * 1


# -- 3. retain_grad follows the tensor ----------------------------------------------------------


@_program
def retained_view_after_base_inplace(c):
    a = c.leaf([1.0, 2.0, 3.0])
    x = c.keep(a * 1)
    v = c.keep(x[0:2])
    v.retain_grad()
    x.mul_(2)
    v.sum().backward()
    c.run_backward = False
    return v.grad, v.retains_grad


@_program
def retained_view_after_sibling_inplace(c):
    a = c.leaf([1.0, 2.0, 3.0])
    x = c.keep(a * 1)
    v = c.keep(x[0:2])
    v.retain_grad()
    x[1:].mul_(3)
    (v * v).sum().backward()
    c.run_backward = False
    return v.grad


@_program
def retained_base_after_view_inplace(c):
    a = c.leaf([1.0, 2.0, 3.0])
    x = c.keep(a * 1)
    x.retain_grad()
    x.register_hook(lambda g: g * 10)  # stays with the old node
    x[0].mul_(5)
    x[1:].exp_()
    (x * 2).sum().backward()
    c.run_backward = False
    return x.grad


# -- 4. copy_ into an integer tensor ----------------------------------------------------------


@_program
def copy_into_int64(c):
    b = c.leaf([1.5, 2.5])
    t = c.keep(c.m.zeros(2, dtype=c.m.int64))
    t.copy_(b)
    return t


@_program
def copy_into_int64_no_grad_view(c):
    b = c.leaf([1.5, 2.5])
    t = c.keep(c.m.zeros(2, dtype=c.m.int64))
    with c.m.no_grad():
        v = c.keep(t[0:1])
    v.copy_(b[0:1])
    return t, v


@_program
def index_put_other_dtype(c):
    t = c.keep(c.m.zeros(2, dtype=c.m.int64))
    t[[0]] = c.leaf([1.5])


@_program
def index_put_float_into_double(c):
    t = c.keep(c.m.zeros(2, dtype=c.m.float64))
    t[[0]] = c.leaf([1.5], dtype="float32")


@_program
def mask_put_one_value_converts(c):
    t = c.keep(c.m.zeros(2, dtype=c.m.int64))
    t[c.m.tensor([True, False])] = c.m.tensor([1.5])
    return t


# -- 5. hooks may not change a gradient's type or size -----------------------------------


@_program
def leaf_hook_changes_type(c):
    a = c.leaf([1.0, 2.0], dtype="float32")
    a.register_hook(lambda g: g.double())
    c.run_backward = False  # (the harness's node pre-hooks would run first in minigrad)
    return _error(lambda: (a * 1).sum().backward())


@_program
def nonleaf_hook_changes_size(c):
    e = c.keep(c.leaf([1.0, 2.0]) * 2)
    e.register_hook(lambda g: g.sum())
    return e * 1


def named_hook(g):
    return g.view(2, 1)


@_program
def named_hook_changes_size(c):
    e = c.keep(c.leaf([1.0, 2.0]) * 2)
    e.register_hook(named_hook)
    return e * 1


@_program
def hook_returns_a_number(c):
    e = c.keep(c.leaf([1.0, 2.0]) * 2)
    e.register_hook(lambda g: 3)
    return e * 1


@_program
def node_prehook_changes_type(c):
    e = c.keep(c.leaf([1.0, 2.0], dtype="float32") * c.leaf([3.0, 4.0], dtype="float32"))
    e.grad_fn.register_prehook(lambda g: (g[0].double(),))
    return e


@_program
def leaf_hook_runs_before_its_accumulators_prehook(c):
    # A leaf's tensor hooks are its AccumulateGrad's tensor pre-hooks: they run
    # first, then the node's own pre-hooks: x.grad is (g + 1) * 10, not g * 10 + 1.
    x = c.leaf([1.0, 2.0])
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: g + 1)
    acc.register_prehook(lambda g: (g[0] * 10,))
    return y


@_program
def node_posthook_returns_wrong_count(c):
    e = c.keep(c.leaf([1.0, 2.0]) * 2)
    e.grad_fn.register_hook(lambda gi, go: (gi[0].sum(),))
    return e


@_program
def node_posthook_fills_a_none(c):
    e = c.keep(c.leaf([1.0, 2.0]) * 2)
    e.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    return e


@_program
def node_posthook_returns_a_tensor(c):
    e = c.keep(c.leaf([1.0, 2.0]) * c.leaf([3.0, 4.0]))
    e.grad_fn.register_hook(lambda gi, go: gi[0])
    return e


# -- 6./7. views that require grad through their base only ----------------------------


@_program
def unbind_of_plain_tensor_modified_with_grad_operand(c):
    x = c.keep(c.m.zeros(2, 2))
    u = x.unbind(0)
    u[1].add_(c.leaf([1.0, 1.0]))


@_program
def op_on_no_grad_view(c):
    x = c.keep(c.leaf([1.0, 2.0]) * 1)
    with c.m.no_grad():
        v = c.keep(x[0:1])
    return v * 3


@_program
def op_on_view_made_before_base_required_grad(c):
    x = c.keep(c.m.zeros(3))
    v = c.keep(x[1:])
    x.requires_grad_()
    return v * 2


@_program
def view_of_no_grad_view(c):
    x = c.keep(c.leaf([[1.0, 2.0], [3.0, 4.0]]) * 1)
    with c.m.no_grad():
        v = c.keep(x[1])
    w = c.keep(v[0:1])
    return w * 2


@_program
def view_of_no_grad_view_modified(c):
    x = c.keep(c.leaf([[1.0, 2.0], [3.0, 4.0]]) * 1)
    with c.m.no_grad():
        v = c.keep(x[1])
    c.keep(v[0:1]).add_(1)


@_program
def view_of_no_grad_view_after_base_modified(c):
    x = c.keep(c.leaf([[1.0, 2.0], [3.0, 4.0]]) * 1)
    with c.m.no_grad():
        v = c.keep(x[1])
    w = c.keep(v[0:1])
    x.add_(1)
    return w.grad_fn


@_program
def view_of_no_grad_view_of_leaf(c):
    a = c.leaf([[1.0, 2.0], [3.0, 4.0]])
    with c.m.no_grad():
        v = c.keep(a[1])
    return c.keep(v[0:1]) * 2


# -- 8./9. detach_ and .data = -------------------------------------------------------------


@_program
def detach_inplace_plain_view(c):
    c.keep(c.m.zeros(3)[1:]).detach_()


@_program
def detach_inplace_int_view(c):
    c.keep(c.m.arange(3)[1:]).detach_()


@_program
def data_set_to_int_on_grad_leaf(c):
    b = c.leaf([1.0, 2.0])
    b.data = c.m.tensor([1, 2])


@_program
def data_set_to_int_on_non_leaf(c):
    b = c.keep(c.leaf([1.0, 2.0]) * 2)
    b.data = c.m.tensor([1, 2])


@_program
def data_set_to_a_number(c):
    b = c.leaf([1.0, 2.0])
    b.data = 3


# -- 10. engine argument errors ---------------------------------------------------------------


@_program
def grad_with_no_inputs(c):
    a = c.leaf([1.0, 2.0])
    c.m.autograd.grad(a.sum(), [])


@_program
def backward_with_no_inputs(c):
    a = c.leaf([1.0, 2.0])
    a.sum().backward(inputs=[])


@_program
def backward_input_not_requiring_grad(c):
    a = c.leaf([1.0, 2.0])
    a.sum().backward(inputs=[c.m.zeros(2)])


@_program
def backward_non_leaf_input_retains_its_grad(c):
    a = c.leaf([1.0, 2.0])
    y = c.keep(a * 2)
    (y * 3).sum().backward(inputs=[y])
    (y * 3).sum().backward()
    c.run_backward = False
    return y.retains_grad, y.grad


@_program
def backward_more_tensors_than_gradients(c):
    a = c.leaf([1.0, 2.0])
    c.m.autograd.backward([a * a, a.sum()], [c.m.ones(2, dtype=c.m.float64)])


@_program
def grad_more_outputs_than_gradients(c):
    a = c.leaf([1.0, 2.0])
    c.m.autograd.grad([a * a, a.sum()], [a], [c.m.ones(2, dtype=c.m.float64)])


# -- 11. saved dims, as PyTorch stores them -----------------------------------------------


@_program
def saved_negative_dims(c):
    x = c.keep(c.leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]) * 1)
    return (x.permute(-1, 0), x.permute(1, -2), x.select(-1, -2), x.narrow(-1, 0, 2),
            x.narrow(1, -2, 1), x[..., -1])


@_program
def narrow_errors(c):
    x = c.keep(c.m.ones(2, 3))
    return [_error(lambda a=a: x.narrow(*a)) for a in
            [(1, -4, 1), (1, 4, 0), (1, 2, 2), (1, 0, -1)]] + [
        _error(lambda: c.m.tensor(1.0).narrow(0, 0, 1))]


def _error(fn) -> str:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - comparing whatever each library raises
        return f"{type(exc).__name__}: {exc}".replace("torch", "minigrad")
    return "no error"


# -- 12. which saved tensor the version error names --------------------------------------


def _both_saved_modified(op):
    def program(c):
        a = c.leaf([1.0, 2.0])
        x = c.keep(a.exp())
        y = c.keep(a.sin())
        z = c.keep(op(x, y))
        with c.m.no_grad():
            x.add_(1)
            y.add_(1)
        return z

    return program


CASES["version_error_mul"] = _both_saved_modified(lambda x, y: x * y)
CASES["version_error_div"] = _both_saved_modified(lambda x, y: x / y)
CASES["version_error_pow"] = _both_saved_modified(lambda x, y: x ** y)
CASES["version_error_matmul"] = _both_saved_modified(lambda x, y: x.view(1, 2) @ y.view(2, 1))


@_program
def version_error_input_before_output(c):
    a = c.leaf([1.0, 2.0])
    x = c.keep(a.exp())
    z = c.keep(x.pow(c.keep(a.sin())))
    with c.m.no_grad():
        x.add_(1)
        z.add_(1)
    return z


@_program
def version_error_unbind_outputs(c):
    u = c.keep(*(c.leaf([[1.0, 2.0], [3.0, 4.0]]) * 1).unbind(0))
    z = c.keep(u[0] * u[1])
    with c.m.no_grad():
        u[0].add_(1)
    return z


# -- 14. indexing a 0-d tensor ------------------------------------------------------------


@_program
def zero_dim_indexing_errors(c):
    t = c.keep(c.leaf(1.0) * 1)
    return [_error(lambda i=i: t[i]) for i in
            [slice(0, 1), slice(None), 0, (0,), (slice(0, 1),), (None, slice(0, 1))]]


# -- in-place view ops: the tensor itself changes shape ------------------------------------


@_program
def inplace_view_ops_chain(c):
    a = c.leaf([[1.0, 2.0, 3.0]])
    x = c.keep(a * 1)
    x.t_()
    x.transpose_(0, 1)
    x.unsqueeze_(-1)
    x.squeeze_(-1)
    x.swapdims_(0, 1)
    x.swapaxes_(0, 1)
    x.squeeze_()
    return x * c.m.tensor([1.0, 2.0, 3.0], dtype=c.m.float64)


@_program
def inplace_squeeze_of_dims(c):
    a = c.leaf([[[1.0], [2.0]]])
    x = c.keep(a * 1)
    x.squeeze_((0, -1))
    return x.exp()


@_program
def squeeze_of_dims(c):
    a = c.leaf([[[1.0], [2.0]]])
    return a.squeeze((0, -1)), a.squeeze([2]), a.squeeze(())


@_program
def inplace_view_op_on_a_view(c):
    # The view's own history grows (UnsqueezeBackward1 after SelectBackward0); the
    # base keeps its grad_fn but shares the version bump.
    a = c.leaf([[1.0, 2.0]])
    z = c.keep(a * 1)
    v = c.keep(z[0])
    v.unsqueeze_(0)
    return v * 3


@_program
def inplace_view_op_then_base_modified(c):
    a = c.leaf([[1.0, 2.0]])
    z = c.keep(a * 1)
    v = c.keep(z[0])
    v.unsqueeze_(0)
    z.mul_(2)  # v's history is now rebuilt from the base (AsStridedBackward0)
    return v * 3


@_program
def inplace_view_op_keeps_retained_grad_on_old_node(c):
    a = c.leaf([[1.0, 2.0]])
    y = c.keep(a * 1)
    y.retain_grad()
    y.t_()
    return y * c.m.tensor([[1.0], [2.0]], dtype=c.m.float64)


@_program
def inplace_view_op_on_leaf(c):
    a = c.leaf([[1.0, 2.0]])
    a.t_()


@_program
def inplace_view_op_on_view_of_leaf(c):
    a = c.leaf([[1.0, 2.0]])
    a[0].unsqueeze_(0)


@_program
def inplace_view_op_on_multi_output_view(c):
    a = c.leaf([[1.0, 2.0]])
    (row,) = (a * 1).unbind(0)
    row.unsqueeze_(0)


@_program
def inplace_view_op_without_grad(c):
    a = c.leaf([[1.0, 2.0]], requires_grad=False)
    v = c.keep(a.view(2))
    v.unsqueeze_(0)
    with c.m.no_grad():
        b = c.keep(c.leaf([[1.0, 2.0]]) * 1)
        b.t_()


@_program
def inplace_view_op_errors(c):
    c.m.ones(2, 3, 4).t_()


@_program
def inplace_transpose_out_of_range(c):
    c.m.ones(2, 3).transpose_(0, 2)


@_program
def squeeze_repeated_dim(c):
    c.m.ones(2, 1).squeeze((1, 1))


@_program
def vector_times_matrix_ends_in_squeeze_(c):
    v = c.leaf([1.0, 2.0])
    return v @ c.m.ones(2, 3, dtype=c.m.float64)


@pytest.mark.parametrize("name", list(CASES))
def test_views_more_match_torch(torch, name):
    check(torch, CASES[name])

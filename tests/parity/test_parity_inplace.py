"""In-place ops, version counters and view rules, compared with PyTorch.

Every in-place op is run on a non-leaf, on a leaf that needs no grad (with and without
a grad-requiring operand), on a leaf that requires grad (an error), and through every
kind of view; then the tensors it saved for backward are modified to trigger the
version check. `_version`, `grad_fn` (incl. CopySlices / AsStridedBackward0),
`_base` and gradients are compared by the harness.
"""

from __future__ import annotations

import pytest
from parity_harness import check

V = [1.5, -2.0, 3.0]
POS = [0.5, 2.0, 3.0]
V4 = [1.0, 2.0, 3.0, 4.0]
M22 = [[1.0, 2.0], [3.0, 4.0]]

# name -> (how to apply it to a tensor, whether it needs positive inputs)
INPLACE = {
    "add_": lambda t, c: t.add_(1),
    "add_tensor": lambda t, c: t.add_(c.leaf([0.5] * t.shape[-1], requires_grad=False)),
    "add_alpha": lambda t, c: t.add_(c.leaf([0.5] * t.shape[-1], requires_grad=False),
                                     alpha=2),
    "sub_": lambda t, c: t.sub_(1),
    "mul_": lambda t, c: t.mul_(2),
    "mul_tensor": lambda t, c: t.mul_(c.leaf([2.0] * t.shape[-1], requires_grad=False)),
    "div_": lambda t, c: t.div_(2),
    "div_tensor": lambda t, c: t.div_(c.leaf([4.0] * t.shape[-1], requires_grad=False)),
    "pow_": lambda t, c: t.pow_(2),
    "neg_": lambda t, c: t.neg_(),
    "exp_": lambda t, c: t.exp_(),
    "log_": lambda t, c: t.log_(),
    "sin_": lambda t, c: t.sin_(),
    "cos_": lambda t, c: t.cos_(),
    "tanh_": lambda t, c: t.tanh_(),
    "sigmoid_": lambda t, c: t.sigmoid_(),
    "relu_": lambda t, c: t.relu_(),
    "sqrt_": lambda t, c: t.sqrt_(),
    "abs_": lambda t, c: t.abs_(),
    "clamp_": lambda t, c: t.clamp_(0, 1),
    "clamp_min": lambda t, c: t.clamp_(min=0),
    "zero_": lambda t, c: t.zero_(),
    "fill_": lambda t, c: t.fill_(3),
    "fill_tensor": lambda t, c: t.fill_(c.m.tensor(3.0, dtype=t.dtype)),
    "copy_": lambda t, c: t.copy_(c.m.ones(t.shape, dtype=t.dtype)),
    "iadd": lambda t, c: t.__iadd__(2),
    "isub": lambda t, c: t.__isub__(2),
    "imul": lambda t, c: t.__imul__(2),
    "itruediv": lambda t, c: t.__itruediv__(2),
    "ipow": lambda t, c: t.__ipow__(2),
    "iadd_self": lambda t, c: t.__iadd__(t),
}
NEEDS_POSITIVE = {"log_", "sqrt_"}


def _values(name):
    return POS if name in NEEDS_POSITIVE else V


def _on_nonleaf(name):
    def program(c):
        a = c.leaf(_values(name))
        u = c.keep(a * 1.5)
        out = INPLACE[name](u, c)
        assert out is u
        return u

    return program


def _on_plain_leaf(name):
    def program(c):
        t = c.leaf(_values(name), requires_grad=False)
        INPLACE[name](t, c)
        return t

    return program


def _on_grad_leaf(name):
    return lambda c: INPLACE[name](c.leaf(_values(name)), c)


def _on_grad_leaf_no_grad(name):
    def program(c):
        t = c.leaf(_values(name))
        with c.m.no_grad():
            INPLACE[name](t, c)
        return t * 2

    return program


def _saved_then_modified(name):
    """Use the tensor in ops that save it (input and output), then modify it."""

    def program(c):
        a = c.leaf(_values(name))
        u = c.keep(a * 1.0)
        y = c.keep(u * u)  # saves u as input
        e = c.keep(u.exp())  # saves its output, not u
        INPLACE[name](u, c)
        return y, e, u

    return program


def _output_saved_then_modified(name):
    """Modify the output that a node saved (exp, sigmoid, ... save their result)."""

    def program(c):
        a = c.leaf(_values(name))
        y = c.keep(a.exp())
        INPLACE[name](y, c)
        return y

    return program


def _through_view(name, view):
    def program(c):
        a = c.leaf(M22)
        u = c.keep(a * 2)
        v = c.keep(VIEW_KINDS[view](u))
        INPLACE[name](v, c)
        return u, v

    return program


VIEW_KINDS = {
    "select": lambda u: u[0],
    "slice": lambda u: u[1:],
    "view": lambda u: u.view(4),
    "transpose": lambda u: u.transpose(0, 1),
    "unsqueeze": lambda u: u.unsqueeze(0),
    "view-of-view": lambda u: u.view(4)[1:],
    "ellipsis": lambda u: u[...],
    "step": lambda u: u.view(4)[::2],
}

CASES = {}
for _name in INPLACE:
    CASES[f"nonleaf:{_name}"] = _on_nonleaf(_name)
    CASES[f"plain-leaf:{_name}"] = _on_plain_leaf(_name)
    CASES[f"grad-leaf:{_name}"] = _on_grad_leaf(_name)
    CASES[f"grad-leaf-no-grad:{_name}"] = _on_grad_leaf_no_grad(_name)
    CASES[f"saved-input:{_name}"] = _saved_then_modified(_name)
    CASES[f"saved-output:{_name}"] = _output_saved_then_modified(_name)
for _name in ["add_", "mul_", "mul_tensor", "div_", "pow_", "exp_", "sigmoid_", "zero_",
              "fill_", "copy_", "clamp_", "neg_", "relu_"]:
    for _view in VIEW_KINDS:
        CASES[f"view-{_view}:{_name}"] = _through_view(_name, _view)


def _program(fn):
    CASES[f"rule:{fn.__name__}"] = fn
    return fn


# -- setitem ------------------------------------------------------------------------------

SETITEM = {
    "int": lambda t, c: t.__setitem__(0, 5.0),
    "neg-int": lambda t, c: t.__setitem__(-1, 5.0),
    "slice": lambda t, c: t.__setitem__(slice(1, 3), 0.0),
    "step": lambda t, c: t.__setitem__(slice(None, None, 2), 7.0),
    "mask": lambda t, c: t.__setitem__(t > 2, 0.0),
    "mask-all-false": lambda t, c: t.__setitem__(t > 100, 0.0),
    "list": lambda t, c: t.__setitem__([0, 2], 0.0),
    "tensor-index": lambda t, c: t.__setitem__(c.m.tensor([1, 3]), 9.0),
    "0d-value": lambda t, c: t.__setitem__(0, c.m.tensor(5.0, dtype=t.dtype)),
    "slice-tensor-value": lambda t, c: t.__setitem__(
        slice(1, 3), c.m.tensor([8.0, 9.0], dtype=t.dtype)),
    "colon-tensor": lambda t, c: t.__setitem__(slice(None), c.m.tensor(V4, dtype=t.dtype)),
    "colon-number": lambda t, c: t.__setitem__(slice(None), 5.0),
    # A slice reaching past the end takes the whole dim: PyTorch writes into t itself.
    "whole-slice-number": lambda t, c: t.__setitem__(slice(0, 10), 5.0),
    "ellipsis-slice": lambda t, c: t.__setitem__((Ellipsis, slice(0, 1)), 5.0),
    "ellipsis-number": lambda t, c: t.__setitem__(Ellipsis, 0.0),
    "ellipsis-tensor": lambda t, c: t.__setitem__(Ellipsis, c.m.tensor(V4, dtype=t.dtype)),
    "slice-0-1": lambda t, c: t.__setitem__(slice(0, 1), 5.0),
    "shape-mismatch": lambda t, c: t.__setitem__(
        slice(0, 2), c.m.tensor([1.0, 2.0, 3.0], dtype=t.dtype)),
    "grad-value": lambda t, c: t.__setitem__(slice(1, 3), c.leaf([8.0, 9.0])),
    "grad-value-mask": lambda t, c: t.__setitem__(t > 2, c.leaf(7.0)),
    "grad-value-broadcast": lambda t, c: t.__setitem__(slice(0, 2), c.leaf(7.0)),
}


def _setitem_nonleaf(name):
    def program(c):
        a = c.leaf(V4)
        u = c.keep(a * 2)
        SETITEM[name](u, c)
        return u

    return program


def _setitem_plain_leaf(name):
    def program(c):
        t = c.leaf(V4, requires_grad=False)
        SETITEM[name](t, c)
        return t

    return program


for _name in SETITEM:
    CASES[f"setitem-nonleaf:{_name}"] = _setitem_nonleaf(_name)
    CASES[f"setitem-plain-leaf:{_name}"] = _setitem_plain_leaf(_name)
    CASES[f"setitem-grad-leaf:{_name}"] = lambda c, n=_name: SETITEM[n](c.leaf(V4), c)


# -- rules ----------------------------------------------------------------------------------


@_program
def base_modified_after_view(c):
    a = c.leaf(V)
    u = c.keep(2 * a)
    v = c.keep(u[1:])
    u.mul_(2)
    return v


@_program
def base_modified_after_view_then_view_used(c):
    a = c.leaf(V)
    u = c.keep(2 * a)
    v = c.keep(u[1:])
    w = c.keep(v * v)
    u.mul_(2)
    return w


@_program
def view_of_plain_leaf_inplace_with_grad_operand(c):
    x = c.leaf([0.0, 0.0, 0.0], requires_grad=False)
    w = c.leaf([1.0, 2.0])
    y = c.keep(x[1:])
    y.add_(w)
    return x, y


@_program
def plain_leaf_setitem_grad_value(c):
    x = c.leaf([0.0, 0.0, 0.0], requires_grad=False)
    x[0] = c.leaf(5.0)
    return x


@_program
def plain_leaf_copy_grad_source(c):
    x = c.leaf([0.0, 0.0, 0.0], requires_grad=False)
    x.copy_(c.leaf([1.0, 2.0, 3.0]))
    return x


@_program
def plain_leaf_iadd_grad(c):
    x = c.leaf([0.0, 0.0, 0.0], requires_grad=False)
    x += c.leaf([1.0, 2.0, 3.0])
    return x


@_program
def two_inplace_ops(c):
    u = c.keep(c.leaf(V) * 1)
    u.add_(1)
    u.mul_(u.detach())
    return u


@_program
def unbind_output_inplace(c):
    a, _ = c.keep(*(c.leaf(M22) * 1).unbind())
    a.add_(1)
    return a


@_program
def unbind_output_of_leaf_inplace(c):
    a, _ = c.keep(*c.leaf(M22).unbind())
    a.mul_(2)
    return a


@_program
def split_output_inplace(c):
    a, _ = c.keep(*(c.leaf(M22) * 1).split(1))
    a.add_(1)
    return a


@_program
def chunk_output_setitem(c):
    a, _ = c.keep(*(c.leaf(M22) * 1).chunk(2))
    a[0] = 5.0
    return a


@_program
def unbind_output_of_plain_tensor_inplace(c):
    x = c.leaf(M22, requires_grad=False)
    a, b = x.unbind()
    a.add_(1)
    return x


@_program
def unbind_output_inplace_under_no_grad(c):
    a, b = (c.leaf(M22) * 1).unbind()
    with c.m.no_grad():
        a.add_(1)
    return a


@_program
def unbind_saved_then_base_modified(c):
    u = c.keep(c.leaf(M22) * 1)
    x, _ = u.unbind()
    z = c.keep(x * x)
    with c.m.no_grad():
        u.add_(1)
    return z


@_program
def unbind_used_by_exp_then_base_modified(c):
    u = c.keep(c.leaf(M22) * 1)
    x, _ = u.unbind()
    z = c.keep(x.exp())
    with c.m.no_grad():
        u.add_(1)
    return z


@_program
def no_grad_view_modified_with_grad(c):
    u = c.keep(c.leaf(V) * 1)
    with c.m.no_grad():
        v = c.keep(u[1:])
    v.mul_(2)
    return v


@_program
def no_grad_view_of_leaf_modified_with_grad(c):
    a = c.leaf(V)
    with c.m.no_grad():
        v = c.keep(a[1:])
    v.mul_(2)
    return v


@_program
def no_grad_view_modified_in_no_grad_then_used(c):
    u = c.keep(c.leaf(V) * 1)
    with c.m.no_grad():
        v = c.keep(u[1:])
        v.mul_(2)
    return v * 2


@_program
def no_grad_view_attributes(c):
    a = c.leaf(V)
    with c.m.no_grad():
        v = c.keep(a[1:])
        w = c.keep((a * 2)[1:])
    return v, w


@_program
def inplace_on_detach_of_saved_leaf(c):
    a = c.leaf(V)
    y = c.keep(a * a)
    a.detach().zero_()
    return y


@_program
def inplace_on_detach_unsaved(c):
    a = c.leaf(V)
    y = c.keep(a * 2)
    d = c.keep(a.detach())
    d.add_(1)
    return y, d


@_program
def inplace_on_data_is_invisible(c):
    a = c.leaf(V)
    y = c.keep(a * a)
    d = c.keep(a.data)
    d.add_(1)
    return y, d


@_program
def detach_of_exp_output_zeroed(c):
    e = c.keep(c.leaf(V).exp())
    e.detach().zero_()
    return e


@_program
def clone_does_not_share_version(c):
    u = c.keep(c.leaf(V) * 1)
    k = c.keep(u.clone())
    k.add_(1)
    return u, k


@_program
def advanced_index_does_not_share_version(c):
    x = c.leaf(V4, requires_grad=False)
    y = c.keep(x[[0, 1]])
    x.add_(1)
    y.add_(1)
    return x, y


@_program
def expand_then_inplace(c):
    x = c.leaf([[1.0, 2.0]], requires_grad=False)
    e = c.keep(x.expand(3, 2))
    e.add_(1)
    return e


@_program
def views_share_version(c):
    x = c.leaf(M22, requires_grad=False)
    views = c.keep(x[0], x[1:], x.view(4), x.t(), x.unsqueeze(0), x.reshape(4), x[...],
                   x.flatten(), x.contiguous(), x.detach())
    x.add_(1)
    x.mul_(2)
    return views


@_program
def leaf_requires_grad_no_version_bump(c):
    x = c.leaf(V, requires_grad=False)
    x.requires_grad_()
    return x * 2


@_program
def inplace_dtype_error(c):
    t = c.keep(c.m.tensor([1, 2]))
    t += 1.5
    return t


@_program
def inplace_div_int_error(c):
    t = c.keep(c.m.tensor([1, 2]))
    t /= 2
    return t


@_program
def inplace_mul_int_by_float_error(c):
    t = c.keep(c.m.tensor([1, 2]))
    t *= 2.0
    return t


@_program
def inplace_broadcast_error(c):
    return c.leaf(V, requires_grad=False).add_(c.m.ones(2, 3, dtype=c.m.float64))


@_program
def inplace_broadcast_ok(c):
    t = c.leaf([[1.0, 2.0], [3.0, 4.0]], requires_grad=False)
    t.add_(c.leaf([1.0, 2.0]))
    return t


@_program
def inplace_int_tensor(c):
    t = c.keep(c.m.tensor([1, 2]))
    t += 3
    t *= 2
    return t


@_program
def saved_view_base_modified_no_grad(c):
    u = c.keep(c.leaf(V) * 1)
    v = c.keep(u[1:])
    y = c.keep(v * v)
    with c.m.no_grad():
        u.add_(1)
    return y


@_program
def saved_view_base_modified_with_grad(c):
    u = c.keep(c.leaf(V) * 1)
    v = c.keep(u[1:])
    y = c.keep(v * v)
    u.add_(1)
    return y


@_program
def saved_select_view_modified(c):
    u = c.keep(c.leaf(M22) * 1)
    v = c.keep(u[0])
    y = c.keep(v * v)
    with c.m.no_grad():
        v.add_(1)
    return y


@_program
def saved_alias_view_modified(c):
    u = c.keep(c.leaf(V) * 1)
    v = c.keep(u[...])
    y = c.keep(v * v)
    with c.m.no_grad():
        u.add_(1)
    return y


@_program
def copy_slices_output_saved(c):
    t = c.leaf(V, "float32")
    u = c.keep(2 * t)
    u[0] = 666
    y = c.keep(u * u)
    u[1] = 5
    return y


@_program
def setitem_on_saved_input(c):
    u = c.keep(c.leaf(V, "float32") * 1)
    y = c.keep(u * u)
    u[0] = 5
    return y


@_program
def twice_bumped_2d_leaf(c):
    t = c.leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")
    y = c.keep(t.sin())
    with c.m.no_grad():
        t.add_(1)
        t.mul_(2)
    return y


@_program
def saved_0d_leaf_modified(c):
    t = c.leaf(2.0, "float32")
    y = c.keep(t * t)
    with c.m.no_grad():
        t.add_(1)
    return y


@_program
def saved_result_of_sum1_modified(c):
    y = c.keep(c.leaf([[1.0, 2.0]]).sum(1))
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_pow1_modified(c):
    x = c.leaf(POS)
    y = c.keep(x**x)
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_pow2_modified(c):
    y = c.keep(2 ** c.leaf(V))
    with c.m.no_grad():
        y.add_(1)
    return y


@_program
def saved_result_of_rsub_modified(c):
    y = c.keep(1 - c.leaf(V))
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_mm_modified(c):
    y = c.keep(c.leaf(M22) @ c.leaf(M22))
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_clone_modified(c):
    y = c.keep(c.leaf(V).clone())
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_copy_modified(c):
    y = c.keep(c.leaf(V) * 1)
    y.copy_(c.leaf(V))
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_index_put_modified(c):
    y = c.keep(c.leaf(V) * 1)
    y[[0]] = 2.0
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_result_of_to_copy_modified(c):
    y = c.keep(c.leaf(V, "float32").double())
    z = c.keep(y * y)
    with c.m.no_grad():
        y.add_(1)
    return z


@_program
def saved_grad_free_int_index_modified(c):
    x = c.leaf(V4)
    i = c.keep(c.m.tensor([0, 2]))
    y = c.keep(x[i])
    i.add_(1)
    return y


@_program
def sigmoid_output_mul_(c):
    y = c.keep(c.leaf(V).sigmoid())
    y.mul_(3)
    return y


@_program
def relu_output_modified(c):
    y = c.keep(c.leaf(V).relu())
    y.add_(1)
    return y


@_program
def mul_nonleaf_twice_reassign(c):
    # forum: `x = a * b; x = x * c` (reassignment) versus `x.mul_(c)` below
    a, b, k = c.leaf(V), c.leaf(POS), c.leaf([2.0, 3.0, 4.0])
    x = a * b
    x = x * k
    return x


@_program
def mul_nonleaf_then_mul_(c):
    a, b, k = c.leaf(V), c.leaf(POS), c.leaf([2.0, 3.0, 4.0])
    x = c.keep(a * b)
    x.mul_(k)
    return x


@_program
def add_nonleaf_then_add_(c):
    # add saves nothing: the in-place version differentiates fine
    a, b, k = c.leaf(V), c.leaf(POS), c.leaf([2.0, 3.0, 4.0])
    x = c.keep(a + b)
    x.add_(k)
    return x


@_program
def exp_then_mul_(c):
    a = c.leaf(V)
    y = c.keep(a.exp())
    y.mul_(2)
    return y


@_program
def inplace_chain_on_view_of_view(c):
    a = c.leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    u = c.keep(a * 1)
    v = c.keep(u[1])
    w = c.keep(v[1:])
    w.mul_(2)
    v.add_(1)
    return u, v, w


@_program
def inplace_on_view_then_base_used(c):
    a = c.leaf(V4)
    u = c.keep(a.exp())
    u[1:3].mul_(2)
    return u.sum()


@_program
def setitem_2d_row_with_grad_value(c):
    a = c.leaf([[1.0, 2.0], [3.0, 4.0]])
    w = c.leaf([5.0, 6.0])
    u = c.keep(a * 1)
    u[1] = w * 2
    return u


@_program
def setitem_column(c):
    u = c.keep(c.leaf([[1.0, 2.0], [3.0, 4.0]]) * 1)
    u[:, 0] = 0.0
    return u


@_program
def setitem_mask_2d(c):
    u = c.keep(c.leaf([[1.0, 2.0], [3.0, 4.0]]) * 1)
    u[u > 2] = 0.0
    return u


@_program
def data_assignment(c):
    x = c.leaf(V)
    with c.m.no_grad():
        x.mul_(2)
    x.data = c.m.tensor([5.0, 6.0, 7.0], dtype=c.m.float64)
    return x * 1


@_program
def optimizer_style_update(c):
    p = c.leaf(V)
    (p * p).sum().backward()
    with c.m.no_grad():
        p -= 0.1 * p.grad
    p.data.sub_(p.grad)
    return p * 1


@pytest.mark.parametrize("name", list(CASES))
def test_inplace_matches_torch(torch, name):
    check(torch, CASES[name])


# Programs whose gradient streams meet at a leaf (or pass through it), and whether
# PyTorch's input buffer adds them up in place, which shows as `x.grad._version`.
# `x` is a 2x2 leaf unless the name ends in "1d".
GRAD_STREAMS = {
    "mul twice": lambda x, m: x * 2 + x * 3,
    "four streams": lambda x, m: x * 2 + x * 3 + x * 4 + x * 5,
    "x * x": lambda x, m: x * x,
    "x * x 1d": lambda x, m: x * x,
    "x * x * x": lambda x, m: x * x * x,
    "x + x (one array twice)": lambda x, m: x + x,
    # The formula hands on its incoming gradient itself (sub's first output): the
    # second stream is added into it in place.
    "x - x, then exp": lambda x, m: (x - x).exp(),
    "x - 2x, then abs": lambda x, m: (x - x * 2).abs(),
    "x + x + x": lambda x, m: x + x + x,
    "x - x": lambda x, m: x - x,
    "sin + cos": lambda x, m: x.sin() + x.cos(),
    "relu + tanh": lambda x, m: x.relu() + x.tanh(),
    "div and mul": lambda x, m: x / 3 + x * 3,
    "powers": lambda x, m: x**2 + x**3,
    "through add": lambda x, m: (x + 0).sin() + (x + 0).cos(),
    "x @ x": lambda x, m: x @ x,
    "x @ x.t()": lambda x, m: x @ x.t(),
    "x.exp() @ x.t()": lambda x, m: x.exp() @ x.t(),
    "x.t() @ x.exp()": lambda x, m: x.t() @ x.exp(),
    "t path first": lambda x, m: x.exp() + x.t().sin(),
    "t path last": lambda x, m: x.t().sin() + x.exp(),
    "t.t path first": lambda x, m: x.exp() + x.t().t(),
    "t.t path last": lambda x, m: x.t().t() + x.exp(),
    "summed over leading dims first": lambda x, m: x.exp() + x * m.ones(3, 1, 2),
    "summed over leading dims last": lambda x, m: x * m.ones(3, 1, 2) + x.exp(),
    "sums along dims": lambda x, m: x.sum(0) * x.sum(1),
    "mean + sum": lambda x, m: x.mean() + x.sum(),
    "views": lambda x, m: x.view(4).exp() + x.reshape(4).sin(),
    "unsqueeze": lambda x, m: x.unsqueeze(0).exp() + x.exp(),
    "linear": lambda x, m: m.nn.functional.linear(x, x, x[0]),
    # One stream that PyTorch cannot keep as `.grad` (a spread-out sum gradient): it
    # copies it into a new tensor with `copy_`, an in-place op, so version 1.
    "the leaf itself": lambda x, m: x,
    "plus a number": lambda x, m: x + 1,
    "expanded": lambda x, m: x.expand(3, 2, 2),
    "exp through a transpose": lambda x, m: x.t().exp(),
}


def _grad_version(m, program: str, how: str):
    x = m.tensor([1.0, 2.0] if program.endswith("1d") else M22, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g._version))
    out = GRAD_STREAMS[program](x, m).sum()
    if how == "backward":
        out.backward()
        return x.grad._version, seen
    if how == "traced backward (the stepper's)":
        if m.__name__ == "minigrad":
            from minigrad.autograd import backward_events

            list(backward_events(out, trace=True))
        else:
            out.backward()
        return x.grad._version, seen
    if how == "backward twice":
        out.backward(retain_graph=True)
        out.backward()
        return x.grad._version, seen
    if how == "backward(inputs=)":
        out.backward(inputs=[x])
        return x.grad._version, seen
    return m.autograd.grad(out, x)[0]._version, seen


@pytest.mark.parametrize("how", ["backward", "backward twice", "backward(inputs=)",
                                 "autograd.grad", "traced backward (the stepper's)"])
@pytest.mark.parametrize("program", list(GRAD_STREAMS))
def test_gradient_versions_show_in_place_sums_as_in_pytorch(torch, program, how):
    # The version of the gradient a leaf's hook sees and of the `.grad` (or returned
    # gradient) it becomes: each stream added in place counts, views never take one.
    # (A traced run's events hold copies, so it decides as an untraced run does.)
    import minigrad

    assert _grad_version(minigrad, program, how) == _grad_version(torch, program, how)


def test_gradient_version_of_a_retained_non_leaf_gradient(torch):
    import minigrad

    def versions(m):
        x = m.tensor(V, requires_grad=True)
        y = x * 1
        y.retain_grad()
        (y * 2 + y * 3).sum().backward()
        return y.grad._version, x.grad._version

    assert versions(minigrad) == versions(torch)


def _first_grad_versions(m) -> list:
    """`.grad._version` where PyTorch copies the incoming gradient instead of keeping
    it: one array for two leaves, the caller's gradient, a hook's result kept."""
    out = []
    a, b = m.tensor(V, requires_grad=True), m.tensor(V, requires_grad=True)
    (a + b).sum().backward()
    out.append((a.grad._version, b.grad._version))
    a = m.tensor(V, requires_grad=True)
    a.backward(m.tensor([1.0, 1.0, 1.0]))
    out.append(a.grad._version)
    a = m.tensor(V, requires_grad=True)
    (a * 1).backward(m.tensor([1.0, 1.0, 1.0]))
    out.append(a.grad._version)
    kept = []
    a = m.tensor(V, requires_grad=True)
    a.register_hook(lambda g: kept.append(g) or g)
    (a * 2).sum().backward()
    out.append(a.grad._version)
    a = m.tensor(V, requires_grad=True)
    a.register_hook(lambda g: g * 1)
    (a * 2).sum().backward()
    out.append(a.grad._version)
    return out


def test_first_grad_versions_when_the_gradient_is_copied(torch):
    import minigrad

    assert _first_grad_versions(minigrad) == _first_grad_versions(torch)


# Gradients that PyTorch's formulas build with in-place writes, which their versions
# count: CopySlices copies the gradient into a new tensor and then the region's
# gradient into it (2); a gradient summed down to a 0-d input is a new tensor
# (`sum()`), so a later stream is added into it in place.
def _through_copy_slices(m):
    x = m.tensor([0.5, -1.0, 1.2], dtype=m.float64, requires_grad=True)
    c = x - x
    c[0] = 0.5
    return x, c.sum()


def _summed_to_zero_dim(m):
    x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
    a = x.abs()
    a.add_(0.5)
    return x, (a.unsqueeze(0) + x).sum()


def _zero_dim(program):
    def run(m):
        x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
        return x, program(m, x)
    return run


def _summed_keeping_dims(m):
    # (2, 3) summed down to (1, 3): PyTorch's sum keeps the dim, no view is made.
    x = m.tensor([[0.5, -1.0, 1.2], [0.3, 0.9, -0.4]], dtype=m.float64, requires_grad=True)
    z = m.tensor([[0.2, -0.6, 1.1]], dtype=m.float64, requires_grad=True)
    s = x + z
    return z, (z / (s * s + 1)).sum()


BUILT_IN_PLACE = {
    "CopySlices' result": _through_copy_slices,
    "a sum down to a 0-d input": _summed_to_zero_dim,
    "a sum down to a size-1 dim": _summed_keeping_dims,
    # 0-d gradients: numpy's arithmetic on 0-d arrays gives numbers, formulas must not
    "0-d: abs(x) - x": _zero_dim(lambda m, x: x.abs() - x),
    "0-d: -x + abs(x)": _zero_dim(lambda m, x: -x + x.abs()),
    "0-d: 2 - x, times exp": _zero_dim(lambda m, x: (2 - x) * x.exp()),
    "0-d: reciprocal plus abs": _zero_dim(lambda m, x: x.reciprocal() + x.abs()),
    "0-d: mse_loss both ways": _zero_dim(
        lambda m, x: m.nn.functional.mse_loss(x.exp(), x) + x.abs()),
}


@pytest.mark.parametrize("program", list(BUILT_IN_PLACE))
def test_gradients_built_in_place_count_their_writes_as_in_pytorch(torch, program):
    import minigrad

    def versions(m):
        x, loss = BUILT_IN_PLACE[program](m)
        seen = []
        for keep in (True, False):
            loss.backward(retain_graph=keep)
            seen.append((x.grad._version, x.grad.tolist()))
        return seen

    assert versions(minigrad) == versions(torch)


# A view whose base was modified in place differentiates through AsStridedBackward0,
# whose gradient PyTorch writes once into zeros and hands on as a view of them (so a
# later stream is never added into it in place). Seen where it arrives: the base's
# in-place node.
AS_STRIDED_STREAMS = {
    "the view only": lambda a, v: v.exp().sum(),
    "the view and the base": lambda a, v: v.exp().sum() + a.sum(),
    "the base, then the view": lambda a, v: a.exp().sum() + v.sin().sum(),
    "the view twice": lambda a, v: v.exp().sum() + v.sin().sum(),
}


@pytest.mark.parametrize("program", list(AS_STRIDED_STREAMS))
def test_as_strided_gradients_versions_as_in_pytorch(torch, program):
    import minigrad

    def seen(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1
        v = a[1:]
        a.mul_(2)
        versions = []
        a.grad_fn.register_prehook(lambda grads: versions.append(grads[0]._version))
        AS_STRIDED_STREAMS[program](a, v).backward()
        return versions, x.grad.tolist()

    assert seen(minigrad) == seen(torch)


# backward(gradient=g): where a leaf's gradient is a view of g's memory (cat's and
# stack's backward slice g, view's reshapes it) PyTorch keeps that view as the leaf's
# `.grad`, so a later backward adds into g's memory in place and bumps g's version
# (the views share its counter), and writing into g changes `.grad`. minigrad had kept
# values right for 0-d leaves but never bumped g's version, and had copied the larger
# views (g stayed unchanged).
GIVEN_GRADIENT_VIEWS = {
    "cat of 0-d views": lambda m, a, b, c: m.cat([a.view(1), c.view(1)]),
    "stack of 0-d": lambda m, a, b, c: m.stack([a, c]),
    "view of a 0-d": lambda m, a, b, c: a.view(1, 1),
    "cat of a 0-d view and a vector": lambda m, a, b, c: m.cat([a.view(1), b]),
    "view of a vector": lambda m, a, b, c: b.view(2, 1),
    "stack with a sum": lambda m, a, b, c: m.stack([a, b.sum()]),
}


@pytest.mark.parametrize("program", list(GIVEN_GRADIENT_VIEWS))
def test_given_gradient_viewed_by_grad_counts_in_place_adds(torch, program):
    import minigrad

    def run(m):
        leaves = (m.tensor(1.0, requires_grad=True), m.tensor([2.0, 3.0], requires_grad=True),
                  m.tensor(4.0, requires_grad=True))
        y = GIVEN_GRADIENT_VIEWS[program](m, *leaves)
        g = m.ones(y.shape) * 10
        y.backward(g, retain_graph=True)
        first = g._version, [t.grad._version for t in leaves if t.grad is not None]
        y.backward(g)
        g.add_(1)
        grads = [None if t.grad is None else (t.grad.tolist(), t.grad._version)
                 for t in leaves]
        return first, g._version, g.tolist(), grads

    assert run(minigrad) == run(torch)

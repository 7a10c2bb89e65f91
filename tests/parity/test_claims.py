"""What the course says PyTorch does, run on PyTorch.

Each entry is one sentence of a lesson (or of a text the widgets print, or of
docs/instructor.md) that states what PyTorch does and that no cell of the lesson runs
on PyTorch itself: where it is said, the claim, a snippet and what the snippet must
give. The snippet gets the library as its argument and runs on the real PyTorch 2.13.0
(the `torch` fixture) and on minigrad, so a claim that stops being true (or a minigrad
that stops agreeing with it) fails the build. Messages are compared with the library's
name replaced by "torch".
"""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Claim:
    where: str  # "lesson 7, cell 23" or a file
    text: str  # what the course says
    run: Callable[[Any], Any]  # the snippet, given the library
    expected: Any
    torch_only: bool = False  # what PyTorch does that minigrad does not copy

def _error(fn: Callable[[], Any]) -> str | None:
    """'Type: message' of what `fn` raises (library name as torch), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as exc:  # noqa: BLE001 - the claim is about which error
        return f"{type(exc).__name__}: {str(exc).replace('minigrad', 'torch')}"
    return None


def _first_line(message: str | None) -> str | None:
    return None if message is None else message.split(" Hint:")[0]


def _name(node) -> str | None:
    return None if node is None else type(node).__name__


def _names_below(node) -> list[str]:
    """Node names reached from `node`, depth first, each once."""
    seen, out, stack = set(), [], [node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(_name(n))
        stack.extend(nxt for nxt, _ in reversed(n.next_functions))
    return out


# -- the snippets --------------------------------------------------------------------------


def _leaf_kinds(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = t.ones(2) * 3  # an op result that does not require grad
    c = a * 2
    return [a.is_leaf, b.is_leaf, b.grad_fn is None, c.is_leaf]


def _vjp_is_weighted_sum(t):
    grads = []
    for weighted in (False, True):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = t.tensor([3.0, 4.0])
        c = a * b
        v = t.tensor([1.0, 10.0])
        if weighted:
            (c * v).sum().backward()
        else:
            c.backward(gradient=v)
        grads.append(a.grad.tolist())
    return grads[0] == grads[1] == [3.0, 40.0]


def _non_scalar_backward(t):
    return _error(lambda: (t.ones(2, requires_grad=True) * 2).backward())


def _accumulates_across_calls(t):
    w = t.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    (w * 3).sum().backward()
    first = w.grad.tolist()
    w.grad = None
    (w * 3).sum().backward()
    return [first, w.grad.tolist()]


def _leaf_used_twice_runs_once(t):
    """One graph: the two streams are summed first; AccumulateGrad's pre-hook fires once."""
    x = t.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 2 + x * 3).sum()
    acc = loss.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    seen = []
    acc.register_prehook(lambda grads: seen.append(grads[0].tolist()))
    loss.backward()
    return [_name(acc), seen, x.grad.tolist()]


def _grad_version_after_two_streams(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    (x * 2 + x * 3).sum().backward()
    w = t.tensor([1.0, 2.0], requires_grad=True)
    (w * 5).sum().backward()
    return [x.grad._version, w.grad._version]


def _non_leaf_grad_warns(t):
    a = t.tensor([1.0], requires_grad=True)
    c = a * 2
    c.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = c.grad
    return [grad, any("is not a leaf Tensor is being accessed" in str(w.message)
                      for w in caught)]


def _mul_saves_only_what_is_needed(t):
    a = t.tensor([2.0, 3.0], requires_grad=True)
    b = t.tensor([4.0, 5.0])
    c = a * b
    return [c.grad_fn._saved_other is b, c.grad_fn._saved_self is None,
            [(_name(n), i) for n, i in c.grad_fn.next_functions]]


def _broadcast_grad_shapes(t):
    a = t.ones(3, 1, requires_grad=True)
    b = t.ones(4, requires_grad=True)
    (a + b).sum().backward()
    return [tuple(a.grad.shape), tuple(b.grad.shape), a.grad.tolist(), b.grad.tolist()]


def _reassignment_saves_old_x(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = t.tensor([3.0, 4.0], requires_grad=True)
    c = t.tensor([5.0, 6.0], requires_grad=True)
    x = a * b
    old = x
    x = x * c
    return [x.grad_fn._saved_self is old, x.grad_fn._saved_other is c]


def _retain_grad_and_autograd_grad(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    x1 = a * 3
    x1.retain_grad()
    (x1 * x1).sum().backward()
    kept = x1.grad.tolist()
    b = t.tensor([1.0, 2.0], requires_grad=True)
    y1 = b * 3
    (g,) = t.autograd.grad((y1 * y1).sum(), [y1])
    return [kept, g.tolist(), b.grad]


def _hook_replaces_gradient(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    x1 = a * 1
    seen = []

    def hook(grad):
        seen.append(grad.tolist())
        return grad * 10

    x1.register_hook(hook)
    (x1 * 2).sum().backward()
    return [seen, a.grad.tolist()]


def _inplace_mul_rebases_and_copies(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = t.tensor([3.0, 4.0], requires_grad=True)
    c = t.tensor([5.0, 6.0], requires_grad=True)
    x = a * b
    first = x.grad_fn
    x.mul_(c)
    inner = x.grad_fn.next_functions[0][0]
    return [x._version, _name(x.grad_fn), inner is first, x.grad_fn._saved_self.tolist(),
            x.tolist(), _error(lambda: x.sum().backward())]


def _backward_twice(build):
    def run(t):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        y = build(a)
        y.backward()
        return _first_line(_error(y.backward))

    return run


_SECOND_TIME = ("RuntimeError: Trying to backward through the graph a second time (or "
                "directly access saved tensors after they have already been freed). Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved tensors after "
                "calling backward.")


def _what_backward_frees(t):
    tt = t.eye(2, requires_grad=True)
    a = t.ones(2, requires_grad=True)
    y = tt @ a
    (y * y).sum().backward()
    return [y.tolist(), [(_name(n), i) for n, i in y.grad_fn.next_functions],
            _error(lambda: y.grad_fn._saved_self) is not None]


def _mul_by_number_saves_wrapped(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    saved = y.grad_fn._saved_other
    return [_name(y.grad_fn), saved.tolist(), str(saved.dtype).replace("minigrad", "torch"),
            y.grad_fn._saved_self is None]


def _saves(op):
    """Which change breaks backward: 'input', 'output', 'both' or 'neither'."""
    def run(t):
        broken = []
        for change_output in (False, True):
            x = t.arange(3.0, requires_grad=True)
            u = 2 * x
            out = op(u)
            loss = out.sum()
            (out if change_output else u)[0] = 666
            broken.append(_error(loss.backward) is not None)
        return {(True, True): "both", (True, False): "input", (False, True): "output",
                (False, False): "neither"}[tuple(broken)]

    return run


def _version_counts(t):
    x = t.zeros(3)
    steps = []
    for write in (lambda: x.add_(1), lambda: x.__setitem__(0, 5.0), lambda: x.mul_(2)):
        write()
        steps.append(x._version)
    y = t.zeros(3)
    y += 1
    return [steps, y._version]


def _transpose_inplace(t):
    m = t.ones(2, 3, requires_grad=True) * 1
    v0 = m._version
    m.t_()
    n = t.ones(2, 3) * 1
    n0 = n
    n = n.t()
    return [m._version - v0, _name(m.grad_fn), n0._version]


def _exp_error_message(t):
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y += 1
    return _first_line(_error(lambda: y.sum().backward()))


def _copyslices_message(t):
    x = t.arange(3.0, requires_grad=True)
    u = 2 * x
    loss = (u ** 2).sum()
    u[0] = 666
    return [_name(u.grad_fn), _first_line(_error(loss.backward))]


def _views_share_counter(t):
    base = t.zeros(4)
    views = [base[1:], base.view(2, 2), base.unsqueeze(0).t(), base.detach()]
    copy = base.clone()
    counts = []
    for v in views:
        before = base._version
        v.mul_(1)
        counts.append(base._version - before)
    return [counts, copy._version]


def _anomaly_names_node(t):
    x = t.arange(3.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with t.autograd.detect_anomaly():
            u = 2 * x
            loss = (u ** 2).sum()
            u[0] = 666
            try:
                loss.backward()
            except RuntimeError:
                pass
    return any("Error detected in PowBackward0" in str(w.message) for w in caught)


def _unbind_outputs(t):
    a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b, c, d = a.unbind()
    e = b * c * d
    return [[b.output_nr, c.output_nr, d.output_nr], b.grad_fn is c.grad_fn,
            [(_name(n), i) for n, i in e.grad_fn.next_functions]]


def _unbind_order_and_slots(t):
    """A pre-hook on UnbindBackward0 sees each slot; AccumulateGrad runs after it."""
    a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b, c, d = a.unbind()
    loss = b * c  # d is never used
    unbind = b.grad_fn
    acc = unbind.next_functions[0][0]
    order, slots = [], []

    def pre(grads):
        slots.append([None if g is None else g.tolist() for g in grads])
        order.append("UnbindBackward0")

    unbind.register_prehook(pre)
    acc.register_prehook(lambda grads: order.append("AccumulateGrad"))
    loss.backward()
    return [order, slots, a.grad.tolist()]


def _unbind_inplace_refused(t):
    a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b, _, _ = a.unbind()
    m = t.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    v, _ = m.max(dim=0)
    v.mul_(2)
    return [_error(lambda: b.mul_(2)) is not None, _name(v.grad_fn), v._base is None]


def _detach_data_counters(t):
    a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.exp()
    d = y.detach()
    d.zero_()
    detach_raises = _error(lambda: y.sum().backward()) is not None
    a2 = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y2 = a2.exp()
    v0 = y2._version
    y2.data.zero_()
    y2.sum().backward()
    return [detach_raises, y2._version == v0, a2.grad.tolist()]


def _numpy_refused(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    shared = t.tensor([1.0, 2.0])
    arr = shared.numpy()
    arr[0] = 7.0
    return [_error(a.numpy), shared.tolist(), type(a.sum().item()).__name__]


def _requires_grad_false_only_on_leaves(t):
    a = t.tensor([1.0], requires_grad=True)
    return _error(lambda: (a * 2).requires_grad_(False))


def _frozen_with_stale_grad_moves(t):
    w = t.tensor([1.0, 1.0], requires_grad=True)
    opt = t.optim.SGD([w], lr=0.1)
    w.sum().backward()
    opt.step()
    w.requires_grad_(False)
    opt.step()
    frozen = t.tensor([1.0, 1.0], requires_grad=True)
    opt2 = t.optim.SGD([frozen], lr=0.1)
    frozen.requires_grad_(False)
    opt2.step()  # no .grad at all: skipped
    return [[round(v, 6) for v in w.tolist()], frozen.tolist()]


def _no_grad_inplace_on_leaf(t):
    w = t.ones(2, requires_grad=True)
    with t.no_grad():
        w.add_(1)
        r = w * 2
    return [w.is_leaf, w._version, r.grad_fn, r.requires_grad]


def _optimizer_step(t):
    w = t.nn.Parameter(t.tensor([1.0, 2.0]))
    opt = t.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    after_step = [w.is_leaf, w.grad_fn, w._version]
    opt.zero_grad()
    return [after_step, w.grad]


def _accumulate_grad_shared_weakly(t):
    w = t.tensor([1.0, 2.0], requires_grad=True)
    kept = (w * 2).sum()
    acc1 = kept.grad_fn.next_functions[0][0].next_functions[0][0]
    acc2 = (w * 3).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    acc1.metadata["tag"] = 1
    shared = acc1 is acc2
    del kept, acc1, acc2
    acc3 = (w * 4).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    return [shared, "tag" in acc3.metadata]


def _hoisted_graph(t):
    w = t.nn.Parameter(t.tensor([0.5, -1.0]))
    x = t.tensor([1.0, 2.0])
    f = w * x
    (f.sum() ** 2).backward()
    return _first_line(_error(lambda: (f.sum() ** 2).backward()))


def _parameter_is_new_leaf(t):
    w = t.nn.Parameter(t.ones(2, 2))
    x = t.tensor([1.0, 2.0])
    f = t.nn.Parameter(w @ x)
    (f ** 2).sum().backward()
    plain = t.ones(2)
    p = t.nn.Parameter(plain)
    plain.add_(1)
    return [f.is_leaf, f.grad_fn, w.grad, p._version == plain._version == 1]


def _linear_init_version(t):
    model = t.nn.Linear(2, 1)
    return model.weight._version


def _custom_function(t):
    class MyExp(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

    x = t.tensor([1.0], requires_grad=True)
    y = MyExp.apply(x)
    y2 = MyExp.apply(t.tensor([1.0], requires_grad=True))
    y2.add_(1)
    return [_name(y.grad_fn), y.grad_fn is not None and hasattr(y.grad_fn, "saved_tensors"),
            _first_line(_error(lambda: y2.sum().backward()))]


def _function_gradient_count(extra):
    def run(t):
        class Scale(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale):
                ctx.scale = scale
                return x * scale

            @staticmethod
            def backward(ctx, grad):
                return (grad * ctx.scale,) + extra

        x = t.tensor([1.0], requires_grad=True)
        return [_error(lambda: Scale.apply(x, 3.0).sum().backward()),
                None if x.grad is None else x.grad.tolist()]

    return run


def _function_gradient_for_number(t):
    class Scale(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    x = t.tensor([1.0], requires_grad=True)
    return _error(lambda: Scale.apply(x, 3.0).sum().backward())


def _mark_dirty(t):
    class Double(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    a = t.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    v0 = b._version
    out = Double.apply(b)
    leaf = t.tensor([1.0, 2.0], requires_grad=True)
    refused = _error(lambda: Double.apply(leaf))
    return [out is b, b._version - v0, _name(b.grad_fn),
            refused is not None and "leaf Variable" in refused, leaf.tolist()]


def _sequence_numbers(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()
    loss = (s * 3 + s.sin()).sum()
    mul = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    exp = s.grad_fn
    acc = exp.next_functions[0][0]
    return [acc._sequence_nr(), loss.grad_fn._sequence_nr() > mul._sequence_nr()
            > exp._sequence_nr()]


def _appends(order: list, name: str):
    return lambda grads: order.append(name)


def _engine_order(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    a = x.tanh()
    loss = (a * a + x).sum()
    order = []
    stack, seen = [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        node.register_prehook(_appends(order, _name(node)))
        stack.extend(n for n, _ in node.next_functions)
    loss.backward()
    return order


def _diamond_counts(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()
    loss = (s * 3 + s.sin() + s * s).sum()
    runs = []
    s.grad_fn.register_prehook(lambda grads: runs.append(1))
    loss.backward()
    return len(runs)


def _leaf_inplace(t):
    w = t.ones(2, requires_grad=True)
    return [_error(lambda: w.add_(1)), _error(lambda: w[0].mul_(2)) is not None]


def _element_0(t):
    w = t.tensor([0.5, -1.0], requires_grad=True)
    return [_error(lambda: w.argmax().float().backward()),
            w.argmax().grad_fn, (w > 0).sum().grad_fn, w.detach().sum().grad_fn]


def _rounding_ops(t):
    out = []
    for op in ("round", "floor", "sign"):
        x = t.tensor([0.3, 1.7], requires_grad=True)
        y = getattr(x, op)()
        y.sum().backward()
        out.append([y.dtype == x.dtype, y.grad_fn is not None, x.grad.tolist()])
    return out


def _sqrt_mask_nan(t):
    x = t.tensor([0.0, 4.0], requires_grad=True)
    (x.sqrt() * (x > 0)).sum().backward()
    masked = [math.isnan(v) for v in x.grad.tolist()]
    z = t.tensor([0.0, 4.0], requires_grad=True)
    t.where(z > 0, z.sqrt(), t.zeros(2)).sum().backward()
    where = [math.isnan(v) for v in z.grad.tolist()]
    c = t.tensor([0.0, 4.0], requires_grad=True)
    c.clamp(min=1e-6).sqrt().sum().backward()
    return [masked, where, all(math.isfinite(v) for v in c.grad.tolist())]


def _atan2_at_origin(t):
    y = t.tensor([0.0], requires_grad=True)
    x = t.tensor([0.0], requires_grad=True)
    t.atan2(y, x).sum().backward()
    return [y.grad.tolist(), x.grad.tolist()]


def _eval_still_records(t):
    model = t.nn.Linear(2, 1)
    model.eval()
    out = model(t.ones(1, 2))
    with t.no_grad():
        quiet = model(t.ones(1, 2))
    return [_name(out.grad_fn), quiet.grad_fn]


def _sigmoid_relu_message(t):
    x = t.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    out = t.nn.ReLU(inplace=True)(x.sigmoid())
    return _first_line(_error(out.sum().backward))


def _gan_message(t):
    t.manual_seed(0)
    disc, gen = t.nn.Linear(2, 1), t.nn.Linear(1, 2)
    opt_d = t.optim.SGD(disc.parameters(), lr=0.1)
    fake = gen(t.ones(4, 1))
    score = disc(fake)
    (score ** 2).mean().backward(retain_graph=True)
    opt_d.step()
    return _first_line(_error((-score).mean().backward))


def _conversions_keep_a_leaf(t):
    w = t.tensor([1.0, 2.0], requires_grad=True)
    same = [w.to(t.float32) is w, w.float() is w, w.cpu() is w, w.to("cpu") is w]
    d = w.double()
    return [same, d is w, d.is_leaf, _name(d.grad_fn)]


def _create_graph_names(t):
    x = t.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (g,) = t.autograd.grad((x ** 3).sum(), x, create_graph=True)
    mul = g.grad_fn
    inner = [_name(n) for n, _ in mul.next_functions]
    return [_name(mul), inner]


def _plain_grad_is_leaf(t):
    x = t.tensor([0.5, -1.0], requires_grad=True)
    (g,) = t.autograd.grad((x ** 3).sum(), x)
    return [g.is_leaf, g.grad_fn, g.requires_grad]


def _tanh_backward_backward(t):
    x = t.tensor([0.5, -1.0], requires_grad=True)
    (d1,) = t.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (d2,) = t.autograd.grad(d1.sum(), x, create_graph=True)
    return [_name(d1.grad_fn), _name(d2.grad_fn)]


def _anomaly_parent(t):
    x = t.tensor([0.5, -1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with t.autograd.set_detect_anomaly(True):
            (g,) = t.autograd.grad((x ** 3).sum(), x, create_graph=True)
    return _name(g.grad_fn.metadata.get("parent_"))


def _create_graph_accumulate(t):
    x = t.tensor([0.5, -1.0], requires_grad=True)
    w = t.tensor([2.0, 3.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x * w).sum().backward(create_graph=True)
    return [_name(x.grad.grad_fn), _name(w.grad.grad_fn)]


def _create_graph_warns(t):
    # In a fresh process: both libraries warn once per process, and another test in this
    # worker may have had the warning already.
    code = (f"import warnings, {t.__name__} as t\n"
            "x = t.tensor([0.5], requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    (x * x).sum().backward(create_graph=True)\n"
            "print(any('reference cycle between the parameter and its gradient'"
            " in str(w.message) for w in caught))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return done.stdout.split()[-1] == "True"


def _gradcheck_float32_warns(t):
    x = t.tensor([0.5, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t.autograd.gradcheck(t.exp, (x,), raise_exception=False)
    return any("double precision" in str(w.message) for w in caught)


def _gradcheck_error_type(t):
    class Wrong(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * grad * x.exp()

    x = t.tensor([0.5, 1.0], dtype=t.float64, requires_grad=True)
    try:
        t.autograd.gradcheck(Wrong.apply, (x,))
    except RuntimeError as error:
        return [type(error).__name__, isinstance(error, RuntimeError),
                t.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)]
    return None


def _forward_ad_exp(t):
    fwAD = importlib.import_module(t.__name__ + ".autograd.forward_ad")
    x = t.tensor([0.5, 1.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t.ones(2))
        out = dual.exp()
        tangent = fwAD.unpack_dual(out).tangent.tolist()
    return [round(v, 5) for v in tangent]


def _saved_number_not_packed(t):
    calls = []
    with t.autograd.graph.saved_tensors_hooks(lambda x: calls.append(x) or x, lambda x: x):
        a = t.tensor([0.5, 1.0], requires_grad=True)
        y = a.exp() * 2.0
    return [len(calls), _name(y.grad_fn), str(y.grad_fn._saved_other.dtype).replace(
        "minigrad", "torch")]


def _linear_tanh_packs(t):
    t.manual_seed(0)
    net = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.Tanh(), t.nn.Linear(4, 2))
    x = t.ones(5, 3)
    calls = []
    with t.autograd.graph.saved_tensors_hooks(lambda s: calls.append(s) or s, lambda s: s):
        loss = ((net(x) - t.zeros(5, 2)) ** 2).mean()
    return [len(calls), _names_below(loss.grad_fn).count("AddmmBackward0"),
            calls[1] is calls[2]]


def _hooks_skip_version_check(t):
    x = t.tensor([0.5, 1.0], requires_grad=True)
    with t.autograd.graph.saved_tensors_hooks(lambda s: s, lambda s: s):
        y = x.exp()
    y.add_(1)
    err = _error(lambda: y.sum().backward())
    return [err, [round(v, 5) for v in x.grad.tolist()]]


def _checkpoint_saves_inputs(t):
    x = t.ones(4, 3, requires_grad=True)
    ws = [t.full((3, 3), 0.1, requires_grad=True) for _ in range(3)]

    def block(x, *ws):
        for w in ws:
            x = (x @ w).tanh()
        return x

    calls = []
    with t.autograd.graph.saved_tensors_hooks(lambda s: calls.append(s) or s, lambda s: s):
        checkpoint = importlib.import_module(t.__name__ + ".utils.checkpoint").checkpoint
        loss = (checkpoint(block, x, *ws, use_reentrant=False) ** 2).mean()
    loss.backward()
    return [len(calls), all(w.grad is not None for w in ws)]


def _zero_grad_none(t):
    w = t.nn.Parameter(t.tensor([1.0]))
    opt = t.optim.SGD([w], lr=0.1)
    w.sum().backward()
    opt.zero_grad()
    return w.grad


def _item_and_detach_clone(t):
    y = t.tensor([1.0, 2.0], requires_grad=True) * 1
    snap = y.detach().clone()
    view = y.detach()
    with t.no_grad():
        y.mul_(10)
    return [snap.tolist(), view.tolist(), snap._version, view._version]


def _retain_graph_then_step(t):
    tt = t.eye(2, requires_grad=True)
    a = t.ones(2, requires_grad=True)
    y = tt @ a
    opt = t.optim.SGD([tt], lr=0.1)
    (y * y).sum().backward(retain_graph=True)
    opt.step()
    return _first_line(_error(lambda: (y * y).sum().backward()))


def _grad_fills_on_backward(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    loss = (a * a).sum()
    before = a.grad
    loss.backward()
    return [before, a.grad.tolist()]


def _no_value_change_still_counts(t):
    x = t.ones(2, 3)
    x.mul_(1)
    x.add_(0)
    x.t_()
    return x._version


def _anomaly_shows_forward_traceback(t):
    x = t.arange(3.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with t.autograd.detect_anomaly():
            u = 2 * x
            loss = (u ** 2).sum()  # the forward line the traceback must show
            u[0] = 666
            try:
                loss.backward()
            except RuntimeError:
                pass
    return any("Traceback of forward call that caused the error" in str(w.message)
               and "loss = (u ** 2).sum()" in str(w.message) for w in caught)


def _hoisted_with_retain_graph(t):
    w = t.nn.Parameter(t.tensor([0.5, -1.0]))
    x, target = t.tensor([1.0, 2.0]), t.tensor(3.0)
    opt = t.optim.SGD([w], lr=0.05)
    f = w * x
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = (f.sum() - target) ** 2
        loss.backward(retain_graph=True)
        opt.step()
        losses.append(loss.item())
    return [losses, [round(v, 4) for v in w.tolist()]]


def _hoisted_add_never_raises(t):
    w = t.nn.Parameter(t.tensor([0.5, -1.0]))
    x, target = t.tensor([1.0, 2.0]), t.tensor(3.0)
    opt = t.optim.SGD([w], lr=0.05)
    f = w + x
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = (f.sum() - target) ** 2
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _ctx_is_the_node(t):
    seen = []

    class Twice(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(ctx)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    y = Twice.apply(t.tensor([1.0], requires_grad=True))
    return y.grad_fn is seen[0]


def _function_gradient_shape(t):
    class Twice(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad[:2]

    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return _error(lambda: Twice.apply(x).sum().backward())


def _create_graph_same_values_and_retains(t):
    x = t.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x.tanh() * x).sum()
    (g1,) = t.autograd.grad(y, x, create_graph=True)
    (g2,) = t.autograd.grad(y, x)  # works: create_graph kept the graph
    return [g1.tolist() == g2.tolist(), g1.requires_grad, g2.requires_grad]


def _save_on_cpu_is_a_hooks_pair(t):
    graph = importlib.import_module(t.__name__ + ".autograd.graph")
    return issubclass(graph.save_on_cpu, graph.saved_tensors_hooks)


def _checkpoint_same_gradients(t):
    checkpoint = importlib.import_module(t.__name__ + ".utils.checkpoint").checkpoint

    def block(x, w):
        return ((x @ w).tanh() @ w).tanh()

    grads = []
    for checkpointed in (False, True):
        x = t.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
        w = t.tensor([[0.1, 0.2, -0.3], [0.0, 0.5, 0.4], [0.3, -0.2, 0.1]],
                     requires_grad=True)
        out = checkpoint(block, x, w, use_reentrant=False) if checkpointed else block(x, w)
        (out ** 2).sum().backward()
        grads.append([round(v, 6) for v in w.grad.flatten().tolist() + x.grad.flatten().tolist()])
    return grads[0] == grads[1]


def _broadcast_reduced_before_post_hook(t):
    a = t.ones(3, 1, requires_grad=True)
    b = t.ones(4, requires_grad=True)
    s = a + b
    shapes = []
    s.grad_fn.register_hook(lambda grad_in, grad_out: shapes.append(
        [tuple(g.shape) for g in grad_in] + [tuple(g.shape) for g in grad_out]))
    s.sum().backward()
    return shapes


def _inference_mode_records_nothing(t):
    w = t.ones(2, requires_grad=True)
    with t.inference_mode():
        r = w * 2
    return [r.grad_fn, r.requires_grad]


def _jvp_by_double_backward(t):
    """functional.jvp works through a Function that has only a backward; forward mode
    refuses it, with PyTorch's message."""
    class Square(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    functional = importlib.import_module(t.__name__ + ".autograd.functional")
    fw = importlib.import_module(t.__name__ + ".autograd.forward_ad")
    x, v = t.tensor([1.0, 2.0]), t.tensor([1.0, 0.5])
    _, jv = functional.jvp(Square.apply, x, v)

    def forward_mode():
        with fw.dual_level():
            Square.apply(fw.make_dual(x, v))

    return [jv.tolist(), _error(forward_mode)]


def _floor_divide_has_no_tangent(t):
    fw = importlib.import_module(t.__name__ + ".autograd.forward_ad")

    def run():
        with fw.dual_level():
            return fw.make_dual(t.tensor([1.0, 2.0]), t.ones(2)) // 2.0

    return _error(run)


def _edges_into_shared_node(t):
    x = t.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()
    loss = (s * 3 + s.sin() + s * s).sum()
    seen, stack, edges = set(), [loss.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            edges += nxt is s.grad_fn
            stack.append(nxt)
    return edges


def _numpy_write_counts_nothing(t):
    x = t.tensor([1.0, 2.0])
    x.numpy()[0] = 7.0
    return [x.tolist(), x._version]


# -- the widgets' texts (stepper, explain, inspectors, exercise feedback) -----------------


def _freed_as_each_node_runs(t):
    """The next node's pre-hook already finds the saved tensors of the one before freed."""
    a = t.tensor([1.0, 2.0], requires_grad=True)
    y = a.exp()
    z = (y * y).sum()
    mul = z.grad_fn.next_functions[0][0]
    seen = []
    y.grad_fn.register_prehook(lambda grads: seen.append(_first_line(
        _error(lambda: mul._saved_self))))
    z.backward()
    return seen


def _accumulate_post_hook_sees_sum(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    a.grad = t.ones(2)
    y = (a * 3).sum()
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    seen = []
    acc.register_hook(lambda grads_in, grads_out: seen.append(a.grad.tolist()))
    y.backward()
    return [_name(acc), acc.variable is a, seen]


def _retain_grad_before_pre_hooks(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    y = a * 3
    y.retain_grad()
    seen = []
    y.grad_fn.register_prehook(lambda grads: seen.append(None if y.grad is None
                                                         else y.grad.tolist()))
    (y * y).sum().backward()
    return seen


def _seed_is_one(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    y = (a * 3).sum()
    seen = []
    y.grad_fn.register_prehook(lambda grads: seen.append(grads[0].tolist()))
    y.backward()
    return seen


def _infinite_slopes(t):
    x = t.tensor([0.0, 1.0], requires_grad=True)
    x.log().sum().backward()
    a = t.tensor([1.0, 1.0], requires_grad=True)
    b = t.tensor([0.0, 1.0], requires_grad=True)
    (a / b).sum().backward()
    p = t.tensor([0.0, 1.0], requires_grad=True)
    (p ** 0.5).sum().backward()
    return [x.grad.tolist(), a.grad.tolist(), b.grad.tolist(), p.grad.tolist()]


def _flat_ops(ops):
    def run(t):
        out = []
        for op in ops:
            x = t.tensor([0.5, 1.5], requires_grad=True)
            y = getattr(x, op)()
            y.sum().backward()
            out.append([_name(y.grad_fn), x.grad.tolist()])
        return out

    return run


def _straight_through(t):
    x = t.tensor([0.4, 1.6], requires_grad=True)
    (x + (x.round() - x).detach()).sum().backward()
    return x.grad.tolist()


def _anomaly_names_nan_maker(t):
    x = t.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with t.autograd.detect_anomaly():
            y = x.sqrt()
            return _error(lambda: (y * t.tensor([0.0, 1.0])).sum().backward())


def _masked_assignment_nan(t):
    x = t.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt() * 1
    y[0] = 0.0
    y.sum().backward()
    return [math.isnan(x.grad[0].item()), x.grad[1].item()]


def _detach_requires_grad_is_leaf(t):
    w = t.tensor([1.0, 2.0], requires_grad=True)
    x = (w * 2).double()
    x = x.detach().requires_grad_()
    (x * x).sum().backward()
    return [x.is_leaf, x.grad.tolist()]


def _integer_result_no_graph(t):
    x = t.tensor([1.5, 2.0], requires_grad=True)
    i = (x * 2).long()
    return [i.grad_fn, i.requires_grad]


def _write_through_view_of_leaf(t):
    """Under no_grad the write counts on the leaf; through .data of the view it does not."""
    out = []
    for how in ("no_grad", "data"):
        w = t.tensor([1.0, 2.0], requires_grad=True)
        y = w * w
        v = w[0:1]
        if how == "data":
            v.data.mul_(2)
        else:
            with t.no_grad():
                v.mul_(2)
        out.append([w._version, _error(y.sum().backward) is not None])
    return out


def _gan_without_bias(t):
    t.manual_seed(0)
    disc, gen = t.nn.Linear(2, 1, bias=False), t.nn.Linear(1, 2)
    opt_d = t.optim.SGD(disc.parameters(), lr=0.1)
    score = disc(gen(t.ones(4, 1)))
    (score ** 2).mean().backward(retain_graph=True)
    without_step = _error((-score).mean().backward)
    score = disc(gen(t.ones(4, 1)))
    (score ** 2).mean().backward(retain_graph=True)
    opt_d.step()
    loss_g = (-score).mean()
    failed = _error(loss_g.backward) is not None
    return [without_step, failed,
            _name(loss_g.grad_fn.next_functions[0][0].next_functions[0][0])]


def _sgd_step_counts_one(t):
    t.manual_seed(0)
    model = t.nn.Linear(2, 1)
    opt = t.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        model(t.ones(1, 2)).sum().backward()
        opt.step()
    return model.weight._version


def _output_change_after_input_saved(t):
    class MyExpFromInput(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.exp()

    x = t.tensor([0.0, 1.0], requires_grad=True)
    y = MyExpFromInput.apply(x)
    y.add_(1)
    err = _error(lambda: y.sum().backward())
    return [err, [round(v, 5) for v in x.grad.tolist()]]


def _detach_write_unsaved(t):
    a = t.tensor([1.0, 2.0], requires_grad=True)
    y = a * 3
    y.detach().zero_()
    err = _error(lambda: y.sum().backward())
    return [y._version, err, a.grad.tolist()]


def _exp_graph_before_write(t):
    x = t.tensor([0.0, 0.5], requires_grad=True)
    u = 2 * x
    loss = u.exp().sum()
    u[0] = 666
    loss.backward()
    return [round(v, 5) for v in x.grad.tolist()]


def _save_nothing_runs_twice(t):
    ran = []
    for build in (lambda a: a.exp().sum(), lambda a: (a - 1).mean(),
                  lambda a: (a * a).sum(), lambda a: (a + a).sum()):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        y = build(a)
        y.backward()
        ran.append(_error(y.backward) is None)
    return ran


def _packs_of_sin_exp_product(t):
    a = t.tensor([0.5, 1.0], requires_grad=True)
    calls = []
    with t.autograd.graph.saved_tensors_hooks(lambda s: calls.append(s) or s, lambda s: s):
        (a.sin() * a.exp() * 3.0).sum()
    return len(calls)


def _third_derivative_of_sin(t):
    x = t.tensor([0.0, 1.0], requires_grad=True)
    (g1,) = t.autograd.grad(x.sin().sum(), x, create_graph=True)
    (g2,) = t.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = t.autograd.grad(g2.sum(), x)
    return [round(v, 4) for v in g3.tolist()]

def _add_passes_gradient_on(t):
    """Under create_graph, AddBackward0 hands on the gradient it got: no node recorded."""
    x = t.tensor([1.0, 2.0], requires_grad=True)
    loss = ((x.exp() + 1) * x).sum()
    add = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    seen = []
    add.register_hook(lambda grads_in, grads_out: seen.append(
        [_name(add), grads_out[0].requires_grad, grads_in[0] is grads_out[0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss.backward(create_graph=True)
    return seen

# -- lessons 4 and 12: the newer graph APIs ---------------------------------------------------


def _copy_before_write(t):
    """exp saves its output; += 1 inside the context: copies made, and x.grad."""
    x = t.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with t.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        y = x.exp()
        z = x * 2  # (saves nothing that is written: no copy)
        y += 1
        copies = len(ctx.cloned)
        (y.sum() + z.sum()).backward()
    return [copies, [round(v, 4) for v in x.grad.tolist()]]


def _backward_after_the_context(t):
    x = t.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with t.autograd.graph.allow_mutation_on_saved_tensors():
        y = x.exp()
        y += 1
    return _error(lambda: y.sum().backward()).split(":")[0]


def _mutation_allowed_grad(t):
    with t.autograd.graph.allow_mutation_on_saved_tensors():
        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        u = x * 1
        loss = (u ** 3).sum()
        u.add_(1)
        loss.backward()
    return x.grad.tolist()


def _increment_version_counts(t):
    base = t.zeros(4)
    view = base[2:]
    t.autograd.graph.increment_version(view)
    after_view = base._version
    t.autograd.graph.increment_version([base, view])
    return [after_view, base._version]


def _mutation_context_packs_with_hooks(t):
    x = t.tensor([0.5, 1.0], requires_grad=True)
    with t.autograd.graph.allow_mutation_on_saved_tensors():
        y = x.exp()
        return y.grad_fn._raw_saved_result.unpack_hook is not None


def _post_accumulate_after_tensor_hook(t):
    w = t.tensor([1.0, -1.0], requires_grad=True)
    w.register_hook(lambda g: g * 2)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    for _ in range(2):
        (3 * w).sum().backward()
    return seen


def _grad_calls_no_post_accumulate_hook(t):
    w = t.tensor([1.0, -1.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append("hook"))
    (g,) = t.autograd.grad((3 * w).sum(), w)
    return [seen, w.grad, g.tolist()]


def _non_leaf_post_accumulate(t):
    w = t.ones(2, requires_grad=True)
    return _error(lambda: (w * 2).register_post_accumulate_grad_hook(print))


def _multi_grad_count(t):
    a = t.ones(2, requires_grad=True)
    b = t.ones(2, requires_grad=True)
    c = a * b
    d = b * 2
    got = []
    handle = t.autograd.graph.register_multi_grad_hook((a, b, c, d), got.append)
    c.sum().backward(inputs=[b])
    return [len(handle.handles), [g is not None for g in got[0]]]


CLAIMS = [
    # lesson 0
    Claim("lesson 0, cell 36", "leaves: tensors you made yourself and every tensor that "
          "does not require grad (op results included); an op on tensors that require grad "
          "makes a non-leaf", _leaf_kinds, [True, True, True, False]),
    Claim("lesson 0, cell 17", "c.backward(gradient=v) gives what (c * v).sum().backward() "
          "gives", _vjp_is_weighted_sum, True),
    Claim("lesson 0, cell 16", "backward() of a tensor with several elements needs a "
          "gradient", _non_scalar_backward,
          "RuntimeError: grad can be implicitly created only for scalar outputs"),
    Claim("lesson 0, cell 19", "backward() adds into .grad across calls; .grad = None "
          "clears it", _accumulates_across_calls, [[6.0, 6.0], [3.0, 3.0]]),
    Claim("lesson 0 exercise 0.5, lesson 1 cell 25, lesson 7 cell 23", "within one graph "
          "the streams into a leaf are summed first: its AccumulateGrad runs once, a "
          "pre-hook sees the sum", _leaf_used_twice_runs_once,
          ["AccumulateGrad", [[5.0, 5.0]], [5.0, 5.0]]),
    # lesson 1
    Claim("lesson 1, cell 7", "reading a non-leaf's .grad gives None and warns",
          _non_leaf_grad_warns, [None, True]),
    Claim("lesson 1, cells 7 and 12", "MulBackward0 of a * b (only a requires grad) keeps "
          "b, not a; b's entry is (None, 0)", _mul_saves_only_what_is_needed,
          [True, True, [("AccumulateGrad", 0), (None, 0)]]),
    Claim("lesson 1, cell 29", "a broadcast input's gradient is summed back to its shape",
          _broadcast_grad_shapes, [(3, 1), (4,), [[4.0], [4.0], [4.0]], [3.0] * 4]),
    Claim("lesson 1, cell 53", "two streams added in place: x.grad at version 1; one "
          "stream: version 0", _grad_version_after_two_streams, [1, 0]),
    # lesson 2
    Claim("lesson 2, cell 4", "x = x * c keeps the old x as _saved_self",
          _reassignment_saves_old_x, [True, True]),
    Claim("lesson 2, cells 20 and 23", "retain_grad() keeps a non-leaf's gradient; "
          "autograd.grad returns it and writes no .grad", _retain_grad_and_autograd_grad,
          [[6.0, 12.0], [6.0, 12.0], None]),
    Claim("lesson 2, cell 23", "a tensor hook sees the gradient; a returned tensor "
          "replaces it", _hook_replaces_gradient, [[[2.0, 2.0]], [20.0, 20.0]]),
    Claim("lesson 2, cells 27 and 35", "x.mul_(c): version +1, grad_fn rebased onto a new "
          "MulBackward0 over the old one, which keeps a copy of the old values; backward "
          "works", _inplace_mul_rebases_and_copies,
          [1, "MulBackward0", True, [3.0, 8.0], [15.0, 48.0], None]),
    # lesson 3
    Claim("lesson 3, cell 38", "(a + 1).sum() saves nothing and runs backward twice",
          _backward_twice(lambda a: (a + 1).sum()), None),
    Claim("lesson 3, cell 38", "(a * 2).sum(): the saved 2 is released; a second backward "
          "raises", _backward_twice(lambda a: (a * 2).sum()), _SECOND_TIME),
    Claim("lesson 3, exercise 3.5", "(a - 1).mean() and (a + a).sum() save nothing",
          lambda t: [_backward_twice(lambda a: (a - 1).mean())(t),
                     _backward_twice(lambda a: (a + a).sum())(t)], [None, None]),
    Claim("lesson 3, exercise 3.5", "a.exp().sum() and (a * a).sum() save a tensor",
          lambda t: [_backward_twice(lambda a: a.exp().sum())(t),
                     _backward_twice(lambda a: (a * a).sum())(t)],
          [_SECOND_TIME, _SECOND_TIME]),
    Claim("lesson 3, cell 15", "backward frees saved tensors only: values and links stay",
          _what_backward_frees, [[1.0, 1.0], [("AccumulateGrad", 0), ("AccumulateGrad", 0)],
                                 True]),
    Claim("lesson 3, cell 27", "a retained graph whose parameter an optimizer then steps "
          "fails the version check", _retain_graph_then_step,
          "RuntimeError: one of the variables needed for gradient computation has been "
          "modified by an inplace operation: [torch.FloatTensor [2, 2]] is at version 1; "
          "expected version 0 instead."),
    # lesson 4
    Claim("lesson 4, cell 4", "10 * x is a MulBackward0 that keeps the number as a "
          "wrapped tensor, not x", _mul_by_number_saves_wrapped,
          ["MulBackward0", 2.0, "torch.int64", True]),
    Claim("lesson 4, cells 2 and 8", "exp keeps its output", _saves(lambda u: u.exp()),
          "output"),
    Claim("lesson 4, cells 2 and 8", "sin keeps its input", _saves(lambda u: u.sin()),
          "input"),
    Claim("lesson 4, cell 8", "u ** 2 keeps its input", _saves(lambda u: u ** 2), "input"),
    Claim("lesson 4, cell 8", "10 * u keeps neither", _saves(lambda u: 10 * u), "neither"),
    Claim("lesson 4, cell 68", "sigmoid and tanh keep their output",
          lambda t: [_saves(lambda u: u.sigmoid())(t), _saves(lambda u: u.tanh())(t)],
          ["output", "output"]),
    Claim("lesson 4, cell 2", "+ keeps nothing", _saves(lambda u: u + 3), "neither"),
    Claim("lesson 4, cell 12", "every in-place op adds exactly one to _version",
          _version_counts, [[1, 2, 3], 1]),
    Claim("lesson 4, cell 14", "m.t_() is an in-place op (TBackward1); n = n.t() leaves "
          "the old tensor untouched", _transpose_inplace, [1, "TBackward1", 0]),
    Claim("lesson 4, cell 18", "the error names the changed tensor by its producer "
          "(output 0 of Exp)", _exp_error_message,
          "RuntimeError: one of the variables needed for gradient computation has been "
          "modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of "
          "Exp, is at version 1; expected version 0 instead."),
    Claim("lesson 4, cells 25 and 33", "u[0] = 666 makes u's grad_fn CopySlices, and the "
          "message names torch::autograd::CopySlices", _copyslices_message,
          ["CopySlices", "RuntimeError: one of the variables needed for gradient "
           "computation has been modified by an inplace operation: [torch.FloatTensor [3]], "
           "which is output 0 of torch::autograd::CopySlices, is at version 1; expected "
           "version 0 instead."]),
    Claim("lesson 4, cell 37", "slices, view, t and detach share the base's counter; "
          "clone has its own", _views_share_counter, [[1, 1, 1, 1], 0]),
    Claim("lesson 4, cell 39", "anomaly mode names the node that needed the tensor",
          _anomaly_names_node, True),
    # lesson 5
    Claim("lesson 5, cells 10 and 16", "unbind: one node, outputs numbered 0, 1, 2; "
          "next_functions carry the number", _unbind_outputs,
          [[0, 1, 2], True, [("MulBackward0", 0), ("UnbindBackward0", 2)]]),
    Claim("lesson 5, cells 16 and 21", "UnbindBackward0 runs once all consumers delivered, "
          "an unused output's slot empty, then a's AccumulateGrad runs",
          _unbind_order_and_slots,
          [["UnbindBackward0", "AccumulateGrad"], [[2.0, 1.0, None]], [2.0, 1.0, 0.0]]),
    Claim("lesson 5, cells 26 and 30", "an unbind output cannot change in place; "
          "max(dim=...)'s can (new tensors, not views)", _unbind_inplace_refused,
          [True, "MulBackward0", True]),
    # lesson 6
    Claim("lesson 6, cells 4 and 12", "detach() shares the version counter (backward "
          "raises), .data does not (silent zeros)", _detach_data_counters,
          [True, True, [0.0, 0.0, 0.0]]),
    Claim("lesson 6, cells 17 and 19", "numpy() refuses on a tensor that requires grad, "
          "else shares memory; item() is a Python float", _numpy_refused,
          ["RuntimeError: Can't call numpy() on Tensor that requires grad. Use "
           "tensor.detach().numpy() instead.", [7.0, 2.0], "float"]),
    Claim("lesson 6, cell 21", "detach().clone() is a snapshot; detach() is not",
          _item_and_detach_clone, [[1.0, 2.0], [10.0, 20.0], 0, 1]),
    Claim("lesson 6, cell 23", "requires_grad_(False) only on leaves: the error says "
          "detach()", _requires_grad_false_only_on_leaves,
          "RuntimeError: you can only change requires_grad flags of leaf variables. If you "
          "want to use a computed variable in a subgraph that doesn't require "
          "differentiation use var_no_grad = var.detach()."),
    Claim("lesson 6, cell 25", "inside no_grad an in-place change of a leaf is allowed and "
          "nothing is recorded", _no_grad_inplace_on_leaf, [True, 1, None, False]),
    Claim("lesson 6 cell 23, lesson 10 cell 86", "a frozen parameter with a stale .grad "
          "still moves; without .grad the optimizer skips it",
          _frozen_with_stale_grad_moves, [[0.8, 0.8], [1.0, 1.0]]),
    # lesson 7
    Claim("lesson 7, cells 7 and 9", "step() updates in place without a graph; "
          "zero_grad() sets .grad to None", _optimizer_step, [[True, None, 1], None]),
    Claim("lesson 7, cell 9", "zero_grad() sets .grad to None by default",
          _zero_grad_none, None),
    Claim("lesson 7, cell 12", "a leaf holds its AccumulateGrad weakly: shared while a "
          "graph lives, new once none does", _accumulate_grad_shared_weakly, [True, False]),
    Claim("lesson 7, cell 14", "a graph hoisted out of the loop fails on the second "
          "backward", _hoisted_graph, _SECOND_TIME),
    Claim("lesson 7, cells 28 and 34", "nn.Parameter(t) is a new leaf, cut off from t's "
          "history, sharing its numbers and version counter", _parameter_is_new_leaf,
          [True, None, None, True]),
    Claim("lesson 7, exercise 7.4", "Linear's initialisation writes the weight in place "
          "once", _linear_init_version, 1),
    # lesson 8
    Claim("lesson 8, cells 7 and 16", "a custom Function's node is <Class>Backward; a "
          "changed saved output raises naming it", _custom_function,
          ["MyExpBackward", True,
           "RuntimeError: one of the variables needed for gradient computation has been "
           "modified by an inplace operation: [torch.FloatTensor [1]], which is output 0 "
           "of MyExp, is at version 1; expected version 0 instead."]),
    Claim("lesson 8, cell 25", "backward must return a value per forward argument",
          _function_gradient_count(()),
          ["RuntimeError: function ScaleBackward returned an incorrect number of gradients "
           "(expected 2, got 1)", None]),
    Claim("lesson 8, cell 25", "extra trailing Nones are accepted",
          _function_gradient_count((None, None, None)), [None, [3.0]]),
    Claim("lesson 8, cell 27", "a gradient for a number is refused",
          _function_gradient_for_number,
          "RuntimeError: function ScaleBackward returned a gradient different than None at "
          "position 2, but the corresponding forward input was not a Variable"),
    Claim("lesson 8, cell 20", "mark_dirty: the input becomes the output, one more "
          "version, grad_fn rewritten; on a leaf refused after forward changed it",
          _mark_dirty, [True, 2, "DoubleBackward", True, [2.0, 4.0]]),
    # lesson 9
    Claim("lesson 9, cell 15", "AccumulateGrad has the largest sequence number, "
          "UINT64_MAX; nodes made later have larger numbers", _sequence_numbers,
          [2**64 - 1, True]),
    Claim("lesson 9, exercise 9.2", "the engine's order for (a * a + x).sum(), a = "
          "x.tanh()", _engine_order,
          ["SumBackward0", "AddBackward0", "MulBackward0", "TanhBackward0",
           "AccumulateGrad"]),
    Claim("lesson 9, cell 17", "a shared node runs once with its streams summed",
          _diamond_counts, 1),
    # lesson 10
    Claim("lesson 10, cell 7", "the GAN case's message", _gan_message,
          "RuntimeError: one of the variables needed for gradient computation has been "
          "modified by an inplace operation: [torch.FloatTensor [2, 1]], which is output 0 "
          "of AsStrided, is at version 2; expected version 1 instead."),
    Claim("lesson 10, cell 21", "the in-place ReLU case's message names Sigmoid",
          _sigmoid_relu_message,
          "RuntimeError: one of the variables needed for gradient computation has been "
          "modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of "
          "Sigmoid, is at version 1; expected version 0 instead."),
    Claim("lesson 10, cell 33", "an in-place op on a leaf that requires grad (or a view "
          "of it) raises at once", _leaf_inplace,
          ["RuntimeError: a leaf Variable that requires grad is being used in an in-place "
           "operation.", True]),
    Claim("lesson 10, cell 38", "argmax, comparisons, detach give no graph",
          _element_0, ["RuntimeError: element 0 of tensors does not require grad and does "
                       "not have a grad_fn", None, None, None]),
    Claim("lesson 10, cell 52", ".to()/.float()/.cpu() that convert nothing return the "
          "leaf itself; .double() makes a non-leaf", _conversions_keep_a_leaf,
          [[True, True, True, True], False, False, "ToCopyBackward0"]),
    Claim("lesson 10, cell 78 and 81", "sqrt at 0 times a zero mask, or in where, gives "
          "nan; clamp(min=eps) first does not", _sqrt_mask_nan,
          [[True, False], [True, False], True]),
    Claim("lesson 10, cell 81", "atan2's backward gives 0 at the origin", _atan2_at_origin,
          [[0.0], [0.0]]),
    Claim("lesson 10, cell 88", "eval() still records; no_grad does not",
          _eval_still_records, ["AddmmBackward0", None]),
    Claim("lesson 10, cell 94", "round, floor, sign: float results with a grad_fn, zero "
          "gradient", _rounding_ops, [[True, True, [0.0, 0.0]]] * 3),
    # lesson 11
    Claim("lesson 11, cell 2", "an ordinary backward's gradient has no history",
          _plain_grad_is_leaf, [True, None, False]),
    Claim("lesson 11, cell 6", "the gradient of x ** 3 under create_graph is a "
          "MulBackward0 of grad and 3 * x ** 2 (MulBackward1 over PowBackward0)",
          _create_graph_names, ["MulBackward0", [None, "MulBackward1"]]),
    Claim("lesson 11, cell 8", "PyTorch keeps the making node in anomaly mode as "
          "metadata['parent_']", _anomaly_parent, "PowBackward0", torch_only=True),
    Claim("lesson 11, cell 20", "tanh's first and second derivatives end in "
          "TanhBackwardBackward0", _tanh_backward_backward,
          ["TanhBackwardBackward0", "TanhBackwardBackward0"]),
    Claim("lesson 11, cell 12", "backward(create_graph=True) warns of a reference cycle",
          _create_graph_warns, True),
    Claim("lesson 11, cell 15", "each AccumulateGrad under create_graph records a copy "
          "into .grad", _create_graph_accumulate, ["CopyBackwards", "CopyBackwards"]),
    Claim("lesson 11, cell 35", "gradcheck warns for a float32 input",
          _gradcheck_float32_warns, True),
    Claim("lesson 11, cell 39", "gradcheck raises GradcheckError, a RuntimeError; "
          "raise_exception=False returns False", _gradcheck_error_type,
          ["GradcheckError", True, False]),
    Claim("lesson 11, cell 41", "forward mode: exp's tangent is tangent * result",
          _forward_ad_exp, [round(math.exp(0.5), 5), round(math.exp(1.0), 5)]),
    # lesson 12
    Claim("lesson 12, cell 7", "a Python number an op saves is not packed (kept as a "
          "float64 tensor)", _saved_number_not_packed, [1, "MulBackward0", "torch.float64"]),
    Claim("lesson 12, cells 4 and 7", "Linear-tanh-Linear, ** 2: five packs, the tanh "
          "output packed twice; the first Linear is AddmmBackward0",
          _linear_tanh_packs, [5, 2, True]),
    Claim("lesson 12, cell 38", "a tensor packed by hooks is not version-checked",
          _hooks_skip_version_check,
          [None, [round(math.exp(0.5) + 1, 5), round(math.exp(1.0) + 1, 5)]]),
    Claim("lesson 12, cell 27", "checkpoint keeps its inputs (and what is saved outside)",
          _checkpoint_saves_inputs, [5, True]),
    # second pass over the lessons
    Claim("lesson 1, cell 29", "a broadcast gradient is summed back by the engine after "
          "the node ran, before its post-hooks see it", _broadcast_reduced_before_post_hook,
          [[(3, 1), (4,), (3, 4)]]),
    Claim("lesson 3, exercise 3.1", "building a loss on a freed sub-graph is fine; the next "
          "backward through it raises", lambda t: _first_line(_error(lambda: [
              (lambda y: [((y * 2).sum().backward(), (y * 3).sum(),
                           (y * 4).sum().backward())])(
                  t.eye(2, requires_grad=True) @ t.ones(2, requires_grad=True))])),
          _SECOND_TIME),
    Claim("lesson 4, exercise 4.6", "exp keeps its output: writing into its input after it "
          "ran breaks nothing", _saves(lambda u: u.exp()), "output"),
    Claim("lesson 5, exercise 5.6", "chunk's outputs are views made by one node (in-place "
          "refused); min(dim=1)'s values are not views",
          lambda t: [_first_line(_error(lambda: (t.ones(2, 3, requires_grad=True) * 1)
                                        .chunk(3, dim=1)[0].mul_(2))),
                     _error(lambda: (t.ones(2, 3, requires_grad=True) * 1)
                            .min(dim=1)[0].mul_(2))],
          ["RuntimeError: Output 0 of Split is a view and is being modified inplace. This "
           "view is the output of a function that returns multiple views. Such functions do "
           "not allow the output views to be modified inplace. You should replace the "
           "inplace operation by an out-of-place one.", None]),
    Claim("lesson 6, cell 17", "numpy() shares memory with no version counter: a write "
          "through it counts nothing", _numpy_write_counts_nothing, [[7.0, 2.0], 0]),
    Claim("lesson 7, cell 22", "a hoisted graph with retain_graph=True: no error, the loss "
          "never changes, w follows the stale gradient", _hoisted_with_retain_graph,
          [[20.25, 20.25, 20.25], [1.85, 1.7]]),
    Claim("lesson 7, exercise 7.2", "a hoisted w + x saves nothing: backward never raises, "
          "the loss never changes", _hoisted_add_never_raises, [0.25] * 4),
    Claim("lesson 10, cell 88", "inference_mode records nothing", _inference_mode_records_nothing,
          [None, False]),
    Claim("lesson 10, exercise 10.11b", "eval() and frozen parameters still record when the "
          "input requires grad", lambda t: [
              _name((lambda m: (m.eval(), m.requires_grad_(False),
                                m(t.ones(1, 2, requires_grad=True)))[2])(
                  t.nn.Linear(2, 1)).grad_fn)], ["AddmmBackward0"]),
    Claim("lesson 11, cell 45", "functional.jvp runs backward twice: it works on a Function "
          "with only a backward, which forward mode refuses", _jvp_by_double_backward,
          [[2.0, 2.0], "NotImplementedError: You must implement the jvp function for custom "
           "autograd.Function to use it with forward mode AD."]),
    Claim("lesson 11, cell 48", "an op without a tangent formula refuses a dual input with "
          "NotImplementedError", _floor_divide_has_no_tangent,
          "NotImplementedError: Trying to use forward AD with aten::floor_divide that does "
          "not support it.", torch_only=True),
    Claim("lesson 9, exercise 9.1", "four edges point at ExpBackward0 in "
          "(s * 3 + s.sin() + s * s).sum()", _edges_into_shared_node, 4),
    # docs/instructor.md
    Claim("docs/instructor.md, lesson 0", ".grad is filled by backward, not when the graph "
          "is built", _grad_fills_on_backward, [None, [2.0, 4.0]]),
    Claim("docs/instructor.md, lesson 0", "backward() on a non-scalar needs a gradient",
          _non_scalar_backward,
          "RuntimeError: grad can be implicitly created only for scalar outputs"),
    Claim("docs/instructor.md, lesson 4", "every in-place op counts one, even one that "
          "changes no value", _no_value_change_still_counts, 3),
    Claim("docs/instructor.md, lesson 4", "anomaly mode shows the forward line that built "
          "the failing node", _anomaly_shows_forward_traceback, True),
    Claim("docs/instructor.md, lesson 5", "an output nobody used has an empty slot, read as "
          "zeros", _unbind_order_and_slots,
          [["UnbindBackward0", "AccumulateGrad"], [[2.0, 1.0, None]], [2.0, 1.0, 0.0]]),
    Claim("docs/instructor.md, lesson 8", "ctx is the node", _ctx_is_the_node, True),
    Claim("docs/instructor.md, lesson 8", "the engine checks the shape of what backward "
          "returns", _function_gradient_shape,
          "RuntimeError: Function TwiceBackward returned an invalid gradient at index 0 - "
          "got [2] but expected shape compatible with [3]"),
    Claim("docs/instructor.md, lesson 11", "create_graph=True changes no value, and retains "
          "the graph", _create_graph_same_values_and_retains, [True, True, False]),
    Claim("docs/instructor.md, lesson 12", "save_on_cpu is PyTorch's own pair of "
          "saved-tensor hooks", _save_on_cpu_is_a_hooks_pair, True),
    Claim("docs/instructor.md, lesson 12", "checkpoint gives the same gradients",
          _checkpoint_same_gradients, True),
    # the widgets' texts
    Claim("widgets/stepper.py, step panel; exercise 3.5", "the engine frees a node's saved "
          "tensors as soon as it ran: the next node can no longer read them",
          _freed_as_each_node_runs, [_SECOND_TIME]),
    Claim("widgets/stepper.py, step panel", "AccumulateGrad adds into .grad before its "
          "post-hooks run; its variable is the leaf", _accumulate_post_hook_sees_sum,
          ["AccumulateGrad", True, [[4.0, 4.0]]]),
    Claim("widgets/torch_recording.py", "retain_grad fills .grad before the node's "
          "pre-hooks run", _retain_grad_before_pre_hooks, [[6.0, 12.0]]),
    Claim("widgets/stepper.py, step 0", "backward() of a scalar seeds d(loss)/d(loss) = 1",
          _seed_is_one, [1.0]),
    Claim("widgets/stepper.py", "backward(inputs=[]) is refused",
          lambda t: _error(lambda: (t.ones(2, requires_grad=True) * 2).sum()
                           .backward(inputs=[])),
          "RuntimeError: `inputs` argument to `backward()` cannot be empty."),
    Claim("widgets/explain.py", "log at 0, a / b at b = 0 and x ** 0.5 at 0 have infinite "
          "slopes", _infinite_slopes,
          [[math.inf, 1.0], [math.inf, 1.0], [-math.inf, -1.0], [math.inf, 0.5]]),
    Claim("widgets/explain.py", "ceil's gradient is zero everywhere", _flat_ops(("ceil",)),
          [["CeilBackward0", [0.0, 0.0]]]),
    Claim("widgets/explain.py", "trunc's gradient is zero everywhere",
          _flat_ops(("trunc",)), [["TruncBackward0", [0.0, 0.0]]], torch_only=True),
    Claim("widgets/explain.py", "round with decimals is RoundBackward1",
          lambda t: _name(t.tensor([0.44], requires_grad=True).round(decimals=1).grad_fn),
          "RoundBackward1", torch_only=True),
    Claim("widgets/explain.py", "the straight-through estimator x + (x.round() - x).detach() "
          "passes the gradient 1", _straight_through, [1.0, 1.0]),
    Claim("widgets/explain.py", "anomaly mode names the node that made a nan",
          _anomaly_names_nan_maker,
          "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output."),
    Claim("widgets/explain.py", "a masked assignment after sqrt gives nan at 0 (0 * inf)",
          _masked_assignment_nan, [True, 0.5]),
    Claim("widgets/explain.py", "x = x.detach().requires_grad_() makes a leaf that gets "
          ".grad", _detach_requires_grad_is_leaf, [True, [4.0, 8.0]]),
    Claim("widgets/explain.py", "an integer result has no grad_fn", _integer_result_no_graph,
          [None, False]),
    Claim("widgets/explain.py", "a write to a view of a leaf under no_grad counts on the "
          "leaf's version; one through .data of the view does not",
          _write_through_view_of_leaf, [[1, True], [0, False]]),
    Claim("lesson 10, exercises l10_gan_failing_node and l10_why_gan", "without the step the "
          "second backward runs; with it, a bias-free discriminator fails at MmBackward0",
          _gan_without_bias, [None, True, "MmBackward0"]),
    Claim("lesson 7, exercise feedback", "every SGD step writes the weight in place once",
          _sgd_step_counts_one, 4),
    Claim("lesson 8, exercise feedback", "only saved tensors are version-checked: a Function "
          "that saved its input survives a change of its output", _output_change_after_input_saved,
          [None, [1.0, 2.71828]]),
    Claim("lesson 6, exercise feedback", "y = a * 3; y.detach().zero_(): the version moves, "
          "nothing saved y, no error", _detach_write_unsaved, [1, None, [3.0, 3.0]]),
    Claim("lesson 4, exercise feedback", "u[0] = 666 after u.exp(): t.grad is 2 * exp(2 * t), "
          "the graph was recorded before the write", _exp_graph_before_write, [2.0, 5.43656]),
    Claim("lesson 3, exercise feedback", "exp and a * a save tensors; subtraction, mean and "
          "addition do not, so those graphs run backward twice", _save_nothing_runs_twice,
          [False, True, False, True]),
    Claim("lesson 12, exercise feedback", "(a.sin() * a.exp() * 3.0).sum() packs four "
          "tensors", _packs_of_sin_exp_product, 4),
    Claim("lesson 11, exercise feedback", "the third derivative of sin at [0, 1] is -cos",
          _third_derivative_of_sin, [-1.0, -0.5403]),
    Claim("lesson 4, allow_mutation_on_saved_tensors", "inside the context a saved tensor "
          "is copied just before an in-place op writes into it, backward gets the values as "
          "saved, and only saved tensors that are written are copied", _copy_before_write,
          [1, [3.6487, 4.7183, 9.3891]]),
    Claim("lesson 4, allow_mutation_on_saved_tensors", "a backward after the context closed "
          "is refused", _backward_after_the_context, "AssertionError"),
    Claim("lesson 4, exercise feedback", "inside the context, (u ** 3).sum() then u.add_(1): "
          "t.grad is 3 * u ** 2 of the values before the write", _mutation_allowed_grad,
          [3.0, 12.0, 27.0]),
    Claim("lesson 4, increment_version", "increment_version adds one to the counter a view "
          "shares with its base, one for each tensor of a list", _increment_version_counts,
          [1, 3]),
    Claim("lesson 12, allow_mutation_on_saved_tensors", "the context is a pair of saved-tensor "
          "hooks", _mutation_context_packs_with_hooks, True),
    Claim("lesson 12, post-accumulate hooks", "the hook runs after the tensor hooks and "
          "after the addition into .grad: it sees the sum, with what .grad held before",
          _post_accumulate_after_tensor_hook, [[6.0, 6.0], [12.0, 12.0]]),
    Claim("lesson 12, post-accumulate hooks", "autograd.grad accumulates nothing and calls no "
          "post-accumulate hook", _grad_calls_no_post_accumulate_hook, [[], None, [3.0, 3.0]]),
    Claim("lesson 12, post-accumulate hooks", "a tensor that is not a leaf cannot have one",
          _non_leaf_post_accumulate, "RuntimeError: post accumulate grad hooks cannot be "
          "registered on non-leaf tensors"),
    Claim("lesson 12, multi-grad hooks", "one tensor hook per tensor; a tensor the pass does "
          "not reach or does not need gets None", _multi_grad_count,
          [4, [False, True, True, False]]),
    Claim("widgets/stepper.py, create_graph", "AddBackward0 passes the gradient on as it "
          "is: no op runs, no node is recorded, although the gradient requires grad",
          _add_passes_gradient_on, [["AddBackward0", True, True]]),
]


@pytest.fixture(scope="module")
def minigrad():
    return importlib.import_module("minigrad")


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.text[:60])
def test_claim_holds_in_pytorch(torch, claim):
    assert claim.run(torch) == claim.expected, f"{claim.where}: {claim.text}"


@pytest.mark.parametrize("claim", [c for c in CLAIMS if not c.torch_only],
                         ids=lambda c: c.text[:60])
def test_claim_holds_in_minigrad(minigrad, claim):
    assert claim.run(minigrad) == claim.expected, f"{claim.where}: {claim.text}"

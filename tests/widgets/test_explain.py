"""explain() says, before backward, what backward will do. Each scenario (the lessons'
and the error clinic's) is built on both libraries; explain's findings are then checked
against what `backward()` really does: whether and where it raises and with which
message, which tensors end with .grad None, where gradients are inf/nan or zero."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from widgets import BackwardStepper, explain
from widgets.explain import ERROR, Explanation


def _mul_chain(lib):  # lesson 1
    a = lib.tensor([2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0])
    c = a * b
    return dict(loss=c.sum(), names={"a": a, "b": b, "c": c}, expect={"a": a})


def _reassigned_x(lib):  # lesson 2: x = x * c makes x a non-leaf
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0])
    x = x * c
    return dict(loss=x.sum(), names={"x": x}, expect={"x": x})


def _mul_inplace_saved(lib):  # lesson 2: mul_ on a tensor MulBackward0 saved
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    y = x * x
    x.mul_(2)
    return dict(loss=y.sum(), names={"a": a, "x": x, "y": y})


def _graph_reused_in_loop(lib):  # lesson 3: second iteration through a freed sub-graph
    t = lib.eye(2, requires_grad=True)
    a = lib.ones(2, requires_grad=True)
    y = t @ a
    ((t @ y) ** 2).mean().backward()
    loss = ((t @ y) ** 2).mean()
    return dict(loss=loss, names={"t": t, "a": a, "y": y})


def _exp_then_inplace(lib):  # lesson 4: exp saves its result
    t = lib.arange(3.0, requires_grad=True)
    u = 2 * t
    e = u.exp()
    loss = e.sum()
    e[0] = 6
    return dict(loss=loss, names={"t": t, "u": u, "e": e})


def _times_ten_then_inplace(lib):  # lesson 4: 10 * x saves nothing of x
    t = lib.arange(3.0, requires_grad=True)
    u = 2 * t
    v = 10 * u
    u.add_(1)
    return dict(loss=v.sum(), names={"t": t, "u": u}, expect={"t": t})


def _transpose_inplace(lib):  # lesson 4: t_() changes no value but bumps the version
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = a * 1
    c = b @ b
    b.t_()
    return dict(loss=c.sum(), names={"a": a, "b": b})


def _view_of_leaf_changed(lib):  # a view of a saved leaf written under no_grad
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    head = w[:2]
    with lib.no_grad():
        head.mul_(2)
    return dict(loss=loss, names={"head": head})


def _unbind_products(lib):  # lesson 5
    a = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
    b, c, d = a.unbind()
    return dict(loss=b * c * d, names={"a": a}, expect={"a": a})


def _detach_zero(lib):  # lesson 6: caught through the shared counter
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.exp()
    y.detach().zero_()
    return dict(loss=y.sum(), names={"a": a, "y": y})


def _data_zero(lib):  # lesson 6 / clinic: .data is invisible, backward runs silently
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.exp()
    y.data.zero_()
    return dict(loss=y.sum(), names={"a": a}, expect={"a": a})


def _custom_function_output_modified(lib):  # lesson 8
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * out

    x = lib.tensor([0.5, 1.0], requires_grad=True)
    y = Exp.apply(x)
    loss = y.sum()
    y.add_(1)
    return dict(loss=loss, names={"x": x, "y": y})


def _gan_step_between(lib):  # clinic: optimizer step between graph and second backward
    lib.manual_seed(0)
    disc, gen = lib.nn.Linear(2, 1), lib.nn.Linear(1, 2)
    opt_d = lib.optim.SGD(disc.parameters(), lr=0.1)
    fake = gen(lib.ones(4, 1))
    score = disc(fake)
    (score ** 2).mean().backward(retain_graph=True)
    opt_d.step()
    return dict(loss=(-score).mean(), names={"disc.weight": disc.weight})


def _relu_inplace(lib):  # clinic: nn.ReLU(inplace=True) after an op that saved its output
    x = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    h = x.sigmoid()
    out = lib.nn.ReLU(inplace=True)(h)
    return dict(loss=out.sum(), names={"x": x, "h": h})


def _plus_equals_after_tanh(lib):  # clinic: += on a saved output
    x = lib.tensor([0.1, 0.2], requires_grad=True)
    h = x.tanh()
    loss = (h * 2).sum()
    h += 1
    return dict(loss=loss, names={"x": x, "h": h})


def _no_requires_grad(lib):  # clinic: element 0 of tensors does not require grad
    w = lib.tensor([1.0, 2.0])
    return dict(loss=(w * 3).sum(), names={"w": w}, expect={"w": w})


def _computed_under_no_grad(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        loss = (w * w).sum()
    return dict(loss=loss, names={"w": w}, expect={"w": w})


def _argmax_loss(lib):  # clinic: no gradient through argmax
    x = lib.tensor([0.2, 0.9, 0.1], requires_grad=True)
    return dict(loss=x.argmax(), names={"x": x}, expect={"x": x})


def _comparison_loss(lib):
    x = lib.tensor([0.2, 0.9, 0.1], requires_grad=True)
    return dict(loss=(x > 0.5).sum(), names={"x": x}, expect={"x": x})


def _rnn_hidden_carried(lib):  # clinic: hidden state carried across iterations
    w = lib.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    h = lib.zeros(1, 2)
    for step in range(2):
        h = (h @ w + lib.ones(1, 2)).tanh()
        loss = (h ** 2).sum()
        if step == 0:
            loss.backward()
    return dict(loss=loss, names={"w": w, "h": h})


def _rnn_hidden_detached(lib):  # ... and its fix
    w = lib.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    h = lib.zeros(1, 2)
    for step in range(2):
        h = (h.detach() @ w + lib.ones(1, 2)).tanh()
        loss = (h ** 2).sum()
        if step == 0:
            loss.backward()
    return dict(loss=loss, names={"w": w}, expect={"w": w})


def _to_makes_non_leaf(lib):  # clinic: .to() after requires_grad
    w = lib.tensor([1.0, 2.0], requires_grad=True).to(lib.float64)
    return dict(loss=(w * w).sum(), names={"w": w}, expect={"w": w})


def _reassigned_parameter(lib):  # clinic: the name now points at a new tensor
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    return dict(loss=loss, names={"w": w}, expect={"w": w})


def _frozen_by_detach(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([0.5, 0.5], requires_grad=True)
    loss = (w.detach() * 3 + b).sum()
    return dict(loss=loss, names={"w": w, "b": b}, expect={"w": w, "b": b})


def _not_scalar(lib):  # clinic: grad can be implicitly created only for scalar outputs
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return dict(loss=x * x, names={"x": x}, expect={"x": x})


def _not_scalar_with_vector(lib):  # ... and backward(gradient=v)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return dict(loss=x * x, names={"x": x}, expect={"x": x},
                gradient=lib.tensor([1.0, 10.0]))


def _leaf_as_loss(lib):  # a leaf that requires grad is a graph of one AccumulateGrad
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return dict(loss=x, names={"x": x}, expect={"x": x})


def _scalar_leaf_as_loss(lib):
    x = lib.tensor(3.0, requires_grad=True)
    return dict(loss=x, names={"x": x}, expect={"x": x})


def _sqrt_at_zero(lib):  # clinic: NaN/inf from a finite forward pass
    x = lib.tensor([0.0, 4.0, 9.0], requires_grad=True)
    return dict(loss=x.sqrt().sum(), names={"x": x}, expect={"x": x})


def _masked_sqrt(lib):  # masked assignment: the masked position still gets 0 * inf
    x = lib.tensor([0.0, 4.0, 9.0], requires_grad=True)
    y = 2 * x.sqrt()
    y[x == 0] = 0.0
    return dict(loss=y.sum(), names={"x": x}, expect={"x": x})


def _masked_sqrt_result_itself(lib):  # ... straight into sqrt's saved result: refused
    x = lib.tensor([0.0, 4.0, 9.0], requires_grad=True)
    y = x.sqrt()
    y[x == 0] = 0.0
    return dict(loss=y.sum(), names={"x": x, "y": y})


def _mask_multiplied(lib):
    x = lib.tensor([0.0, 4.0, 9.0], requires_grad=True)
    return dict(loss=((x > 0) * x.sqrt()).sum(), names={"x": x}, expect={"x": x})


def _where_sqrt(lib):
    if not hasattr(lib, "where"):
        pytest.skip(f"{lib.__name__} has no where()")
    x = lib.tensor([0.0, 4.0, 9.0], requires_grad=True)
    y = lib.where(x > 0, x.sqrt(), lib.zeros(3))
    return dict(loss=y.sum(), names={"x": x}, expect={"x": x})


def _atan2_at_origin(lib):
    y = lib.tensor([0.0, 1.0], requires_grad=True)
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    return dict(loss=lib.atan2(y, x).sum(), names={"x": x, "y": y}, expect={"x": x, "y": y})


def _log_at_zero(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    return dict(loss=(x.log() * 0).sum(), names={"x": x}, expect={"x": x})


def _divide_by_zero(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    d = lib.tensor([0.0, 2.0], requires_grad=True)
    return dict(loss=(x / d * 0).sum(), names={"x": x, "d": d}, expect={"x": x, "d": d})


def _pow_half_at_zero(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    return dict(loss=(x ** 0.5).sum(), names={"x": x}, expect={"x": x})


def _pow_zero_at_zero(lib):  # x ** 0 is flat: no infinite slope at 0
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    return dict(loss=(x ** 0).sum(), names={"x": x}, expect={"x": x})


def _round_has_zero_gradient(lib):  # clinic: ops without a useful gradient
    x = lib.tensor([0.4, 1.6], requires_grad=True)
    if not hasattr(x, "round"):
        pytest.skip(f"{lib.__name__} has no round()")
    return dict(loss=(x * 3).round().sum(), names={"x": x}, expect={"x": x})


SCENARIOS = [
    _mul_chain, _reassigned_x, _mul_inplace_saved, _graph_reused_in_loop, _exp_then_inplace,
    _times_ten_then_inplace, _transpose_inplace, _view_of_leaf_changed, _unbind_products,
    _detach_zero, _data_zero,
    _custom_function_output_modified, _gan_step_between, _relu_inplace, _plus_equals_after_tanh,
    _no_requires_grad, _computed_under_no_grad, _argmax_loss, _comparison_loss,
    _rnn_hidden_carried, _rnn_hidden_detached, _to_makes_non_leaf, _reassigned_parameter,
    _frozen_by_detach, _not_scalar, _not_scalar_with_vector, _leaf_as_loss,
    _scalar_leaf_as_loss, _sqrt_at_zero, _masked_sqrt,
    _masked_sqrt_result_itself, _mask_multiplied, _where_sqrt, _atan2_at_origin,
    _log_at_zero, _divide_by_zero, _pow_half_at_zero, _pow_zero_at_zero,
    _round_has_zero_gradient,
]

MESSAGES = {
    "modified": "modified by an inplace operation",
    "released": "backward through the graph a second time",
    "no_graph": "does not require grad and does not have a grad_fn",
    "not_scalar": "grad can be implicitly created only for scalar outputs",
}


def _grad(tensor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when a non-leaf's .grad is read
        return tensor.grad


def _engine_failure_node(lib, scenario) -> str:
    """The node where the engine raised, found by stepping a fresh copy of the program."""
    stepper = BackwardStepper(scenario(lib)["loss"])
    stepper.last()
    assert stepper.error is not None
    return stepper.current_node_name


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__.strip("_"))
def test_explain_predicts_what_backward_does(lib, scenario):
    case = scenario(lib)
    loss, gradient = case["loss"], case.get("gradient")
    report = explain(loss, names=case["names"], expect_grads=case.get("expect"),
                     gradient=gradient)
    assert isinstance(report, Explanation)
    try:
        loss.backward(gradient)
        error = None
    except RuntimeError as raised:
        error = raised

    assert report.will_raise == (error is not None), report.text
    if error is not None:
        failure = report.failure
        assert MESSAGES[failure.kind] in str(error), (failure.kind, str(error))
        if failure.kind == "modified":
            now, then = failure.current_version, failure.saved_version
            assert f"is at version {now}; expected version {then}" in str(error)
        if failure.kind in ("modified", "released"):
            name = type(failure.node).__name__
            assert name == _engine_failure_node(lib, scenario)
        return

    # backward ran: the tensors explain warned about have no gradient, the others have.
    expected = case.get("expect", {})
    silent = {id(f.tensor) for f in report.findings if f.tensor is not None}
    for name, tensor in expected.items():
        assert (_grad(tensor) is None) == (id(tensor) in silent), (name, report.text)
    for finding in report.of_kind("non_leaf_grad_none"):
        for name in finding.details["names"]:
            assert _grad(case["names"][name]) is None
    nan = report.of_kind("nan_gradient")
    leaves = [t for t in expected.values() if _grad(t) is not None]
    bad = [np.flatnonzero(~np.isfinite(_grad(t).numpy())).tolist() for t in leaves]
    if nan:
        assert any(b == nan[0].details["positions"] for b in bad), (bad, report.text)
    else:
        assert not any(bad), report.text
    if report.of_kind("zero_gradient"):
        assert all(not np.any(_grad(t).numpy()) for t in leaves)


def test_explain_does_not_change_anything(lib):
    case = _exp_then_inplace(lib)
    loss = case["loss"]
    versions = {k: t._version for k, t in case["names"].items()}
    explain(loss, names=case["names"])
    assert {k: t._version for k, t in case["names"].items()} == versions
    assert case["names"]["t"].grad is None


def test_the_figure_outlines_the_nodes_concerned(lib):
    case = _exp_then_inplace(lib)
    report = explain(case["loss"], names=case["names"])
    assert report.failure.kind == "modified" and report.failure.attr == "result"
    assert report.failure.details["inplace_op"].startswith("an assignment")
    assert report.failure.tensor is case["names"]["e"]
    html = report._repr_html_()
    assert "data:image/png;base64," in html and "will raise" in html
    drawing_highlight = [type(f.node).__name__ for f in report.findings if f.node is not None]
    assert drawing_highlight == ["ExpBackward0"]


def test_inplace_op_is_named_when_the_tensor_is_reachable(lib):
    report = explain(**_kw(_plus_equals_after_tanh(lib)))
    assert report.failure.details["inplace_op"].startswith("add_")
    report = explain(**_kw(_gan_step_between(lib)))
    assert "not record" in report.failure.details["inplace_op"]
    assert "optimizer" in report.failure.fix
    case = _view_of_leaf_changed(lib)
    report = explain(**_kw(case))
    assert report.failure.tensor is case["names"]["head"]
    assert report.failure.details["inplace_op"].startswith("a write through this view of a leaf")


def test_a_clean_graph_says_so(lib):
    case = _mul_chain(lib)
    report = explain(case["loss"], names={"a": case["names"]["a"]}, expect_grads=[])
    assert report.findings == [] and not report.will_raise
    assert "nothing here looks wrong" in report.text


def test_errors_are_severity_error_only_when_backward_raises(lib):
    for scenario in (_sqrt_at_zero, _to_makes_non_leaf, _data_zero):
        report = explain(**_kw(scenario(lib)))
        assert all(f.severity != ERROR for f in report.findings)


def test_bad_input(lib):
    with pytest.raises(TypeError, match="explain expects a tensor"):
        explain([1.0, 2.0])
    with pytest.raises(TypeError, match="not a tensor"):
        explain(_mul_chain(lib)["loss"], expect_grads=[3.0])


def _kw(case):
    return dict(loss_or_tensor=case["loss"], names=case["names"],
                expect_grads=case.get("expect"), gradient=case.get("gradient"))

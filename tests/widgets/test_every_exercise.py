"""Every exercise of the course, enumerated from the banks: a right answer (in another
form than the answer key's, where it has one) passes and a wrong one is rejected."""

from __future__ import annotations

import re

import numpy as np
import pytest

from widgets import exercises
from widgets.exercises import EXERCISES, WrongAnswer, check


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_PROGRESS", "off")


def _other_form(answer):
    """The same answer written another way: tensors as nested lists, lists as tensors,
    strings with other spacing and case."""
    import minigrad

    if hasattr(answer, "detach"):
        return answer.detach().numpy().tolist()
    if isinstance(answer, list) and exercises._numbers(answer) is not None:
        return minigrad.tensor(exercises._numbers(answer).tolist())
    if isinstance(answer, str):
        return answer.upper().replace(" ", "")
    if isinstance(answer, (set, frozenset)):
        return [a.replace(" ", "") if isinstance(a, str) else a for a in answer]
    return answer


def _wrong(answer):
    if isinstance(answer, bool):
        return not answer
    if isinstance(answer, (int, float)):
        return answer + 1
    if hasattr(answer, "detach") or exercises._numbers(answer) is not None:
        arr = exercises._numbers(answer) if not hasattr(answer, "detach") else \
            np.asarray(answer.detach().numpy(), np.float64)
        return (arr + 1).tolist()
    if isinstance(answer, str):
        return answer + "x"
    if isinstance(answer, (set, frozenset)):
        return set(answer) ^ {"zz"}
    if isinstance(answer, list):
        return list(reversed(answer)) + [None]
    return object()


VALUES = sorted(n for n, e in EXERCISES.items() if e.expected is not None)
CHOICES = sorted(n for n, e in EXERCISES.items() if e.choices)
CODE = sorted(n for n, e in EXERCISES.items() if e.verify is not None)


@pytest.mark.parametrize("name", VALUES)
def test_value_exercise_accepts_the_answer_in_another_form_and_rejects_a_wrong_one(name):
    answer = exercises.expected_answer(name)
    check(name, answer)
    check(name, _other_form(answer))
    with pytest.raises(WrongAnswer):
        check(name, _wrong(answer))


@pytest.mark.parametrize("name", CHOICES)
def test_choice_accepts_the_right_key_and_rejects_every_other(name):
    ex = EXERCISES[name]
    check(name, f" {ex.correct.upper()} ")
    for choice in ex.choices:
        if choice.key != ex.correct:
            with pytest.raises(WrongAnswer, match=re.escape(choice.feedback[:20])):
                check(name, choice.key)


# -- coding exercises: a right and a wrong answer for each ------------------------------------


def _mg():
    import minigrad

    return minigrad


def grad_of_square(values):
    x = _mg().tensor(values, requires_grad=True)
    (x * x).sum().backward()
    return x.grad


def count_accumulate_grads(root):
    seen, stack, count = set(), [root.grad_fn], 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        count += type(node).__name__ == "AccumulateGrad"
        stack.extend(n for n, _ in node.next_functions)
    return count


def count_first_level(root):
    return sum(type(n).__name__ == "AccumulateGrad" for n, _ in root.grad_fn.next_functions)


def grads_with_intermediate(a, b, c):
    x1 = a * b
    x1.retain_grad()
    ((x1 * c) ** 2).sum().backward()
    return a.grad, x1.grad


def grads_by_formula(a, b, c):
    x1 = a * b
    x2 = x1 * c
    (x2 ** 2).sum().backward()
    return a.grad, (2 * x2 * c).detach()


def train_l3(w, xs, lr):
    torch = _mg()
    losses = []
    for x in xs:
        s = w.exp()
        loss = ((s * x).sum() - 1) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


def train_l3_retained(w, xs, lr):
    """The hoisted loop with retain_graph=True: no error, but s keeps the first w."""
    torch = _mg()
    losses, s = [], w.exp()
    for x in xs:
        loss = ((s * x).sum() - 1) ** 2
        loss.backward(retain_graph=True)
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


def train_l3_fixed_lr(w, xs, lr):
    """Right for the lesson's run (lr = 0.1), wrong for any other step size."""
    return train_l3(w, xs, 0.1)


def train_l7(model, x, y, steps, lr):
    torch = _mg()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def train_l7_no_zero_grad(model, x, y, steps, lr):
    torch = _mg()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def run_losses(w, steps):
    out = []
    for _ in range(steps):
        loss = (w ** 2).sum()
        loss.backward()
        out.append(loss.item())
    return out


def _functions():
    torch = _mg()

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    class SquareNoGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x

    class MyTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.tanh()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * (1 - result * result)

    class MyTanhInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.tanh()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (1 - x.tanh() ** 2)

    return Square, SquareNoGrad, MyTanh, MyTanhInput


def rnn(torch, w, xs, detach=True):
    h = torch.zeros(1, 2)
    losses = []
    for x in xs:
        h = ((h.detach() if detach else h) @ w + x).tanh()
        loss = (h ** 2).sum()
        loss.backward()
        losses.append(loss.item())
    return losses


def grad_norm_grad(f, x):
    torch = _mg()
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (out,) = torch.autograd.grad((g ** 2).sum(), x)
    return out


def grad_norm_grad_without_graph(f, x):
    torch = _mg()
    (g,) = torch.autograd.grad(f(x), x)
    (out,) = torch.autograd.grad((g ** 2).sum(), x)  # raises: g has no graph
    return out


def grad_norm_grad_halved(f, x):
    """H g instead of 2 H g: (g * g.detach()).sum() differentiates only one factor."""
    torch = _mg()
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (out,) = torch.autograd.grad((g * g.detach()).sum(), x)
    return out


def version_checked_hooks():
    def pack(tensor):
        return tensor, tensor._version

    def unpack(packed):
        tensor, version = packed
        if tensor._version != version:
            raise RuntimeError("a saved tensor was modified in place")
        return tensor

    return pack, unpack


def _engines():
    from tests.widgets.test_exercises import _recursive_engine, _solution_engine

    return _solution_engine, _recursive_engine


def sgd_in_backward(params, lr):
    """The step inside backward, by hand: update, then free the gradient."""
    def step(p):
        with _mg().no_grad():
            p.sub_(lr * p.grad)
        p.grad = None

    for p in params:
        p.register_post_accumulate_grad_hook(step)


def sgd_in_backward_keeping_grads(params, lr):
    """Steps, but leaves .grad to accumulate: the second step is too big."""
    def step(p):
        with _mg().no_grad():
            p.sub_(lr * p.grad)

    for p in params:
        p.register_post_accumulate_grad_hook(step)


def _code_answers():
    square, square_no_grad, my_tanh, my_tanh_input = _functions()
    engine, recursive = _engines()
    return {
        "l0_grad_of_square": (grad_of_square, lambda values: 2 * _mg().tensor(values)),
        "l1_count_leaves": (count_accumulate_grads, count_first_level),
        "l2_keep_intermediate": (grads_with_intermediate, grads_by_formula),
        "l3_fix_loop": (train_l3, train_l3_retained),
        "l4_exp_plus_one": (lambda x: x.exp() + 1, lambda x: x.exp().add_(1)),
        "l5_double_first": (lambda a: (lambda b, c, d: (b * 2) * c * d)(*a.unbind()),
                            lambda a: (lambda b, c, d: b.mul_(2) * c * d)(*a.unbind())),
        "l6_record_losses": (run_losses, lambda w, steps: [5.0] * steps),
        "l7_fix_loop": (train_l7, train_l7_no_zero_grad),
        "l8_square": (square, square_no_grad),
        "l8_tanh_saves_output": (my_tanh, my_tanh_input),
        "l9_my_backward": (engine, recursive),
        "l10_relu_out_of_place": (lambda torch, x: torch.relu(x.sigmoid()),
                                  lambda torch, x: x.sigmoid()),
        "l10_rnn_detach": (rnn, lambda torch, w, xs: rnn(torch, w, xs, detach=False)),
        "l10_to_numpy": (lambda t: t.detach().numpy(), lambda t: t.data.numpy()),
        "l10_safe_sqrt": (lambda torch, x: x.clamp(min=1e-6).sqrt(),
                          lambda torch, x: x.sqrt() * (x > 0)),
        "l11_grad_norm_grad": (grad_norm_grad, grad_norm_grad_without_graph),
        "l12_version_checked_hooks": (version_checked_hooks,
                                      lambda: (lambda t: t, lambda t: t)),
        "l12_sgd_in_backward": (sgd_in_backward, sgd_in_backward_keeping_grads),
    }


def test_every_coding_exercise_has_a_right_and_a_wrong_answer_here():
    assert sorted(_code_answers()) == CODE


@pytest.mark.parametrize("name", CODE)
def test_coding_exercise_accepts_the_right_answer_and_rejects_the_wrong_one(name):
    right, wrong = _code_answers()[name]
    check(name, right)
    with pytest.raises(WrongAnswer):
        check(name, wrong)


# -- a coding checker runs the answer on a second input: one fitted to the first fails ----


def run_l6_constant(w, steps):
    """Runs backward, but returns the first run's losses (w = [1, -2]: 5 each time)."""
    for _ in range(steps):
        (w ** 2).sum().backward()
    return [5.0] * steps


def _fitted_to_the_sample():
    """For each checker that runs the learner's code on the lesson's sample input and on a
    second one: an answer right on the sample but not in general, and how the checker's
    message names the second input (so the test shows which run rejected it)."""
    return {
        "l3_fix_loop": (train_l3_fixed_lr, "w = [0.3, 0.0, -0.5], lr = 0.05"),
        # max(x) is 1 for the sample [0, 1, -1]
        "l4_exp_plus_one": (lambda x: x.exp() + x.detach().max(), "x = [2.0, -0.5]"),
        # b * b + 1 equals 2 * b, with the same slope, at b = 1 only
        "l5_double_first": (lambda a: (lambda b, c, d: (b * b + 1) * c * d)(*a.unbind()),
                            "a = [-1.5, 0.5, 2.0]"),
        "l6_record_losses": (run_l6_constant, "w = [0.5, 3.0, -1.0]"),
        # right for the 1-d sample, flattens a 2-d tensor
        "l10_to_numpy": (lambda t: t.detach().numpy().reshape(-1), "shape [2, 2]"),
    }


@pytest.mark.parametrize("name", sorted(_fitted_to_the_sample()))
def test_an_answer_fitted_to_the_sample_input_fails_on_the_second(name):
    fitted, second_input = _fitted_to_the_sample()[name]
    with pytest.raises(WrongAnswer, match=re.escape(second_input)):
        check(name, fitted)


def test_every_exercise_is_covered():
    assert sorted(VALUES + CHOICES + CODE) == sorted(EXERCISES)


# -- every answer key is what PyTorch gives ----------------------------------------------------


def _banks():
    from widgets import _clinic_exercises, _exercise_bank, _graph_too_exercises, _hooks_exercises

    return [m for m in (_exercise_bank, _clinic_exercises, _graph_too_exercises,
                        _hooks_exercises, exercises) if hasattr(m, "_mg")]


# Keys computed from minigrad's internals (its op declarations, its engine's events); what
# they say PyTorch does is checked on PyTorch in tests/parity/test_claims.py instead.
READS_MINIGRAD_INTERNALS = {
    "l4_plus_saves": "claim '+ keeps nothing'",
    "l4_sin_saves": "claim 'sin keeps its input'",
    "l4_sigmoid_saves": "claim 'sigmoid and tanh keep their output'",
    "l9_shared_deps": "claim 'four edges point at ExpBackward0'",
    "l9_transfer_order": "claim 'the engine's order for (a * a + x).sum()'",
}


@pytest.mark.parametrize("name", [n for n in VALUES if n not in READS_MINIGRAD_INTERNALS])
def test_value_answer_key_is_what_pytorch_gives(torch, monkeypatch, name):
    """The key is computed by running minigrad; the same scenario on PyTorch 2.13.0 must
    give the same answer (so no exercise teaches a minigrad quirk)."""
    mine = exercises.expected_answer(name)
    for bank in _banks():
        monkeypatch.setattr(bank, "_mg", lambda: torch)
    theirs = exercises.expected_answer(name)
    assert exercises.same(mine, theirs), (mine, theirs)

"""The exercise checks: right answers pass quietly, wrong answers the issue found are
rejected, stubs say "not yet solved" without stopping a run, choices explain each
wrong option, progress is remembered and an exercise can be reset."""

from __future__ import annotations

import warnings

import pytest

from minigrad.autograd import Function
from widgets import exercises
from widgets.exercises import (
    EXERCISES,
    NotSolvedYet,
    WrongAnswer,
    check,
    grade,
    progress,
    reset_exercise,
    show_choices,
    starter_code,
)


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_PROGRESS", str(tmp_path / "progress.json"))
    exercises._SOLVED_HERE.clear()
    yield
    exercises._SOLVED_HERE.clear()


# -- 2.5: the gradient kept at x1 -----------------------------------------------------------


def grads_right(a, b, c):
    x1 = a * b
    x1.retain_grad()
    x2 = x1 * c
    (x2 ** 2).sum().backward()
    return a.grad, x1.grad


def grads_returning_c(a, b, c):
    x2 = a * b * c
    (x2 ** 2).sum().backward()
    return a.grad, c


def test_l2_keep_intermediate_rejects_returning_c(capsys):
    with pytest.raises(WrongAnswer, match="not a gradient"):
        check("l2_keep_intermediate", grads_returning_c)
    assert check("l2_keep_intermediate", grads_right) is None
    assert capsys.readouterr().out.startswith("Correct!")


def test_l2_keep_intermediate_rejects_a_detached_copy_of_c():
    def copy_of_c(a, b, c):
        (a * b * c).pow(2).sum().backward()
        return a.grad, c.detach().clone()

    with pytest.raises(WrongAnswer, match="x1.grad"):
        check("l2_keep_intermediate", copy_of_c)


# -- 3.7: the fixed loop returns floats, without warnings ---------------------------------


def _sgd_step(w, lr):
    import minigrad

    with minigrad.no_grad():
        w -= lr * w.grad
    w.grad = None


def train_returning_tensors(w, xs, lr):
    losses = []
    for x in xs:
        loss = ((w.exp() * x).sum() - 1) ** 2
        loss.backward()
        _sgd_step(w, lr)
        losses.append(loss)
    return losses


def train_right(w, xs, lr):
    losses = []
    for x in xs:
        loss = ((w.exp() * x).sum() - 1) ** 2
        loss.backward()
        _sgd_step(w, lr)
        losses.append(loss.item())
    return losses


def test_l3_fix_loop_rejects_tensors_and_leaks_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning from the checker fails the test
        with pytest.raises(WrongAnswer, match="Python floats"):
            check("l3_fix_loop", train_returning_tensors)
        check("l3_fix_loop", train_right)


def test_l3_fix_loop_rejects_a_loop_without_backward_or_step():
    def no_backward(w, xs, lr):
        return [(((w.exp() * x).sum() - 1) ** 2).item() for x in xs]

    with pytest.raises(WrongAnswer, match="losses are"):
        check("l3_fix_loop", no_backward)


def test_l3_fix_loop_rejects_the_hoisted_loop():
    def hoisted(w, xs, lr):
        s, losses = w.exp(), []
        for x in xs:
            loss = ((s * x).sum() - 1) ** 2
            loss.backward()
            _sgd_step(w, lr)
            losses.append(loss.item())
        return losses

    with pytest.raises(WrongAnswer, match="second time"):
        check("l3_fix_loop", hoisted)


# -- 6.4: the losses and the backward calls are checked --------------------------------------


def test_l6_record_losses_rejects_made_up_floats_and_missing_backward():
    with pytest.raises(WrongAnswer, match="losses are"):
        check("l6_record_losses", lambda w, steps: [0.0] * steps)

    def no_backward(w, steps):
        return [(w ** 2).sum().item() for _ in range(steps)]

    with pytest.raises(WrongAnswer, match="backward"):
        check("l6_record_losses", no_backward)

    def right(w, steps):
        losses = []
        for _ in range(steps):
            loss = (w ** 2).sum()
            loss.backward()
            losses.append(loss.item())
        return losses

    check("l6_record_losses", right)


# -- 8.4 and 8.5: backward must use the incoming gradient -----------------------------------


class SquareIgnoringGrad(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class TanhIgnoringGrad(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.tanh()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return 1 - result * result


class Tanh(TanhIgnoringGrad):
    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * (1 - result * result)


def test_l8_functions_that_ignore_the_incoming_gradient_are_rejected():
    with pytest.raises(WrongAnswer, match="incoming gradient"):
        check("l8_square", SquareIgnoringGrad)
    check("l8_square", Square)
    with pytest.raises(WrongAnswer, match="a.grad is"):
        check("l8_tanh_saves_output", TanhIgnoringGrad)
    check("l8_tanh_saves_output", Tanh)


# -- stubs, output, choices ------------------------------------------------------------------


def test_a_stub_says_not_yet_solved_and_does_not_stop_the_run(capsys):
    assert check("l0_add_node", NotImplemented) is None

    def stub(values):
        raise NotImplementedError("not yet solved: write your code here")

    assert check("l0_grad_of_square", stub) is None
    out = capsys.readouterr().out.splitlines()
    assert [line.split(".")[0] for line in out] == [
        "Not yet solved: exercise 'l0_add_node'",
        "Not yet solved: exercise 'l0_grad_of_square'",
    ]
    assert exercises.solved_exercises() == set()


def test_a_right_answer_prints_its_message_and_returns_nothing(capsys):
    assert check("l0_add_node", "AddBackward0") is None
    assert capsys.readouterr().out.startswith("Correct! Each op records a node")


def test_multiple_choice_explains_the_option_chosen(capsys):
    choice_names = [n for n, e in EXERCISES.items() if e.choices]
    assert len({EXERCISES[n].lesson for n in choice_names}) >= 4
    for name in choice_names:
        ex = EXERCISES[name]
        for option in ex.choices:
            if option.key == ex.correct:
                check(name, option.key.upper())  # letters in either case
            else:
                with pytest.raises(WrongAnswer) as wrong:
                    check(name, option.key)
                assert option.feedback in str(wrong.value)
        with pytest.raises(WrongAnswer, match="answer with one of"):
            check(name, "zz")
    show_choices(choice_names[0])
    out = capsys.readouterr().out
    assert all(f"({c.key}) {c.text}" in out for c in EXERCISES[choice_names[0]].choices)


def test_grade_fails_the_stub_and_wrong_answers_and_passes_a_right_one_silently(capsys):
    """nbgrader's grade cells: only a right answer runs without an error."""
    with pytest.raises(NotSolvedYet, match="^Not yet solved: exercise 'l0_add_node'"):
        grade("l0_add_node", NotImplemented)

    def stub(values):
        raise NotImplementedError("not yet solved: write your code here")

    with pytest.raises(NotSolvedYet, match="exercise 'l0_grad_of_square'"):
        grade("l0_grad_of_square", stub)
    with pytest.raises(WrongAnswer, match="'MulBackward0' is not right"):
        grade("l0_add_node", "MulBackward0")
    ex = EXERCISES["l0_why_accumulate"]
    wrong = next(c.key for c in ex.choices if c.key != ex.correct)
    with pytest.raises(WrongAnswer, match=rf"\({wrong}\) is not right"):
        grade("l0_why_accumulate", wrong)
    assert grade("l0_add_node", "AddBackward0") is None
    assert grade("l0_why_accumulate", ex.correct) is None
    # nothing printed (nbgrader reads a cell's output) and no progress recorded
    assert capsys.readouterr().out == ""
    assert exercises.solved_exercises() == set()


# -- progress and reset ----------------------------------------------------------------------


def test_progress_remembers_solved_exercises_across_kernels(capsys):
    check("l0_is_leaf", False)
    exercises._SOLVED_HERE.clear()  # a new kernel: only the file remembers
    assert exercises.solved_exercises() == {"l0_is_leaf"}
    capsys.readouterr()
    progress(0)
    out = capsys.readouterr().out
    line = out.splitlines()[0]
    assert line.startswith("lesson 0: 1 of ") and "open: l0_add_node" in line
    assert "l0_is_leaf" not in line


def test_progress_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_PROGRESS", "off")
    check("l0_is_leaf", False)
    exercises._SOLVED_HERE.clear()
    assert exercises.solved_exercises() == set()


def test_reset_exercise_gives_back_the_learner_stub_and_forgets_the_solution(capsys,
                                                                             monkeypatch):
    import IPython

    check("l0_is_leaf", False)
    code = starter_code("l0_is_leaf")
    assert "answer_0_2 = NotImplemented" in code and 'check("l0_is_leaf"' in code
    # Outside IPython (whether an earlier test made a shell or not): printed.
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    reset_exercise("l0_is_leaf")
    assert "l0_is_leaf" not in exercises.solved_exercises()
    assert code in capsys.readouterr().out
    # In a notebook: the cell itself gets the starter code back.
    replaced = []

    class Shell:
        def set_next_input(self, text, replace=False):
            replaced.append((text, replace))

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    check("l0_is_leaf", False)
    reset_exercise("l0_is_leaf")
    assert replaced == [(code, True)] and "l0_is_leaf" not in exercises.solved_exercises()
    with pytest.raises(KeyError, match="no exercise called"):
        reset_exercise("l0_nonsense")


def test_every_exercise_is_checked_in_a_learner_notebook():
    for name in EXERCISES:
        assert f'check("{name}"' in starter_code(name)


def test_value_exercises_agree_with_their_own_expected_answers():
    for name, ex in EXERCISES.items():
        if ex.expected is not None:
            check(name, exercises.expected_answer(name))


# -- 9.4: the learner's engine is checked against minigrad's on random graphs ------------


def _solution_engine(root, *, pick=None, add=True):
    """A correct engine; `pick` changes the queue's priority, `add=False` overwrites a
    buffer slot instead of summing into it (two wrong engines)."""
    import heapq

    import minigrad as mg
    from widgets.exercises import run_node

    deps, stack, seen = {}, [root.grad_fn], {root.grad_fn}
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    priority = pick or (lambda node: -node._sequence_nr())
    buffers = {root.grad_fn: {0: mg.ones(root.shape)}}
    ready, pushed, order = [(0, 0, root.grad_fn)], 1, []
    while ready:
        node = heapq.heappop(ready)[2]
        slots = buffers.pop(node)
        order.append(node)
        for (nxt, nr), grad in zip(node.next_functions,
                                   run_node(node, [slots.get(i) for i in range(max(slots) + 1)])):
            if nxt is None:
                continue
            slot = buffers.setdefault(nxt, {})
            slot[nr] = grad if (slot.get(nr) is None or not add) else slot[nr] + grad
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (priority(nxt), pushed, nxt))
                pushed += 1
    return order


def _recursive_engine(root):
    import minigrad as mg
    from widgets.exercises import run_node

    order = []

    def visit(node, grad):
        order.append(node)
        for (nxt, _), g in zip(node.next_functions, run_node(node, [grad])):
            if nxt is not None:
                visit(nxt, g)

    visit(root.grad_fn, mg.ones(root.shape))
    return order


def test_l9_my_backward_accepts_an_engine_and_rejects_three_wrong_ones():
    check("l9_my_backward", _solution_engine)
    with pytest.raises(WrongAnswer, match="ran more than once"):
        check("l9_my_backward", _recursive_engine)
    with pytest.raises(WrongAnswer, match="largest _sequence_nr"):  # a FIFO queue
        check("l9_my_backward", lambda root: _solution_engine(root, pick=lambda node: 0))
    with pytest.raises(WrongAnswer, match="has .grad"):  # streams overwritten, not summed
        check("l9_my_backward", lambda root: _solution_engine(root, add=False))

"""Lesson 10's exercises: every answer key, computed with minigrad, is what PyTorch
gives for the same scenario; the coding checks accept the fix and refuse the bug."""

from __future__ import annotations

import pytest

from widgets import _clinic_exercises as bank
from widgets.exercises import EXERCISES, WrongAnswer, check, expected_answer, same

VALUE_EXERCISES = [n for n in bank.CLINIC_EXERCISES if EXERCISES[n].expected is not None]


def test_every_clinic_exercise_is_registered():
    assert len(bank.CLINIC_EXERCISES) == 16
    assert all(name.startswith("l10_") for name in bank.CLINIC_EXERCISES)


@pytest.mark.parametrize("name", VALUE_EXERCISES)
def test_answer_key_agrees_with_pytorch(torch, monkeypatch, name):
    mine = expected_answer(name)
    monkeypatch.setattr(bank, "_mg", lambda: torch)
    theirs = expected_answer(name)
    assert same(mine, theirs), (mine, theirs)


def relu_fixed(torch, x):
    return torch.relu(x.sigmoid())


def relu_inplace(torch, x):
    return torch.nn.ReLU(inplace=True)(x.sigmoid())


def rnn_fixed(torch, w, xs):
    return bank.reference_rnn(torch, w, xs)


def rnn_without_detach(torch, w, xs):
    h = torch.zeros(1, 2)
    losses = []
    for x in xs:
        h = (h @ w + x).tanh()
        loss = (h ** 2).sum()
        loss.backward()
        losses.append(loss.item())
    return losses


def rnn_retain_graph(torch, w, xs):
    h = torch.zeros(1, 2)
    losses = []
    for x in xs:
        h = (h @ w + x).tanh()
        loss = (h ** 2).sum()
        loss.backward(retain_graph=True)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize(
    "name, good, bad, message",
    [
        ("l10_relu_out_of_place", relu_fixed, relu_inplace, "backward failed"),
        ("l10_rnn_detach", rnn_fixed, rnn_without_detach, "freed graph"),
        ("l10_rnn_detach", rnn_fixed, rnn_retain_graph, "w.grad differs"),
        ("l10_to_numpy", lambda t: t.detach().numpy(), lambda t: t.numpy(), "raised"),
        ("l10_safe_sqrt", lambda torch, x: x.clamp(min=1e-12).sqrt(),
         lambda torch, x: x.sqrt() * (x > 0), "not finite"),
    ],
)
def test_coding_checks_accept_the_fix_and_refuse_the_bug(capsys, monkeypatch, name, good, bad,
                                                          message):
    monkeypatch.setenv("MINIGRAD_COURSE_PROGRESS", "off")
    check(name, good)  # a right answer is confirmed in words; a wrong one raises
    said = capsys.readouterr().out
    assert said.strip() and "not yet solved" not in said.lower()
    with pytest.raises(WrongAnswer, match=message):
        check(name, bad)

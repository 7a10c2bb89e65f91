"""Run by test_sealed_key.py in a fresh Python whose ``widgets`` is a built package's
(sealed) and whose minigrad is the checkout's: every exercise checked against the seals
as a learner's kernel would, with the right and wrong answers of test_every_exercise.py.

    python sealed_install_check.py INSTALLED_SITE REPO REPORT.json

The plain answers come from the checkout's banks, loaded under another package name.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import traceback
import types
from pathlib import Path


def plain_exercises(repo: Path) -> types.ModuleType:
    """The checkout's widgets.exercises (plain banks) as the package `plain_widgets`."""
    root = types.ModuleType("plain_widgets")
    root.__path__ = [str(repo / "widgets")]
    sys.modules["plain_widgets"] = root
    spec = importlib.util.spec_from_file_location("plain_widgets.exercises",
                                                  repo / "widgets" / "exercises.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(site: str, repo: str, report_file: str) -> None:
    sys.path[:0] = [site, repo]  # widgets from the install, minigrad and tests from the checkout
    import widgets
    from widgets import exercises

    plain = plain_exercises(Path(repo))
    every = importlib.import_module("tests.widgets.test_every_exercise")
    spec = importlib.util.spec_from_file_location("installed_grader",
                                                  Path(widgets.__file__).parent / "_grader.py")
    grader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grader)
    report = {"widgets": widgets.__file__, "sealed": exercises.SEALED, "failures": [],
              "checked": {"value": 0, "choice": 0, "code": 0}}

    def said(fn, *args) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            fn(*args)
        return out.getvalue()

    def rejects(fn, *args, match: str = "") -> bool:
        try:
            fn(*args)
        except Exception as error:  # the grader's private copy has a WrongAnswer of its own
            if type(error).__name__ != "WrongAnswer":
                raise
            return match in str(error)
        return False

    code_answers = every._code_answers()
    for name, ex in sorted(plain.EXERCISES.items()):
        try:
            right_said = f"Correct! {ex.explain}\n"
            if ex.kind == "value":
                answer = plain.expected_answer(name)
                assert said(exercises.check, name, answer) == right_said, "right answer"
                assert said(exercises.check, name, every._other_form(answer)) == right_said, \
                    "right answer in another form"
                assert rejects(exercises.check, name, every._wrong(answer)), "wrong answer"
                grader.grade(name, answer, answer)
                assert rejects(grader.grade, name, every._wrong(answer), answer), "graded wrong"
                with contextlib.suppress(LookupError):
                    exercises.expected_answer(name)
                    raise AssertionError("expected_answer gives the answer")
            elif ex.kind == "choice":
                assert said(exercises.check, name, f" {ex.correct.upper()} ") == right_said
                grader.grade(name, ex.correct, ex.correct)
                for choice in ex.choices:
                    if choice.key != ex.correct:
                        assert rejects(exercises.check, name, choice.key,
                                       match=choice.feedback), f"option {choice.key}"
                        assert rejects(grader.grade, name, choice.key, ex.correct)
            else:
                right, wrong = code_answers[name]
                assert said(exercises.check, name, right) == right_said, "right code"
                assert rejects(exercises.check, name, wrong), "wrong code"
                grader.grade(name, right)
                assert rejects(grader.grade, name, wrong), "graded wrong code"
            report["checked"][ex.kind] += 1
        except Exception as error:
            report["failures"].append(f"{name}: {type(error).__name__}: {error}\n"
                                      + traceback.format_exc()[-1500:])
    for name, (fitted, second_input) in every._fitted_to_the_sample().items():
        if not rejects(exercises.check, name, fitted, match=second_input):
            report["failures"].append(f"{name}: an answer fitted to the sample passes")
    Path(report_file).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:4])

"""The answer key as learners get it: a built wheel holds seals, not answers, and checks
every exercise as before (scripts/seal_answers.py, widgets/_sealed.py)."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from widgets import _sealed, exercises

ROOT = Path(__file__).resolve().parents[2]


def _seal_answers():
    spec = importlib.util.spec_from_file_location("seal_answers",
                                                  ROOT / "scripts" / "seal_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from this checkout's files (as `pip install .` builds it),
    unpacked: what site-packages holds after installing it."""
    seal_answers = _seal_answers()
    base = tmp_path_factory.mktemp("sealed")
    source = base / "source"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--no-build-isolation", "-w", str(base / "dist"), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    site = base / "site"
    with zipfile.ZipFile(next((base / "dist").glob("*.whl"))) as wheel:
        wheel.extractall(site)
    assert seal_answers.bank_modules(site / "widgets")  # the banks are there, sealed
    return site


def test_the_key_is_up_to_date():
    """scripts/answer_key.json seals every exercise's current answer (else: run
    python scripts/seal_answers.py)."""
    assert _seal_answers().write_key(check=True) == 0


def test_a_seal_opens_with_the_answer_in_any_accepted_form_only():
    import minigrad

    seal, secret = _sealed.seal(minigrad.tensor([[1.5, -2.0]]))
    assert _sealed.opens(seal, [[1.5, -2.0]]) == secret
    assert _sealed.opens(seal, minigrad.tensor([[1.5 + 1e-6, -2.0]])) == secret
    assert _sealed.opens(seal, [[1.5, -2.0001]]) is None  # outside the tolerance
    assert _sealed.opens(seal, [1.5, -2.0]) is None  # another shape
    token = _sealed.encrypt("because", secret)
    assert "because" not in token and _sealed.decrypt(token, secret) == "because"


@pytest.mark.parametrize("value", [1e-9, 0.3, 1.0, 1024.0, -7.25, 123456.789])
def test_a_sealed_number_accepts_no_more_than_the_checker(value):
    seal, _ = _sealed.seal(value)
    tolerance = max(1e-5 * abs(value), 1e-6)
    for factor in (0.0, 0.3, -0.3):
        assert _sealed.opens(seal, value + factor * tolerance) is not None
    for factor in (1.01, -1.01, 3.0):
        assert _sealed.opens(seal, value + factor * tolerance) is None
        assert not exercises.same(value, value + factor * tolerance)


def test_the_installed_banks_hold_no_answer(installed):
    texts = {p: p.read_text(encoding="utf-8", errors="replace")
             for p in installed.rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".js")}
    joined = "\n".join(texts.values())
    for name, ex in exercises.EXERCISES.items():
        if ex.kind != "code":  # the explanation after a right answer
            for form in (ex.explain, repr(ex.explain)[1:-1]):
                assert form not in joined, name
    public = "\n".join(ex.question + ex.hint for ex in exercises.EXERCISES.values())
    for name, ex in exercises.EXERCISES.items():
        if ex.kind != "value":
            continue
        answer = exercises.expected_answer(name)
        forms = {repr(answer)}
        if hasattr(answer, "tolist"):
            forms.add(repr(answer.tolist()))
        for form in forms:  # the answer written out, unless the question says it
            if len(form) > 4 and form not in public:
                # written out on its own (not a part of a longer list of inputs)
                alone = re.compile(r"(?<![\[,] )(?<![\[,])" + re.escape(form) + r"(?![,\]])")
                assert not alone.search(joined), (name, form)
    for path in _seal_answers().bank_modules(installed / "widgets"):
        tree = ast.parse(texts[path])
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert not [d for d in defined if d.startswith("reference_")], path
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_choice":
                assert len(node.args) <= 3 and not node.keywords, path
            if isinstance(node, ast.FunctionDef) and any(
                    getattr(getattr(d, "func", None), "id", "") in ("_value", "_reference")
                    for d in node.decorator_list):
                assert ast.unparse(node.body[0]).startswith("raise LookupError"), node.name
    assert re.search(r"^KEY = ", texts[installed / "widgets" / "_answer_key.py"], re.M)


def test_every_exercise_checks_as_before_against_the_installed_seals(installed, tmp_path):
    """Each right answer of test_every_exercise.py passes, in another form too, with the
    same confirmation; each wrong one fails; the grader grades both as before."""
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, str(Path(__file__).with_name(
        "sealed_install_check.py")), str(installed), str(ROOT), str(report)],
        capture_output=True, text=True, env=dict(os.environ, MINIGRAD_COURSE_PROGRESS="off"))
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(report.read_text())
    assert result["sealed"] and result["widgets"].startswith(str(installed))
    assert not result["failures"], "\n".join(result["failures"])
    kinds = {k: sum(e.kind == k for e in exercises.EXERCISES.values())
             for k in ("value", "choice", "code")}
    assert result["checked"] == kinds


def test_the_wheel_holds_the_data_files_the_packages_read(installed):
    # (package data: the stepper's browser side, each lesson's kernels for compiling ahead)
    assert (installed / "widgets" / "web" / "stepper.js").is_file()
    assert (installed / "minigrad" / "kernels" / "course_kernels.json").is_file()

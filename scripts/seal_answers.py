"""The course's answer key, sealed for learners' installs.

The repository is the instructor's source: its exercise banks (``widgets/_exercise_bank.py``
and the other modules that register exercises) compute every expected answer by running
minigrad, name the right option of every question, and hold the reference implementations
of the coding exercises. A learner's install must not. Two steps make it so:

1. ``python scripts/seal_answers.py`` (run after changing an exercise; a test says when it
   is due) runs every exercise's scenario and reference and writes scripts/answer_key.json:
   for each exercise the seal of its answer (salted digests, ``widgets/_sealed.py``), its
   explanation encrypted with the key a right answer opens, and the seals of its reference
   results. An entry whose seal still opens with the current answer keeps its salt, so the
   file changes only where an answer did. ``--check`` only says whether it is up to date.
2. Building the package (a wheel, ``pip install .``, docs/hub/install.sh; setup.py calls
   ``seal_package``) writes that key into the built ``widgets/_answer_key.py`` and rewrites
   every bank module: a value exercise's scenario, a ``_reference`` function's body, a
   question's right option, every explanation and the private helpers only they used are
   left out. Nothing is listed by hand: any exercise registered with ``_value``,
   ``_choice``, ``_code`` or ``_reference`` is treated so. An editable install
   (``make install``) keeps the plain banks: it is the instructor's.

``python scripts/seal_answers.py learner-tree DEST`` writes the course as learners may pull
it (nbgitpuller): this checkout's files with the banks sealed the same way.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY_FILE = ROOT / "scripts" / "answer_key.json"
REGISTRATIONS = ("_value", "_choice", "_code", "_reference")
SEALED_BODY = 'raise LookupError("the answer key is sealed in this install")'
HEADER = ("# Built from the instructor's source by scripts/seal_answers.py: the scenarios,\n"
          "# right options, explanations and reference implementations are left out.\n")


# -- 1. the key ---------------------------------------------------------------------------------


def _current_key(old: dict) -> dict:
    """Every exercise's key entry, reusing `old`'s where it still holds."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from widgets import _sealed, exercises

    key = {}
    for name, ex in sorted(exercises.EXERCISES.items()):
        entry = dict(old.get(name, {}), kind=ex.kind)
        if ex.kind == "code":
            entry.pop("seal", None), entry.pop("explain", None)
        else:
            with exercises._quiet_warnings():
                answer = ex.expected() if ex.kind == "value" else ex.correct
            secret = _sealed.opens(entry["seal"], answer) if "seal" in entry else None
            if secret is None or _sealed.decrypt(entry["explain"], secret) != ex.explain:
                seal, secret = _sealed.seal(answer)
                entry["seal"] = seal
                entry["explain"] = _sealed.encrypt(ex.explain, secret)
        if name in exercises.REFERENCES:
            fn, cases, tolerance = exercises.REFERENCES[name]
            kept = entry.get("references", [])
            entry["references"] = []
            for i, case in enumerate(cases):
                with exercises._quiet_warnings():
                    results = fn(*case)
                old_case = kept[i] if i < len(kept) else {}
                entry["references"].append({
                    k: old_case[k] if k in old_case and _same_seal(old_case[k], v) else
                    _sealed.seal_numbers(v, *tolerance[k]) for k, v in results.items()})
        else:
            entry.pop("references", None)
        key[name] = entry
    return key


def _same_seal(sealed: dict, values) -> bool:
    """Whether `sealed` is the seal of exactly `values` (their cells, not only close)."""
    from widgets import _sealed

    fresh = _sealed.seal_numbers(values, sealed["rtol"], sealed["atol"],
                                 salt=bytes.fromhex(sealed["salt"]))
    return fresh == sealed


def write_key(check: bool = False) -> int:
    old = json.loads(KEY_FILE.read_text()) if KEY_FILE.exists() else {}
    new = _current_key(old)
    if check:
        if new != old:
            changed = sorted(n for n in set(new) | set(old) if new.get(n) != old.get(n))
            print(f"{KEY_FILE.relative_to(ROOT)} is out of date for: {', '.join(changed)}; "
                  "run python scripts/seal_answers.py")
            return 1
        return 0
    KEY_FILE.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
    print(f"{KEY_FILE.relative_to(ROOT)}: {len(new)} exercises")
    return 0


# -- 2. a built package ---------------------------------------------------------------------------


def _registration(call: ast.AST) -> str | None:
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
            and call.func.id in REGISTRATIONS:
        return call.func.id
    return None


def _drop_arguments(call: ast.Call, names: set[str], first_position: int) -> None:
    """Leave out keyword arguments `names` and positional ones from `first_position`."""
    call.args = call.args[:first_position]
    call.keywords = [k for k in call.keywords if k.arg not in names]


def _defined(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return []


def _used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def seal_module(source: str, imported_elsewhere: set[str]) -> str:
    """A bank module's source as a learner's install holds it (see the module docstring)."""
    tree = ast.parse(source)
    sealed_body = ast.parse(SEALED_BODY).body
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            kinds = {_registration(d): d for d in stmt.decorator_list if _registration(d)}
            if "_value" in kinds or "_reference" in kinds:
                stmt.body = list(sealed_body)
                stmt.returns = None
            if "_value" in kinds:  # _value(name, question, hint, explain)
                _drop_arguments(kinds["_value"], {"explain"}, 3)
        elif isinstance(stmt, ast.Expr) and _registration(stmt.value) == "_choice":
            _drop_arguments(stmt.value, {"correct", "explain"}, 3)  # (name, question, options)
    # what is left of the module no longer needs some private helpers: leave them out too,
    # and every reference_* function (a coding exercise's solution)
    defined = {name: stmt for stmt in tree.body for name in _defined(stmt)
               if not any(_registration(d) for d in getattr(stmt, "decorator_list", ()))}
    removable = {n for n in defined if n.startswith(("_", "reference_"))
                 and n not in imported_elsewhere and not n.startswith("__")}
    keep = {n for stmt in tree.body if not set(_defined(stmt)) & removable
            for n in _used(stmt)}
    while True:
        more = {n for name in keep & removable for n in _used(defined[name])} - keep
        if not more:
            break
        keep |= more
    leaked = sorted(n for n in keep & removable if n.startswith("reference_"))
    if leaked:
        raise ValueError(f"shipped code still calls {', '.join(leaked)}: a reference "
                         "implementation is used only through _reference")
    tree.body = [stmt for stmt in tree.body
                 if not (set(_defined(stmt)) and set(_defined(stmt)) <= removable - keep)]
    return HEADER + ast.unparse(tree) + "\n"


def bank_modules(package: Path) -> list[Path]:
    """The modules of `package` (a widgets folder) that register exercises."""
    found = []
    for path in sorted(package.glob("*.py")):
        if path.name in ("exercises.py", "_exercise_kit.py"):  # (they define, not register)
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(_registration(n) for n in ast.walk(tree)):
            found.append(path)
    return found


def _imported_names(package: Path, module: str) -> set[str]:
    """Names other modules of `package` import from `module`."""
    names = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == module and node.level == 1:
                names |= {a.name for a in node.names}
    return names


def seal_package(package: Path, key_file: Path = KEY_FILE) -> None:
    """Seal the built widgets folder `package` in place: the key module, the banks."""
    key = json.loads(key_file.read_text())
    banks = bank_modules(package)
    registered = set()
    for path in banks:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = _registration(node)
            if name and node.args and isinstance(node.args[0], ast.Constant):
                registered.add(node.args[0].value)
    missing = sorted(registered - set(key))
    if missing:
        raise SystemExit(f"{key_file.name} has no entry for {', '.join(missing)}: run "
                         "python scripts/seal_answers.py before building")
    for path in banks:
        sealed = seal_module(path.read_text(encoding="utf-8"),
                             _imported_names(package, path.stem))
        path.unlink()  # a build may share the file with the source tree (a hard link)
        path.write_text(sealed, encoding="utf-8")
    target = package / "_answer_key.py"
    target.write_text('"""The sealed answer key (scripts/seal_answers.py); see _sealed.py."""\n\n'
                      f"KEY = {json.dumps(key, indent=0, sort_keys=True)}\n", encoding="utf-8")


def for_learners(name: str) -> bool:
    """Whether file `name` (relative to the checkout) is in the learners' copy: not the
    solved lessons (notebooks/NN_*.ipynb; notebooks/learner/ holds theirs), not the tests
    (they hold a right answer to every exercise), not the key's source."""
    parts = Path(name).parts
    solved_lesson = len(parts) == 2 and parts[0] == "notebooks" and name.endswith(".ipynb")
    return not (solved_lesson or parts[0] == "tests" or name == "scripts/answer_key.json")


def learner_tree(dest: Path) -> None:
    """This checkout's files (tracked and new, not ignored) that learners get, in `dest`,
    with the banks sealed."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for name in filter(None, files):
        if (ROOT / name).is_file() and for_learners(name):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    seal_package(dest / "widgets")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="key", choices=["key", "learner-tree"])
    parser.add_argument("dest", nargs="?", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="only say whether scripts/answer_key.json is up to date")
    args = parser.parse_args(argv)
    if args.command == "learner-tree":
        if args.dest is None:
            parser.error("learner-tree needs a destination folder")
        learner_tree(args.dest)
        return 0
    return write_key(check=args.check)


if __name__ == "__main__":
    sys.exit(main())

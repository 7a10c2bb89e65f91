"""Arrows point down for real: no module of minigrad looks the package up at run time
(`sys.modules["minigrad"]`) or is given attributes by a module above it, except through
the one registration point, `minigrad/_registry.py` (docs/architecture.md). import-linter
sees imports only; this scan sees the other two ways a layer reaches up."""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

import minigrad
from minigrad import _registry

ROOT = Path(minigrad.__file__).parent

# Uses of `sys.modules` that do not reach up: the namespace registering itself, and the
# kernels package loading its own submodules lazily.
# (`kernels/ahead.py` asks whether it runs in a Jupyter kernel: whether ipykernel and
# IPython are loaded, without loading them in a script)
SYS_MODULES_ALLOWED = {"__init__.py", "kernels/__init__.py", "kernels/ahead.py"}

# Still pending in the ops (being moved to `_registry` with the ops' own rework): a
# formula's names and the tangent helpers read the namespace; the ops give the graph's
# nodes their recording backward and tangent.
PENDING_SYS_MODULES: set[str] = set()
# numba's own class, not minigrad's: its cache saves take a lock, since a lesson and the
# helper compiling its kernels ahead may save two signatures of one kernel at once
# (`kernels/cache.py`, `serialise_cache_writes`)
NUMBA_PATCHED = {("kernels/cache.py", "Cache.save_overload")}
PENDING_ATTRIBUTES = {
    # A counter of the saved-tensor hooks' stack, the state `saved.py` reads on every
    # save (not a definition finishing the module).
    ("autograd/saved_hooks.py", "_saved._pushed"),
}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(p.relative_to(ROOT).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(ROOT.rglob("*.py"))]


def _module_name(rel: str) -> str:
    parts = ["minigrad", *rel[:-3].split("/")]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_objects(rel: str, tree: ast.Module) -> dict[str, object]:
    """Each name a module imports, as the object it is bound to."""
    package = _module_name(rel) if rel.endswith("__init__.py") else \
        _module_name(rel).rpartition(".")[0]
    names: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names[alias.asname or top] = importlib.import_module(
                    alias.name if alias.asname else top)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = importlib.import_module("." * node.level + (node.module or ""), package) \
                if node.level else importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(base, alias.name, None)
                if value is None:  # a submodule not yet an attribute
                    value = importlib.import_module(f"{base.__name__}.{alias.name}")
                names[alias.asname or alias.name] = value
    return names


def _assigned_attributes(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """`x.attr = ...`, `x.attr += ...`, `setattr(x, ...)`, `delattr(x, ...)`: the name
    `x` at the root of the target, and the target."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets
                       for t in (target.elts if isinstance(target, ast.Tuple) else [target])]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("setattr", "delattr") and node.args):
            targets = [node.args[0]]
            if isinstance(targets[0], ast.Name):
                found.append((targets[0].id, node))
            continue
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                found.append((target.value.id, target))
    return found


def _reads_sys_modules(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == "modules"
               and isinstance(node.value, ast.Name) and node.value.id in ("sys", "_sys")
               for node in ast.walk(tree))


def test_no_module_looks_the_package_up():
    offenders = [rel for rel, tree in _modules()
                 if _reads_sys_modules(tree) and rel not in SYS_MODULES_ALLOWED]
    assert sorted(offenders) == sorted(PENDING_SYS_MODULES), (
        "only minigrad/_registry.py hands the namespace down (`_registry.namespace()`)")


def test_no_module_is_given_attributes_from_above():
    """A class or module imported from elsewhere gets attributes only through
    `_registry.attach` (state objects such as `grad_mode.STATE` are written freely)."""
    offenders = set()
    for rel, tree in _modules():
        if rel == "_registry.py":
            continue
        imported = _imported_objects(rel, tree)
        for name, target in _assigned_attributes(tree):
            owner = imported.get(name)
            if isinstance(owner, (type, types.ModuleType)):
                what = ast.unparse(target) if isinstance(target, ast.Attribute) else \
                    f"{name}.<setattr>"
                offenders.add((rel, what))
    assert offenders - NUMBA_PATCHED == PENDING_ATTRIBUTES


def test_the_scan_sees_an_attribute_set_from_above():
    # (the scan itself: a module that finishes Tensor by hand is caught)
    tree = ast.parse("from ..tensor import Tensor\nTensor.backward = print\n"
                     "setattr(Tensor, 'grad_fn', None)\n")
    imported = _imported_objects("autograd/example.py", tree)
    assert [(name, imported[name]) for name, _ in _assigned_attributes(tree)] == \
        [("Tensor", minigrad.Tensor)] * 2
    assert _reads_sys_modules(ast.parse("import sys\nsys.modules['minigrad'].zeros\n"))


def test_attached_methods_are_recorded_with_their_module():
    assert _registry.ATTACHED["Tensor.backward"] == "minigrad.autograd.entry_points"
    assert _registry.ATTACHED["Tensor._grad_accumulator"] == "minigrad.autograd.graph"
    assert _registry.ATTACHED["Tensor.view"] == "minigrad"  # (a declared op's method)
    assert minigrad.Tensor.backward.__module__ == "minigrad.autograd.entry_points"


def test_attachments_beyond_the_declared_ops_are_documented():
    docs = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    by_hand = sorted(name for name, module in _registry.ATTACHED.items()
                     if module != "minigrad")
    assert "Tensor.backward" in by_hand and "saved.SHARE_TANGENT" in by_hand
    assert [name for name in by_hand if f"`{name}`" not in docs] == []


def test_the_namespace_is_registered():
    assert _registry.namespace() is minigrad


def test_utils_checkpoint_is_a_real_submodule():
    import minigrad.utils.checkpoint as checkpoint
    import minigrad.utils.hooks as hooks

    assert minigrad.utils.checkpoint is checkpoint
    assert checkpoint.__name__ == "minigrad.utils.checkpoint"
    assert hooks.RemovableHandle.__module__ == "minigrad.utils.hooks"


def test_saved_roles_are_defined_once():
    """`INPUT`, `OUTPUT`, `VALUE` (what a node saves, `saves = {"alpha": VALUE}`) are
    defined in `autograd/saved.py` only, and imported everywhere else."""
    defined = sorted((rel, target.id) for rel, tree in _modules() for node in ast.walk(tree)
                     if isinstance(node, ast.Assign) for target in node.targets
                     if isinstance(target, ast.Name) and target.id in ("INPUT", "OUTPUT", "VALUE"))
    assert defined == [("autograd/saved.py", "INPUT"), ("autograd/saved.py", "OUTPUT"),
                       ("autograd/saved.py", "VALUE")]

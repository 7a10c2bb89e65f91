"""The widgets read minigrad through its public surface plus the engine's documented
event stream only (docs/architecture.md, "What the widgets may read"): every module of
minigrad a widget imports is on that list, and no name it imports from minigrad is
private. The engine's insides (`engine`, `entry_points`, `input_buffer`, ...) can then
change without breaking the stepper."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

WIDGETS = sorted((Path(__file__).resolve().parents[2] / "widgets").glob("*.py"))

# The public surface, as docs/architecture.md lists it.
PUBLIC = {
    "minigrad",
    "minigrad.autograd",  # backward, grad, Function, ... and backward_events
    "minigrad.autograd.events",  # what the engine reports: the stepper's feed
    "minigrad.autograd.graph",  # PyTorch's torch.autograd.graph: Node, saved-tensor roles
    "minigrad.autograd.forward_ad",
    "minigrad.autograd.functional",
    "minigrad.ops.declaration",  # the table of op declarations (read by the op table)
    "minigrad.nn",
    "minigrad.nn.functional",
    "minigrad.optim",
    "minigrad.utils",
}


def _imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) for each `import minigrad...` and `from minigrad... import
    name` in `path` (name None for a plain import)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names
                      if a.name.split(".")[0] == "minigrad"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "minigrad":
            found += [(node.lineno, node.module, a.name) for a in node.names]
    return found


def _module_of(module: str, name: str | None) -> str:
    """The module an import brings in: `from minigrad.autograd import inplace` brings
    `minigrad.autograd.inplace`; `from minigrad.autograd import backward` brings
    `minigrad.autograd`."""
    if name is None:
        return module
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return module
    return f"{module}.{name}"


@pytest.mark.parametrize("path", WIDGETS, ids=lambda p: p.name)
def test_widgets_import_only_public_minigrad(path):
    for line, module, name in _imports(path):
        where = f"{path.name}:{line}"
        assert _module_of(module, name) in PUBLIC, (
            f"{where} imports {_module_of(module, name)}, not on minigrad's public surface")
        assert name is None or not name.startswith("_"), f"{where} imports private {name}"


def test_the_check_sees_a_private_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from minigrad.autograd import engine\n"
                   "from minigrad.autograd.graph import _tensor_type\n")
    seen = [(_module_of(m, n), n) for _, m, n in _imports(bad)]
    assert seen == [("minigrad.autograd.engine", "engine"),
                    ("minigrad.autograd.graph", "_tensor_type")]
    assert "minigrad.autograd.engine" not in PUBLIC


def test_the_event_stream_is_public():
    import minigrad

    assert "backward_events" in minigrad.autograd.__all__
    assert "events" in minigrad.autograd.__all__
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    kinds = [type(e).__name__ for e in minigrad.autograd.backward_events((x * x).sum())]
    assert kinds[0] == "BackwardStarted" and kinds[-1] == "BackwardFinished"
    assert x.grad.tolist() == [2.0, 4.0]

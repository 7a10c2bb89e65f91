"""The engine is read by learners in one sitting (lesson 9 prints its loop): its
functions stay short and take few parameters. A public function keeps PyTorch's
signature whatever its length (`grad` takes PyTorch's eight parameters)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

AUTOGRAD = Path(__file__).resolve().parents[2] / "minigrad" / "autograd"
ENGINE_MODULES = ["engine.py", "entry_points.py", "input_buffer.py", "hook_calls.py",
                  "events.py"]
PYTORCH_SIGNATURES = {("entry_points.py", "grad")}
MAX_LINES, MAX_PARAMETERS = 60, 6


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            args = node.args
            count = (len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
                     + (args.vararg is not None) + (args.kwarg is not None))
            yield node.name, node.end_lineno - node.lineno + 1, count


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_functions_are_short_and_take_few_parameters(module):
    for name, lines, parameters in _functions(AUTOGRAD / module):
        assert lines <= MAX_LINES, f"{module}: {name} is {lines} lines long"
        if (module, name) not in PYTORCH_SIGNATURES:
            assert parameters <= MAX_PARAMETERS, f"{module}: {name} takes {parameters}"

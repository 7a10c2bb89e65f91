"""pytest/nbval over notebooks/: only the course (solution) notebooks.

The learner versions in notebooks/learner/ stop at their first unsolved exercise on
purpose, so running them under nbval would only report those stops.

The lessons run without PyTorch too (their "same code, real PyTorch" cells then say it is
not installed): where PyTorch is absent, a cell whose stored output shows PyTorch's
results still runs, but its output is not compared.
"""

import importlib.util
import json
import os

collect_ignore = ["learner"]

# (the kernels nbval's kernel inherits this: a lesson's stored outputs do not hold the
# one line minigrad prints when it first compiles, on an empty numba cache)
os.environ["MINIGRAD_COMPILE_NOTICE"] = "off"
# (nor start a helper compiling the lesson's kernels ahead: the tests keep the cores busy)
os.environ["MINIGRAD_COMPILE_AHEAD"] = "off"


def _shows_torch(cell) -> bool:
    text = json.dumps(cell.get("outputs", []))
    return "torch 2." in text or "real PyTorch" in text or "real_torch" in "".join(
        cell.get("source", ""))


def pytest_collection_modifyitems(config, items):
    if importlib.util.find_spec("torch") is not None:
        return
    for item in items:
        cell = getattr(item, "cell", None)
        options = getattr(item, "options", None)
        if cell is not None and isinstance(options, dict) and _shows_torch(cell):
            options["check"] = False

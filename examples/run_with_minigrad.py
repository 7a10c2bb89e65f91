"""Run an example script as if minigrad were PyTorch:

    python examples/run_with_minigrad.py examples/two_layer_net.py

The script's `import torch` (and `import torch.nn.functional as F`, `from torch import
nn`, ...) then imports minigrad. Nothing in the script changes."""

from __future__ import annotations

import runpy
import sys

import minigrad
import minigrad.autograd
import minigrad.nn
import minigrad.nn.functional
import minigrad.optim


def alias_torch_to_minigrad() -> None:
    """Make `torch` and each `torch.<sub>` name minigrad's module of that name."""
    for name, module in list(sys.modules.items()):
        if name == "minigrad" or name.startswith("minigrad."):
            sys.modules["torch" + name[len("minigrad"):]] = module
    assert minigrad  # (the imports above load the submodules the aliases need)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python examples/run_with_minigrad.py SCRIPT")
    alias_torch_to_minigrad()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")

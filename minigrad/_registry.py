"""The one place where a higher layer hands something to a lower one.

minigrad's modules import only from the layers beneath them (docs/architecture.md).
Two things still have to travel upwards-defined, downwards-used, and both go through
here, at import time, so that nothing below ever looks up the package it is part of:

* **the namespace.** `minigrad/__init__.py` registers itself first thing
  (`register_namespace`). Code below the ops that, at run time, calls what only the
  namespace has (gradcheck's `allclose`, the `zeros_like` of `autograd.functional`,
  the names a backward formula's text may use) reads it with `namespace()`.
* **methods on a lower class.** `Tensor` sits near the bottom, but `Tensor.view` is
  declared with the ops and `Tensor.backward` with the engine: the module that defines
  such a method gives it to the class with `attach(Tensor, "backward", fn)`.
  `ATTACHED` records every one of them and who attached it (for the docs and tests).

This module imports nothing from minigrad, so any module may use it.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

__all__ = ["ATTACHED", "attach", "namespace", "register_namespace"]

_NAMESPACE: ModuleType | None = None

# "Tensor.backward" -> the module that attached it ("minigrad.autograd.entry_points");
# a module owner by its last name ("saved.SHARE_TANGENT").
ATTACHED: dict[str, str] = {}


def register_namespace(module: ModuleType) -> None:
    """Called once, by `minigrad/__init__.py`, with the `minigrad` module itself."""
    global _NAMESPACE
    _NAMESPACE = module


def namespace() -> ModuleType:
    """The `minigrad` namespace, for code below it that runs after `import minigrad`."""
    if _NAMESPACE is None:
        raise RuntimeError("minigrad's namespace is used before `import minigrad` ran")
    return _NAMESPACE


def attach(owner: type | ModuleType, name: str, value: Any) -> None:
    """Give `owner` (a class or module of a lower layer) the attribute `name`,
    defined by the calling module, a layer above it."""
    setattr(owner, name, value)
    caller = sys._getframe(1).f_globals.get("__name__", "?")
    ATTACHED[f"{owner.__name__.rpartition('.')[2]}.{name}"] = caller

"""The README's list of every name minigrad has is the code's list."""

from __future__ import annotations

import re
import types
from pathlib import Path

import minigrad

README = Path(__file__).resolve().parent.parent / "README.md"


def _listed(prefix: str) -> set[str]:
    """The backticked names of the README's paragraph that starts with `prefix`."""
    block = README.read_text(encoding="utf-8").split("<summary>Every name minigrad has")[1]
    block = block.split("</details>")[0]
    paragraph = block.split(f"`{prefix}`:\n")[1].split("\n\n")[0]
    return set(re.findall(r"`([A-Za-z_][\w]*)`", paragraph))


def test_the_readme_lists_every_name_of_the_namespace_and_no_other():
    names = {n for n in dir(minigrad) if not n.startswith("_")
             and not isinstance(getattr(minigrad, n), types.ModuleType)}
    assert _listed("minigrad.") == names


def test_the_readme_lists_every_tensor_method_and_attribute_and_no_other():
    names = {n for n in dir(minigrad.Tensor) if not n.startswith("_")}
    assert _listed("Tensor.") == names

"""Rewrite the README's "Every name minigrad has" lists from the code.

`tests/test_readme_names.py` fails when the lists and the code disagree; after adding
or removing a public name, run `python scripts/update_readme_names.py`.
"""

from __future__ import annotations

import re
import textwrap
import types
from pathlib import Path

import minigrad

README = Path(__file__).resolve().parent.parent / "README.md"
WIDTH = 88


def _names(prefix: str) -> list[str]:
    if prefix == "minigrad.":
        found = [n for n in dir(minigrad) if not n.startswith("_")
                 and not isinstance(getattr(minigrad, n), types.ModuleType)]
    else:
        found = [n for n in dir(minigrad.Tensor) if not n.startswith("_")]
    return sorted(found, key=lambda n: (n.lower(), n))


def _paragraph(prefix: str) -> str:
    words = " ".join(f"`{n}`" for n in _names(prefix))
    return "\n".join(textwrap.wrap(words, WIDTH, break_on_hyphens=False))


def main() -> None:
    text = README.read_text(encoding="utf-8")
    for prefix in ("minigrad.", "Tensor."):
        pattern = re.compile(rf"(`{re.escape(prefix)}`:\n)(.*?)(\n\n)", re.S)
        listed = _paragraph(prefix)
        text, count = pattern.subn(lambda m, listed=listed: m[1] + listed + m[3], text,
                                   count=1)
        if count != 1:
            raise SystemExit(f"README.md has no `{prefix}` list")
    README.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

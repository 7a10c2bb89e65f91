"""tests/nbval_sanitize.cfg: volatile output is normalized, ordinary output is not touched.

The rules are read with nbval's own parser and applied the way nbval applies them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from nbval.plugin import get_sanitize_patterns

CFG = Path(__file__).resolve().parent / "nbval_sanitize.cfg"


@pytest.fixture(scope="module")
def sanitize():
    patterns = dict(get_sanitize_patterns(CFG.read_text(encoding="ascii")))
    assert len(patterns) >= 10, "the sanitize file did not parse"

    def apply(text: str) -> str:
        for regex, replace in patterns.items():
            text = re.sub(regex, replace, text)
        return text

    return apply


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<MulBackward0 object at 0x7f3a1c2b9d60>", "<MulBackward0 object at 0xADDRESS>"),
        ("<function f at 0x55d1c0ffee42>", "<function f at 0xADDRESS>"),
        ("<Foo object at 0x1a2b>", "<Foo object at 0xADDRESS>"),
        ("data_ptr: 0x00007ffd5e8a1b30", "data_ptr: 0xADDRESS"),
        ("1.23 ms \u00b1 45.6 \u00b5s per loop (mean \u00b1 std. dev. of 7 runs, 1,000 loops each)",
         "TIMEIT-RESULT"),
        ("812 ns \u00b1 3 ns per loop (mean \u00b1 std. dev. of 7 runs, 1000000 loops each)",
         "TIMEIT-RESULT"),
        ("CPU times: user 1.2 ms, sys: 0 ns, total: 1.2 ms", "CPU times: TIME"),
        ("Wall time: 3.4 s", "Wall time: TIME"),
        ("backward took 0.0123 s (2.5 ms per step, 350 us in numba)",
         "backward took DURATION (DURATION per step, DURATION in numba)"),
        ("started 2026-11-23 02:46:55.681", "started TIMESTAMP"),
        ('File "/work/main/.venv/lib/python3.11/site-packages/numba/core/x.py", line 3',
         'File "SITE-PACKAGES/numba/core/x.py", line 3'),
        ("/home/ci/clone/.venv/bin/python", "VENV/bin/python"),
        ("/home/ci/minigrad-course/minigrad/ops/mul.py:12", "REPO/minigrad/ops/mul.py:12"),
        ("saved to /tmp/tmpa1b2c3/graph.png", "saved to TMPPATH"),
    ],
)
def test_volatile_output_is_normalized(sanitize, raw, clean):
    assert sanitize(raw) == clean


@pytest.mark.parametrize(
    "text",
    [
        "tensor([1.5000, 2.0000], requires_grad=True)",
        "<MulBackward0 object>",
        "((<AccumulateGrad>, 0), (None, 0))",
        "x._version = 2, shape (3, 2), 10 steps, 4 seconds-ish? no: 4seconds",
        "0xff is 255",
        "minigrad/ops/mul.py",
        "RuntimeError: one of the variables needed for gradient computation has been "
        "modified by an inplace operation: [minigrad.FloatTensor [3]] is at version 1; "
        "expected version 0 instead.",
    ],
)
def test_ordinary_output_is_left_alone(sanitize, text):
    assert sanitize(text) == text

"""Warnings and assigning `.grad`, compared with PyTorch: the texts, categories and the
line a warning points at, and every error assigning a `.grad` can raise. Also checks
that the parity harness compares warnings at all."""

from __future__ import annotations

import sys
import warnings

from parity_harness import check, differences, record, translate

import minigrad


def _caught(fn) -> list:
    """(category, text, line) of each warning `fn` raises, the line relative to the
    first line of `fn`'s body (so the two libraries' runs can be compared)."""
    first = fn.__code__.co_firstlineno
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, translate(str(w.message)),
             w.lineno - first if w.filename == __file__ else w.filename) for w in caught]


def _program_warnings(lib) -> dict:
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2

    def non_leaf_grad():
        return b.grad

    def copy_construct():
        lib.tensor(a)
        lib.tensor(a.detach(), dtype=lib.float64)
        lib.tensor(a.detach()[0])

    def retained():
        c = a * 3
        c.retain_grad()
        return c.grad  # no warning: it retains its gradient

    return {"non-leaf .grad": _caught(non_leaf_grad), "tensor(t)": _caught(copy_construct),
            "retained": _caught(retained)}


def test_warning_texts_and_where_they_point(torch):
    """The non-leaf `.grad` warning ("for more information.") and the copy-construct
    warning of `tensor(t)`, both pointing at the caller's line."""
    expected = _program_warnings(torch)
    assert expected["tensor(t)"], "PyTorch warns here"
    assert _program_warnings(minigrad) == expected


_SCALAR_CHILD = r"""
import json, sys, warnings
lib = __import__(sys.argv[1])
a = lib.tensor([1.0, 2.0], requires_grad=True)
out = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a[0].item()                     # no warning
    lib.tensor([a[0], a[1]])        # the first conversion warns ...
    float(a[0])                     # ... and only the first, in the whole process
    lib.tensor([a.detach()[0]])
print(json.dumps([(w.category.__name__, str(w.message), w.lineno) for w in caught]))
"""


def test_scalar_conversion_warns_once_per_process(torch):
    """float(t) and tensor([t, ...]) of tensors that require grad share one warn-once
    warning; item() never warns. (A fresh process each: the once is per process.)"""
    import json
    import subprocess

    def run(name):
        done = subprocess.run([sys.executable, "-c", _SCALAR_CHILD, name], check=True,
                              capture_output=True, text=True)
        return [(c, translate(m), line) for c, m, line in json.loads(done.stdout)]

    expected = run("torch")
    assert len(expected) == 1
    assert run("minigrad") == expected


def _grad_assignments(lib) -> dict:
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    n = lib.tensor([1, 2])
    plain = lib.tensor([1.0, 2.0])
    cases = {
        "longer": lambda: setattr(a, "grad", lib.zeros(3)),
        "other shape": lambda: setattr(a, "grad", lib.zeros(2, 1)),
        "0-d": lambda: setattr(a, "grad", lib.zeros(())),
        "float64": lambda: setattr(a, "grad", lib.zeros(2, dtype=lib.float64)),
        "int64": lambda: setattr(a, "grad", lib.zeros(2, dtype=lib.int64)),
        "bool": lambda: setattr(a, "grad", lib.zeros(2, dtype=lib.bool)),
        "dtype and size": lambda: setattr(a, "grad", lib.zeros(3, dtype=lib.int64)),
        "list": lambda: setattr(a, "grad", [1.0, 2.0]),
        "number": lambda: setattr(a, "grad", 3.0),
        "itself": lambda: setattr(a, "grad", a),
        "non-leaf, good": lambda: setattr(a * 2, "grad", lib.zeros(2)),
        "non-leaf, bad size": lambda: setattr(a * 2, "grad", lib.zeros(3)),
        "int tensor, float grad": lambda: setattr(n, "grad", lib.zeros(2)),
        "int tensor, int grad": lambda: setattr(n, "grad", lib.zeros(2, dtype=lib.int64)),
        "no grad needed, float64": lambda: setattr(plain, "grad",
                                                   lib.zeros(2, dtype=lib.float64)),
        "grad requiring grad": lambda: setattr(plain, "grad", lib.zeros(2, requires_grad=True)),
        "None": lambda: setattr(a, "grad", None),
    }
    out = {}
    for name, fn in cases.items():
        try:
            fn()
            out[name] = None
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            out[name] = (type(exc).__name__, translate(str(exc)))
    out["plain.grad after"] = None if plain.grad is None else plain.grad.tolist()
    return out


def test_assigning_grad(torch):
    expected = _grad_assignments(torch)
    assert expected["longer"][1].startswith("attempting to assign a gradient of size '[3]'")
    assert _grad_assignments(minigrad) == expected


# -- the harness compares warnings -------------------------------------------------------


def test_harness_records_warnings_in_order(torch):
    def program(c):
        x = c.leaf([1.0, 2.0])
        y = c.keep(x * 2)
        y.grad  # noqa: B018 - reading it warns
        return c.m.tensor(y) * 3

    rec = check(torch, program)
    assert [w[1][:40] for w in rec["warnings"]] == [
        "The .grad attribute of a Tensor that is ", "To copy construct from a tensor, it is r"]


def test_harness_reports_a_missing_or_different_warning(torch):
    def warns(c):
        c.leaf([1.0]).mul(2).grad  # noqa: B018

    def quiet(c):
        c.leaf([1.0]).mul(2)

    assert differences(record(torch, warns), record(torch, warns)) == []
    found = differences(record(torch, warns), record(minigrad, quiet))
    assert len(found) == 1 and found[0].startswith(".warnings:")


def test_harness_leaves_out_numpys_notes_about_torch(torch):
    """numpy's DeprecationWarning about torch's `__array_wrap__` (raised for ndarray +
    tensor) is about how torch is written, not PyTorch's behaviour: not compared."""
    import numpy as np

    def program(c):
        return np.ones(2) + c.leaf([1.0, 2.0])

    assert record(torch, program)["warnings"] == []


def test_minigrad_warning_points_at_user_code():
    """Without torch: the warning's file is the caller's, not minigrad's."""
    a = minigrad.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (a * 2).grad  # noqa: B018
        minigrad.tensor(a)
    assert [w.filename for w in caught] == [__file__, __file__]

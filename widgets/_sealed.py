"""The answer key in the form a learner's install holds it: digests, not answers.

A course installed for learners (a wheel, ``pip install .``, docs/hub/install.sh) does not
hold the expected answers (scripts/seal_answers.py builds it so). For each exercise it holds
a *seal* made from the answer: salted SHA-256 digests of the answer's parts, in a tree that
follows how ``exercises.same`` compares (a number up to rounding, a tensor in any form, a
string whatever its case and spacing, ...). ``opens(seal, answer)`` tells whether an answer
is right without knowing the expected one: it digests the answer the same way and looks
for the stored digests.

Numbers are compared up to a tolerance, which a digest of the exact value cannot do. So a
number is cut into cells much finer than its tolerance (a power of two, set by the number's
size), the digest is of the cell, and an answer is right when its cell is within ``_REACH``
cells of the expected one: within the checker's tolerance, never beyond it (a grade cell,
which compares the plain answer, accepts every answer the seal does).

The explanation shown after a right answer ("Correct! ...") is encrypted with a key that
only a right answer gives (each digest's preimage yields a part of it), so it does not give
the answer away either.

What a seal does not stop: an answer with few possible values (a bool, one of four node
names) can be found by trying them, here as in the notebook's own check cell.
"""

from __future__ import annotations

import base64
import hashlib
import math
import secrets
from typing import Any

import numpy as np

# A number's cells: _REACH cells either side of the expected one are accepted, and the cell
# size is the tolerance (rounded down to a power of two) / (_REACH + 1).
_REACH = 7


def _h(*parts: bytes | str) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(4, "big") + data)
    return h.digest()


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


class _Sealer:
    """Digests and secrets under one exercise's salt. A digest is stored; the secret of
    the same preimage is not: only an answer that finds the preimage can make it."""

    def __init__(self, salt: bytes):
        self.salt = salt

    def digest(self, preimage: str) -> str:
        return _h(self.salt, "digest", preimage).hex()

    def secret(self, preimage: str) -> bytes:
        return _h(self.salt, "secret", preimage)


# -- the canonical parts of an answer (shared by sealing and opening) ------------------------


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "shape") and hasattr(x, "numpy")


def _as_array(x: Any) -> np.ndarray | None:
    if _is_tensor(x):
        return np.asarray(x.detach().numpy(), dtype=np.float64)
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    if isinstance(x, (list, tuple)) and x and all(
        isinstance(v, (int, float, list, tuple)) and not isinstance(v, bool) for v in x
    ):
        try:
            return np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _numbers(x: Any) -> np.ndarray | None:
    """`x` as an array of floats when it is numbers in any form (a tensor, an array, or
    a list / tuple of numbers, tensors or such lists, nested), else None."""
    if _is_tensor(x) or isinstance(x, np.ndarray):
        return _as_array(x)
    if isinstance(x, (list, tuple)) and x:
        parts = [_numbers(v) if isinstance(v, (list, tuple, np.ndarray)) or _is_tensor(v)
                 else (np.asarray(float(v)) if isinstance(v, (int, float, np.number))
                       and not isinstance(v, (bool, np.bool_)) else None) for v in x]
        if any(p is None for p in parts) or len({p.shape for p in parts}) != 1:
            return None
        return np.stack(parts)
    return None


def _text(value: str) -> str:
    return "".join(value.split()).lower()


def _tag(x: Any) -> str | None:
    """The exact-match form of None, a bool or a string (None for anything else)."""
    if x is None:
        return "none"
    if isinstance(x, (bool, np.bool_)):
        return f"bool:{bool(x)}"
    if isinstance(x, str):
        return f"str:{_text(x)}"
    return None


def _cell_preimages(path: str, value: float, exponent: int) -> list[str]:
    """The preimages of the cells within reach of `value`, with cells of the size that
    `exponent` gives (the tolerance 2**exponent)."""
    if not math.isfinite(value):
        return [f"{path}|{value}"]
    size = 2.0 ** exponent / (_REACH + 1)
    cell = math.floor(value / size)
    return [f"{path}|e{exponent}|c{cell + d}" for d in range(-_REACH, _REACH + 1)]


def _exponent(band: float) -> int:
    return math.floor(math.log2(band))


def _number_preimage(path: str, value: float, band: float) -> str:
    """The preimage sealed for the expected number `value` (tolerance `band`)."""
    if not math.isfinite(value):
        return f"{path}|{value}"
    exponent = _exponent(band)
    size = 2.0 ** exponent / (_REACH + 1)
    return f"{path}|e{exponent}|c{math.floor(value / size)}"


def _number_candidates(path: str, value: float, band_of) -> list[str]:
    """Every preimage a right answer `value` may have been sealed with: the expected
    number's tolerance is within a factor two of the answer's."""
    if not math.isfinite(value):
        return [f"{path}|{value}"]
    exponent = _exponent(band_of(value))
    return [p for e in (exponent - 1, exponent, exponent + 1)
            for p in _cell_preimages(path, value, e)]


def _scalar_band(value: float) -> float:
    """The tolerance of a single number (``math.isclose(rel_tol=1e-5, abs_tol=1e-6)``,
    taken at the expected value, which is at most the checker's)."""
    return max(1e-5 * abs(value), 1e-6)


def _array_band(rtol: float, atol: float):
    return lambda value: atol + rtol * abs(value)  # numpy.allclose's, at the expected value


# -- sealing ----------------------------------------------------------------------------------


def seal(expected: Any, salt: bytes | None = None) -> tuple[dict, bytes]:
    """The seal of `expected` (JSON-ready) and its secret (the explanation's key)."""
    salt = salt or secrets.token_bytes(16)
    sealer = _Sealer(salt)

    def leaf(preimage: str) -> tuple[dict, bytes]:
        return {"t": "leaf", "d": sealer.digest(preimage)}, sealer.secret(preimage)

    def numbers(path: str, arr: np.ndarray, band_of) -> tuple[dict, bytes]:
        flat = np.asarray(arr, np.float64).reshape(-1)
        pre = [f"{path}|shape{tuple(arr.shape)}"] + [
            _number_preimage(f"{path}|shape{tuple(arr.shape)}|{i}", float(v), band_of(float(v)))
            for i, v in enumerate(flat)]
        return ({"n": len(flat), "d": [sealer.digest(p) for p in pre]},
                sealer.secret("|".join(pre)))

    def node(e: Any, path: str) -> tuple[dict, bytes]:
        tag = _tag(e)
        if tag is not None:
            return leaf(f"{path}|{tag}")
        if isinstance(e, (set, frozenset)):
            return leaf(f"{path}|set:{_set_form(e)}")
        if isinstance(e, (int, float)):
            return leaf(_number_preimage(f"{path}|num", float(e), _scalar_band(float(e))))
        if _is_tensor(e):
            sealed, secret = numbers(path, _as_array(e), _array_band(1e-5, 1e-6))
            return {"t": "tensor", **sealed}, secret
        if isinstance(e, (list, tuple)):
            items = [node(v, f"{path}/{i}") for i, v in enumerate(e)]
            root = secrets.token_bytes(32)
            out = {"t": "list", "n": len(e), "items": [s for s, _ in items],
                   "wrap_items": _xor(root, _h(b"".join(k for _, k in items))).hex()}
            want = _numbers(e)
            if want is not None:
                sealed, secret = numbers(path, want, _array_band(1e-5, 1e-6))
                out["num"], out["wrap_num"] = sealed, _xor(root, _h(secret)).hex()
            return out, root
        return leaf(f"{path}|repr:{e!r}")

    sealed, secret = node(expected, "")
    return {"salt": salt.hex(), "tree": sealed}, secret


def seal_numbers(values: Any, rtol: float, atol: float, salt: bytes | None = None) -> dict:
    """The seal of a reference result compared with ``numpy.allclose(got, values, rtol,
    atol)`` (a coding exercise's checker): see `close_to_sealed`."""
    salt = salt or secrets.token_bytes(16)
    sealer = _Sealer(salt)
    arr = np.asarray(values, np.float64)
    band_of = _array_band(rtol, atol)
    pre = [f"shape{tuple(arr.shape)}"] + [
        _number_preimage(f"shape{tuple(arr.shape)}|{i}", float(v), band_of(float(v)))
        for i, v in enumerate(arr.reshape(-1))]
    return {"salt": salt.hex(), "rtol": rtol, "atol": atol,
            "d": [sealer.digest(p) for p in pre]}


def _set_form(values: Any) -> str:
    def one(v: Any) -> str:
        if isinstance(v, str):
            return "s:" + _text(v)
        if isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)):
            return f"n:{float(v)!r}"
        return f"r:{v!r}"

    return "\x00".join(sorted({one(v) for v in values}))


# -- opening ----------------------------------------------------------------------------------


def opens(sealed: dict, answer: Any) -> bytes | None:
    """The seal's secret if `answer` is right (as ``exercises.same`` would say against the
    sealed answer), else None."""
    sealer = _Sealer(bytes.fromhex(sealed["salt"]))

    def leaf(digest: str, candidates: list[str]) -> bytes | None:
        hit = next((p for p in candidates if sealer.digest(p) == digest), None)
        return None if hit is None else sealer.secret(hit)

    def numbers(sealed_numbers: dict, path: str, arr: np.ndarray | None,
                band_of) -> bytes | None:
        if arr is None:
            return None
        flat = np.asarray(arr, np.float64).reshape(-1)
        digests = sealed_numbers["d"]
        if len(flat) != sealed_numbers["n"] or len(digests) != len(flat) + 1:
            return None
        at = f"{path}|shape{tuple(arr.shape)}"
        pre = [at]
        if sealer.digest(at) != digests[0]:
            return None
        for i, v in enumerate(flat):
            hit = next((p for p in _number_candidates(f"{at}|{i}", float(v), band_of)
                        if sealer.digest(p) == digests[i + 1]), None)
            if hit is None:
                return None
            pre.append(hit)
        return sealer.secret("|".join(pre))

    def node(s: dict, a: Any, path: str) -> bytes | None:
        kind = s["t"]
        if kind == "leaf":
            return leaf(s["d"], _leaf_candidates(a, path))
        if kind == "tensor":
            return numbers(s, path, _as_array(a), _array_band(1e-5, 1e-6))
        # a list or tuple: numbers in any form, else item by item
        if "num" in s:
            got = _numbers(a)
            if got is not None:
                secret = numbers(s["num"], path, got, _array_band(1e-5, 1e-6))
                return None if secret is None else _xor(bytes.fromhex(s["wrap_num"]),
                                                        _h(secret))
        if not isinstance(a, (list, tuple)) or len(a) != s["n"]:
            return None
        parts = [node(item, v, f"{path}/{i}") for i, (item, v) in enumerate(zip(s["items"], a))]
        if any(p is None for p in parts):
            return None
        return _xor(bytes.fromhex(s["wrap_items"]), _h(b"".join(parts)))

    return node(sealed["tree"], answer, "")


def _leaf_candidates(a: Any, path: str) -> list[str]:
    """The preimages a right answer `a` to a single-valued part may have been sealed
    with: its exact form (None, bool, string), its set form, or its number cells."""
    tag = _tag(a)
    if tag is not None:
        return [f"{path}|{tag}"]
    if isinstance(a, (set, frozenset, list, tuple)):
        try:
            found = [f"{path}|set:{_set_form(a)}"]
        except TypeError:  # unhashable items: no set
            found = []
        return found
    if _is_tensor(a) and a.numel() == 1:
        a = float(a.detach().numpy().reshape(-1)[0])
    if isinstance(a, (int, float, np.number)):
        return _number_candidates(f"{path}|num", float(a), _scalar_band)
    return [f"{path}|repr:{a!r}"]


def close_to_sealed(sealed: dict, got: Any) -> bool:
    """Whether `got` is within the sealed reference result's tolerance (as
    ``numpy.allclose(got, reference, rtol, atol)``, never looser)."""
    sealer = _Sealer(bytes.fromhex(sealed["salt"]))
    try:
        arr = np.asarray(got.detach().numpy() if _is_tensor(got) else got, np.float64)
    except (TypeError, ValueError):
        return False
    at = f"shape{tuple(arr.shape)}"
    digests = sealed["d"]
    if len(digests) != arr.size + 1 or sealer.digest(at) != digests[0]:
        return False
    band_of = _array_band(sealed["rtol"], sealed["atol"])
    return all(any(sealer.digest(p) == digests[i + 1]
                   for p in _number_candidates(f"{at}|{i}", float(v), band_of))
               for i, v in enumerate(arr.reshape(-1)))


# -- the explanation, opened by a right answer ------------------------------------------------


def _stream(key: bytes, length: int) -> bytes:
    blocks = (_h(key, i.to_bytes(8, "big")) for i in range(length // 32 + 1))
    return b"".join(blocks)[:length]


def encrypt(text: str, key: bytes) -> str:
    data = text.encode()
    return base64.b64encode(_xor(data, _stream(key, len(data)))).decode()


def decrypt(token: str, key: bytes) -> str:
    data = base64.b64decode(token)
    return _xor(data, _stream(key, len(data))).decode()

"""PyTorch's own op test database (OpInfo) run against minigrad.

Every OpInfo whose op minigrad exposes (found by `opinfo_harness.exposed_ops`: no test is
written by hand, a newly exposed op is picked up) runs its sample inputs in both
libraries, for float64, float32, int64 and bool where PyTorch's op takes them: values,
dtypes, shapes, `grad_fn` names, errors, warnings, gradients and gradients of gradients
must match, values as the float policy says (`float_policy.py`). Its error inputs (the
bad calls PyTorch's OpInfo lists, each with the error PyTorch raises) must raise the same
error, with the same message.

Two tables say what is left out, and why:
* `DESIGN_SKIPS`: what minigrad lacks by design (complex dtypes, other devices, ...);
  a sample using it is not run;
* `KNOWN_GAPS`: ops or samples minigrad does not yet do as PyTorch does. Each runs as a
  strict xfail: the day it matches PyTorch the test fails, until the entry is removed.

The default run takes the first `opinfo_harness.CAP` samples of each op and dtype (in
PyTorch's order, after a fixed seed); MINIGRAD_OPINFO_ALL=1 runs every sample.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

# What minigrad lacks by design, by the feature `opinfo_harness.convert` names.
DESIGN_SKIPS = {
    "memory_format": "minigrad's memory formats are contiguous_format and preserve_format; "
                     "channels_last and channels_last_3d are PyTorch's alone",
    "complex dtype": "minigrad has no complex dtypes",
    "sparse layout": "minigrad has no sparse tensors",
    "device": "minigrad runs on the CPU only",
    "generator": "minigrad's random functions take no Generator argument",
    "dtype": "minigrad's dtypes are float32, float64, int64 and bool",
    "int32 result": "minigrad has no int32 dtype: a sample asking for an int32 result "
                    "(out_int32=True of searchsorted and bucketize) or an op whose result "
                    "holds one (the info tensor of linalg's *_ex ops, int64 in minigrad) "
                    "is not run",
    "out=": "minigrad's ops return new tensors; they take no out= argument",
    "more than 64 dims": "minigrad's tensors are numpy arrays, which have at most 64 "
                         "dims (PyTorch makes them, then refuses them in its ops)",
    "method of a non-tensor": "minigrad's Tensor methods are Python functions: called "
                              "unbound on a non-tensor (Tensor.__radd__(3, t)) they do not "
                              "check `self` as PyTorch's C descriptors do",
}

# What minigrad does not yet do as PyTorch: (OpInfo key, the samples it concerns (a
# feature of `opinfo_harness.sample_features`, None for all), what differs).
KNOWN_GAPS = [
]


try:  # collection needs the database; without PyTorch the tests below skip (or fail
    # under MINIGRAD_REQUIRE_TORCH) through the `torch` fixture
    import opinfo_harness as h
    import torch as _torch

    import minigrad

    OPS = {op.key: op for op in h.exposed_ops(h.load_op_db(), _torch, minigrad)}
    MISSING = ""
except ImportError as exc:
    OPS, MISSING = {}, str(exc)

_GAP_KEYS = {key for key, _, _ in KNOWN_GAPS}
CASES = [(key, dtype) for key, op in OPS.items() for dtype in op.dtypes] or [("none", "")]
_cache: dict = {}


@pytest.fixture
def database(torch) -> None:
    """PyTorch is there (the `torch` fixture): its OpInfo database must load too (it
    needs the `expecttest` package, one of the `test` extra's)."""
    if not OPS:
        message = f"PyTorch's OpInfo database did not load ({MISSING})"
        if os.environ.get("MINIGRAD_REQUIRE_TORCH", "").strip().lower() in {"1", "true", "yes",
                                                                             "on"}:
            pytest.fail(f"{message} (and MINIGRAD_REQUIRE_TORCH is set)", pytrace=False)
        pytest.skip(message)


def _error_features(key: str, sample, torch) -> set[str]:
    return h.sample_features(sample, torch, OPS[key].name) | {"error input"}


def _in_gap(key: str, features: set[str]) -> bool:
    return any(k == key and (feat is None or feat in features) for k, feat, _ in KNOWN_GAPS)


def _samples(key: str, dtype: str, torch, gap: tuple | None = None) -> tuple[list, set]:
    """The samples of `key` for `dtype` (made once per module): the first CAP that
    minigrad can take and no known gap concerns, or, for `gap`, the first CAP it
    concerns; and the reasons of the samples skipped by design on the way."""
    if (key, dtype, gap) not in _cache:
        op, skipped = OPS[key], set()

        def wanted(sample) -> bool:
            why = h.by_design(op, sample, torch, minigrad)
            if why is not None:
                assert why in DESIGN_SKIPS, f"{why}: not in DESIGN_SKIPS (add it, with a reason)"
                skipped.add(DESIGN_SKIPS[why])
                return False
            features = h.sample_features(sample, torch, op.name)
            if gap is not None:
                return gap[1] is None or gap[1] in features
            return not _in_gap(key, features)

        _cache[key, dtype, gap] = h.samples(op, dtype, torch, h.limit(), wanted), skipped
    return _cache[key, dtype, gap]


def _run(op, sample_list: list, torch, label: str) -> list[str]:
    """Every sample's differences (outside the float policy)."""
    diffs = []
    for i, sample in enumerate(sample_list):
        outcome = h.check_sample(op, sample, torch, minigrad)
        diffs += [f"{label} sample {i} ({outcome.status}): {d}" for d in outcome.diffs]
    return diffs


@pytest.mark.parametrize(("key", "dtype"), CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_opinfo_samples(torch, database, key, dtype):
    sample_list, skipped = _samples(key, dtype, torch)
    if not sample_list and skipped:
        pytest.skip("; ".join(sorted(skipped)))
    if not sample_list:
        assert key in _GAP_KEYS, f"{key} has no {dtype} sample"
        pytest.skip(f"every {dtype} sample of {key} is a known gap")
    diffs = _run(OPS[key], sample_list, torch, f"{key} {dtype}")
    assert not diffs, "\n".join(diffs)


GAPS = [pytest.param(gap, id=gap[0] + (f"-{gap[1]}" if gap[1] else ""),
                     marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                             reason=gap[2]))
        for gap in KNOWN_GAPS]


@pytest.mark.parametrize("gap", GAPS)
def test_opinfo_known_gap(torch, database, gap):
    """A known gap still differs (the strict xfail); its samples exist (else an error
    other than AssertionError fails the test: a stale entry)."""
    key = gap[0]
    if key not in OPS:
        raise LookupError(f"{key} is not an exposed OpInfo: remove it from KNOWN_GAPS")
    diffs, ran = [], 0
    for dtype in OPS[key].dtypes:
        sample_list = _samples(key, dtype, torch, gap)[0]
        ran += len(sample_list)
        diffs += _run(OPS[key], sample_list, torch, f"{key} {dtype}")
    for i, sample in enumerate(h.error_inputs(OPS[key], torch) or []):
        if gap[1] is None or gap[1] in _error_features(key, sample, torch):
            try:
                diffs += [f"{key} error input {i}: {d}"
                          for d in h.check_error(OPS[key], sample, torch, minigrad)]
            except h.ByDesign:
                continue
            ran += 1
    if not ran:
        raise LookupError(f"no sample of {key} has {gap[1]}: remove it from KNOWN_GAPS")
    assert not diffs, "\n".join(diffs)


# the ops whose OpInfo lists error inputs
ERROR_CASES = sorted(k for k, op in OPS.items() if op.opinfo.error_inputs_func) or ["none"]


@pytest.mark.parametrize("key", ERROR_CASES)
def test_opinfo_error_inputs(torch, database, key):
    """PyTorch's error inputs for the op raise the same error, message and all."""
    diffs = []
    for i, sample in enumerate(h.error_inputs(OPS[key], torch)):
        if _in_gap(key, _error_features(key, sample, torch)):
            continue
        try:
            diffs += [f"{key} error input {i}: {d}"
                      for d in h.check_error(OPS[key], sample, torch, minigrad)]
        except h.ByDesign as why:
            assert str(why) in DESIGN_SKIPS, f"{why}: not in DESIGN_SKIPS (add it with a reason)"
    assert not diffs, "\n".join(diffs)


# -- the rule for the order among equal values (opinfo_harness.TIE_ORDER_OPS) -----------------


def test_tie_rule_accepts_only_indices_of_equal_values():
    x = np.array([[1, 1, 2, 1]])
    want = np.array([[0, 1, 3, 2]])  # (sort: the three 1s, then the 2)
    assert h.valid_tie_indices(x, -1, np.array([[3, 0, 1, 2]]), want, kept=True, distinct=True)
    # an index of a different value, an index twice, an index out of range
    assert not h.valid_tie_indices(x, -1, np.array([[0, 2, 3, 1]]), want, kept=True,
                                   distinct=True)
    assert not h.valid_tie_indices(x, -1, np.array([[0, 0, 3, 2]]), want, kept=True,
                                   distinct=True)
    assert not h.valid_tie_indices(x, -1, np.array([[0, 1, 4, 2]]), want, kept=True,
                                   distinct=True)
    # kthvalue / mode: the dim reduced away; one index, of an equal value
    assert h.valid_tie_indices(x, 1, np.array([3]), np.array([1]), kept=False, distinct=False)
    assert not h.valid_tie_indices(x, 1, np.array([2]), np.array([1]), kept=False,
                                   distinct=False)


@pytest.mark.parametrize(("swap", "caught"), [((0, 1), False), ((0, 2), True)],
                         ids=["equal values swapped", "a different value's index"])
def test_tie_rule_still_catches_a_wrong_index(torch, database, monkeypatch, swap, caught):
    """sort of [5, 5, 3] through the harness, minigrad's indices changed: swapping
    the two 5s' indices is a valid answer; pointing at the 3 is a difference."""
    from torch.testing._internal.opinfo.core import SampleInput

    real_sort = minigrad.sort

    def sort(*args, **kwargs):
        result = real_sort(*args, **kwargs)
        order = [0, 1, 2]
        order[swap[0]], order[swap[1]] = order[swap[1]], order[swap[0]]
        indices = result.indices.detach()[..., order]
        return type(result)(result.values, indices)

    monkeypatch.setattr(minigrad, "sort", sort)
    sample = SampleInput(torch.tensor([5, 5, 3]), kwargs={"descending": True})
    outcome = h.check_sample(OPS["sort"], sample, torch, minigrad)
    assert bool(outcome.diffs) is caught, outcome.diffs


# -- the rule for singular vectors (opinfo_harness.GAUGE_OPS) -----------------------------------


@pytest.mark.parametrize(("flip_vh", "caught"), [(True, False), (False, True)],
                         ids=["a column of U and the row of Vh", "a column of U alone"])
def test_sign_rule_still_catches_a_wrong_factor(torch, database, monkeypatch, flip_vh,
                                                caught):
    """linalg.svd through the harness, minigrad's first singular vectors' signs
    changed in place: U's column with Vh's row is another valid SVD; U's alone is not
    (U @ Vh, the sample's processed result, changes)."""
    from torch.testing._internal.opinfo.core import SampleInput

    real_svd = minigrad.linalg.svd

    def svd(*args, **kwargs):
        result = real_svd(*args, **kwargs)
        result.U._data[..., 0] *= -1  # (the saved factors with them: the same arrays)
        if flip_vh:
            result.Vh._data[..., 0, :] *= -1
        return result

    monkeypatch.setattr(minigrad.linalg, "svd", svd)
    a = torch.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], dtype=torch.float64,
                     requires_grad=True)
    sample = SampleInput(a, kwargs={"full_matrices": False},
                         output_process_fn_grad=lambda usv: (usv[0] @ usv[2], usv[1]))
    outcome = h.check_sample(OPS["linalg.svd"], sample, torch, minigrad)
    assert bool(outcome.diffs) is caught, outcome.diffs

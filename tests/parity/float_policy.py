"""How alike minigrad's numbers must be to PyTorch's: the one float policy of the tests.

Exact, on every x86-64 machine (compared with ==, by the harness and by the tests):
names, graph structure, saved-tensor names, versions, errors, warnings, shapes, dtypes,
integer and boolean results, and `EXACT` floats: the results of single operations IEEE
754 rounds exactly (+ - * / element by element, a fused multiply-add where PyTorch's
kernel uses one, comparisons, copies, max/min), and anything built from them in
one fixed order (a random number generator's output, an optimizer's update).

Within a tolerance, because PyTorch's own last bit depends on the processor:
* `VECTOR_MATH`: one op whose PyTorch value comes from a vector math library (MKL VML,
  SLEEF: exp, log, tanh, sin, sigmoid, softmax, ...), whose rounding depends on the
  processor, the vector width and the tensor's length. float64 within 4 ulps of the
  value (4 * 2**-52 * |value|), float32 within 1e-5 relative.
* `SUM`: a sum, mean, product or dot product of many elements (reductions, matrix
  products, a bias's gradient), whose order PyTorch chooses by vector width and thread
  count. float64 within 4 ulps of the sum of the terms' magnitudes (pass `scale`,
  e.g. `np.abs(x).sum(axis)`; without it, the array's largest magnitude), float32 within
  1e-5 of that.
* `CHAIN`: a value computed through several ops (a program's outputs and gradients,
  tangents, higher-order gradients): each op's few ulps, amplified by the chain's
  cancellations. float64 within 1e-10 relative plus 1e-10 absolute, float32 within 1e-5
  relative plus 1e-5 absolute.
* `running_sum(n)`: a value divided by a sum PyTorch adds one term after another (in
  vector lanes, not the cascade of its reductions): softmax's row of n values. Such a
  sum can be off the exact one by (n - 1) units of roundoff of the terms' sum (2**-53
  in float64, 2**-24 in float32), so two of them, added in different orders, by twice
  that: the tolerance is VECTOR_MATH's plus (n - 1) * 2 units of roundoff, relative.
A test that needs more states it with `stated(...)` and says why.

NaN must meet NaN and an infinity the same infinity, in every kind.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS64 = float(np.finfo(np.float64).eps)  # 2**-52


@dataclass(frozen=True)
class Tolerance:
    """Allowed |minigrad - torch| per element: `rtol * max(|torch|, scale) + atol`,
    (rtol, atol) by dtype name; `why` is what makes the last bits differ."""

    name: str
    float64: tuple[float, float]
    float32: tuple[float, float]
    why: str

    def allowed(self, want: np.ndarray, scale=None) -> np.ndarray:
        rtol, atol = self.float32 if want.dtype == np.float32 else self.float64
        size = np.abs(want.astype(np.float64))
        if scale is not None:
            size = np.maximum(size, np.abs(np.asarray(scale, dtype=np.float64)))
        elif self is SUM and size.size:
            finite = size[np.isfinite(size)]
            size = np.maximum(size, finite.max() if finite.size else 0.0)
        # (as many units of the last place among subnormals, whose spacing is fixed)
        finfo = np.finfo(want.dtype) if want.dtype.kind == "f" else np.finfo(np.float64)
        floor = rtol / float(finfo.eps) * float(finfo.smallest_subnormal)
        return np.maximum(rtol * size, floor) + atol


EXACT = Tolerance("exact", (0.0, 0.0), (0.0, 0.0),
                  "IEEE 754 rounds each operation exactly: the same bits everywhere")
VECTOR_MATH = Tolerance("vector math", (4 * EPS64, 0.0), (1e-5, 0.0),
                        "PyTorch's vector math library rounds by processor and vector width")
SUM = Tolerance("sum", (4 * EPS64, 0.0), (1e-5, 0.0),
                "PyTorch adds in an order chosen by vector width and thread count")
CHAIN = Tolerance("chain", (1e-10, 1e-10), (1e-5, 1e-5),
                  "several ops, each a few ulps off, amplified by cancellation")


def running_sum(n: int) -> Tolerance:
    """A value that divides by a running sum of `n` terms (see the module doc)."""
    extra = max(n - 1, 0)
    return Tolerance(f"running sum of {n}", (VECTOR_MATH.float64[0] + extra * 2.0**-52, 0.0),
                     (VECTOR_MATH.float32[0] + extra * 2.0**-23, 0.0),
                     "PyTorch adds the row one term after another, in vector lanes")


def stated(float64: tuple[float, float], float32: tuple[float, float], why: str) -> Tolerance:
    """A test's own tolerance (rtol, atol) by dtype, with the reason it needs it."""
    return Tolerance("stated", float64, float32, why)


def outside(got, want, how: Tolerance = CHAIN, scale=None) -> np.ndarray:
    """The elements of `got` (minigrad's) not within `how` of `want` (PyTorch's)."""
    got, want = np.asarray(got), np.asarray(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if how is EXACT:
        return ~same
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return ~(same | (diff <= how.allowed(want, scale)))


def assert_floats(got, want, how: Tolerance = CHAIN, *, scale=None, err_msg: str = "") -> None:
    """minigrad's `got` matches PyTorch's `want` as the float policy says: the same
    shape and dtype, and every element within `how` (see the module doc)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{err_msg} shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{err_msg} dtype {got.dtype} != {want.dtype}"
    bad = outside(got, want, how, scale)
    if bad.any():
        where = np.flatnonzero(bad)[:5]
        raise AssertionError(
            f"{err_msg} {bad.sum()} of {bad.size} elements not within {how.name} "
            f"({how.why}): at {where.tolist()} minigrad {got.ravel()[where].tolist()} "
            f"torch {want.ravel()[where].tolist()}")

"""Random programs over the element-wise ops of two and three inputs (`ops/pointwise.py`:
fmax, hypot, logaddexp, xlogy, %, copysign, lerp, addcdiv, clamp with a tensor bound),
run by the random-program generator of `test_parity_random_programs.py` in both
libraries and compared the same way: values, graphs, saved tensors, versions,
gradients and their layouts, after both of its backward passes.

They have a table of their own (`POINTWISE`), drawn beside a few of the generator's
unary steps, so that adding them leaves the generator's own programs as they were.
"""

from __future__ import annotations

from unittest import mock

import pytest
import test_parity_random_programs as generator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad

POINTWISE = {
    "fmax": lambda a, b: a.fmax(b), "hypot": lambda a, b: a.hypot(b),
    "logaddexp": lambda a, b: a.logaddexp(b), "xlogy": lambda a, b: a.xlogy(b * b + 1),
    "remainder": lambda a, b: a % (b * b + 1), "copysign": lambda a, b: a.copysign(b),
    "lerp": lambda a, b: a.lerp(b, 0.3), "addcdiv": lambda a, b: a.addcdiv(b, a * a + 1),
    "clamp_min_t": lambda a, b: a.clamp(min=b),
}
# unary steps between them: broadcasting, views and reductions of their results
UNARY = ["exp", "sum1", "expand", "slice", "first", "unsqueeze", "mean"]

step = st.one_of(
    st.tuples(st.just("binary"), st.sampled_from(sorted(POINTWISE)), st.integers(0, 9),
              st.integers(0, 9)),
    st.tuples(st.just("unary"), st.sampled_from(UNARY), st.integers(0, 9)),
)
program = generator._programs(generator.SHAPES, step)
PROGRAMS = max(generator.PROGRAMS // 3, 20)


@pytest.mark.parity
@settings(max_examples=PROGRAMS, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(program)
def test_pointwise_programs_match_torch(torch, prog):
    shapes, steps, seed, edges = prog
    with mock.patch.dict(generator.BINARY, POINTWISE):
        generator.assert_same(generator.run(torch, shapes, steps, seed, edges),
                              generator.run(minigrad, shapes, steps, seed, edges))

"""Random small programs, run under minigrad and PyTorch, compared gradient for gradient.

hypothesis draws a few leaves with shapes that sometimes broadcast and sometimes do
not, then a sequence of operations (unary, binary with tensors or Python numbers on
either side, reductions, views, and now and then an in-place op). Both libraries run
the same program; forward values, `grad_fn` names, every leaf's gradient (with its
strides and `_version`), every tensor's strides and any error (type and message) must
agree.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad

SHAPES = [(3,), (2, 3), (1, 3), (2, 1), ()]

UNARY = {
    "exp": lambda t: t.exp(), "sin": lambda t: t.sin(), "cos": lambda t: t.cos(),
    "tanh": lambda t: t.tanh(), "sigmoid": lambda t: t.sigmoid(), "relu": lambda t: t.relu(),
    "abs": lambda t: t.abs(), "neg": lambda t: -t, "square": lambda t: t ** 2,
    "sqrt1": lambda t: (t * t + 1).sqrt(), "log1": lambda t: (t.abs() + 1).log(),
    "clamp": lambda t: t.clamp(-0.5, 0.7), "t": lambda t: t.t() if t.ndim == 2 else t,
    "unsqueeze": lambda t: t.unsqueeze(0), "flatten": lambda t: t.reshape(-1),
    "sum1": lambda t: t.sum(dim=-1, keepdim=True) if t.ndim else t.sum(),
    "mean": lambda t: t.mean(), "first": lambda t: t[0] if t.ndim else t,
    "slice": lambda t: t[..., ::2] if t.ndim else t,
    "unbind0": lambda t: t.unbind()[-1] if t.ndim else t,
    "max_dim": lambda t: t.max(dim=0).values if t.ndim else t.max(),
    "min_all": lambda t: t.min(),
    "expand": lambda t: t.expand(2, *t.shape),
    "detached_mul": lambda t: t * t.detach(),
    "mask": lambda t: t[t > 0] if t.ndim else t,
    "list_index": lambda t: t[[0, 0]] if t.ndim else t,
    "gram": lambda t: t @ t.t() if t.ndim == 2 else (t @ t if t.ndim == 1 else t),
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1),
    "matmul": lambda a, b: a @ b,
}
SCALAR = {
    "radd": lambda a, s: s + a, "rsub": lambda a, s: s - a, "mul_s": lambda a, s: a * s,
    "rdiv": lambda a, s: s / (a * a + 1), "pow_s": lambda a, s: (a * a + 1) ** s,
}
INPLACE = {
    "add_": lambda a, s: a.add_(s), "mul_": lambda a, s: a.mul_(s),
    "setitem": lambda a, s: a.__setitem__(0, s) if a.ndim else a.fill_(s),
    "view_mul_": lambda a, s: a[..., :1].mul_(s) if a.ndim else a.mul_(s),
    "clamp_": lambda a, s: a.clamp_(-s, s),
    "exp_": lambda a, s: a.exp_(),
}

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.integers(0, 9)),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 9),
              st.integers(0, 9)),
    st.tuples(st.just("scalar"), st.sampled_from(sorted(SCALAR)), st.integers(0, 9),
              st.sampled_from([-1.5, 0.5, 2.0, 3])),
    st.tuples(st.just("inplace"), st.sampled_from(sorted(INPLACE)), st.integers(0, 9),
              st.sampled_from([0.5, 2.0])),
)
program = st.tuples(
    st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
    st.lists(step, min_size=1, max_size=7),
    st.integers(0, 2**16),
)


def run(lib, shapes, steps, seed, traced=False):
    """Execute the program; return what happened in plain Python values. `traced`:
    minigrad's two backward passes run traced, as the stepper runs them."""
    rng = np.random.default_rng(seed)
    leaves = [lib.tensor(rng.uniform(-1.5, 1.5, s), dtype=lib.float64, requires_grad=True)
              for s in shapes]
    pool = list(leaves)
    record = {"nodes": []}
    try:
        for kind, name, *args in steps:
            a = pool[args[0] % len(pool)]
            if kind == "unary":
                out = UNARY[name](a)
            elif kind == "binary":
                out = BINARY[name](a, pool[args[1] % len(pool)])
            elif kind == "scalar":
                out = SCALAR[name](a, args[1])
            else:
                if a.is_leaf:
                    a = a * 1  # in-place on a leaf is its own (tested) error
                    pool.append(a)
                INPLACE[name](a, args[1])
                out = a
            pool.append(out)
            record["nodes"].append(type(out.grad_fn).__name__ if out.grad_fn else None)
        result = pool[-1]
        record["value"] = np.asarray(result.detach().tolist())
        # Two passes: the second adds into the `.grad` arrays the first one made, so
        # a gradient array shared where it must not be (two leaves, or a leaf and a
        # tensor of the program) shows up as a wrong sum or a changed value.
        loss = result.sum()
        if traced:
            from minigrad.autograd.engine import backward_events

            list(backward_events(loss, retain_graph=True, trace=True))
            list(backward_events(loss, trace=True))
        else:
            loss.backward(retain_graph=True)
            loss.backward()
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        record["error"] = (type(exc).__name__, str(exc).replace("torch", "minigrad"))
    record["grads"] = [None if t.grad is None else np.asarray(t.grad.tolist()) for t in leaves]
    # How the gradients and the program's tensors are laid out, and the gradients'
    # versions (strides only where a dim has more than one element).
    record["layouts"] = [_layout(t) for t in pool]
    record["grad_layouts"] = [None if t.grad is None else (_layout(t.grad), t.grad._version)
                              for t in leaves]
    record["values_after"] = [np.asarray(t.detach().tolist()) for t in pool]
    return record


def _layout(t) -> tuple:
    return tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))


def assert_same(expected, actual):
    assert actual.get("error") == expected.get("error")
    assert actual["nodes"] == expected["nodes"]
    assert actual["layouts"] == expected["layouts"]
    assert actual["grad_layouts"] == expected["grad_layouts"]
    if "value" in expected:
        np.testing.assert_allclose(actual["value"], expected["value"], rtol=1e-6, atol=1e-12)
    for i, (want, got) in enumerate(zip(expected["values_after"], actual["values_after"])):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, err_msg=f"tensor {i}")
    for i, (want, got) in enumerate(zip(expected["grads"], actual["grads"])):
        assert (want is None) == (got is None), f"leaf {i}: grad None in only one library"
        if want is not None:
            assert got.shape == want.shape, f"leaf {i}"
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, err_msg=f"leaf {i}")


@pytest.mark.parity
@pytest.mark.parametrize("traced", [False, True], ids=["backward", "traced"])
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(program)
def test_random_programs_match_torch(torch, traced, prog):
    # Traced: the stepper's runs decide exactly as untraced ones do (its events hold
    # copies), so gradients, their layouts and versions match PyTorch's there too.
    shapes, steps, seed = prog
    assert_same(run(torch, shapes, steps, seed),
                run(minigrad, shapes, steps, seed, traced=traced))

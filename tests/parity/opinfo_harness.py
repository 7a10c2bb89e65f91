"""PyTorch's own op test database (OpInfo) as a test source for minigrad.

PyTorch ships `op_db` (in `torch.testing._internal.common_methods_invocations`): one
`OpInfo` per op, each able to make sample inputs (tensors, nested lists, scalars,
keyword arguments) for a dtype. This module finds the OpInfos whose op minigrad exposes,
converts their samples, runs them in both libraries and lists every difference:

* an op is *exposed* when its OpInfo `name` or `aten_name` resolves in minigrad, as
  `minigrad.<name>`, `minigrad.nn.functional.<name>`, `minigrad.linalg.<name>` or, last,
  a `Tensor` method, so a newly exposed op is picked up with no test written by hand.
  PyTorch runs the OpInfo's own `op`; minigrad runs the op found, or, where the OpInfo's
  `op` is a lambda of PyTorch's test code (which may reorder arguments or clone first),
  that same lambda with minigrad in the place of torch;
* a sample is run in both: the result's structure, dtypes, shapes, values (by the float
  policy, `float_policy.py`), `requires_grad` and `grad_fn` names, the exception raised
  (type and message, `minigrad` where PyTorch prints `torch`) and the warnings;
* backward: the gradients of every input that requires grad, through a weighted sum of
  the float outputs (weights that differ element by element); double backward through a
  weighted sum of those gradients (`create_graph=True`) where PyTorch supports it;
* where PyTorch's answer is one of several right ones, the others are right too, by
  two narrow rules stated with their reasons below: singular vectors up to sign
  (`GAUGE_OPS`) and the order among equal values (`TIE_ORDER_OPS`).

Random ops run after the same seed in both libraries (minigrad's generator is PyTorch's).
"""

from __future__ import annotations

import importlib
import itertools
import os
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from float_policy import CHAIN, EXACT, SUM, VECTOR_MATH, Tolerance, outside, stated
from parity_harness import translate

DTYPES = ("float64", "float32", "int64", "bool")
# samples per op and dtype in the default run (the first ones, in PyTorch's order);
# MINIGRAD_OPINFO_ALL=1 runs every sample
CAP = 3
RUN_ALL = os.environ.get("MINIGRAD_OPINFO_ALL", "").strip().lower() in {"1", "true", "yes"}
SEED = 0

# -- which comparison each op's values get (the float policy's kinds) ----------------------
# Gradients and double-backward gradients are `CHAIN` (a formula of several ops); integer
# and boolean results are exact. An op's forward values are `VECTOR_MATH` (one op whose
# PyTorch value may come from a vector math library: exp, sigmoid, pow, softmax, ...)
# unless it is named here, by what the op is, not by what happens to pass.
EXACT_OPS = {
    "abs", "add", "sub", "mul", "div", "true_divide", "reciprocal", "neg", "positive",
    "sign", "sgn", "ceil", "floor", "round", "clamp", "maximum", "minimum", "max", "min",
    "masked_fill", "where", "relu", "nn.functional.relu", "eq", "ne", "lt", "le", "gt",
    "ge", "equal", "allclose", "all", "any", "argmax", "argmin", "bitwise_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "__radd__", "__rmul__", "__rsub__",
    "__rand__", "__ror__", "__rxor__", "clone", "contiguous", "expand", "expand_as",
    "diagonal", "narrow", "permute", "reshape", "reshape_as", "view", "view_as", "flatten",
    "__getitem__", "select", "split", "chunk", "unbind", "squeeze", "unsqueeze",
    "transpose", "T", "mT", "t", "stack", "cat", "to", "bool", "double", "float", "long",
    "item", "zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "ones",
    "zeros", "full", "eye", "zero_", "nn.functional.embedding", "nn.functional.leaky_relu",
    "arange", "nn.functional.dropout", "randn", "randn_like", "rand_like", "randint",
    "amax", "amin", "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian",
    "mode", "cummax", "cummin", "count_nonzero",
    "linalg.diagonal",
    "remainder", "__rmod__", "fmod", "floor_divide", "copysign", "fmax", "fmin", "nextafter",
    "heaviside", "clamp_min", "clamp_max", "__rdiv__", "logical_and", "logical_or",
    "logical_xor", "logical_not", "gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift",
    "isclose",
}
# sums of many terms, linear in them: within a few ulps of the same op applied to the
# inputs' magnitudes (the sum of the terms' sizes, float_policy's `scale`)
LINEAR_SUM_OPS = {
    "sum", "mean", "cumsum", "sum_to_size", "matmul", "mm", "bmm", "mv", "dot",
    "__rmatmul__", "einsum", "nn.functional.linear", "nn.functional.conv1d",
    "nn.functional.conv2d", "nn.functional.avg_pool2d", "nansum", "nanmean",
    "addmm", "addmv", "addr", "addbmm", "baddbmm", "linalg.vecdot", "linalg.multi_dot",
    "linalg.matrix_power", "vdot", "outer",
}
# sums of non-negative terms (squares, magnitudes) or a product: within a few ulps of
# the result's largest magnitude
SUM_OPS = LINEAR_SUM_OPS | {
    "std", "var", "prod", "norm", "linalg.norm", "linalg.vector_norm", "cumprod",
    "std_mean", "var_mean",
    "log_softmax",  # (x - max - log(sum): the log of a row's sum, off by a few ulps of it)
    "logsumexp",  # (max + log(sum): the same, cancelling where the two nearly meet)
    "cross", "linalg.cross",
}
# several ops in a row (a loss, a normalisation, gelu's erf, linspace's start + i * step
# rounded twice, softmax's exp divided by a running sum)
CHAIN_OPS = {
    "softmax",
    "nn.functional.cross_entropy", "nn.functional.nll_loss",
    "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.layer_norm", "nn.functional.batch_norm", "nn.functional.gelu",
    "nn.functional.smooth_l1_loss", "nn.functional.l1_loss", "nn.functional.mse_loss",
    "nn.functional.huber_loss", "linspace",
    "nn.functional.tanhshrink",  # x - tanh(x): tanh's last bit, cancelled near 0
}
# factorisations (LU, Cholesky) by LAPACK in both libraries, whose blocking and BLAS
# kernels round by build and processor: several ops in a row, as CHAIN
LAPACK_OPS = {
    "linalg.det", "det", "linalg.inv", "linalg.inv_ex", "inverse", "linalg.solve",
    "linalg.solve_ex", "linalg.cholesky", "linalg.cholesky_ex", "linalg.solve_triangular",
    "linalg.slogdet", "logdet", "cholesky", "linalg.svd", "svd", "linalg.svdvals",
}
CHAIN_OPS |= LAPACK_OPS

# ops whose outputs are defined only up to a choice: a singular vector's sign (a
# column of U and the same row of Vh may both change sign; two LAPACK builds choose
# differently). Compared as PyTorch's OpInfo compares them: the raw result's
# structure (dtypes, shapes, grad_fn names), then the values of the sample's own
# `output_process_fn_grad` of it (|U|, S, |Vh|, U @ Vh: the same for either sign),
# and the gradients (and gradients of gradients) of that processed result
GAUGE_OPS = {"linalg.svd", "svd"}

# The order among equal values, which PyTorch documents as unspecified for these ops:
# sort and argsort unless stable=True (its introsort does not keep equal values in
# order beyond 16 elements), topk and kthvalue (a quickselect, std::nth_element) and
# mode (std::sort of a row). Where minigrad's index output differs from PyTorch's, it
# is accepted if it is a valid answer: every index in range, pointing at a value
# equal (exactly, NaN meeting NaN) to the one PyTorch's index points at, and, for
# sort, argsort and topk, no index twice along the dim (a permutation, or k distinct
# positions). An index of a different value is still a difference. Only the index
# output of these ops; their values are compared as ever. The op's argument names,
# after the input, by position (and whether its index output keeps the dim).
TIE_ORDER_OPS = {
    "sort": ("dim", "descending"), "argsort": ("dim", "descending"),
    "topk": ("k", "dim", "largest", "sorted"), "kthvalue": ("k", "dim", "keepdim"),
    "mode": ("dim", "keepdim"),
}


def kind_of(name: str) -> Tolerance:
    """The float policy's kind for the forward values of the OpInfo `name`."""
    if name in EXACT_OPS:
        return EXACT
    if name in SUM_OPS:
        return SUM
    if name in CHAIN_OPS:
        return CHAIN
    return VECTOR_MATH


# where an op needs more than its kind, stated with the reason: (OpInfo name, what is
# compared: "result", "grad", "grad of grad" or "integer result") -> tolerance
STATED = {
    ("nn.functional.layer_norm", "grad"): stated(
        CHAIN.float64, (1e-5, 1e-3),
        "a layer norm over equal elements (one element, or a constant row): the exact "
        "normalised value is 0, PyTorch's float32 x * rstd - mean * rstd leaves x's "
        "rounding times rstd = 1/sqrt(eps) = 316"),
    ("cumprod", "grad of grad"): stated(
        CHAIN.float64, (1e-4, 1e-4),
        "cumprod's second derivative runs its backward formula (a cumsum from the end of "
        "out * grad, divided by the factors) and differentiates it again: float32 rounding "
        "of the products, amplified by the division by small factors and by cancellation "
        "in the sums"),
    **{(name, "result"): stated(
        (1e-14, 1e-15), (1e-5, 1e-6),
        "PyTorch computes both outputs by Welford's running update in double; minigrad "
        "sums first, then divides (as var and mean do): a mean of values of both signs "
        "differs by a few ulps of the inputs' size, many of the result's")
       for name in ("std_mean", "var_mean")},
    ("nn.functional.normalize", "grad of grad"): stated(
        CHAIN.float64, (1e-5, 1e-4),
        "normalising over a dim of one element: x / |x| is +-1 exactly, and the second "
        "derivative's exact value is 0; float32 leaves rounding noise of a few ulps of the "
        "terms (about 1e-5 for terms near 1) that cancel, with either sign"),
    **{(name, what): stated(
        CHAIN.float64, float32,
        "float32 singular vectors from two LAPACK builds agree to about eps * s_max / gap; "
        "their gradients divide by the gaps s_j^2 - s_k^2 and by S, the second "
        "derivative divides again: float32 rounding grows to a few 1e-5 of the gradient, "
        "a few 1e-3 of the second derivative (float64 stays within CHAIN)")
       for name in GAUGE_OPS
       for what, float32 in (("grad", (1e-4, 1e-4)), ("grad of grad", (3e-3, 3e-3)))},
    ("linspace", "integer result"): stated(
        (0.0, 1.0), (0.0, 1.0),
        "PyTorch's integer linspace adds j * step to a base point per vector of the "
        "processor's width (4 or 8 values) before truncating: a point within rounding "
        "of an integer truncates to it or to the one below, depending on the processor"),
}


def tolerance(name: str, what: str, kind: Tolerance) -> Tolerance:
    """The tolerance for `what` of the OpInfo `name`: `kind`, unless `STATED` says more."""
    return STATED.get((name, what), kind)


# ops whose values are not defined (uninitialised memory): only structure is compared
NO_VALUES = {"empty", "empty_like", "new_empty"}

# ops whose PyTorch result holds an int32 tensor (the `info` of linalg's *_ex ops): a
# dtype minigrad lacks by design
INT32_RESULT_OPS = {"linalg.cholesky_ex", "linalg.inv_ex", "linalg.solve_ex"}

# the features of a sample (`sample_features`) that are by design (see `DESIGN_SKIPS`)
DESIGN_FEATURES = ("int32 result",)


# -- loading PyTorch's database -------------------------------------------------------------


def load_op_db() -> list:
    """PyTorch's OpInfo list (imports PyTorch's test utilities: a few seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return op_db


@dataclass(frozen=True)
class Exposed:
    """An OpInfo whose op minigrad exposes, and the path both libraries are called by:
    `where` is "", "nn.functional", "linalg" (a function) or "Tensor" (a method)."""

    key: str  # the OpInfo's name, with its variant: "max.binary"
    name: str
    where: str
    attr: str
    dtypes: tuple[str, ...]
    opinfo: Any = field(compare=False, repr=False)


def _has(namespace, attr: str) -> bool:
    try:  # (minigrad raises a clear error for names it lacks by design, e.g. bfloat16)
        value = getattr(namespace, attr, None)
        return value is not None and (callable(value) or isinstance(value, property))
    except Exception:  # noqa: BLE001
        return False


def _resolve(opinfo, minigrad) -> tuple[str, str] | None:
    for candidate in (opinfo.name, opinfo.aten_name):
        if not candidate:
            continue
        for prefix, where in (("nn.functional.", "nn.functional"), ("linalg.", "linalg")):
            if candidate.startswith(prefix):
                attr = candidate[len(prefix):]
                namespace = minigrad.nn.functional if where == "nn.functional" else (
                    minigrad.linalg)
                if _has(namespace, attr):
                    return where, attr
                break
        else:
            if "." not in candidate and _has(minigrad, candidate):
                return "", candidate
    for candidate in (opinfo.name, opinfo.aten_name):
        if candidate and "." not in candidate and _has(minigrad.Tensor, candidate):
            return "Tensor", candidate
    return None


def exposed_ops(op_db: list, torch, minigrad) -> list[Exposed]:
    """Every OpInfo in `op_db` whose op minigrad exposes, with the dtypes to run."""
    found = []
    for opinfo in op_db:
        path = _resolve(opinfo, minigrad)
        if path is None:
            continue
        supported = opinfo.supported_dtypes("cpu")
        dtypes = tuple(d for d in DTYPES if getattr(torch, d) in supported)
        key = opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")
        found.append(Exposed(key, opinfo.name, path[0], path[1], dtypes, opinfo))
    return found


def samples(op: Exposed, dtype: str, torch, limit: int | None,
            wanted: Callable[[Any], bool] = lambda sample: True) -> list:
    """The first `limit` sample inputs (all if None) of `op` for `dtype` that are
    `wanted`, made after a fixed seed so every run draws the same numbers."""
    torch_dtype = getattr(torch, dtype)
    grad = op.opinfo.supports_autograd and torch_dtype.is_floating_point
    torch.manual_seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = op.opinfo.sample_inputs("cpu", torch_dtype, requires_grad=grad)
        return list(itertools.islice(filter(wanted, made), limit))


# -- converting a sample --------------------------------------------------------------------


class ByDesign(Exception):
    """A sample uses what minigrad lacks by design (see `DESIGN_SKIPS`)."""


def _dtype_in(lib, torch_dtype) -> Any:
    name = str(torch_dtype).split(".")[-1]
    if name not in DTYPES:
        raise ByDesign("dtype")
    return getattr(lib, name)


def convert(value, torch, lib) -> Any:
    """A sample's value as `lib` (torch or minigrad) takes it: every tensor a fresh leaf
    with the same values, dtype and `requires_grad`; dtypes and sizes translated."""
    if isinstance(value, torch.Tensor):
        if value.dim() > 64:
            raise ByDesign("more than 64 dims")
        if value.layout != torch.strided:
            raise ByDesign("sparse layout")
        if value.is_complex():
            raise ByDesign("complex dtype")
        data = value.detach().numpy().copy()
        return lib.tensor(data, dtype=_dtype_in(lib, value.dtype),
                          requires_grad=value.requires_grad)
    if isinstance(value, torch.dtype):
        return _dtype_in(lib, value)
    if isinstance(value, torch.Size):
        return lib.Size(value)
    if isinstance(value, torch.memory_format):
        if value not in (torch.contiguous_format, torch.preserve_format):
            raise ByDesign("memory_format")
        return getattr(lib, str(value).split(".")[-1])
    if isinstance(value, torch.device):
        if value.type != "cpu":
            raise ByDesign("device")
        return lib.device(str(value))
    if isinstance(value, torch.nn.PairwiseDistance):  # (a loss's distance function)
        return lib.nn.PairwiseDistance(value.norm, value.eps, value.keepdim)
    if isinstance(value, torch.Generator):
        raise ByDesign("generator")
    if isinstance(value, complex):
        raise ByDesign("complex dtype")
    if isinstance(value, tuple):
        return tuple(convert(v, torch, lib) for v in value)
    if isinstance(value, list):
        return [convert(v, torch, lib) for v in value]
    if isinstance(value, dict):
        if "out" in value:
            raise ByDesign("out=")
        return {k: convert(v, torch, lib) for k, v in value.items()}
    if isinstance(value, (bool, int, float, str, slice, type(None), type(Ellipsis))):
        return value
    raise ByDesign(f"argument of type {type(value).__name__}")


def tensors_in(value, torch_like) -> list:
    """The tensors in a (nested) value, depth first."""
    if isinstance(value, torch_like):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_in(v, torch_like)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v, torch_like)]
    return []


# -- running a sample -----------------------------------------------------------------------


def weights(shape: tuple, seed: int) -> np.ndarray:
    """Fixed weights with distinct entries, to sum outputs (or gradients) with: a wrong
    formula cannot hide behind a uniform seed."""
    n = int(np.prod(shape)) if shape else 1
    return (1.0 + 0.125 * ((np.arange(n) * 5 + seed) % 9) - 0.5 * (np.arange(n) % 2)).reshape(
        shape)


def _error(exc: BaseException) -> tuple[str, str]:
    return (type(exc).__name__, translate(str(exc)))


def _by_path(lib, op: Exposed) -> Callable:
    """`lib`'s op at the path minigrad exposes it by."""
    if op.where == "Tensor":
        attr = getattr(lib.Tensor, op.attr)
        if isinstance(attr, property) or not callable(attr):
            return lambda inp: getattr(inp, op.attr)  # T, mT, ...: an attribute
        return attr
    namespace = {"": lib, "nn.functional": lib.nn.functional, "linalg": lib.linalg}[op.where]
    return getattr(namespace, op.attr)


def _seeded(minigrad) -> Callable:
    def wrapper_set_seed(fn, *args, **kwargs):  # PyTorch's wrapper seeds 42 first
        minigrad.manual_seed(42)
        return fn(*args, **kwargs)
    return wrapper_set_seed


def _with_minigrad(fn, minigrad) -> Callable:
    """An OpInfo's own Python `op` (a lambda in PyTorch's test code that may reorder
    arguments, clone first, ...) with minigrad in the place of torch: its globals naming
    torch's modules name minigrad's."""
    names = dict(fn.__globals__)
    for name, value in fn.__globals__.items():
        module = getattr(value, "__name__", "")
        if isinstance(value, type(os)) and (module == "torch" or module.startswith("torch.")):
            try:
                names[name] = importlib.import_module("minigrad" + module[len("torch"):])
            except ImportError:
                names.pop(name)
    names["wrapper_set_seed"] = _seeded(minigrad)
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def callables(op: Exposed, torch, minigrad) -> tuple[Callable, Callable]:
    """The op as PyTorch's OpInfo calls it, and the same call in minigrad."""
    fn = op.opinfo.op
    if isinstance(fn, types.FunctionType) and fn.__module__.startswith("torch.testing"):
        if fn.__closure__ is None:
            return fn, _with_minigrad(fn, minigrad)
    return fn, _by_path(minigrad, op)


@dataclass
class Run:
    """What one library did with one sample (`describe` turns it into plain data)."""

    error: tuple[str, str] | None = None
    result: Any = None
    grads: list | None = None
    grad_error: tuple[str, str] | None = None
    grads2: list | None = None
    grad2_error: tuple[str, str] | None = None
    warnings: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    processed: Any = None  # (a GAUGE_OPS op's result, processed: see `run`)


def _is_float_tensor(t, tensor_type) -> bool:
    return isinstance(t, tensor_type) and t.dtype.is_floating_point


def _weighted_sum(lib, tensors: list, seed: int):
    total = None
    for i, t in enumerate(tensors):
        w = lib.tensor(weights(tuple(t.shape), seed + i), dtype=t.dtype)
        term = (t * w).sum()
        total = term if total is None else total + term
    return total


def run(lib, fn: Callable, sample_values: tuple, *, double: bool,
        process: Callable | None = None) -> Run:
    """Run `fn` (the op in `lib`) on one converted sample (`(input, args, kwargs)`), then
    backward (and double backward if `double`); with `process` (a GAUGE_OPS op), backward
    from `process(result)`, kept as `processed`."""
    out = Run()
    inp, args, kwargs = sample_values
    out.inputs = [t for t in tensors_in(sample_values, lib.Tensor) if t.requires_grad]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.manual_seed(SEED)
        try:
            out.result = fn(inp, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the same failure is behaviour compared
            out.error = _error(exc)
        if out.error is None and process is not None:
            out.processed = process(out.result)
        outputs = [t for t in tensors_in(out.result if process is None else out.processed,
                                         lib.Tensor)
                   if _is_float_tensor(t, lib.Tensor) and t.requires_grad]
        if out.error is None and outputs and out.inputs:
            _backward(lib, out, outputs, double)
    out.warnings = [(w.category.__name__, translate(str(w.message))) for w in caught]
    return out


def _backward(lib, out: Run, outputs: list, double: bool) -> None:
    try:
        loss = _weighted_sum(lib, outputs, 0)
        out.grads = list(lib.autograd.grad(loss, out.inputs, allow_unused=True,
                                           retain_graph=True))
    except Exception as exc:  # noqa: BLE001
        out.grad_error = _error(exc)
        return
    if not double:
        return
    try:
        grads = lib.autograd.grad(loss, out.inputs, allow_unused=True, create_graph=True)
        grads = [g for g in grads if g is not None and g.requires_grad]
        if not grads:
            return
        loss2 = _weighted_sum(lib, grads, 3)
        out.grads2 = list(lib.autograd.grad(loss2, out.inputs, allow_unused=True))
    except Exception as exc:  # noqa: BLE001
        out.grad2_error = _error(exc)


# -- describing and comparing ---------------------------------------------------------------


def _values(t) -> np.ndarray:
    return np.array(t.detach().numpy(force=True) if hasattr(t, "numpy") else t, copy=True)


def describe(value, lib) -> Any:
    """Plain data for a result: tensors as dicts, containers as (type name, items)."""
    if isinstance(value, lib.Tensor):
        return {
            "dtype": str(value.dtype).split(".")[-1],
            "shape": tuple(value.shape),
            "requires_grad": value.requires_grad,
            "grad_fn": None if value.grad_fn is None else translate(value.grad_fn.name()),
            "values": _values(value),
        }
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [describe(v, lib) for v in value])
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return ("other", translate(repr(value)))


def _compare_tensor(where: str, got: dict, want: dict, how: tuple, scale,
                    values: bool) -> list[str]:
    diffs = [f"{where}: {k} {got[k]!r} != {want[k]!r}"
             for k in ("dtype", "shape", "requires_grad", "grad_fn") if got[k] != want[k]]
    if diffs or not values:
        return diffs
    g, w = got["values"], want["values"]
    floats, integers = how
    exact = w.dtype.kind != "f"
    if scale is not None:
        try:
            scale = np.broadcast_to(scale, w.shape)
        except ValueError:
            scale = None
    bad = outside(g, w, integers if exact else floats, None if exact else scale)
    if bad.any():
        at = np.flatnonzero(bad)[:3]
        kind = (integers if exact else floats).name
        diffs.append(f"{where}: {bad.sum()} of {bad.size} values not within {kind}: "
                     f"minigrad {g.ravel()[at].tolist()} torch {w.ravel()[at].tolist()}")
    return diffs


def compare(where: str, got, want, how: tuple, scale=None, values: bool = True
            ) -> list[str]:
    """The differences between two `describe`d values (empty when the same): float
    values within `how[0]`, integer and boolean values within `how[1]`."""
    if isinstance(want, dict) and isinstance(got, dict):
        return _compare_tensor(where, got, want, how, scale, values)
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want) == 2 and (
            isinstance(want[1], list)):
        if got[0] != want[0] or len(got[1]) != len(want[1]):
            return [f"{where}: {got[0]} of {len(got[1])} != {want[0]} of {len(want[1])}"]
        scales = scale if isinstance(scale, list) else [None] * len(want[1])
        return [d for i, (g, w, s) in enumerate(zip(got[1], want[1], scales, strict=True))
                for d in compare(f"{where}[{i}]", g, w, how, s, values)]
    if isinstance(want, float) and isinstance(got, float):
        return compare(where, {**_scalar(got)}, {**_scalar(want)}, how, None, values)
    if type(got) is not type(want) or got != want:
        return [f"{where}: {got!r} != {want!r}"]
    return []


def _scalar(x: float) -> dict:
    return {"dtype": "float", "shape": (), "requires_grad": False, "grad_fn": None,
            "values": np.array(x)}


def _sum_scale(fn: Callable, sample_values, torch) -> Any:
    """For a sum: the same op over the inputs' magnitudes (the sum of the terms' sizes)."""
    def magnitude(v):
        if isinstance(v, torch.Tensor) and v.dtype.is_floating_point:
            return v.detach().abs()
        if isinstance(v, (tuple, list)):
            return type(v)(magnitude(x) for x in v)
        if isinstance(v, dict):
            return {k: magnitude(x) for k, x in v.items()}
        return v
    inp, args, kwargs = magnitude(sample_values)
    try:
        with torch.no_grad():
            result = fn(inp, *args, **kwargs)
    except Exception:  # noqa: BLE001 - no scale: the result's own largest magnitude
        return None
    if isinstance(result, torch.Tensor):
        return _values(result)
    if isinstance(result, (tuple, list)):
        return [_values(r) if isinstance(r, torch.Tensor) else None for r in result]
    return None


def _raw(op: Exposed, sample, torch) -> tuple:
    """The sample as (input, args, kwargs); `ByDesign` for an unbound Tensor method
    called on a non-tensor (`Tensor.__radd__(3, t)`): minigrad's methods are plain Python
    functions, which do not check `self` as PyTorch's C descriptors do."""
    if op.where == "Tensor" and not isinstance(sample.input, torch.Tensor):
        raise ByDesign("method of a non-tensor")
    return (sample.input, tuple(sample.args), dict(sample.kwargs))


def by_design(op: Exposed, sample, torch, minigrad) -> str | None:
    """What the sample uses that minigrad lacks by design (a `ByDesign` reason), or None."""
    try:
        convert(_raw(op, sample, torch), torch, minigrad)
    except ByDesign as why:
        return str(why)
    features = sample_features(sample, torch, op.name)
    return next((f for f in DESIGN_FEATURES if f in features), None)


def _alpha_scale(sample_values, torch) -> Any:
    """|a| + |alpha| * |b| for add/sub(a, b, alpha=): the sum of the terms' sizes."""
    inp, args, kwargs = sample_values
    other = args[0] if args else kwargs.get("other")

    def size(v):
        return np.abs(_values(v)) if isinstance(v, torch.Tensor) else abs(v)
    return size(inp) + abs(kwargs["alpha"]) * size(other)


def _fused_scale(name: str, sample_values, torch) -> Any:
    """For addcmul and lerp: the sum of their terms' sizes. PyTorch's AVX2/AVX-512
    kernels compute them with a fused multiply-add (rounded once), its default kernels
    with two roundings: a sum of two terms, by processor."""
    inp, args, kwargs = sample_values

    def size(v):
        return np.abs(_values(v)) if isinstance(v, torch.Tensor) else abs(v)
    if name == "addcmul":
        t1, t2 = args[:2]
        return size(inp) + abs(kwargs.get("value", 1)) * size(t1) * size(t2)
    end, weight = args[:2]
    return (size(inp) + size(end)) * np.maximum(1.0, size(weight))


# ops PyTorch may compute with a fused multiply-add (see `_fused_scale`)
FUSED_OPS = {"addcmul", "lerp"}


@dataclass
class Outcome:
    """How a sample came out: "same", "different", "notimplemented" (minigrad raised
    NotImplementedError where PyTorch did not) or "crash" (minigrad raised another error
    where PyTorch raised none), with the differences."""

    status: str
    diffs: list[str]


# Warnings both libraries give once per process (PyTorch's TORCH_WARN_ONCE), by OpInfo
# name: the start of the text, and the module and `Once` by which minigrad remembers it
# warned. An earlier test of the same process may have made either library warn
# already, so before minigrad runs a sample its flag is set to PyTorch's state: warned
# before, unless PyTorch warned on this very sample.
WARN_ONCE = {
    "cross": ("Using minigrad.cross without specifying the dim arg is deprecated.",
              "minigrad.ops.matrix_functions", "_DEFAULT_DIM"),
    "cholesky": ("minigrad.cholesky is deprecated", "minigrad.ops.solvers",
                 "_CHOLESKY_DEPRECATED"),
}


def _follow_warn_once(op: Exposed, torch_warnings: list) -> None:
    if op.name in WARN_ONCE:
        text, module, flag = WARN_ONCE[op.name]
        warned_now = any(message.startswith(text) for _, message in torch_warnings)
        getattr(importlib.import_module(module), flag).warned = not warned_now


def valid_tie_indices(x: np.ndarray, dim: int, got: np.ndarray, want: np.ndarray, *,
                      kept: bool, distinct: bool) -> bool:
    """Whether `got` (minigrad's index output) is as good an answer as `want`
    (PyTorch's) for input `x` along `dim` (see TIE_ORDER_OPS): in range, pointing at
    values equal to those `want` points at, and, if `distinct`, no index twice along
    `dim`. `kept`: the index output keeps `dim` (else it was reduced away)."""
    if got.shape != want.shape or x.ndim == 0:
        return False
    d = dim % x.ndim
    if not kept:
        got, want = np.expand_dims(got, d), np.expand_dims(want, d)
    if ((got < 0) | (got >= x.shape[d])).any():
        return False
    at_got, at_want = np.take_along_axis(x, got, d), np.take_along_axis(x, want, d)
    same = at_got == at_want
    if at_got.dtype.kind == "f":
        same |= np.isnan(at_got) & np.isnan(at_want)
    if not same.all():
        return False
    return not distinct or bool((np.diff(np.sort(got, axis=d), axis=d) != 0).all())


def _tie_ordered(op: Exposed, sample, got: Any, want: Any) -> Any:
    """minigrad's described result with its index output taken as PyTorch's when it is
    a valid answer among equal values (TIE_ORDER_OPS); else unchanged."""
    given = dict(zip(TIE_ORDER_OPS[op.name], sample.args)) | dict(sample.kwargs)
    if given.get("stable") or not hasattr(sample.input, "dim"):
        return got
    pair = isinstance(got, tuple) and len(got[1]) == 2
    index_got = got[1][1] if pair else got
    index_want = want[1][1] if pair and isinstance(want, tuple) else want
    if not (isinstance(index_got, dict) and isinstance(index_want, dict)):
        return got
    g, w = index_got["values"], index_want["values"]
    if g.shape == w.shape and (g == w).all():
        return got
    kept = op.name in ("sort", "argsort", "topk") or bool(given.get("keepdim"))
    if not valid_tie_indices(_values(sample.input), given.get("dim", -1), g, w, kept=kept,
                             distinct=op.name in ("sort", "argsort", "topk")):
        return got
    index = {**index_got, "values": w}
    return (got[0], [got[1][0], index]) if pair else index


def check_sample(op: Exposed, sample, torch, minigrad) -> Outcome:
    """Run one OpInfo sample in both libraries and compare everything observable.
    Raises `ByDesign` when the sample uses what minigrad lacks by design."""
    raw = _raw(op, sample, torch)
    mine = convert(raw, torch, minigrad)
    theirs = convert(raw, torch, torch)
    double = bool(op.opinfo.supports_gradgrad)
    torch_fn, minigrad_fn = callables(op, torch, minigrad)
    process = sample.output_process_fn_grad if op.name in GAUGE_OPS else None
    want = run(torch, torch_fn, theirs, double=double, process=process)
    _follow_warn_once(op, want.warnings)
    got = run(minigrad, minigrad_fn, mine, double=double, process=process)
    diffs = []
    if want.error or got.error:
        if got.error != want.error:
            diffs.append(f"error: minigrad {got.error} torch {want.error}")
            return Outcome(_failure_status(got.error, want.error), diffs)
        return Outcome("same", [])
    kind = kind_of(op.name)
    if "singular-value norm" in sample_features(sample, torch, op.name):
        kind = CHAIN  # (through LAPACK's singular values, as LAPACK_OPS)
    scale = _sum_scale(torch_fn, theirs, torch) if op.name in LINEAR_SUM_OPS else None
    if op.name in ("add", "sub") and "alpha" in theirs[2]:
        # a + alpha * b: PyTorch's AVX2/AVX-512 kernels round it once (a fused
        # multiply-add), its default kernels twice: a sum of two terms, by processor
        kind, scale = SUM, _alpha_scale(theirs, torch)
    if op.name in FUSED_OPS:
        kind, scale = SUM, _fused_scale(op.name, theirs, torch)

    def how(what: str, floats: Tolerance) -> tuple:
        return tolerance(op.name, what, floats), tolerance(op.name, "integer result", EXACT)

    got_result, want_result = describe(got.result, minigrad), describe(want.result, torch)
    if op.name in TIE_ORDER_OPS:
        got_result = _tie_ordered(op, sample, got_result, want_result)
    diffs += compare("result", got_result, want_result, how("result", kind), scale,
                     values=op.name not in NO_VALUES and process is None)
    if process is not None:
        diffs += compare("processed result", describe(got.processed, minigrad),
                         describe(want.processed, torch), how("result", kind))
    if got.warnings != want.warnings:
        diffs.append(f"warnings: minigrad {got.warnings} torch {want.warnings}")
    status = "different"
    if got.grad_error != want.grad_error:
        diffs.append(f"backward error: minigrad {got.grad_error} torch {want.grad_error}")
        status = _failure_status(got.grad_error, want.grad_error)
    elif want.grads is not None:
        diffs += compare("grad", describe(got.grads, minigrad), describe(want.grads, torch),
                         how("grad", CHAIN))
    if want.grad2_error is None and got.grad2_error is not None:
        diffs.append(f"double backward error: minigrad {got.grad2_error}")
        status = _failure_status(got.grad2_error, None)
    elif want.grads2 is not None and got.grads2 is not None:
        diffs += compare("grad of grad", describe(got.grads2, minigrad),
                         describe(want.grads2, torch), how("grad of grad", CHAIN))
    elif (want.grads2 is None) != (got.grads2 is None) and want.grad2_error is None:
        diffs.append(f"double backward: minigrad {got.grads2 is not None} "
                     f"torch {want.grads2 is not None}")
    return Outcome(status if diffs else "same", diffs)


def error_inputs(op: Exposed, torch) -> list | None:
    """PyTorch's error inputs for `op` (each a sample and the error PyTorch raises), or
    None when its OpInfo lists none."""
    if op.opinfo.error_inputs_func is None:
        return None
    torch.manual_seed(SEED)
    return [e.sample_input for e in op.opinfo.error_inputs("cpu")]


def check_error(op: Exposed, sample, torch, minigrad) -> list[str]:
    """The differences between what the two libraries raise (or return) for one of
    PyTorch's error inputs: the error's type and message."""
    raw = _raw(op, sample, torch)
    mine, theirs = convert(raw, torch, minigrad), convert(raw, torch, torch)
    torch_fn, minigrad_fn = callables(op, torch, minigrad)
    want = run(torch, torch_fn, theirs, double=False)
    got = run(minigrad, minigrad_fn, mine, double=False)
    if got.error != want.error:
        return [f"error: minigrad {got.error} torch {want.error}"]
    return []


def _failure_status(got: tuple | None, want: tuple | None) -> str:
    if got is None:
        return "different"
    if got[0] == "NotImplementedError" and (want is None or want[0] != got[0]):
        return "notimplemented"
    return "crash" if want is None else "different"


def sample_features(sample, torch, name: str = "") -> set[str]:
    """The features of a sample: kwarg names ("kwarg:dim"),
    "number input" (a Python number as the input), "tensor args" (a tensor anywhere but
    the input), "ndim>2" or "ndim=0" (the input's dimensions), "integer input" (an
    integer tensor as the input), "bool input" (a bool tensor as the input), "numel>1000"
    (a large input), "int32 result" (out_int32=True, or an op of INT32_RESULT_OPS),
    "ellipsis" (a "..." in a string argument), "singular-value norm" (an `ord` that
    makes a norm of a matrix input one of its singular values: "nuc", 2 or -2; these
    are compared as CHAIN, LAPACK's values). The
    known-gap table and DESIGN_FEATURES match them."""
    feats = {f"kwarg:{k}" for k in sample.kwargs}
    if sample.kwargs.get("out_int32") or name in INT32_RESULT_OPS:
        feats.add("int32 result")
    if isinstance(sample.input, (bool, int, float)):
        feats.add("number input")
    rest = (tuple(sample.args), dict(sample.kwargs))
    if tensors_in(rest, torch.Tensor):
        feats.add("tensor args")
    if isinstance(sample.input, torch.Tensor):
        ndim = sample.input.dim()
        feats |= {"ndim>2"} if ndim > 2 else {"ndim=0"} if ndim == 0 else set()
        if not sample.input.is_floating_point() and sample.input.dtype != torch.bool:
            feats.add("integer input")
        if sample.input.dtype == torch.bool:
            feats.add("bool input")
        if sample.input.numel() > 1000:
            feats.add("numel>1000")
        if name in ("linalg.norm", "linalg.matrix_norm") and ndim >= 2:  # (A, ord, dim, ...)
            given = dict(zip(("ord", "dim"), sample.args)) | dict(sample.kwargs)
            dim = given.get("dim")
            if given.get("ord") in ("nuc", 2, -2) and (dim is None or len(dim) == 2):
                feats.add("singular-value norm")
        if name == "norm" and "nuc" in (*sample.args[:1], sample.kwargs.get("p")):
            feats.add("singular-value norm")
    strings = [v for v in itertools.chain([sample.input], sample.args, sample.kwargs.values())
               if isinstance(v, str)]
    if any("..." in s for s in strings):
        feats.add("ellipsis")
    return feats


def tally(outcomes: Iterable[Outcome]) -> dict[str, int]:
    counts = {"same": 0, "different": 0, "notimplemented": 0, "crash": 0}
    for o in outcomes:
        counts[o.status] += 1
    return counts


def limit() -> int | None:
    """The samples per op and dtype: CAP, or all under MINIGRAD_OPINFO_ALL=1."""
    return None if RUN_ALL else CAP


def survey(cap: int | None) -> None:
    """Print every OpInfo sample's outcome that is not "same", and the counts (with no
    table of skips or gaps applied: the whole picture)."""
    import torch

    import minigrad

    ops = exposed_ops(load_op_db(), torch, minigrad)
    outcomes, skipped = [], {}
    for op in ops:
        for dtype in op.dtypes:
            for i, sample in enumerate(samples(op, dtype, torch, cap)):
                try:
                    outcome = check_sample(op, sample, torch, minigrad)
                except ByDesign as why:
                    skipped[str(why)] = skipped.get(str(why), 0) + 1
                    continue
                outcomes.append(outcome)
                if outcome.status != "same":
                    print(f"{outcome.status} {op.key} {dtype} sample {i}: "
                          + "; ".join(outcome.diffs)[:500])
    print(f"{len(ops)} OpInfo ops exposed, {len(outcomes)} samples run: {tally(outcomes)}; "
          f"skipped by design: {skipped}")


if __name__ == "__main__":  # python tests/parity/opinfo_harness.py [N | all]
    import sys

    arg = sys.argv[1] if len(sys.argv) > 1 else str(CAP)
    survey(None if arg == "all" else int(arg))

"""The four dtypes minigrad supports, named and printed as PyTorch names them."""

from __future__ import annotations

import numpy as np


class dtype:  # noqa: N801 - mirrors torch.dtype
    """A tensor element type: a thin, printable wrapper around a numpy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "tensor_type", "_rank")

    def __init__(self, name: str, np_dtype: type, tensor_type: str, rank: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        # The legacy type name PyTorch uses in error messages ("FloatTensor").
        self.tensor_type = tensor_type
        # Position in the promotion order bool < int64 < float32 < float64.
        self._rank = rank

    def __repr__(self) -> str:
        return f"minigrad.{self.name}"

    @property
    def itemsize(self) -> int:
        return self.np.itemsize

    @property
    def c_name(self) -> str:
        """The C++ type PyTorch names in its overflow errors: int64_t, float, double, bool."""
        return _C_NAMES[self.name]

    @property
    def type_name(self) -> str:
        """PyTorch's name for the type in error messages: Float, Double, Long, Bool."""
        return self.tensor_type[: -len("Tensor")]

    def __reduce__(self):
        # Pickled by name and unpickled as the same object, as torch's dtypes are.
        return named, (self.name,)


bool_ = dtype("bool", np.bool_, "BoolTensor", 0)
int64 = dtype("int64", np.int64, "LongTensor", 1)
float32 = dtype("float32", np.float32, "FloatTensor", 2)
float64 = dtype("float64", np.float64, "DoubleTensor", 3)

_BY_NAME = {d.name: d for d in (bool_, int64, float32, float64)}
_BY_NUMPY = {d.np: d for d in (bool_, int64, float32, float64)}
_DEFAULT_FLOAT = float32


def named(name: str) -> dtype:
    """The dtype called `name` ("float32", "bool", ...)."""
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The minigrad dtype for a numpy dtype. Other widths (int32, uint8, float16, ...),
    which PyTorch would keep, are refused rather than quietly widened, wherever numpy
    data comes in (`tensor`, `from_numpy`, an array operand)."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        np_dtype = np.dtype(np_dtype)
        raise NotImplementedError(
            f"minigrad supports the dtypes float32, float64, int64 and bool; numpy {np_dtype} "
            f"data would keep its dtype in PyTorch: convert it first (for example with "
            f"`.astype(np.{'float32' if np_dtype.kind == 'f' else 'int64'})`) or pass dtype="
        ) from None


def to_dtype(spec) -> dtype:
    """Accept a minigrad dtype, a numpy dtype or a Python type (float, int, bool)."""
    if isinstance(spec, dtype):
        return spec
    if spec is float:
        return float64  # a Python float is a double, whatever the default dtype
    if spec is int:
        return int64
    if spec is bool:
        return bool_
    return from_numpy_dtype(spec)


def get_default_dtype() -> dtype:
    return _DEFAULT_FLOAT


def category(d: dtype) -> int:
    """bool 0 < integer 1 < floating point 2: the order promotion and in-place casts go by."""
    return 0 if d is bool_ else (1 if d is int64 else 2)


def result_type(*operands) -> dtype:
    """PyTorch's type promotion for tensors and Python scalars.

    The highest category (bool < integer < float) wins. Within it, dimensioned
    tensors outrank zero-dim tensors, which outrank Python scalars: so
    `float32_vector * float64_scalar_tensor` stays float32, and
    `int64_tensor * 2.5` becomes the default float dtype.
    """
    if len(operands) == 2 and hasattr(operands[0], "_data"):
        a, b = operands
        if type(b) is float:
            # The most common case, `tensor * 0.5`: a float tensor keeps its dtype.
            d = _BY_NUMPY[a._data.dtype]
            if d.is_floating_point and not a._wrapped_number:
                return d
        elif hasattr(b, "_data") and a._data.dtype is b._data.dtype:
            return _BY_NUMPY[a._data.dtype]  # two tensors of one dtype: nothing to promote
    best_cat = -1
    best_prio = -1
    best = None
    for op in operands:
        if isinstance(op, bool):
            d, prio = bool_, 0
        elif isinstance(op, int):
            d, prio = int64, 0
            check_int_range(op)
        elif isinstance(op, float):
            d, prio = _DEFAULT_FLOAT, 0
        else:
            d = op.dtype
            if op._data.ndim > 0:
                prio = 2
            elif op._wrapped_number:  # `minigrad.add(2, t)`: 2 promotes as a Python number
                d, prio = (_DEFAULT_FLOAT if d.is_floating_point else d), 0
            else:
                prio = 1
        cat = category(d)
        if cat > best_cat or (cat == best_cat and prio > best_prio):
            best_cat, best_prio, best = cat, prio, d
        elif cat == best_cat and prio == best_prio and d._rank > best._rank:
            best = d
    return best


def of_number(value) -> dtype:
    """The dtype of the 0-d tensor PyTorch makes of a Python number (a saved scalar,
    the 2 of `minigrad.add(2, t)`): bool, int64 or float64, whatever the default."""
    if isinstance(value, bool):
        return bool_
    return int64 if isinstance(value, int) else float64


def check_int_range(value: int) -> None:
    """PyTorch takes a Python int only if it fits an int64 or a uint64."""
    if not -(2**63) <= value < 2**64:
        raise OverflowError(
            "int too big to convert" if value > 0 else "can't convert negative int to unsigned"
        )


def dtype_arg(spec, fn: str) -> dtype | None:
    """The `dtype=` argument of factory `fn`, checked as PyTorch checks it: a minigrad
    dtype, a Python type (float, int, bool) or None; a string or a numpy type is a
    TypeError, not a guess."""
    if spec is None or isinstance(spec, dtype):
        return spec
    if spec in (float, int, bool):
        return to_dtype(spec)
    raise TypeError(f"{fn}(): argument 'dtype' must be minigrad.dtype, not {type(spec).__name__}")


_FLOAT32_MAX = float(np.finfo(np.float32).max)
_C_NAMES = {"int64": "int64_t", "float32": "float", "float64": "double", "bool": "bool"}


def check_scalar_fits(value, d: dtype) -> None:
    """PyTorch's check when a Python number is written into a tensor of dtype `d`
    (`full`, `fill_`, `x[i] = v`): a value the dtype cannot hold is an error, where
    numpy would wrap it or turn it into inf with a warning."""
    if isinstance(value, bool) or d is bool_:
        return
    if d is int64:
        if isinstance(value, float):
            ok = value == value and -(2.0**63) <= value < 2.0**63
        else:
            ok = -(2**63) <= int(value) < 2**63
    elif d is float32:
        ok = not isinstance(value, float) or not abs(value) > _FLOAT32_MAX or value in (
            float("inf"), float("-inf"))
    else:
        ok = True
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {d.c_name} without overflow")

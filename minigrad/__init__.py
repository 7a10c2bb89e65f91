"""minigrad: a small autograd library that behaves like PyTorch.

`import minigrad as torch` and forum snippets about autograd run unchanged: the same
values and gradients, `grad_fn` names, `next_functions`, `_saved_*` attributes,
`_version` numbers and error messages (with "minigrad" where PyTorch says "torch").
"""

from __future__ import annotations

import numpy as np

from . import _dtype
from ._creation import (
    arange,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    linspace,
    manual_seed,
    normal_,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    tensor,
    uniform_,
    zeros,
    zeros_like,
)
from ._dtype import dtype, get_default_dtype
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import arithmetic as _ar
from .ops import indexing as _ix
from .ops import linalg as _la
from .ops import reductions as _rd
from .ops import unary as _un
from .ops import views as _vw
from .tensor import Size, Tensor, device

float32 = float = _dtype.float32
float64 = double = _dtype.float64
int64 = long = _dtype.int64
bool = _dtype.bool_  # noqa: A001 - mirrors torch.bool

__version__ = "0.1.0"


# -- comparisons (never differentiable) -------------------------------------------------


def _compare(np_op):
    def compare(self: Tensor, other) -> Tensor:
        other_data = other._data if isinstance(other, Tensor) else other
        if isinstance(other, Tensor):
            from .ops._util import broadcast_shape

            broadcast_shape(self._data.shape, other._data.shape)
        return Tensor._make(np.asarray(np_op(self._data, other_data)))

    return compare


eq, ne = _compare(np.equal), _compare(np.not_equal)
lt, le = _compare(np.less), _compare(np.less_equal)
gt, ge = _compare(np.greater), _compare(np.greater_equal)


def _logical(np_op, name):
    def op(self: Tensor, other) -> Tensor:
        if self.dtype.is_floating_point:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Float\'')
        other_data = other._data if isinstance(other, Tensor) else other
        return Tensor._make(np.asarray(np_op(self._data, other_data)))

    return op


def _invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise TypeError("~ (bitwise_not) is only implemented for integer and bool tensors")
    return Tensor._make(~self._data)


def argmax(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return Tensor._make(np.array(np.argmax(x._data), np.int64))
    return Tensor._make(np.asarray(np.argmax(x._data, axis=dim, keepdims=keepdim), np.int64))


def argmin(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return Tensor._make(np.array(np.argmin(x._data), np.int64))
    return Tensor._make(np.asarray(np.argmin(x._data, axis=dim, keepdims=keepdim), np.int64))


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    return builtins_bool(np.allclose(a._data, b._data, rtol, atol, equal_nan))


def equal(a: Tensor, b: Tensor) -> bool:
    return builtins_bool(a._data.shape == b._data.shape and np.array_equal(a._data, b._data))


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(x: Tensor) -> int:
    return x.numel()


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with a numpy array (float32/float64/int64/bool)."""
    _dtype.from_numpy_dtype(arr.dtype)
    return Tensor._make(arr)


def stack(tensors, dim: int = 0) -> Tensor:
    raise NotImplementedError("minigrad does not implement stack/cat; build with tensor(...)")


cat = stack

import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool


# -- the namespace functions -------------------------------------------------------------

add, sub, mul, div = _ar.add, _ar.sub, _ar.mul, _ar.div
subtract, multiply, divide, true_divide = sub, mul, div, div
neg, negative, pow, reciprocal = _ar.neg, _ar.neg, _ar.pow, _ar.reciprocal
exp, log, sin, cos, tanh = _un.exp, _un.log, _un.sin, _un.cos, _un.tanh
sigmoid, relu, sqrt, abs, clamp = _un.sigmoid, _un.relu, _un.sqrt, _un.abs, _un.clamp
clip = clamp
sum, mean, max, min = _rd.sum, _rd.mean, _rd.max, _rd.min
matmul, mm, mv, dot = _la.matmul, _la.mm, _la.mv, _la.dot
reshape, flatten, squeeze, unsqueeze = _vw.reshape, _vw.flatten, _vw.squeeze, _vw.unsqueeze
transpose, t, permute = _vw.transpose, _vw.t, _vw.permute
unbind, split, chunk, clone, narrow, select = (
    _vw.unbind, _vw.split, _vw.chunk, _vw.clone, _vw.narrow, _vw.select,
)


def detach(x: Tensor) -> Tensor:
    return x.detach()


# -- Tensor methods and operators ---------------------------------------------------------


def _attach_methods() -> None:
    T = Tensor

    def rev(fn):
        return lambda self, other: fn(other, self) if isinstance(other, Tensor) else NotImplemented

    methods = {
        "add": _ar.add, "sub": _ar.sub, "mul": _ar.mul, "div": _ar.div, "pow": _ar.pow,
        "neg": _ar.neg, "negative": _ar.neg, "reciprocal": _ar.reciprocal,
        "subtract": _ar.sub, "multiply": _ar.mul, "divide": _ar.div, "true_divide": _ar.div,
        "add_": _ar.add_, "sub_": _ar.sub_, "mul_": _ar.mul_, "div_": _ar.div_,
        "pow_": _ar.pow_, "neg_": _ar.neg_,
        "exp": _un.exp, "log": _un.log, "sin": _un.sin, "cos": _un.cos, "tanh": _un.tanh,
        "sigmoid": _un.sigmoid, "relu": _un.relu, "sqrt": _un.sqrt, "abs": _un.abs,
        "clamp": _un.clamp, "clip": _un.clamp, "exp_": _un.exp_, "log_": _un.log_,
        "sin_": _un.sin_, "cos_": _un.cos_, "tanh_": _un.tanh_, "sigmoid_": _un.sigmoid_,
        "relu_": _un.relu_, "sqrt_": _un.sqrt_, "abs_": _un.abs_, "clamp_": _un.clamp_,
        "clip_": _un.clamp_,
        "sum": _rd.sum, "mean": _rd.mean, "max": _rd.max, "min": _rd.min,
        "argmax": argmax, "argmin": argmin,
        "matmul": _la.matmul, "mm": _la.mm, "mv": _la.mv, "dot": _la.dot,
        "view": _vw.view, "view_as": _vw.view_as, "reshape": _vw.reshape,
        "reshape_as": _vw.reshape_as, "flatten": _vw.flatten, "transpose": _vw.transpose,
        "swapaxes": _vw.transpose, "t": _vw.t, "permute": _vw.permute,
        "unsqueeze": _vw.unsqueeze, "squeeze": _vw.squeeze, "expand": _vw.expand,
        "expand_as": _vw.expand_as, "select": _vw.select, "narrow": _vw.narrow,
        "unbind": _vw.unbind, "split": _vw.split, "chunk": _vw.chunk, "clone": _vw.clone,
        "contiguous": _vw.contiguous, "copy_": _vw.copy_, "fill_": _vw.fill_,
        "zero_": _vw.zero_, "to": _to, "type": _type,
        "float": lambda self: _vw.to_dtype(self, _dtype.float32),
        "double": lambda self: _vw.to_dtype(self, _dtype.float64),
        "long": lambda self: _vw.to_dtype(self, _dtype.int64),
        "bool": lambda self: _vw.to_dtype(self, _dtype.bool_),
        "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
        "uniform_": uniform_, "normal_": normal_,
        "new_zeros": lambda self, *s, **kw: zeros(*s, dtype=kw.get("dtype", self.dtype)),
        "new_ones": lambda self, *s, **kw: ones(*s, dtype=kw.get("dtype", self.dtype)),
        "new_tensor": lambda self, data, **kw: tensor(data, dtype=kw.get("dtype", self.dtype)),
        "__getitem__": _ix.getitem, "__setitem__": _ix.setitem,
        "__add__": _ar.add, "__radd__": _ar.add, "__iadd__": _ar.add_,
        "__sub__": _ar.sub, "__rsub__": _ar.rsub, "__isub__": _ar.sub_,
        "__mul__": _ar.mul, "__rmul__": _ar.mul, "__imul__": _ar.mul_,
        "__truediv__": _ar.div, "__rtruediv__": _ar.rdiv, "__itruediv__": _ar.div_,
        "__pow__": _ar.pow, "__rpow__": _ar.rpow, "__ipow__": _ar.pow_,
        "__matmul__": _la.matmul, "__rmatmul__": rev(_la.matmul), "__neg__": _ar.neg,
        "__abs__": _un.abs, "__pos__": lambda self: self,
        "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
        "__invert__": _invert,
        "__and__": _logical(np.logical_and, "bitwise_and"),
        "__or__": _logical(np.logical_or, "bitwise_or"),
        "__xor__": _logical(np.logical_xor, "bitwise_xor"),
    }
    for name, fn in methods.items():
        setattr(T, name, fn)
    T.T = property(_vw.T)
    T.mT = property(_matrix_transpose)


def _matrix_transpose(self: Tensor) -> Tensor:
    """`x.mT`: swap the last two dims (matrices only, as in PyTorch)."""
    if self.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. "
            f"Got {self.ndim}-D tensor."
        )
    return _vw.transpose(self, -2, -1)


def _to(self: Tensor, *args, **kwargs) -> Tensor:
    """`to(dtype)` converts; `to("cpu")` is a no-op; any other device is refused."""
    target = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _dtype.dtype):
            target = a
        elif isinstance(a, str) and a != "cpu":
            raise RuntimeError(f"minigrad runs on the CPU only (got device={a!r})")
    where = kwargs.get("device")
    if where is not None and str(where) != "cpu":
        raise RuntimeError(f"minigrad runs on the CPU only (got device={where!r})")
    return self if target is None else _vw.to_dtype(self, target)


def _type(self: Tensor, dtype=None):
    if dtype is None:
        return f"minigrad.{self.dtype.tensor_type}"
    return _vw.to_dtype(self, dtype)


_attach_methods()

_UNSUPPORTED_DTYPES = {
    "float16", "half", "bfloat16", "int32", "int", "int16", "short", "int8", "uint8",
    "complex64", "complex128", "cfloat", "cdouble",
}


def __getattr__(name: str):
    # A clear refusal for the dtypes PyTorch has and minigrad deliberately lacks.
    if name in _UNSUPPORTED_DTYPES:
        raise NotImplementedError(
            f"minigrad supports the dtypes float32, float64, int64 and bool; "
            f"'{name}' is not available"
        )
    raise AttributeError(f"module 'minigrad' has no attribute '{name}'")


from . import autograd, nn, optim  # noqa: E402,F401

__all__ = [
    "Size", "Tensor", "device", "dtype", "float32", "float64", "int64", "bool", "float",
    "double", "long",
    "tensor", "zeros", "ones", "full", "eye", "arange", "randn", "rand", "randint", "empty",
    "linspace", "zeros_like", "ones_like", "full_like", "empty_like", "randn_like",
    "rand_like", "manual_seed", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "inference_mode", "autograd", "nn", "optim", "get_default_dtype",
]

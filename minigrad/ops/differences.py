"""diff and dist. diff: the n-th forward difference along a dim, out[i] = x[i + 1] - x[i] (applied n
times), with `prepend` and `append` joined on first.

PyTorch writes it with other ops (narrow, then sub; cat for prepend/append), so it has
no node of its own: its `grad_fn` is SubBackward0, and so is minigrad's, which runs the
same ops in the same order. dist(a, b, p) is the p-norm of a - b, whose gradient is
the norm's at a - b (and its negative, for b).
"""

from __future__ import annotations

from ..autograd.graph import INPUT, OUTPUT, VALUE, SavedTensor
from ..autograd.record import record
from ..grad_mode import no_grad
from ..tensor import Tensor, _wrap_dim
from .declaration import declare
from .formulas import Formula, FormulaNode, named
from .statistics import _norm_data
from .tangent_formulas import Tangent


def _check_joined(input: Tensor, other: Tensor | None, dim: int) -> None:  # noqa: A002
    if other is None:
        return
    d = _wrap_dim(dim, input.dim())
    if other.dim() != input.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.dim()):
        if i != d and other.shape[i] != input.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({i}) = "
                f"{input.shape[i]}, but got tensor.size({i}) = {other.shape[i]}")


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None) -> Tensor:
    """The n-th difference along `dim` (for bools, whether neighbours differ)."""
    if input.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    _check_joined(input, prepend, dim)
    _check_joined(input, append, dim)
    result = input
    if n and (prepend is not None or append is not None):
        parts = [t for t in (prepend, input, append) if t is not None]
        result = named("cat")(parts, dim)
    if n == 0:
        out = named("zeros_like")(result)
        return out.copy_(result)
    size = result.shape[_wrap_dim(dim, result.dim())]
    out_len = size - 1
    for _ in range(min(n, size)):
        # (C++ evaluates `a - b`'s right operand first: its narrow is recorded first)
        before = result.narrow(dim, 0, out_len)
        after = result.narrow(dim, 1, out_len)
        # (bools: PyTorch's logical_xor, which is `!=`)
        result = after != before if result._data.dtype.kind == "b" else after - before
        out_len -= 1
    return result


declare("diff", function=diff, method=True)


# -- dist: the p-norm of a difference -----------------------------------------------------


class DistBackward0(FormulaNode):
    """dist(self, other, p): the p-norm's gradient at self - other, for self, and its
    negative, for other (`norm_backward`, beside the norms in `distances.py`). Saves
    both INPUTS, p and its OUTPUT."""

    tangent = Tangent("norm_jvp(self_p - other_p, self_t - other_t, p, result, (), False)")
    saves = {"other": INPUT, "p": VALUE, "result": OUTPUT, "self": INPUT}
    formulas = (Formula("self", "norm_backward(grad, self - other, p, result)"),
                Formula("other", "-norm_backward(grad, self - other, p, result)"))


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:  # noqa: A002
    """The p-norm of input - other (broadcast), over every element."""
    with no_grad():
        difference = input - other
    data = difference._data
    if data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {difference.dtype.type_name}")
    out = Tensor._make(_norm_data(data, float(p), tuple(range(data.ndim)), False))
    node = record(DistBackward0, out, input, other)
    if node is not None:
        node._saved.update({"other": SavedTensor(other), "p": p,
                            "result": SavedTensor(out, is_output=True),
                            "self": SavedTensor(input)})
    return out


declare("dist", nodes=(DistBackward0,), function=dist, method=True)

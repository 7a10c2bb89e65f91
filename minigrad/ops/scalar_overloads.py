"""A tensor and a C++ Scalar: the nodes backward formulas record.

PyTorch's formulas are C++, where `result + 1` calls the Scalar overload of add
(AddBackward1), not the tensor one Python's `x + 1` calls (AddBackward0). A
`create_graph=True` backward records these (see `formulas.Scalar`); nothing a learner
types reaches them.
"""

from __future__ import annotations

from .. import _dtype
from ..arrays.dispatch import scalar_op
from ..autograd.inplace import begin_inplace, finish_inplace
from ..autograd.record import record_elementwise
from ..kernels import elementwise as K
from ..tensor import Tensor
from .arithmetic import VALUE
from .declaration import declare
from .formulas import ArrayFormulaNode, Formula, efficient_zero_result
from .tangent_formulas import AUTO_ELEMENT_WISE, Tangent

# (In lesson 4's table these nodes stand with the rest of the arithmetic.)
OP_FAMILY = "arithmetic"

class AddBackward1(ArrayFormulaNode):
    """t + Scalar: the gradient passes unchanged."""

    tangent = Tangent("self_t.clone()")

    formulas = (Formula("self", "grad"),)
    elementwise = True


class SubBackward1(AddBackward1):
    """t - Scalar: the gradient passes unchanged."""

    tangent = AUTO_ELEMENT_WISE


class MulBackward1(ArrayFormulaNode):
    """t * Scalar: grad * Scalar. Saves the Scalar."""

    tangent = Tangent("self_t * other")

    saves = {"other": VALUE}
    scalars = ("other",)
    formulas = (Formula("self", "grad * other"),)
    elementwise = True


class DivBackward1(ArrayFormulaNode):
    """t / Scalar: grad / Scalar. Saves the Scalar."""

    tangent = Tangent("self_t / other")

    saves = {"other": VALUE}
    scalars = ("other",)
    formulas = (Formula("self", "grad / other"),)
    elementwise = True


def _with_scalar(node_cls, kernel, t: Tensor, s, operand=None, zeros=None) -> Tensor:
    """`kernel(t, operand)` (by default `operand` is `s`), recorded as `node_cls`,
    which saves `s` if it saves anything. `zeros`: for mul (False) and div (True), an
    efficient zero `t` gives what PyTorch's kernel gives it (`efficient_zero_result`)."""
    dt = _dtype.result_type(t, s)
    data = None if zeros is None else efficient_zero_result(t._data, s, dt.np, divide=zeros)
    out = Tensor._make(scalar_op(kernel, t._data, s if operand is None else operand, dt)
                       if data is None else data)
    node = record_elementwise(node_cls, out, t)
    if node is not None and node_cls.saves:
        node._saved["other"] = s
    return out


def add_scalar(t: Tensor, s) -> Tensor:
    """t + s for a C++ Scalar s (AddBackward1)."""
    return _with_scalar(AddBackward1, K.add_scalar, t, s)


def sub_scalar(t: Tensor, s) -> Tensor:
    """t - s for a C++ Scalar s (SubBackward1)."""
    return _with_scalar(SubBackward1, K.add_scalar, t, s, operand=-s)


def mul_scalar(t: Tensor, s) -> Tensor:
    """t * s for a C++ Scalar s (MulBackward1)."""
    return _with_scalar(MulBackward1, K.mul_scalar, t, s, zeros=False)


def div_scalar(t: Tensor, s) -> Tensor:
    """t / s for a C++ Scalar s (DivBackward1)."""
    return _with_scalar(DivBackward1, K.div_scalar, t, s, zeros=True)


def _in_place_with_scalar(node_cls: type, kernel, t: Tensor, s) -> Tensor:
    """`t` op= s in place for a C++ Scalar s, recorded as `node_cls` (which saves s as
    `other`), with the in-place checks and version bump."""
    node = begin_inplace(node_cls, t)
    t._data[...] = scalar_op(kernel, t._data, s, t.dtype)
    finish_inplace(t, node)
    if node is not None:
        node._saved["other"] = s
    return t


def div_scalar_(t: Tensor, s) -> Tensor:
    """t /= s in place for a C++ Scalar s (DivBackward1), as PyTorch's formulas divide
    a gradient by a count."""
    return _in_place_with_scalar(DivBackward1, K.div_scalar, t, s)


def mul_scalar_(t: Tensor, s) -> Tensor:
    """t *= s in place for a C++ Scalar s (MulBackward1), as PyTorch's formulas scale
    a gradient step by step."""
    return _in_place_with_scalar(MulBackward1, K.mul_scalar, t, s)


declare("add_scalar", nodes=(AddBackward1,), aten=add_scalar)
declare("sub_scalar", nodes=(SubBackward1,), aten=sub_scalar)
declare("mul_scalar", nodes=(MulBackward1,), aten=mul_scalar)
declare("div_scalar", nodes=(DivBackward1,), aten=div_scalar)
# (their in-place forms record the same nodes: names for formulas only)
declare("div_scalar_", aten=div_scalar_)
declare("mul_scalar_", aten=mul_scalar_)


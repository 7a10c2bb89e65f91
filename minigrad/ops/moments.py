"""std_mean and var_mean: the spread and the mean in one call, two outputs of ONE node
(`(StdMeanBackward0, 0)` and `(StdMeanBackward0, 1)`), whose backward adds the
gradient through the spread (std's or var's) to the gradient through the mean.
"""

from __future__ import annotations

import numpy as np

from ..autograd.graph import INPUT, OUTPUT, VALUE, Node, SavedTensor
from ..autograd.record import record
from ..tensor import Tensor
from .declaration import declare
from .formulas import Formula, FormulaNode, helper, named
from .reductions import _dims, _saved_dim, average
from .statistics import _var_args, _variance

# (The op table, `widgets.op_table` and docs/ops.md, lists them with the statistics.)
OP_FAMILY = "statistics"


def _mean_part(gmean: Tensor, self: Tensor, dim, keepdim: bool) -> Tensor:
    dims = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return named("mean_backward")(gmean, tuple(self.shape), dims, self.numel(), keepdim)


@helper
def var_mean_backward(grads: list, self: Tensor, dim, correction, keepdim: bool) -> Tensor:
    """var_mean's gradient: var's of the first output's gradient plus mean's of the
    second's (either may be missing)."""
    gvar, gmean = grads[0], grads[1]
    gself = None
    if gvar is not None:
        gself = named("var_backward")(gvar, self, dim, correction, keepdim)
    if gmean is not None:
        aux = _mean_part(gmean, self, dim, keepdim)
        gself = aux if gself is None else gself + aux
    return gself


@helper
def std_mean_backward(grads: list, self: Tensor, std: Tensor, dim, correction,
                      keepdim: bool) -> Tensor:
    """std_mean's gradient: std's of the first output's gradient plus mean's of the
    second's (either may be missing)."""
    gstd, gmean = grads[0], grads[1]
    gself = None
    if gstd is not None:
        gself = named("std_backward")(std, gstd, self, dim, correction, keepdim)
    if gmean is not None:
        aux = _mean_part(gmean, self, dim, keepdim)
        gself = aux if gself is None else gself + aux
    return gself


class VarMeanBackward0(FormulaNode):
    """var_mean: var's gradient plus mean's. Saves the correction, the dims, keepdim
    and its INPUT."""

    saves = {"correction": VALUE, "dim": VALUE, "keepdim": VALUE, "self": INPUT}
    formulas = (Formula("self", "var_mean_backward(grads, self, dim, correction, keepdim)"),)

    def _num_outputs(self) -> int:
        return 2


class StdMeanBackward0(FormulaNode):
    """std_mean: std's gradient plus mean's. Saves the correction, the dims, keepdim,
    its INPUT and its first OUTPUT (the std)."""

    saves = {"correction": VALUE, "dim": VALUE, "keepdim": VALUE, "result0": OUTPUT,
             "self": INPUT}
    formulas = (Formula("self", "std_mean_backward(grads, self, result0, dim, correction, "
                                "keepdim)"),)

    def _num_outputs(self) -> int:
        return 2


def _spread_and_mean(name: str, node_cls: type[Node], x: Tensor, args: tuple,
                     kwargs: dict) -> tuple[Tensor, Tensor]:
    dim, correction, keepdim = _var_args(name, args, kwargs)
    spread = _variance(name, x, dim, correction, keepdim)
    if node_cls is StdMeanBackward0:
        spread = np.asarray(np.sqrt(spread))
    dims = _dims(dim, x._data.ndim)
    mean = average(x._data, dims, keepdim) if x._data.ndim else x._data.copy()
    first, second = Tensor._make(spread), Tensor._make(np.array(mean, order="C"))
    node = record(node_cls, first, x)
    if node is not None:
        second._grad_fn, second._output_nr = node, 1
        node._saved.update({"correction": correction, "dim": _saved_dim(dim),
                            "keepdim": keepdim, "self": SavedTensor(x)})
        if node_cls is StdMeanBackward0:
            node._saved["result0"] = SavedTensor(first, is_output=True)
    return first, second


def var_mean(input: Tensor, *args, **kwargs) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(var, mean) over `dim` (all dims by default), as `var` reads its arguments."""
    return _spread_and_mean("var_mean", VarMeanBackward0, input, args, kwargs)


def std_mean(input: Tensor, *args, **kwargs) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(std, mean) over `dim` (all dims by default), as `std` reads its arguments."""
    return _spread_and_mean("std_mean", StdMeanBackward0, input, args, kwargs)


# -- declarations: each op's public names (see `declaration.py`) ----------------------------

declare("var_mean", nodes=(VarMeanBackward0,), function=var_mean)
declare("std_mean", nodes=(StdMeanBackward0,), function=std_mean)

"""The node PyTorch records for an op it gives no derivative (`x // y`, `heaviside`,
`hardsigmoid_backward`): one class for every such op, as PyTorch's
`torch::autograd::NotImplemented`, each node naming its op. Backward through it is
an error. (Other modules import it as `NoDerivative`: the class's own name would hide
Python's `NotImplemented`, which operators return.)"""

from __future__ import annotations

from ..autograd.graph import Node


class NotImplemented(Node):  # noqa: A001 - PyTorch's name for the node
    """The node of an op without a derivative; it keeps the op's name (as `_op`,
    not shown: PyTorch's node shows no saved values) for its error. Its edges lead
    to the inputs that require grad only, as PyTorch's do (`heaviside(c, v)` with
    only `v` requiring grad has one edge, to `v`)."""

    _display_name = "minigrad::autograd::NotImplemented"
    unshown = ("op",)

    def __init__(self, next_functions: tuple = (), input_meta: tuple | None = ()) -> None:
        kept = [i for i, (fn, _) in enumerate(next_functions) if fn is not None]
        super().__init__(tuple(next_functions[i] for i in kept),
                         None if input_meta is None else tuple(input_meta[i] for i in kept))

    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{self._saved['_op']} is not implemented")


NoDerivative = NotImplemented


def name_op(node: Node | None, op: str) -> None:
    """Tell a just-recorded NotImplemented node (None: nothing was recorded) its op."""
    if node is not None:
        node._saved["_op"] = op

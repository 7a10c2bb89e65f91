"""Forward-mode AD, as `torch.autograd.forward_ad`: dual tensors and their tangents.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)   # jvp: the Jacobian of f times tangent

Each op computes the tangent of its output from its inputs' tangents as it runs
(`autograd/tangents.py` says how, `ops/tangent_formulas.py` with which formulas), so
one pass gives a Jacobian-vector product, where reverse mode would need a backward
pass per output. As in PyTorch there is one level at a time.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

from ..tensor import Tensor, make_view
from .graph import Node
from .record import record
from .tangents import DUAL, clear_level, set_tangent, tangent_of

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


def enter_dual_level() -> int:
    """Enter a new forward grad level (the default of `make_dual` and `unpack_dual`
    from now on) and return it. Only one can be entered at a time."""
    if DUAL.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    DUAL.level = 0
    DUAL.active = True
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the last level entered: every tangent made in it is gone."""
    if level is None:
        level = DUAL.level
    if level != DUAL.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    clear_level()
    DUAL.active = False
    DUAL.level = -1


def _no_tangents(fn, *args):
    """`fn(*args)` computing no tangent (the primal side of `make_dual`/`unpack_dual`)."""
    DUAL.active = False
    try:
        return fn(*args)
    finally:
        DUAL.active = True


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A new tensor, a view of `tensor`, carrying `tangent` for forward AD.

    The tangent is kept as it is when it is laid out like `tensor`, copied into such
    a layout otherwise. Differentiable in reverse mode too (a `ViewBackward0`)."""
    if level is None:
        level = DUAL.level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if level != DUAL.level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a "
                           f"forward gradient at the same level {level} is not supported.")
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"[{', '.join(map(str, tensor.shape))}] while the given forward gradient is of "
            f"size [{', '.join(map(str, tangent.shape))}]."
        )
    dual = _no_tangents(Tensor.view, tensor, tensor.shape)
    set_tangent(dual, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """Namedtuple returned by `unpack_dual` containing the primal and tangent
    components of the dual tensor."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view of `tensor` without the tangent) and the tangent (as it is,
    None if `tensor` has none) of a dual tensor."""
    if level is None:
        level = DUAL.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError("_unpack_dual(): argument 'dual' (position 1) must be Tensor, "
                        f"not {type(tensor).__name__}")
    if level != DUAL.level:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = tangent_of(tensor)
    return UnpackedDualTensor(_no_tangents(_primal, tensor), tangent)


class Identity(Node):
    """The node of `unpack_dual`'s primal (PyTorch's `_fw_primal`): the gradient
    passes unchanged."""

    _display_name = "minigrad::autograd::Identity"
    exact = True

    def backward(self, grad):
        return (grad,)


def _primal(tensor: Tensor) -> Tensor:
    primal = make_view(tensor, tensor._data.view())
    record(Identity, primal, tensor)
    return primal


class dual_level(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Context manager (or decorator) for forward AD: enters a level on entry (its
    value is what `as` gives), exits it, and so drops every tangent, on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()

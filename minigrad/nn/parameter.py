"""`Parameter`: the tensors a `Module` trains."""

from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and that a Module registers as its own.

    `Parameter(t)` shares `t`'s memory (and version counter, like `t.detach()`) but
    starts a new graph: even when `t` was computed, the parameter is a fresh leaf,
    so gradients stop at it. That is how `nn.Parameter(w @ x)` cuts `w` off.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        from .. import _creation

        if data is None:
            data = _creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}"
            )
        p = cls._make(data._data)
        p._version_counter = data._version_counter
        p._is_param = True
        if requires_grad:
            p._set_requires_grad(
                True, "Only Tensors of floating point and complex dtype can require gradients"
            )
        return p

    def __init__(self, *args, **kwargs) -> None:  # construction happens in __new__
        pass

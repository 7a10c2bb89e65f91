"""`Optimizer`: parameter groups, per-parameter state, `zero_grad` and `step`."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor, zero_grad_in_place


def _as_param_scalar(dtype: np.dtype):
    """How PyTorch hands a Python number to a float32 (or float64) update: converted
    to the parameter's dtype, so the kernel computes in that dtype."""
    return dtype.type


def _bump(t: Tensor, times: int = 1) -> None:
    """Count `times` in-place updates of a state tensor, as PyTorch's version counter
    does for each in-place op its update runs (`mul_`, `add_`, ...)."""
    t._version_counter.value += times


def _only_defaults(optimizer: str, **options: Any) -> None:
    """Refuse PyTorch options minigrad accepts only at their defaults: it always runs
    one plain loop per tensor (no foreach/fused kernels, no differentiable steps)."""
    for name, value in options.items():
        if value:
            raise NotImplementedError(f"minigrad's {optimizer} does not implement {name}={value!r}")


class Optimizer:
    """Base class: keeps `param_groups` (dicts of "params" plus settings) and a
    `state` dict per parameter (`{}` until the first step needs one). Subclasses
    implement `_update(p, group)`."""

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got minigrad.{params.dtype.tensor_type}"
            )
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own settings (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            # Allowed (each copy is updated), but PyTorch warns.
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=2)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        full = {**self.defaults, **param_group, "params": params}
        self.param_groups.append(full)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: `.grad = None` (default) or zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    zero_grad_in_place(p.grad)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, without recording a graph.

        Each update is one in-place op on the parameter: its version goes up by one.
        """
        loss = None
        if closure is not None:
            from ..grad_mode import enable_grad

            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
                        p._version_counter.value += 1
        return loss

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        """Update `p` in place from `p.grad` (and its `self.state[p]`, if it needs one)."""
        raise NotImplementedError

    @staticmethod
    def _flat(p: Tensor) -> tuple[np.ndarray, np.ndarray]:
        """The parameter's and its gradient's memory as flat arrays the kernels update."""
        data = p._data
        if not data.flags.c_contiguous:
            raise NotImplementedError("minigrad's optimizers need contiguous parameters")
        grad = np.ascontiguousarray(p.grad._data, dtype=data.dtype)
        return data.reshape(-1), grad.reshape(-1)

    def __repr__(self) -> str:
        text = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"  # after the previous group: a blank line
            for key in sorted(k for k in group if k != "params"):
                text += f"    {key}: {group[key]}\n"
        return text + ")"

"""`Optimizer`: parameter groups, per-parameter state, `zero_grad` and `step`."""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..autograd import mutation
from ..grad_mode import no_grad
from ..ops.copies import to_dtype
from ..tensor import Tensor, zero_grad_in_place


def _as_param_scalar(dtype: np.dtype):
    """How PyTorch hands a Python number to a float32 (or float64) update: converted
    to the parameter's dtype, so the kernel computes in that dtype."""
    return dtype.type


def _bump(t: Tensor, times: int = 1) -> None:
    """Count `times` in-place updates of a state tensor, as PyTorch's version counter
    does for each in-place op its update runs (`mul_`, `add_`, ...)."""
    t._version_counter.value += times


def _typename(x: Any) -> str:
    """A type's name as PyTorch's `torch.typename` writes it in messages."""
    if isinstance(x, Tensor):
        return f"minigrad.{x.dtype.tensor_type}"
    kind, module = type(x).__qualname__, type(x).__module__
    return kind if module == "builtins" else f"{module}.{kind}"


def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
    """A loaded per-parameter state value, tensors converted as PyTorch converts them:
    to the parameter's dtype when the parameter is floating point, except `step`."""
    if isinstance(value, Tensor):
        if key != "step" and param.dtype.is_floating_point:
            return to_dtype(value, param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


def _new_step(value: float = 0.0) -> Tensor:
    """A parameter's step count, as PyTorch keeps it: a 0-d float32 tensor."""
    return Tensor._make(np.array(value, np.float32))


def _count_step(step: Tensor) -> float:
    """`step += 1` on a parameter's step count (one in-place op: its version goes up),
    returning the new count as a Python float. (Assigning the item costs a tenth of
    numpy's in-place add on a 0-d array, once per parameter and step.)"""
    data = step._data
    data[()] = data[()] + 1
    step._version_counter.value += 1
    return float(data)


def _check_at_least_zero(optimizer: str, *checks: tuple[str, Any]) -> None:
    """PyTorch's constructor checks, in its order: each setting must be >= 0 (nan is
    refused too), as "Invalid learning rate: -1.0" says. minigrad takes Python
    numbers only (PyTorch also takes a one-element tensor as a learning rate)."""
    for what, value in checks:
        if isinstance(value, Tensor):
            raise NotImplementedError(f"minigrad's {optimizer} takes a Python number as its "
                                      f"{what.removesuffix(' value')}, not a Tensor")
        if not 0.0 <= value:
            raise ValueError(f"Invalid {what}: {value}")


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

    # Settings PyTorch added to an optimizer over time, with the value a group saved
    # without them gets on loading (PyTorch's `__setstate__`); whether the state counts
    # steps.
    _ADDED_SETTINGS: dict[str, Any] = {}
    _COUNTS_STEPS = False

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
        """Add a group of parameters with its own settings (defaults fill the rest).

        As in PyTorch, the dict given becomes the group itself: its "params" become a
        list and the defaults are added to it. Params given as `(name, tensor)` pairs
        (`model.named_parameters()`) keep their names as the group's "param_names".
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                f"is {_typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            # Allowed (each copy is updated), but PyTorch warns.
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as PyTorch lays it out: `{"state": {index: {...}},
        "param_groups": [{..., "params": [index, ...]}]}`, each parameter named by its
        position across the groups (the tensors themselves are not in it).

        Not a copy: the per-parameter dicts and the tensors in them are the optimizer's
        own, as in PyTorch (save it, or copy it, to keep a snapshot).
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)] if isinstance(p, Tensor) else p: s
                 for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take over a `state_dict()`: the saved state goes to this optimizer's
        parameters in order, the saved group settings replace the groups' settings.

        Floating-point state tensors take the parameter's dtype (a tensor that has it
        already is used as it is, not copied); `step` is kept as saved.
        """
        state_dict = state_dict.copy()
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        groups = self.param_groups
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = dict(zip((i for s in saved_groups for i in s["params"]),
                            (p for g in groups for p in g["params"])))
        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                state[by_index[key]] = _cast_state(by_index[key], value)
            else:
                state[key] = value
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups
        self._fill_in_old_groups()

    def _fill_in_old_groups(self) -> None:
        """After loading: give groups saved by older versions the settings they lack
        (PyTorch's `__setstate__` does this per optimizer), and a `step` saved as a
        number becomes a tensor again."""
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for name, value in self._ADDED_SETTINGS.items():
                group.setdefault(name, value)
            for p in group["params"]:
                state = self.state.get(p)
                if self._COUNTS_STEPS and state and not isinstance(state["step"], Tensor):
                    state["step"] = _new_step(float(state["step"]))

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
        """The parameter's and its gradient's memory as flat arrays the kernels update.
        (The update writes into `p` in place: as before every in-place op, inside
        `allow_mutation_on_saved_tensors` a saved `p` is copied first.)"""
        if mutation.watching:
            mutation.before_write(p)
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

"""`Module`: a layer or a model, owning parameters and sub-modules."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .. import _device, _dtype
from ..grad_mode import no_grad
from ..tensor import Tensor, zero_grad_in_place
from .parameter import Parameter


def _typename(obj: Any) -> str:
    """An object's type as PyTorch's messages name it: "minigrad.FloatTensor" for a
    tensor, the full path for a class ("minigrad.nn.layers.ReLU"), "int" for a builtin."""
    if isinstance(obj, Tensor):
        return f"minigrad.{obj.dtype.tensor_type}"
    cls = type(obj)
    if cls.__module__ in (None, "builtins"):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict` returns: the keys it could not match."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module:
    """Base class of every layer and model.

    Assigning a `Parameter` or a `Module` to an attribute registers it, so
    `parameters()` finds every trainable tensor of a model, however nested.
    Subclasses call `super().__init__()` first and define `forward`.
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())

    # -- registration ------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(minigrad.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name, keep=modules)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (minigrad.nn.Module or None expected)")
            modules[name] = None
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(minigrad.nn.Buffer, minigrad.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name: str, keep: dict) -> None:
        """Forget `name` everywhere except in `keep`, the registry about to receive it:
        re-assigning an entry there must keep its place (and so the running order)."""
        self.__dict__.pop(name, None)
        for registry in (self.__dict__["_parameters"], self.__dict__["_modules"],
                         self.__dict__["_buffers"]):
            if registry is not keep:
                registry.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        else:
            object.__delattr__(self, name)

    def _check_name(self, kind: str, registry: str, name) -> None:
        """PyTorch's checks of a new parameter's or buffer's name (`kind`)."""
        if registry not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[registry]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register `tensor` as a buffer: state that is not a parameter (BatchNorm's
        running statistics). It is in `state_dict` unless `persistent=False`, and
        `double()`/`float()` convert it when it is a float tensor."""
        self._check_name("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(minigrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) for every buffer, each listed once."""
        seen = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, b in module._buffers.items():
                if b is not None and id(b) not in seen:
                    seen.add(id(b))
                    yield (f"{mod_prefix}.{name}" if mod_prefix else name), b

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (or a None placeholder) under `name`."""
        self._check_name("parameter", "_parameters", name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (minigrad.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a sub-module under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    # -- walking the tree ----------------------------------------------------------

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every sub-module, each once, with dotted names."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, m)
                        for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-modules; one registered under two names is listed once."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "",
                         recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter once (shared ones are listed under their first name)."""
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_name, module in modules:
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every sub-module (children first), then on this one."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and all sub-modules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: set `.grad` to None (default) or fill it with zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                zero_grad_in_place(p.grad)

    # -- state ---------------------------------------------------------------------

    def state_dict(self, *, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Every parameter's values, detached (or the parameters themselves with
        `keep_vars`), by dotted name. Unlike `named_parameters`, a module or parameter
        used in two places is listed under both names, as in PyTorch."""
        return OrderedDict((name, p if keep_vars else p.detach())
                           for name, p in self._state_items(prefix))

    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) down every path through the sub-modules."""
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                yield prefix + name, b
        for name, module in self._modules.items():
            if module is not None:
                yield from module._state_items(f"{prefix}{name}.")

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> _IncompatibleKeys:
        """Copy values into the parameters in place (one version bump each).

        Like PyTorch, every parameter that can be loaded is loaded; then all the problems
        found (missing or unexpected keys when `strict`, wrong shapes or values) are
        raised together. Returns the missing and unexpected keys.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = dict(self._state_items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with no_grad():
            for name, p in own.items():
                if name not in state_dict:
                    continue
                value = state_dict[name]
                if not isinstance(value, Tensor):
                    errors.append(
                        f'While copying the parameter named "{name}", expected minigrad.Tensor '
                        f"or Tensor-like object from checkpoint but received {type(value)}"
                    )
                elif value.shape != p.shape:
                    errors.append(
                        f"size mismatch for {name}: copying a param with shape {value.shape!r} "
                        f"from checkpoint, the shape in current model is {p.shape!r}."
                    )
                else:
                    p.copy_(value)
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    def _cast(self, dtype) -> Module:
        for p in self.parameters():
            p.data = p.data.to(dtype)
            if p.grad is not None:
                p.grad = p.grad.to(dtype)
        for module in self.modules():  # (float buffers become new tensors; others stay)
            for name, b in module._buffers.items():
                if b is not None and b.dtype.is_floating_point:
                    module._buffers[name] = b.to(dtype)
        return self

    def double(self) -> Module:
        """Convert every parameter to float64."""
        return self._cast(_dtype.float64)

    def float(self) -> Module:  # noqa: A003 - mirrors torch
        """Convert every parameter to float32."""
        return self._cast(_dtype.float32)

    def to(self, dtype) -> Module:
        """`to(minigrad.float64)` converts the parameters; `to("cpu")` does nothing."""
        if isinstance(dtype, str) or type(dtype).__name__ == "device":
            _device.check(dtype)
            return self
        return self._cast(dtype)

    def cpu(self) -> Module:
        """Does nothing: the parameters are already on the CPU."""
        return self

    def cuda(self, device: Any = None) -> Module:
        """Refused as a CPU build of PyTorch refuses it, once there is a tensor to move."""
        if any(True for _ in self.parameters()) or any(True for _ in self.buffers()):
            _device.check("cuda" if device is None else device)
        return self

    # -- running ---------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- printing ----------------------------------------------------------------------

    def extra_repr(self) -> str:
        """What goes between the parentheses of this module's repr."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({name}): " + repr(module).replace("\n", "\n  ")
                    for name, module in self._modules.items()]
        if len(lines) == 1 and not children:
            return f"{type(self).__name__}({extra})"
        if not lines and not children:
            return f"{type(self).__name__}()"
        # Several lines (extra_repr's and the children's): one per line, indented.
        body = "\n  ".join(lines + children)
        return f"{type(self).__name__}(\n  {body}\n)"

"""`device`: where a tensor lives. minigrad computes on the CPU only.

A `device` names any device PyTorch knows (so `torch.device("cuda")` in a script still
runs), but a tensor can only be made on, or moved to, the CPU: `check` gives the error
PyTorch's CPU build gives for CUDA and minigrad's own refusal for anything else.
"""

from __future__ import annotations

import re

# The device types PyTorch knows by name, in the order its error message lists them.
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")


_MISSING = object()


def _combination_error(type, index) -> TypeError:  # noqa: A002
    """PyTorch's error for arguments that match neither of device()'s signatures."""
    if index is not None:
        return TypeError("device(): argument 'type' (position 1) must be str, not "
                         f"{builtin_type_name(type)}")
    if type is _MISSING:
        got, why = "", ""
    else:
        got = builtin_type_name(type)
        why = f"      didn't match because some of the arguments have invalid types: (!{got}!)\n"
    return TypeError(f"device() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n * (minigrad.device device)\n{why}"
                     " * (str type, int index = -1)\n")


def _no_accelerator(index: int) -> RuntimeError:
    """What PyTorch says to a bare device index on a machine with no accelerator."""
    if index < 0:
        return RuntimeError("Device index must not be negative")
    return RuntimeError("Cannot access accelerator device when none is available.")


class device:  # noqa: N801 - mirrors torch.device
    """A device's type and optional index, parsed as PyTorch parses them:
    `device("cpu")`, `device("cuda:1")`, `device("cuda", 1)`."""

    __slots__ = ("type", "index")

    def __init__(self, type=_MISSING, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device) and index is None:
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            raise _no_accelerator(type)
        if not isinstance(type, str):
            raise _combination_error(type, index)
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError("device(): argument 'index' (position 2) must be int, not "
                            f"{builtin_type_name(index)}")
        found = _DEVICE_STRING.fullmatch(type)
        if found is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        if found.group(1) not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at "
                               f"start of device string: {type}")
        if found.group(2) is not None and index is not None:
            raise RuntimeError("type (string) must not include an index because index was "
                               f"passed explicitly: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = found.group(1)
        self.index = int(found.group(2)) if found.group(2) is not None else index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        # As in PyTorch: a device equals a device of the same type and index, never a string.
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


def builtin_type_name(value) -> str:
    """A value's type as PyTorch's argument errors name it."""
    return "NoneType" if value is None else type(value).__name__


def refuse(where) -> None:
    """The error for a device minigrad does not have: PyTorch's own for CUDA (what a
    CPU build of PyTorch raises, so a GPU script fails the same way), minigrad's
    otherwise."""
    if str(where).split(":")[0] == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(f"minigrad runs on the CPU only (got device={str(where)!r})")


def check(where) -> None:
    """A `device=` argument, read as PyTorch reads it: None, "cpu", "cpu:0" or a CPU
    `device` is this machine; a bare index, a malformed string or an unknown type gets
    PyTorch's error; any other device, `refuse`'s."""
    if where is None:
        return
    if isinstance(where, int) and not isinstance(where, bool):
        raise _no_accelerator(where)
    parsed = where if isinstance(where, device) else device(str(where))
    if parsed.type != "cpu":
        refuse(parsed)


def get_default_device() -> device:
    """Where new tensors are made: always the CPU in minigrad."""
    return device("cpu")


def set_default_device(where) -> None:
    """Where new tensors are made by default. minigrad has only the CPU: "cpu" (or
    None, PyTorch's way to reset it) is accepted and changes nothing; any other device
    raises the error a CPU-only PyTorch raises (CUDA, MPS), or minigrad's own."""
    if str(where) == "mps":
        raise RuntimeError("PyTorch is not linked with support for mps devices")
    check(where)

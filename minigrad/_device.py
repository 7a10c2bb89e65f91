"""`device`: where a tensor lives. minigrad has only the CPU."""

from __future__ import annotations


class device:  # noqa: N801 - mirrors torch.device
    """Where a tensor lives; minigrad only has the CPU."""

    __slots__ = ("type",)

    def __init__(self, type: str = "cpu") -> None:  # noqa: A002
        if str(type) != "cpu":
            raise RuntimeError(f"minigrad runs on the CPU only (got device={type!r})")
        self.type = "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other) -> bool:
        return str(other) == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


def refuse(where) -> None:
    """The error for a device minigrad does not have: PyTorch's own for CUDA (what a
    CPU build of PyTorch raises, so a GPU script fails the same way), minigrad's
    otherwise."""
    if str(where).split(":")[0] == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(f"minigrad runs on the CPU only (got device={where!r})")


def get_default_device() -> device:
    """Where new tensors are made: always the CPU in minigrad."""
    return device("cpu")


def set_default_device(where) -> None:
    """Where new tensors are made by default. minigrad has only the CPU: "cpu" (or
    None, PyTorch's way to reset it) is accepted and changes nothing; any other device
    raises the error a CPU-only PyTorch raises (CUDA), or minigrad's own."""
    if where is None:
        return
    name = str(where)
    if name == "cpu" or (name.startswith("cpu:") and name[4:].isdigit()):
        return
    if isinstance(where, int):  # (an accelerator's index)
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if name == "mps":
        raise RuntimeError("PyTorch is not linked with support for mps devices")
    refuse(where)

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

"""Memory formats, as PyTorch names them: `contiguous_format` (row-major) and
`preserve_format` (the input's own layout, the default of `clone` and the `*_like`
factories). minigrad's tensors are strided only, so these two are all it has."""

from __future__ import annotations


class memory_format:  # noqa: N801 - mirrors torch.memory_format
    """How a new tensor's elements are laid out in memory."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minigrad.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")


def row_major(fn: str, value, optional: bool = True) -> bool:
    """Whether memory format `value`, passed to `fn`, asks for a row-major result
    (`contiguous_format`), or PyTorch's TypeError for something that is not one
    (None is `preserve_format` where the format is `optional`: clone's, `*_like`'s)."""
    if value is None and optional:
        return False
    if not isinstance(value, memory_format):
        kind = type(value)  # (PyTorch names its own types by module: `torch.dtype`)
        name = kind.__name__ if kind.__name__ == "Tensor" or \
            not kind.__module__.startswith("minigrad") else f"minigrad.{kind.__name__}"
        raise TypeError(f"{fn}(): argument 'memory_format' must be minigrad.memory_format, "
                        f"not {name}")
    return value is contiguous_format

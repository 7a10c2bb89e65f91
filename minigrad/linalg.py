"""`minigrad.linalg`: the part of `torch.linalg` tutorials use (vector norms)."""

from __future__ import annotations

from .ops.statistics import vector_norm

__all__ = ["vector_norm"]

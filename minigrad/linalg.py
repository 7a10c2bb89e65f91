"""`minigrad.linalg`: the part of `torch.linalg` tutorials use (vector norms, and the
Frobenius norm, which is one)."""

from __future__ import annotations

from .ops.statistics import linalg_norm as norm
from .ops.statistics import vector_norm

__all__ = ["norm", "vector_norm"]

"""`minigrad.backends`: the backend probes tutorials use (`backends.mps.is_available()`)."""

from . import mps

__all__ = ["mps"]

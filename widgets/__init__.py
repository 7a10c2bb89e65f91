"""Notebook widgets that make autograd visible: graphs, a backward stepper, inspectors.

They read graphs through the public PyTorch-style surface, so `draw_graph` and the
inspectors work on real torch tensors as well as minigrad ones; `BackwardStepper`
drives minigrad's own engine, or replays PyTorch's engine recorded through its hooks.
"""

from .draw import draw_graph
from .explain import explain
from .figures import figure_to_png
from .inspectors import GradHistory, compare_graphs, saved_tensors_table
from .stepper import BackwardStepper

__all__ = [
    "BackwardStepper",
    "GradHistory",
    "compare_graphs",
    "draw_graph",
    "explain",
    "figure_to_png",
    "saved_tensors_table",
]

"""Utilities with PyTorch's names: `minigrad.utils.hooks.RemovableHandle` and
`minigrad.utils.checkpoint` (imported by `minigrad/__init__.py`, as PyTorch imports
`torch.utils.checkpoint`, so this package's own import stays light)."""

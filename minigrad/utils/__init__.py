"""Small utilities with PyTorch's names (`minigrad.utils.hooks.RemovableHandle`)."""

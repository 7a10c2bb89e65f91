"""`minigrad.cuda`: the probes tutorials open with, answered as PyTorch answers them on
a machine without a GPU (minigrad runs on the CPU only)."""


def is_available() -> bool:
    """False: there is no CUDA device."""
    return False


def device_count() -> int:
    """0 CUDA devices."""
    return 0

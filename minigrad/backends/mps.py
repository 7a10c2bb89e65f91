"""`minigrad.backends.mps`: Apple's GPU backend, which minigrad (CPU only) is not built
with, as PyTorch answers on a machine without it."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False

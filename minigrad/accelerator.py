"""`minigrad.accelerator`: PyTorch's device-agnostic probes, answered as on a CPU-only
machine (tutorials write `device = torch.accelerator.current_accelerator() or "cpu"`)."""


def is_available() -> bool:
    """False: the CPU is not an accelerator, and minigrad has nothing else."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None: no accelerator."""
    return None


def device_count() -> int:
    return 0

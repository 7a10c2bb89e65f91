"""The lines tutorials open with: the legacy constructors (`torch.Tensor([...])`,
`FloatTensor`, ...), the device probes of a CPU-only machine, `autograd.Variable`,
`.cpu()` and `.to(...)`, compared with PyTorch (values, dtypes, shapes, memory shared or
not, versions, errors)."""

from __future__ import annotations

import numpy as np
import pytest


def _outcome(lib, code: str):
    """What `code` gives under `lib` (as `torch`): a plain description, or the error."""
    x = lib.ones(2)
    env = {"torch": lib, "x": x, "np": np}
    try:
        value = eval(code, env)  # noqa: S307 - the snippets below, nothing else
    except Exception as exc:  # the same failure is part of what is compared
        return ("error", type(exc).__name__, str(exc).replace("torch", "minigrad"))
    if isinstance(value, lib.Tensor):
        return ("tensor", str(value.dtype).split(".")[1], tuple(value.shape),
                value.detach().numpy().tolist(), value.requires_grad, value.is_leaf,
                value._version, np.shares_memory(value.detach().numpy(), x.detach().numpy()))
    return ("value", repr(value).replace("torch", "minigrad"))


CASES = {
    "Tensor(list)": "torch.Tensor([1, 2])",
    "Tensor(sizes)": "torch.Tensor(2, 3).shape",
    "Tensor()": "torch.Tensor()",
    "Tensor(tuple)": "torch.Tensor((2, 3))",
    "Tensor(ndarray)": "torch.Tensor(np.arange(3))",
    "Tensor(list).double()": "torch.Tensor([-4.0]).double()",
    "Tensor(tensor) shares memory": "torch.Tensor(x)",
    "Tensor(str)": "torch.Tensor('a')",
    "Tensor(float)": "torch.Tensor(2.5)",
    "Tensor(int, str)": "torch.Tensor(2, 'a')",
    "Tensor(device=cpu)": "torch.Tensor([1.0], device='cpu')",
    "FloatTensor": "torch.FloatTensor([1, 2])",
    "DoubleTensor": "torch.DoubleTensor([1.5])",
    "LongTensor": "torch.LongTensor([1, 2])",
    "BoolTensor": "torch.BoolTensor([True, False])",
    "FloatTensor(size)": "torch.FloatTensor(2).shape",
    "FloatTensor(double tensor)": "torch.FloatTensor(torch.ones(2, dtype=torch.float64))",
    "cuda.is_available": "torch.cuda.is_available()",
    "cuda.device_count": "torch.cuda.device_count()",
    "accelerator.is_available": "torch.accelerator.is_available()",
    "accelerator.current_accelerator": "torch.accelerator.current_accelerator()",
    "device idiom": "torch.accelerator.current_accelerator() or 'cpu'",
    "mps.is_available": "torch.backends.mps.is_available()",
    "mps.is_built": "torch.backends.mps.is_built()",
    "Variable": "torch.autograd.Variable(x)",
    "Variable requires_grad": "torch.autograd.Variable(x, requires_grad=True)",
    "Variable is not x": "torch.autograd.Variable(x) is x",
    "cpu() is self": "x.cpu() is x",
    "to(other) same dtype is self": "x.to(torch.ones(3)) is x",
    "to(other) converts": "x.to(torch.ones(2, dtype=torch.float64))",
    "to(cpu) is self": "x.to('cpu') is x",
    "to(device object)": "x.to(torch.device('cpu')) is x",
    "float() is self": "x.float() is x",
    "double()": "x.double()",
    "type(dtype)": "x.type(torch.float64)",
    "linspace(device=)": "torch.linspace(0, 1, 3, device='cpu')",
    "from_numpy shares memory": "(lambda a: (torch.from_numpy(a).add_(1), a.tolist())[1])"
                                "(np.zeros(2))",
}


@pytest.mark.parametrize("name", list(CASES))
def test_construction_and_devices_as_in_torch(torch, name):
    import minigrad

    assert _outcome(minigrad, CASES[name]) == _outcome(torch, CASES[name])


def test_other_devices_are_refused_with_minigrads_own_error():
    import minigrad

    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only"):
        minigrad.zeros(2, device="mps")
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only"):
        minigrad.Tensor([1.0], device="mps:0")

"""`set_default_device` / `get_default_device`, `nn.DataParallel` on a machine without
GPUs, and `autograd.profiler.profile`, against PyTorch."""

from __future__ import annotations

import pytest
from test_parity_bad_input import compare

SNIPPETS = {
    "get_default_device": "torch.get_default_device()",
    "set_default_device cpu": "torch.set_default_device('cpu')\n"
                              "(torch.get_default_device(), torch.zeros(2).device)",
    "set_default_device None": "torch.set_default_device(None)\ntorch.get_default_device()",
    "set_default_device a device": "torch.set_default_device(torch.device('cpu'))\n"
                                   "torch.ones(1).device",
    # (PyTorch raises when the first tensor is made, minigrad already when asked)
    "set_default_device cuda, then a tensor": "torch.set_default_device('cuda')\n"
                                              "torch.zeros(1)",
    "set_default_device cuda:0, then a tensor": "torch.set_default_device('cuda:0')\n"
                                                "torch.zeros(1)",
    "set_default_device an index": "torch.set_default_device(3)",
    "DataParallel repr and device_ids": "m = torch.nn.DataParallel(torch.nn.Linear(2, 3))\n"
                                        "repr(m), m.device_ids",
    "DataParallel state_dict keys": "list(torch.nn.DataParallel(torch.nn.Linear(2, 3))"
                                    ".state_dict())",
    "DataParallel calls the module": "torch.manual_seed(0)\n"
                                     "m = torch.nn.DataParallel(torch.nn.Linear(2, 3))\n"
                                     "m(torch.ones(4, 2))",
    "DataParallel device_ids without GPUs": "torch.nn.DataParallel(torch.nn.Linear(2, 3), "
                                            "device_ids=[0]).device_ids",
    "DataParallel .module": "m = torch.nn.Linear(2, 3)\n"
                            "torch.nn.DataParallel(m).module is m",
    "nn.parallel.DataParallel": "torch.nn.parallel.DataParallel is torch.nn.DataParallel",
}


@pytest.fixture(autouse=True)
def _default_device_back(torch):
    yield
    torch.set_default_device(None)


@pytest.mark.parametrize("case", list(SNIPPETS))
def test_snippet(torch, case):
    compare(torch, SNIPPETS[case])


@pytest.mark.parametrize("where", ["mps", "meta", "xyz"])
def test_other_devices_are_refused_when_set(where):
    """A device minigrad lacks is refused at once (PyTorch refuses it, or fails
    otherwise, at the first tensor made there)."""
    import minigrad

    with pytest.raises(RuntimeError, match="mps|CPU only"):
        minigrad.set_default_device(where)
    assert minigrad.get_default_device() == minigrad.device("cpu")

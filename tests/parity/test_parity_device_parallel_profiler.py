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


# -- autograd.profiler.profile -------------------------------------------------------------------


def _profiled(lib):
    """A small CNN's step and an element-wise chain, profiled; the rows' names."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                            lib.nn.Linear(18, 2))
    x = lib.randn(4, 1, 8, 8)
    with lib.autograd.profiler.profile() as prof:
        a = lib.ones(3, requires_grad=True)
        (a * 2).sum().backward()
        lib.nn.functional.cross_entropy(net(x), lib.tensor([0, 1, 1, 0])).backward()
    return prof


def test_profiler_names_the_ops_and_nodes_pytorch_names(torch):
    """Every row minigrad records is one PyTorch records too (PyTorch records more:
    the ops its C++ calls inside each op)."""
    import minigrad

    want = {name.replace("torch::", "minigrad::") for name in
            (e.key for e in _profiled(torch).key_averages())}
    got = [e.key for e in _profiled(minigrad).key_averages()]
    assert set(got) <= want, set(got) - want
    for name in ("aten::mul", "aten::sum", "MulBackward0", "aten::conv2d",
                 "aten::max_pool2d", "aten::linear", "ConvolutionBackward0",
                 "MaxPool2DWithIndicesBackward0", "minigrad::autograd::AccumulateGrad"):
        assert name in got
    # Each backward node runs as often as in PyTorch.
    counts = {e.key.replace("torch::", "minigrad::"): e.count
              for e in _profiled(torch).key_averages()}
    rows = {e.key: e for e in _profiled(minigrad).key_averages()}
    nodes = [k for k in rows if k.endswith(("Backward0", "AccumulateGrad"))]
    assert {k: rows[k].count for k in nodes} == {k: counts[k] for k in nodes}
    assert rows["minigrad::autograd::AccumulateGrad"].count == 5  # (a, the net's 4)
    assert all(e.cpu_time_total >= e.self_cpu_time_total >= 0 for e in rows.values())


def test_profiler_table_has_pytorchs_layout(torch):
    import minigrad

    tables = [_profiled(lib).key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
              for lib in (torch, minigrad)]
    lines = [t.strip("\n").splitlines() for t in tables]
    # (PyTorch prints its own notices before the table on some builds)
    lines = [ls[next(i for i, s in enumerate(ls) if s.startswith("---")):] for ls in lines]
    assert [len(ls) for ls in lines] == [3 + 3 + 2] * 2
    assert lines[0][1].split() == lines[1][1].split()  # the column heads
    assert [len(c) for c in lines[0][0].split()][1:] == [len(c) for c in lines[1][0].split()][1:]
    assert lines[1][-1].startswith("Self CPU time total: ")
    assert lines[1][3].split()[-1].isdigit() and lines[1][3].split()[1].endswith("%")


def test_profiler_leaves_no_trace():
    """Leaving the block puts every op and node method back: nothing is timed after."""
    import minigrad

    before = (minigrad.Tensor.__mul__, minigrad.conv2d, minigrad.nn.functional.linear,
              minigrad.autograd.graph.AccumulateGrad.apply)
    prof = _profiled(minigrad)
    after = (minigrad.Tensor.__mul__, minigrad.conv2d, minigrad.nn.functional.linear,
             minigrad.autograd.graph.AccumulateGrad.apply)
    assert all(a is b for a, b in zip(before, after))
    count = len(prof.function_events)
    (minigrad.ones(2, requires_grad=True) * 3).sum().backward()
    assert len(prof.function_events) == count


def test_profiler_refuses_what_it_does_not_record():
    import minigrad

    with pytest.raises(NotImplementedError, match="CPU only"):
        minigrad.autograd.profiler.profile(use_cuda=True)
    with pytest.raises(NotImplementedError, match="names and times only"):
        minigrad.autograd.profiler.profile(record_shapes=True)

"""save and load against PyTorch: what a round trip gives back (values, dtypes,
shapes, strides, requires_grad, leaves, versions, Parameters, shared memory, the same
object saved twice), and the errors for bad input.

The files themselves differ (neither library reads the other's); each library reads
back its own.
"""

from __future__ import annotations

import io
import pickle

import pytest
from float_policy import CHAIN, assert_floats
from parity_harness import raised as _error
from parity_harness import translate

import minigrad


def _round_trip(lib, obj, **load_args):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, **load_args)


def _describe(lib, t) -> tuple:
    return (type(t).__name__, str(t.dtype).split(".")[-1], tuple(t.shape), t.stride(),
            t.detach().numpy().tolist(), t.requires_grad, t.is_leaf, t.grad_fn, t._version,
            t._is_view(), t.grad)


def _tensors(lib) -> dict:
    x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
    t = lib.arange(12.0).reshape(3, 4)
    with lib.no_grad():
        t.add_(1)  # (a version that does not survive the trip)
    (x * x).sum().backward()  # (a gradient that is not saved)
    return {
        "leaf": x, "computed": x * 2, "view of a leaf": x.detach()[0], "matrix": t,
        "transposed": t.t(), "corner": t[1:, 2:], "column": t[:, 1],
        "parameter": lib.nn.Parameter(lib.ones(2)),
        "frozen parameter": lib.nn.Parameter(lib.ones(2), requires_grad=False),
        "int64": lib.tensor([[1, -2], [3, 4]]), "bool": lib.tensor(True),
        "empty": lib.zeros(0, 3), "scalar": lib.tensor(2.5, dtype=lib.float64),
        "expanded": lib.tensor([1.0, 2.0]).expand(3, 2),
    }


def test_tensors_come_back_as_in_torch(torch):
    def run(lib):
        loaded = _round_trip(lib, _tensors(lib))
        return {name: _describe(lib, t) for name, t in loaded.items()}

    assert run(minigrad) == run(torch)


def test_shared_memory_and_identity_as_in_torch(torch):
    def run(lib):
        d = _tensors(lib)
        d["leaf again"] = d["leaf"]
        loaded = _round_trip(lib, [d, (d["matrix"], d["leaf"])])
        m = loaded[0]
        with lib.no_grad():
            m["matrix"][1, 2] = 100.0  # seen through every view of the saved matrix ...
            m["leaf"][0, 0] = -1.0  # ... and of the saved leaf
        return (m["transposed"].tolist(), m["corner"].tolist(), m["column"].tolist(),
                m["view of a leaf"].tolist(), m["computed"].tolist(),
                [m[k]._version for k in ("matrix", "transposed", "leaf", "view of a leaf")],
                m["leaf again"] is m["leaf"], loaded[1][0] is m["matrix"],
                loaded[1][1] is m["leaf"], m["transposed"]._base is None)

    assert run(minigrad) == run(torch)


def test_state_dicts_and_containers_as_in_torch(torch):
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        model.double()  # (float64: the same gradients to the last bit)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model(lib.ones(5, 3, dtype=lib.float64)).sum().backward()
        opt.step()
        obj = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
               "losses": [0.5, 0.25], "names": ("a", "b"), "none": None, "ok": True,
               "dtype": lib.float64, "size": lib.Size([2, 3]), "set": {1, 2},
               "bytes": b"\x00\x01", "complex": 1 + 2j}
        loaded = _round_trip(lib, obj)
        sd = loaded["model"]
        state = loaded["optimizer"]["state"]
        return (type(sd).__name__, list(sd), [_describe(lib, v) for v in sd.values()],
                loaded["optimizer"]["param_groups"],
                {k: {n: _describe(lib, v) for n, v in s.items()} for k, s in state.items()},
                {k: v for k, v in loaded.items() if k not in ("model", "optimizer", "dtype",
                                                               "size")},
                str(loaded["dtype"]), repr(loaded["size"]))

    got, expected = run(minigrad), run(torch)
    assert got[:-2] == expected[:-2]
    assert got[-2:] == (translate(expected[-2]), translate(expected[-1]))


def test_a_loaded_state_dict_trains_on_as_the_saved_one_would(torch):
    def run(lib):
        lib.manual_seed(1)
        model = lib.nn.Linear(3, 2).double()
        opt = lib.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9, centered=True)
        x = lib.linspace(-1, 1, 12, dtype=lib.float64).reshape(4, 3)
        for _ in range(3):
            opt.zero_grad()
            (model(x) ** 2).sum().backward()
            opt.step()
        saved = _round_trip(lib, {"model": model.state_dict(), "opt": opt.state_dict()})
        lib.manual_seed(7)
        fresh = lib.nn.Linear(3, 2).double()
        fresh_opt = lib.optim.RMSprop(fresh.parameters())
        fresh.load_state_dict(saved["model"])
        fresh_opt.load_state_dict(saved["opt"])
        for _ in range(3):
            fresh_opt.zero_grad()
            (fresh(x) ** 2).sum().backward()
            fresh_opt.step()
        return ([p.detach().numpy().copy() for p in fresh.parameters()],
                [{k: (v._version, float(v) if k == "step" else v.numpy().copy())
                  for k, v in fresh_opt.state[p].items()} for p in fresh.parameters()],
                [p._version for p in fresh.parameters()], fresh_opt.param_groups[0]["lr"])

    got, expected = run(minigrad), run(torch)
    # (values within the square root's rounding, see test_parity_optim_more.py)
    for a, b in zip(got[0], expected[0]):
        assert_floats(a, b, CHAIN)
    for a, b in zip(got[1], expected[1]):
        assert list(a) == list(b)
        for k in a:
            assert a[k][0] == b[k][0]
            assert_floats(a[k][1], b[k][1], CHAIN)
    assert got[2:] == expected[2:]


class Point:
    """A class of the caller's: weights_only=True refuses it."""

    def __init__(self, x: float) -> None:
        self.x = x


def test_weights_only_refuses_other_classes_as_torch(torch):
    def run(lib):
        buffer = io.BytesIO()
        lib.save({"p": Point(2.0), "t": lib.ones(1)}, buffer)
        buffer.seek(0)
        refused = _error(lambda: lib.load(buffer))
        buffer.seek(0)
        loaded = lib.load(buffer, weights_only=False)
        buffer.seek(0)
        with lib.serialization.safe_globals([Point]):
            allowed = lib.load(buffer)
            inside = Point in lib.serialization.get_safe_globals()
        lib.serialization.add_safe_globals([Point])
        buffer.seek(0)
        added = lib.load(buffer)["p"].x
        lib.serialization.clear_safe_globals()
        buffer.seek(0)
        cleared = Point in lib.serialization.get_safe_globals()
        return (refused, type(loaded["p"]).__name__, loaded["p"].x, allowed["p"].x, inside,
                added, cleared, _error(lambda: lib.load(buffer)))

    assert run(minigrad) == run(torch)


def test_weights_only_refuses_a_whole_module_as_torch(torch):
    def run(lib):
        buffer = io.BytesIO()
        lib.save(lib.nn.Linear(2, 2), buffer)
        buffer.seek(0)
        return _error(lambda: lib.load(buffer))

    kind, message = run(minigrad)
    expected_kind, expected = run(torch)
    # the class is named by its module: torch.nn.modules.linear.Linear, minigrad.nn.layers.Linear
    assert kind == expected_kind == "UnpicklingError"
    assert message == expected.replace("minigrad.nn.modules.linear.Linear",
                                       "minigrad.nn.layers.Linear")


class _NoSeek:
    def read(self, n=-1):
        return b""


def test_bad_files_as_in_torch(torch, tmp_path):
    def run(lib):
        empty = tmp_path / f"{lib.__name__}-empty.pt"
        empty.write_bytes(b"")
        return {
            "save to a number": _error(lambda: lib.save(lib.ones(1), 12)),
            "save into a missing folder": _error(
                lambda: lib.save(lib.ones(1), str(tmp_path / "missing" / "x.pt"))),
            "load a missing file": _error(lambda: lib.load(str(tmp_path / "absent.pt"))),
            "load an empty file": _error(lambda: lib.load(empty)),
            "load an empty file, not only weights": _error(
                lambda: lib.load(empty, weights_only=False)),
            "load from a number": _error(lambda: lib.load(12)),
            "load from what cannot seek": _error(lambda: lib.load(_NoSeek())),
            "a pickle module with weights_only": _error(
                lambda: lib.load(empty, pickle_module=pickle, weights_only=True)),
            "a pickle module, so not weights_only": _error(
                lambda: lib.load(empty, pickle_module=pickle)),
        }

    got, expected = run(minigrad), run(torch)
    assert got == expected


@pytest.mark.parametrize("how", ["str", "pathlib", "file object"])
def test_paths_and_file_objects(torch, tmp_path, how):
    def run(lib):
        path = tmp_path / f"{lib.__name__}.pt"
        t = lib.tensor([[1.5, -2.0]], dtype=lib.float64)
        if how == "file object":
            with open(path, "wb") as f:
                lib.save(t, f)
            with open(path, "rb") as f:
                back = lib.load(f)
        else:
            where = str(path) if how == "str" else path
            lib.save(t, where)
            back = lib.load(where)
        return _describe(lib, back)

    assert run(minigrad) == run(torch)

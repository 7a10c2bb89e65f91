"""minigrad.save / minigrad.load round trips, and what a weights-only load refuses."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest

import minigrad as torch


def _round_trip(obj, **load_args):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_args)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_every_dtype_keeps_its_values_bits_and_shape(dtype):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((3, 4)) * 1e30
    values[0, :3] = [np.nan, -np.inf, -0.0]
    t = torch.tensor(values).to(getattr(torch, dtype))
    back = _round_trip(t)
    assert back.dtype is t.dtype and back.shape == t.shape and back.stride() == t.stride()
    assert back.numpy().tobytes() == t.numpy().tobytes()
    assert back is not t and back._version == 1 and back.requires_grad is False


def test_containers_keep_their_types_and_order():
    t = torch.ones(2)
    obj = {"list": [t, 1, "a"], "tuple": (t, None), "nested": {"deeper": [{"x": t}]},
           "ordered": __import__("collections").OrderedDict(b=1, a=2), 3: 4.5}
    back = _round_trip(obj)
    assert list(back) == list(obj)
    assert type(back["tuple"]) is tuple and type(back["list"]) is list
    assert type(back["ordered"]).__name__ == "OrderedDict" and list(back["ordered"]) == ["b", "a"]
    assert back["list"][0] is back["tuple"][0] is back["nested"]["deeper"][0]["x"]
    assert back[3] == 4.5


def test_a_module_state_dict_round_trips_into_a_new_module():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    torch.manual_seed(1)
    other = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    buffer.seek(0)
    other.load_state_dict(torch.load(buffer))
    x = torch.randn(5, 3)
    assert torch.equal(model(x), other(x))


def test_an_optimizer_checkpoint_resumes_exactly(tmp_path):
    def make():
        torch.manual_seed(2)
        model = torch.nn.Linear(3, 1).double()
        return model, torch.optim.AdamW(model.parameters(), lr=0.05, amsgrad=True)

    x = torch.linspace(-1, 1, 9, dtype=torch.float64).reshape(3, 3)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()

    model, opt = make()
    train(model, opt, 6)  # straight through
    resumed, resumed_opt = make()
    train(resumed, resumed_opt, 3)
    path = tmp_path / "checkpoint.pt"
    torch.save({"model": resumed.state_dict(), "opt": resumed_opt.state_dict()}, path)
    resumed, resumed_opt = make()
    checkpoint = torch.load(path)
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt.load_state_dict(checkpoint["opt"])
    train(resumed, resumed_opt, 3)
    for a, b in zip(model.parameters(), resumed.parameters()):
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()


def test_views_share_memory_again_but_not_a_version_counter():
    base = torch.arange(12.0).reshape(3, 4)
    back = _round_trip([base, base.t(), base[1:, 1:3], base.reshape(-1)])
    with torch.no_grad():
        back[0][2, 1] = -5.0
    assert back[1][1, 2].item() == back[2][1, 0].item() == back[3][9].item() == -5.0
    assert [t._version for t in back] == [2, 1, 1, 1]
    assert all(t._base is None for t in back)


def test_a_slice_saves_its_whole_memory_as_torch_does():
    big = torch.zeros(100_000, dtype=torch.float64)
    buffer = io.BytesIO()
    torch.save(big[:2], buffer)
    assert len(buffer.getvalue()) > 800_000


def test_parameters_and_requires_grad_come_back():
    w = torch.nn.Parameter(torch.ones(2))
    frozen = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    x = torch.ones(2, requires_grad=True)
    back = _round_trip([w, frozen, x, x * 2])
    assert [type(t).__name__ for t in back] == ["Parameter", "Parameter", "Tensor", "Tensor"]
    assert [t.requires_grad for t in back] == [True, False, True, True]
    assert all(t.is_leaf and t.grad is None for t in back)


def test_weights_only_refuses_other_globals_and_weights_only_false_loads_them():
    model = torch.nn.Linear(2, 2)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL minigrad.nn.layers.Linear was "
                       "not an allowed global by default"):
        torch.load(buffer)
    buffer.seek(0)
    whole = torch.load(buffer, weights_only=False)
    assert type(whole).__name__ == "Linear"
    assert torch.equal(whole.weight, model.weight) and whole.weight is not model.weight


def test_refused_payloads_never_run():
    class Evil:
        def __reduce__(self):
            return (print, ("this must not print",))

    buffer = io.BytesIO()
    torch.save({"x": Evil()}, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL builtins.print"):
        torch.load(buffer)


def _rewrite(buffer: io.BytesIO, name: str, data: bytes) -> io.BytesIO:
    buffer.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.namelist():
            dst.writestr(item, data if item == name else src.read(item))
    out.seek(0)
    return out


def test_a_tampered_tensor_record_is_refused():
    buffer = io.BytesIO()
    torch.save(torch.ones(4), buffer)
    buffer.seek(0)
    with zipfile.ZipFile(buffer) as archive:
        data = archive.read("minigrad/data.pkl")
    # a tensor claiming more elements than its memory block holds
    bad = data.replace(pickle.dumps((4,), protocol=2)[2:-2], pickle.dumps((400,), protocol=2)[2:-2])
    assert bad != data
    with pytest.raises(pickle.UnpicklingError, match="does not fit its memory block"):
        torch.load(_rewrite(buffer, "minigrad/data.pkl", bad))


def test_files_that_are_not_minigrads():
    with pytest.raises(pickle.UnpicklingError, match="not a zip archive"):
        torch.load(io.BytesIO(b"not a checkpoint"))
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("archive/data.pkl", b"")
    other.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="cannot read PyTorch's own files"):
        torch.load(other)


def test_options_minigrad_does_not_have():
    buffer = io.BytesIO()
    torch.save(torch.ones(1), buffer)
    buffer.seek(0)
    assert torch.load(buffer, map_location="cpu").tolist() == [1.0]
    buffer.seek(0)
    assert torch.load(buffer, map_location=torch.device("cpu")).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="deserialize object on a CUDA device"):
        torch.load(buffer, map_location="cuda")
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only"):
        torch.load(buffer, map_location="mps")
    with pytest.raises(NotImplementedError, match="map_location"):
        torch.load(buffer, map_location={"cuda:0": "cpu"})
    with pytest.raises(NotImplementedError, match="mmap"):
        torch.load(buffer, mmap=True)
    with pytest.raises(UserWarning, match="pickle_load_args only works"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            torch.load(buffer, encoding="latin1")


@pytest.mark.parametrize("name", ["bool", "int64", "float32", "float64"])
def test_dtypes_pickle_to_the_same_object(name):
    # As torch's dtypes do: `minigrad.bool` used to fail (its module attribute is `bool_`).
    dtype = getattr(torch, name)
    assert pickle.loads(pickle.dumps(dtype)) is dtype
    assert pickle.loads(pickle.dumps([dtype, torch.zeros(1, dtype=dtype).dtype]))[1] is dtype

"""`save` and `load`, as `torch.save` and `torch.load`: tensors, and the dicts, lists
and tuples holding them (a `state_dict()` of a module or an optimizer), to a file and
back.

The file is a zip archive (PyTorch's files are zip archives too, but minigrad's hold
different names: PyTorch cannot read them, nor minigrad PyTorch's):

    minigrad/data.pkl        the object, pickled, each tensor replaced by a record of
                             where its values are (pickle's "persistent ids")
    minigrad/storages/<k>    the raw bytes of the k-th block of memory tensors look into
    minigrad/byteorder       "little" or "big"

What comes back is what PyTorch gives back: the values, dtype, shape and strides of
each tensor; `requires_grad` (a tensor computed from others comes back as a leaf);
`nn.Parameter` as a Parameter; tensors that shared memory (a tensor and its views)
share it again, each a leaf with its own version counter at 1; the same tensor saved
twice comes back as one tensor. Gradients, graphs and hooks are not saved.

`load(f, weights_only=True)` (the default, as in PyTorch since 2.6) unpickles only
tensors, Python numbers, strings, None and the containers `dict`, `list`, `tuple`,
`set` and `collections.OrderedDict`, plus what `add_safe_globals` allows: loading a
file from someone else cannot run their code. `weights_only=False` unpickles any
object (a whole `nn.Module`, say): only for files you trust.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import sys
import warnings
import zipfile
from collections.abc import Callable, Iterator
from typing import IO, Any

import numpy as np

from . import _device, _dtype
from .nn.parameter import Parameter
from .tensor import Size, Tensor, device

_ROOT = "minigrad/"
_DTYPES = {d.name: d for d in _dtype._BY_NUMPY.values()}

# What `load(weights_only=True)` may build besides tensors and plain Python values:
# the globals PyTorch's weights-only unpickler allows that minigrad has. (`_codecs.encode`
# is how pickle protocol 2 writes `bytes`.)
_ALLOWED = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    "_codecs.encode": __import__("codecs").encode,
}
_user_safe_globals: list[Any] = []

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`minigrad.load` from `False` to `True`. Re-running `minigrad.load` with `weights_only` "
    "set to `False` will likely succeed, but it can result in arbitrary code execution. "
    "Do it only if you got the file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of minigrad.load to learn more about types accepted by "
    "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


# -- saving --------------------------------------------------------------------------------


def save(obj: object, f: str | os.PathLike | IO[bytes], pickle_module: Any = pickle,
         pickle_protocol: int = 2) -> None:
    """Write `obj` to `f`, a path or a binary file object with `write`."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if pickle_module is not pickle:
        raise NotImplementedError("minigrad.save pickles with Python's pickle module only")
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
        parent = os.path.dirname(f)
        if parent and not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(_ROOT + "byteorder", sys.byteorder)
        archive.writestr(_ROOT + "data.pkl", data.getvalue())
        for k, memory in enumerate(pickler.storages.values()):
            archive.writestr(f"{_ROOT}storages/{k}", memory.tobytes())


def _memory_of(data: np.ndarray) -> tuple[np.ndarray, int]:
    """The block of memory `data` looks into (the array at the start of its chain of
    numpy views) and where `data` starts in it, in bytes."""
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous:  # (a view of memory numpy does not own as an array)
        return np.ascontiguousarray(data), 0
    start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return root, start


class _Pickler(pickle.Pickler):
    """A pickler that writes each tensor as a record and collects the memory blocks
    the tensors look into, each once (views of one tensor share their block)."""

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[int, np.ndarray] = {}  # by id of the root array, in order
        self.tensors: dict[int, tuple] = {}  # by id of the tensor: its record
        self._alive: list[Tensor] = []  # (so no id is reused while saving)

    def persistent_id(self, obj: Any) -> tuple | None:
        if isinstance(obj, Tensor):
            return self._tensor_record(obj)
        if isinstance(obj, _dtype.dtype):
            return ("dtype", obj.name)
        if isinstance(obj, Size):
            return ("size", tuple(obj))
        if isinstance(obj, device):
            return ("device", "cpu")
        return None

    def _tensor_record(self, t: Tensor) -> tuple:
        record = self.tensors.get(id(t))
        if record is None:
            root, start = _memory_of(t._data)
            self.storages.setdefault(id(root), root)
            k = list(self.storages).index(id(root))  # (its number in the archive)
            record = ("tensor", len(self.tensors), k, t.dtype.name, start,
                      tuple(t._data.shape), tuple(t._data.strides), t.requires_grad,
                      isinstance(t, Parameter))
            self.tensors[id(t)] = record
            self._alive.append(t)
        return record


# -- loading -------------------------------------------------------------------------------


def load(f: str | os.PathLike | IO[bytes], map_location: Any = None,
         pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read back what `save` wrote to `f` (a path, or a binary file object that can
    seek). `weights_only` (default True, unless a `pickle_module` is named) refuses
    anything but tensors, plain values and containers; `map_location` may only say
    "cpu"."""
    if weights_only is None:  # (naming a pickle module means trusting the file)
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    elif pickle_module not in (None, pickle):
        raise NotImplementedError("minigrad.load unpickles with Python's pickle module only")
    if mmap:
        raise NotImplementedError("minigrad.load does not implement mmap=True")
    _check_map_location(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as opened:
            return _load(opened, weights_only, pickle_load_args)
    _check_seekable(f)
    return _load(f, weights_only, pickle_load_args)


def _check_map_location(map_location: Any) -> None:
    if map_location is None or isinstance(map_location, (str, device)):
        if map_location is not None and device(map_location).type == "cuda":
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "minigrad.cuda.is_available() is False. If you are running on a CPU-only "
                "machine, please use minigrad.load with map_location=minigrad.device('cpu') "
                "to map your storages to the CPU.")
        _device.check(map_location)  # any other device but the CPU: minigrad's refusal
        return
    raise NotImplementedError("minigrad.load takes map_location=None or 'cpu' only (it has "
                              "no other device to map to)")


def _check_seekable(f: Any) -> None:
    """PyTorch's refusal of a file object it cannot seek in (zip archives are read from
    their end)."""
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(f"{e}. You can only minigrad.load from a file that is seekable. "
                          "Please pre-load the data into a buffer like io.BytesIO and try to "
                          "load from it instead.") from None
        raise


def _load(f: IO[bytes], weights_only: bool, pickle_load_args: dict) -> Any:
    start = f.tell()
    if not f.read(1):  # an empty file, as PyTorch reports it
        raise EOFError("" if weights_only else "Ran out of input")
    f.seek(start)
    if not zipfile.is_zipfile(f):
        raise pickle.UnpicklingError("not a file minigrad.save wrote (it is not a zip archive)")
    f.seek(start)
    with zipfile.ZipFile(f) as archive:
        names = set(archive.namelist())
        if _ROOT + "data.pkl" not in names:
            raise pickle.UnpicklingError(
                "not a file minigrad.save wrote (minigrad cannot read PyTorch's own files)")
        byteorder = archive.read(_ROOT + "byteorder").decode()
        storages = _StorageReader(archive, byteorder)
        data = io.BytesIO(archive.read(_ROOT + "data.pkl"))
        if not weights_only:
            return _Unpickler(data, storages, **pickle_load_args).load()
        try:
            return _WeightsOnlyUnpickler(data, storages, encoding="utf-8").load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


class _StorageReader:
    """The memory blocks of an archive, each read once, as aligned writable arrays."""

    def __init__(self, archive: zipfile.ZipFile, byteorder: str) -> None:
        self.archive = archive
        self.swap = byteorder != sys.byteorder
        self.blocks: dict[int, np.ndarray] = {}

    def get(self, k: int) -> np.ndarray:
        if k not in self.blocks:
            raw = self.archive.read(f"{_ROOT}storages/{k}")
            block = np.empty(len(raw), np.uint8)  # (numpy aligns what it allocates)
            block[...] = np.frombuffer(raw, np.uint8)
            self.blocks[k] = block
        return self.blocks[k]


class _Unpickler(pickle.Unpickler):
    """Rebuilds the records `_Pickler` wrote: a tensor is a fresh leaf (version 1, as
    PyTorch's `set_` of the loaded memory leaves it) looking into its memory block."""

    def __init__(self, file: IO[bytes], storages: _StorageReader, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.storages = storages
        self.tensors: dict[int, Tensor] = {}

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        if pid[0] == "tensor" and len(pid) == 9:
            return self._tensor(*pid[1:])
        if pid[0] == "dtype" and len(pid) == 2 and pid[1] in _DTYPES:
            return _DTYPES[pid[1]]
        if pid[0] == "size" and len(pid) == 2 and _ints(pid[1]):
            return Size(pid[1])
        if pid == ("device", "cpu"):
            return device("cpu")
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def _tensor(self, key, storage, dtype_name, start, shape, strides, requires_grad,
                is_parameter) -> Tensor:
        if not (_ints((key, storage, start)) and _ints(shape) and _ints(strides)
                and dtype_name in _DTYPES and isinstance(requires_grad, bool)
                and isinstance(is_parameter, bool) and len(shape) == len(strides)):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        if key in self.tensors:
            return self.tensors[key]
        native = _DTYPES[dtype_name].np
        stored = native.newbyteorder() if self.storages.swap else native
        try:  # (numpy checks that the tensor lies inside its block)
            data = np.ndarray(shape, stored, buffer=self.storages.get(storage), offset=start,
                              strides=strides)
        except (ValueError, TypeError) as e:
            raise pickle.UnpicklingError(f"a tensor does not fit its memory block: {e}") from None
        if self.storages.swap:  # (written on a machine of the other byte order: a copy)
            data = data.astype(native)
        t = Tensor._make(data)
        if is_parameter:
            t = Parameter(t, requires_grad)
        else:
            t._requires_grad = requires_grad
        t._version_counter.value = 1
        self.tensors[key] = t
        return t


def _ints(values: Any) -> bool:
    return isinstance(values, tuple) and all(type(v) is int for v in values)


class _WeightsOnlyUnpickler(_Unpickler):
    """Refuses every global (class or function) but the allowed ones."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "__builtin__":  # (protocol 2 names Python 3's builtins so)
            module = "builtins"
        full = f"{module}.{name}"
        if full in _ALLOWED:
            return _ALLOWED[full]
        for safe in _user_safe_globals:
            obj, safe_name = safe if isinstance(safe, tuple) else (safe, _qualified(safe))
            if safe_name == full:
                return obj
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please "
            f"use `minigrad.serialization.add_safe_globals([{full}])` or the "
            f"`minigrad.serialization.safe_globals([{full}])` context manager to allowlist "
            "this global if you trust this class/function.")


def _weights_only_message(message: str) -> str:
    """PyTorch's wording around a weights-only refusal."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have "
                "two options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE)
    return (f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the "
            "following so that we can make `weights_only=True` compatible with your use "
            "case: WeightsUnpickler error: \n\n" + message + _DOCS_MESSAGE)


# -- allowing more globals -----------------------------------------------------------------


def _qualified(obj: Any) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    """Let `load(weights_only=True)` build these classes and call these functions
    (give `(obj, "module.name")` where the pickle names it differently)."""
    _user_safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Callable | tuple[Callable, str]]:
    """The globals `add_safe_globals` allowed."""
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    """Forget every global `add_safe_globals` allowed."""
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> Iterator[None]:
    """`add_safe_globals` for the duration of a `with` block."""
    before = list(_user_safe_globals)
    _user_safe_globals.extend(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals[:] = before

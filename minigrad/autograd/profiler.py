"""`autograd.profiler.profile`: which ops ran, how often, and for how long.

    with minigrad.autograd.profiler.profile() as prof:
        loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

PyTorch's profiler records every ATen operator its C++ calls (`aten::mul`, and inside
it `aten::empty`, ...) and every backward node the engine runs. minigrad records the
ops a program calls (each declared op under PyTorch's name, `aten::<name>`, through
`minigrad.<op>`, a Tensor method or operator, or `nn.functional`) and every backward
node (by its name, `MulBackward0`). So the rows name the same ops, but there are fewer
of them: minigrad's ops do not call one another through the namespace.

How: on entering, the profiler wraps those functions and the nodes' `backward` (and
`apply`) methods with a timer, and puts the originals back on leaving, so a program
that never profiles pays nothing. "Self" time is a call's time less that of the
recorded calls inside it (a Linear's addmm inside `F.linear`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import _registry
from .graph import Node

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile"]


@dataclass
class FunctionEvent:
    """One recorded call: its name and its times in microseconds."""

    name: str
    cpu_time_total: float
    self_cpu_time_total: float

    @property
    def key(self) -> str:
        return self.name


@dataclass
class FunctionEventAvg:
    """The calls of one name together (a row of `key_averages`)."""

    key: str
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0

    @property
    def cpu_time(self) -> float:
        """The average time of a call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, event) -> FunctionEventAvg:
        self.count += getattr(event, "count", 1)
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """Recorded events (or their averages), with PyTorch's `table()`."""

    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The events as PyTorch prints them: name, self and total CPU time (and
        their share of the whole), the average time and the number of calls."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in ("self_cpu_time_total", "cpu_time_total", "cpu_time", "count"):
                raise ValueError(f"minigrad's profiler sorts by CPU time or count only, "
                                 f"not {sort_by!r}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit > 0:
            rows = rows[:row_limit]
        width = min(max((len(e.key) for e in self), default=4) + 4, max_name_column_width)
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                 "# of Calls"]
        line = "-" * width + "  " + "  ".join("-" * 12 for _ in heads) + "  "

        def row(cells: list[str]) -> str:
            return cells[0].rjust(width) + "  " + "".join(c.rjust(12) + "  " for c in cells[1:])

        total = self.self_cpu_time_total() or 1.0
        out = [header] if header else []
        out += [line, row(["Name", *heads]), line]
        for e in rows:
            name = e.key if len(e.key) <= width else e.key[:width - 3] + "..."
            out.append(row([
                name, f"{e.self_cpu_time_total / total * 100:.2f}%",
                _format_time(e.self_cpu_time_total),
                f"{e.cpu_time_total / total * 100:.2f}%", _format_time(e.cpu_time_total),
                _format_time(e.cpu_time_total / getattr(e, "count", 1)),
                str(getattr(e, "count", 1))]))
        out += [line, f"Self CPU time total: {_format_time(self.self_cpu_time_total())}", ""]
        return "\n".join(out)


class profile:  # noqa: N801 - PyTorch's name
    """Records the ops and backward nodes run inside `with profile() as prof:`; then
    `prof.key_averages().table()`. CPU only: asking for a device's times raises."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_kineto: bool = False, use_cpu: bool = True, **kwargs) -> None:
        if use_cuda or use_device not in (None, "cpu"):
            raise NotImplementedError("minigrad's profiler times the CPU only (no use_cuda, "
                                      "use_device)")
        if record_shapes or with_flops or profile_memory or with_stack or with_modules:
            raise NotImplementedError("minigrad's profiler records op names and times only "
                                      "(no record_shapes, with_flops, profile_memory, "
                                      "with_stack, with_modules)")
        self.enabled = enabled
        self._events: list[FunctionEvent] = []
        self._stack: list[list] = []
        self._restore: list[tuple] = []

    def __enter__(self) -> profile:
        if self.enabled:
            global _ACTIVE
            if _ACTIVE is not None:
                raise RuntimeError("Profiler is already enabled on this thread")
            _ACTIVE = self
            self._install()
        return self

    def __exit__(self, *exc) -> None:
        global _ACTIVE
        if self.enabled and _ACTIVE is self:
            for owner, name, original, in_dict in reversed(self._restore):
                if in_dict:
                    setattr(owner, name, original)
                else:
                    delattr(owner, name)
            self._restore.clear()
            _ACTIVE = None

    # -- what it wraps --------------------------------------------------------------

    def _install(self) -> None:
        """Put a timer around every declared op's public forms and every node's
        backward, remembering the originals."""
        namespace = _registry.namespace()
        declaration = namespace.ops.declaration
        wrapped: dict[int, Callable] = {}

        def swap(owner, name: str, fn, label: str) -> None:
            key = id(fn)
            if key not in wrapped:
                wrapped[key] = _timed(fn, label)
            self._restore.append((owner, name, owner.__dict__.get(name, fn),
                                  name in owner.__dict__))
            setattr(owner, name, wrapped[key])

        functional = namespace.nn.functional
        tensor_cls = namespace.Tensor
        labels = {}
        for d in declaration.DECLARATIONS:
            for name, fn in d.functions.items():
                labels.setdefault(id(fn), _label(d.name))
                if getattr(namespace, name, None) is fn:
                    swap(namespace, name, fn, labels[id(fn)])
            for name, fn in {**d.methods, **d.attributes}.items():
                if callable(fn) and tensor_cls.__dict__.get(name) is fn:
                    swap(tensor_cls, name, fn, _label(d.name))
        for name in functional.__all__:
            fn = getattr(functional, name)
            swap(functional, name, fn, labels.get(id(fn), _label(name)))
        for cls in _node_classes():
            for method in ("backward", "apply"):
                if method in cls.__dict__ and cls is not Node:
                    # (labelled by the node running it: a base class's method serves
                    # every declared unary op's node)
                    swap(cls, method, cls.__dict__[method], None)

    # -- the results ----------------------------------------------------------------

    @property
    def function_events(self) -> EventList:
        return EventList(self._events)

    def events(self) -> EventList:
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """One row per name: calls, total and self time (in order of first call)."""
        if group_by_input_shape or group_by_stack_n:
            raise NotImplementedError("minigrad's profiler groups by name only")
        rows: dict[str, FunctionEventAvg] = {}
        for e in self._events:
            rows.setdefault(e.name, FunctionEventAvg(e.name)).add(e)
        return EventList(rows.values())

    def table(self, **kwargs) -> str:
        return self.key_averages().table(**kwargs)

    def total_average(self) -> FunctionEventAvg:
        return self.key_averages().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self._events)

    def __str__(self) -> str:
        return self.function_events.table()


_ACTIVE: profile | None = None

# Ops whose ATen operator has another name than the Python function.
_ATEN = {"cross_entropy": "cross_entropy_loss"}


def _label(name: str) -> str:
    return f"aten::{_ATEN.get(name, name)}"


def _node_classes() -> list[type]:
    found, todo = [], [Node]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def _timed(fn: Callable, label: str | None) -> Callable:
    """`fn`, recording each call's time (and the time of recorded calls inside it) on
    the active profiler, as `label` (None: a node's method, as the node's name)."""

    def timed(*args, **kwargs):
        prof = _ACTIVE
        if prof is None:
            return fn(*args, **kwargs)
        frame = [0.0]  # (the time of the recorded calls inside this one)
        prof._stack.append(frame)
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            total = (time.perf_counter() - start) * 1e6
            prof._stack.pop()
            if prof._stack:
                prof._stack[-1][0] += total
            name = label if label is not None else args[0].name()
            prof._events.append(FunctionEvent(name, total, total - frame[0]))

    timed.__name__ = getattr(fn, "__name__", "timed")
    timed.__doc__ = getattr(fn, "__doc__", None)
    timed.__wrapped__ = fn
    return timed

"""The public ways into the engine: `backward()`, `Tensor.backward`, `grad()` and
`backward_events()`. Each checks its arguments as PyTorch does, makes the
`GraphTask` of one backward call and runs it (`engine.execute`). `backward_events`
is `backward` as a stream of events (`events.py`), the one the widgets' stepper
shows; `backward` drains the same stream untraced. With `create_graph=True` the
engine carries tensors and records the backward pass as a graph of its own.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np

from .._registry import attach
from .._warn import Once
from ..arrays.layout import copy_of
from ..grad_mode import enable_grad, set_grad_enabled
from ..tensor import Tensor
from . import events as ev
from .engine import GraphTask, execute
from .graph import (
    RECORDING,
    RECORDING_PASSES,
    AccumulateGrad,
    GradientEdge,
    _lent_by_caller,
    counter_of_base,
    efficient_zeros_grad,
    first_grad,
    fits_layout,
    is_efficient_zeros,
    version_of,
    writable_view,
)
from .hook_calls import as_tensor, run_post_accumulate_hooks, snapshot

_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this "
    "function, make sure to reset the .grad fields of your parameters to None after use "
    "to break the cycle and avoid the leak."
)
_CYCLE = Once()  # (PyTorch warns once per process)


def _warn_of_cycle() -> None:
    """PyTorch's warning for `backward(create_graph=True)`: a leaf's `.grad` then has
    a graph leading back to the leaf. Given once per process, as PyTorch's is."""
    if _CYCLE.due():
        warnings.warn(_CYCLE_WARNING, UserWarning, stacklevel=3)


def _sequence(x) -> tuple:
    """A tensor, or an iterable of them, as a tuple, as PyTorch reads `tensors`,
    `inputs` and gradients: `backward(3.0)` is Python's "'float' object is not
    iterable". (None stays None: no gradients given.)"""
    if x is None:
        return None
    return (x,) if isinstance(x, (Tensor, GradientEdge)) else tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None) -> None:
    """Compute and accumulate gradients of `tensors` into the leaves' `.grad`.
    With `create_graph=True` the gradients have a graph of their own (and the graph
    is kept, unless `retain_graph=False`)."""
    for _ in backward_events(tensors, grad_tensors, retain_graph, create_graph, inputs,
                             trace=False):
        pass


def backward_events(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                    inputs=None, *, trace: bool = True) -> Iterator[ev.Event]:
    """`backward(...)` as a stream of events: a generator that runs the real backward
    pass and yields, between its steps, what the engine does (`minigrad.autograd.events`:
    `BackwardStarted`, then per node `NodeStarted`, hooks, saved tensors unpacked,
    `NodeFinished`, ..., and `BackwardFinished`). Pull one event at a time to step
    through a backward pass; drain it to run backward. `trace=False` yields nothing
    (what `backward()` does).

    Minigrad's own teaching API (PyTorch has none): the stream the widgets' stepper
    shows. With `inputs`, the leaves' `.grad` are filled in at the end, as
    `backward(inputs=...)` does, reported as accumulations of the last step."""
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        _warn_of_cycle()
    tensors, grad_tensors = _sequence(tensors), _sequence(grad_tensors) or ()
    if inputs is not None:
        inputs = _sequence(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    task = GraphTask(bool(retain_graph), create_graph, trace=trace)
    for event in execute(task, tensors, grad_tensors, inputs or ()):
        if isinstance(event, ev.BackwardFinished) and inputs is not None:
            yield from _accumulate_into_inputs(task, inputs, event.step)
        yield event
    if inputs is not None and not trace:
        yield from _accumulate_into_inputs(task, inputs, -1)


def _accumulate_into_inputs(task: GraphTask, inputs: tuple, step: int) -> Iterator[ev.Event]:
    """`accumulate_into_inputs` for `backward_events`, reported (when traced) as the
    last step's accumulations."""
    accumulate_into_inputs(inputs, task.captured, task.create_graph)
    if task.trace:
        reported = set()
        for given in inputs:
            x = _leaf_of(given)
            if x is not None and id(given) in task.captured and id(x) not in reported:
                reported.add(id(x))
                yield ev.GradAccumulated(step, x._grad_accumulator(), x,
                                         snapshot(task.captured[id(given)]), x.grad)


def _leaf_of(x: Tensor | GradientEdge) -> Tensor | None:
    """The leaf whose `.grad` an input of `backward(inputs=)` fills: the tensor, if a
    leaf; a leaf's `GradientEdge`'s leaf; else None."""
    if isinstance(x, GradientEdge):
        return x.node.variable if type(x.node) is AccumulateGrad else None
    return x if x.grad_fn is None else None


def accumulate_into_inputs(inputs: tuple, captured: dict, create_graph: bool) -> None:
    """`backward(inputs=...)`'s last step: add the gradients the engine captured for
    the leaves among `inputs` into their `.grad` (a non-leaf's retained gradient is
    already in its `.grad`; a non-leaf's `GradientEdge` gets nothing), each followed by
    its post-accumulate-grad hooks. In the order the engine reached them (`captured`
    keeps it), as PyTorch's engine runs the leaves' AccumulateGrads; once each (a leaf
    given twice, as itself and by its edge, or by two edges, is one AccumulateGrad)."""
    by_id = {id(x): x for x in inputs}
    done = set()
    for key, g in list(captured.items()):
        x = by_id.get(key)
        x = None if x is None else _leaf_of(x)
        if g is None or x is None or id(x) in done:
            continue
        done.add(id(x))
        if create_graph:
            accumulator = x._grad_accumulator()
            # (as the engine accumulates, recording, in the accumulator's turn)
            RECORDING_PASSES.add(1)
            RECORDING.parent = accumulator
            try:
                with enable_grad():
                    accumulator.accumulate_recorded(g)
            finally:
                RECORDING.parent = None
                RECORDING_PASSES.add(-1)
        elif x._grad is None:
            # (PyTorch would run the leaf's AccumulateGrad: `first_grad` tells the
            # version as it would, with the engine's references to `g` left out.)
            x._grad = (efficient_zeros_grad(g, x._data) if is_efficient_zeros(g)
                       else first_grad(g, x._data, stolen=fits_layout(g, x._data)))
        else:
            x._grad._data += g
            x._grad._version_counter.value += 1
        if x._post_accumulate_grad_hooks:
            with set_grad_enabled(create_graph):  # (as inside the engine)
                run_post_accumulate_hooks(x, None, -1, None)


def tensor_backward(self: Tensor, gradient: Tensor | None = None,
                    retain_graph: bool | None = None, create_graph: bool = False,
                    inputs=None) -> None:
    """Compute the gradient of this tensor w.r.t. graph leaves (see `backward`).
    (`Tensor.backward`.)"""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


attach(Tensor, "backward", tensor_backward)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of `outputs` w.r.t. `inputs`, returned (not accumulated). With
    `create_graph=True` they have a graph of their own, which can be differentiated
    again (and the graph is kept, unless `retain_graph=False`)."""
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        raise NotImplementedError("minigrad does not support is_grads_batched=True")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    # (as PyTorch reads them: a tensor, or an iterable of them, so `grad(3.0, x)` is
    # Python's "'float' object is not iterable"; the engine checks the outputs, then
    # the inputs)
    outputs = _sequence(outputs)
    inputs_t = (inputs,) if isinstance(inputs, (Tensor, GradientEdge)) else tuple(inputs)
    grad_outputs = _sequence(grad_outputs)
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    task = GraphTask(bool(retain_graph), create_graph, accumulate=False)
    for _ in execute(task, outputs, grad_outputs or (), inputs_t):
        pass
    captured = task.captured
    result = []
    for index, x in enumerate(inputs_t):
        g = captured.get(id(x))
        if g is None:
            if materialize_grads:
                if isinstance(x, GradientEdge):
                    raise RuntimeError("materialize_grads cannot be used when the given "
                                       "input is a GradientEdge")
                result.append(as_tensor(np.zeros(x._data.shape, x._data.dtype)))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        elif isinstance(g, Tensor):
            # (the tensor the backward pass computed: with its graph, when create_graph;
            # with its tangent, inside a dual level)
            result.append(g)
        else:
            result.append(_returned(g, grad_outputs or ()))
    return tuple(result)


def _returned(g: np.ndarray, given: tuple) -> Tensor:
    """The tensor `grad()` returns for a captured gradient array. PyTorch returns the
    captured gradient itself: the caller's own `grad_outputs` tensor where the backward
    passed it on unchanged (`x.clone()`'s, `x + 0`'s: the same object), a view of it
    where it was viewed (`x.t()`'s, sharing its memory and version counter), and an
    expanded one (`x.sum(0)`'s, strides (0, 1)) keeps its 0 strides and views the
    memory it spreads. minigrad lends such views (writable ones: writing through a 0
    stride is refused by the in-place check, as in PyTorch) and copies any other
    gradient (its own arrays may be held elsewhere), in the same layout."""
    for t in given:
        if type(t) is Tensor and t._data is g:
            return t
    if (g.size and (0 in g.strides or _lent_by_caller(g))
            and (lent := writable_view(g)) is not None):
        owner, data = lent
        t = Tensor._make(data)
        # (the engine lent a given gradient's counter to views of its memory)
        t._version_counter = counter_of_base(owner, version_of(g))
        return t
    return as_tensor(copy_of(g), copy_of=g)


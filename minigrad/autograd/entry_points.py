"""The public ways into the engine: `backward()`, `Tensor.backward` and `grad()`.
Each checks its arguments as PyTorch does, then drains `engine.backward_events`
untraced. With `create_graph=True` the engine carries tensors and records the
backward pass as a graph of its own (see `engine.backward_events`).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._registry import attach
from ..grad_mode import enable_grad
from ..tensor import Tensor
from .engine import backward_events
from .graph import RECORDING, RECORDING_PASSES, first_grad, fits_layout
from .hook_calls import as_tensor

_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this "
    "function, make sure to reset the .grad fields of your parameters to None after use "
    "to break the cycle and avoid the leak."
)
_warned_of_cycle = False


def _warn_of_cycle() -> None:
    """PyTorch's warning for `backward(create_graph=True)`: a leaf's `.grad` then has
    a graph leading back to the leaf. Given once per process, as PyTorch's is."""
    global _warned_of_cycle
    if not _warned_of_cycle:
        _warned_of_cycle = True
        warnings.warn(_CYCLE_WARNING, UserWarning, stacklevel=3)


def _sequence(x) -> tuple:
    """A tensor, or an iterable of them, as a tuple, as PyTorch reads `tensors`,
    `inputs` and gradients: `backward(3.0)` is Python's "'float' object is not
    iterable". (None stays None: no gradients given.)"""
    if x is None:
        return None
    return (x,) if isinstance(x, Tensor) else tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None) -> None:
    """Compute and accumulate gradients of `tensors` into the leaves' `.grad`.
    With `create_graph=True` the gradients have a graph of their own (and the graph
    is kept, unless `retain_graph=False`)."""
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        _warn_of_cycle()
    tensors, grad_tensors = _sequence(tensors), _sequence(grad_tensors)
    if inputs is not None:
        inputs = _sequence(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        captured: dict = {}
        for _ in backward_events(tensors, grad_tensors, retain_graph, inputs,
                                 trace=False, captured=captured, create_graph=create_graph):
            pass
        accumulate_into_inputs(inputs, captured, create_graph)
        return
    for _ in backward_events(tensors, grad_tensors, retain_graph, trace=False,
                             create_graph=create_graph):
        pass


def accumulate_into_inputs(inputs: tuple, captured: dict, create_graph: bool) -> None:
    """`backward(inputs=...)`'s last step: add the gradients the engine captured for
    the leaves among `inputs` into their `.grad` (a non-leaf's retained gradient is
    already in its `.grad`)."""
    for x in inputs:
        g = captured.get(id(x))
        if g is None or x.grad_fn is not None:
            continue
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
            x._grad = first_grad(g, x._data, stolen=fits_layout(g, x._data))
        else:
            x._grad._data += g
            x._grad._version_counter.value += 1


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
    inputs_t = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    grad_outputs = _sequence(grad_outputs)
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    captured: dict = {}
    for _ in backward_events(outputs, grad_outputs, retain_graph, inputs_t, accumulate=False,
                             trace=False, captured=captured, create_graph=create_graph):
        pass
    result = []
    for index, x in enumerate(inputs_t):
        g = captured.get(id(x))
        if g is None:
            if materialize_grads:
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
            result.append(as_tensor(np.array(g, copy=True), copy_of=g))
    return tuple(result)


"""Custom differentiable functions: subclass `Function`, write `forward` and
`backward` as static methods, call `MyFn.apply(...)`.

As in PyTorch, the `ctx` your methods receive *is* the backward node: `y.grad_fn`
of `y = MyFn.apply(x)` is an instance of a class named `MyFnBackward`, made once per
Function subclass. What you pass to `ctx.save_for_backward` is kept as saved tensors
with their versions, checked when `ctx.saved_tensors` is read (not before), and
released after backward unless `retain_graph=True`.

`forward` may also be written without `ctx`, with a separate static
`setup_context(ctx, inputs, output)` that saves what backward needs (PyTorch 2's
form). An output that is a view (an input returned as-is becomes one) refuses
in-place changes afterwards, since rewriting its history would skip your backward.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from ..grad_mode import ANOMALY, STATE, no_grad
from ..tensor import IN_CUSTOM_FUNCTION, Tensor, make_view
from .graph import Node, NoneSaved, SavedTensor, capture_forward_trace
from .inplace import check_inplace, rebase_history
from .tangents import DUAL, set_tangent, tangent_of, update_tangent

NONE_SAVED = NoneSaved()


class FunctionCtx(Node):
    """The node of one call of a custom Function, and its `ctx`."""

    __slots__ = (
        "_to_save",
        "_ctx_saved",
        "_dirty",
        "_non_differentiable",
        "_materialize_grads",
        "_is_tensor_input",
        "_output_meta",
        "_for_forward",
        "_in_jvp",
        "needs_input_grad",
    )  # Node's __dict__ lets forward stash plain values too: ctx.k = 2.0
    _saves_elsewhere = True  # save_for_backward's tensors, in `_ctx_saved`

    def _num_outputs(self) -> int | None:
        meta = getattr(self, "_output_meta", None)
        return None if meta is None else len(meta)

    def __init__(self, next_functions: tuple = ()) -> None:
        super().__init__(next_functions)
        self._to_save: tuple = ()
        self._ctx_saved: tuple | None = None
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._materialize_grads = True
        self._output_meta: tuple = ()
        self._for_forward: tuple = ()
        self._in_jvp = False

    # -- what forward may call -----------------------------------------------------

    def save_for_backward(self, *tensors) -> None:
        """Keep these tensors (or None) for backward, with their versions."""
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep these tensors (or None) for `jvp`, which reads them as
        `ctx.saved_tensors` (forward mode runs `jvp` right after `forward`)."""
        self._for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs this forward modified in place."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that never get a gradient (indices, masks, ...)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward sees zeros (default) or None for outputs without gradient."""
        self._materialize_grads = value

    # -- what backward reads -------------------------------------------------------

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors, after PyTorch's checks: released, or modified in place.
        (Inside `jvp`: what `save_for_forward` kept.)"""
        if self._in_jvp:
            return self._for_forward
        if self._ctx_saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self) for s in self._ctx_saved)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The SavedTensor records themselves (versions, released or not; a saved
        None shows as a `NoneSaved`, as PyTorch shows an empty SavedTensor)."""
        return tuple(NONE_SAVED if s is None else s for s in self._ctx_saved or ())

    # -- the engine's side -----------------------------------------------------------

    def release_variables(self) -> tuple[str, ...]:
        released = []
        for i, saved in enumerate(self._ctx_saved or ()):
            if saved is not None and not saved.is_released:
                saved.release()
                released.append(f"saved_tensors[{i}]")
        return tuple(released)

    def apply(self, grads: list) -> tuple:
        """A plain backward: `backward` runs in no_grad mode on tensors wrapping the
        engine's arrays, and hands arrays back."""
        wrapped = [None if g is None else Tensor._make(g) for g in grads]
        with no_grad():
            result = self._call_backward(wrapped)
        return tuple(None if r is None else r._data for r in result)

    def apply_recording(self, grads: list, wanted: list | None = None) -> list:
        """A `create_graph=True` backward: `backward` runs with grad mode on (as the
        engine leaves it), so the ops it calls record a graph, which can be
        differentiated again. (`wanted` is not used: the Function's own `backward`
        decides what it computes, from `ctx.needs_input_grad`.)"""
        return list(self._call_backward(list(grads)))

    def _call_backward(self, grads: list) -> list:
        """Call the Function's `backward` with one gradient per output (zeros where
        none arrived, unless `set_materialize_grads(False)`) and check what it
        returns: one gradient per input, None for inputs that were not tensors."""
        name = self.name()
        grads = list(grads) + [None] * (len(self._output_meta) - len(grads))
        for i, (g, (shape, dtype)) in enumerate(zip(grads, self._output_meta)):
            if g is None and self._materialize_grads:
                grads[i] = Tensor._make(np.zeros(shape, dtype))
        result = self._function.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = len(self._is_tensor_input)
        if len(result) != n_inputs:
            # PyTorch tolerates extra trailing Nones.
            if len(result) > n_inputs and all(r is None for r in result[n_inputs:]):
                result = result[:n_inputs]
            else:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected "
                    f"{n_inputs}, got {len(result)})"
                )
        out = []
        for i, (r, is_tensor) in enumerate(zip(result, self._is_tensor_input)):
            if not is_tensor:
                if r is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable"
                    )
                continue
            if r is not None and not hasattr(r, "_data"):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            out.append(r)
        return out


class _FunctionMeta(type):
    """Gives every Function subclass its own node class, `<Name>Backward`."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(f"{name}Backward", (FunctionCtx,), {"_function": cls})


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd functions (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. Instantiating "
            "an autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (old code called an instance, whose forward took `self`: PyTorch refuses it)
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        """Optional: with it, `forward(*args)` takes no ctx and this saves for backward."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        """Forward mode's rule: the outputs' tangents from the inputs' (one per input,
        in `forward`'s order; one per output back). Override it to use the Function
        with `autograd.forward_ad`; read what `ctx.save_for_forward` kept as
        `ctx.saved_tensors`."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run `forward` without recording, then record one node for the whole call."""
        separate_setup = cls.setup_context is not Function.setup_context
        if kwargs or separate_setup:
            args = _positional(cls, args, kwargs, separate_setup)
        tensors = [a for a in args if isinstance(a, Tensor)]
        dual = DUAL.active and any(tangent_of(t) is not None for t in tensors)
        # (read before forward runs: an input forward modifies in place keeps its
        # tangent object, which jvp then updates in place)
        tangents_in = _tangents_in(cls, args) if dual else None
        record = STATE.grad_enabled and any(t.requires_grad for t in tensors)
        ctx = _new_ctx(cls, args, tensors, record)
        result = _run_forward(cls, ctx, args, separate_setup, dual)
        single = not isinstance(result, tuple)
        final = _outputs(ctx, (result,) if single else result, tensors, record)
        if record:
            _record_call(ctx, tensors, final)
        ctx._to_save = ()
        if dual:
            _forward_tangents(ctx, args, tangents_in, final)
        return final[0] if single else tuple(final)


def _tangents_in(cls: type[Function], args: tuple) -> list:
    """The inputs' tangents, for `jvp` (which the Function must have)."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    return [tangent_of(a) if isinstance(a, Tensor) else None for a in args]


def _new_ctx(cls: type[Function], args: tuple, tensors: list, record: bool) -> FunctionCtx:
    """The call's node, linked to the tensor inputs' nodes when it records."""
    ctx = cls._backward_cls(tuple(t._edge() for t in tensors) if record else ())
    ctx._is_tensor_input = tuple(isinstance(a, Tensor) for a in args)
    ctx.needs_input_grad = tuple(
        isinstance(a, Tensor) and a.requires_grad and STATE.grad_enabled for a in args
    )
    return ctx


def _run_forward(cls: type[Function], ctx: FunctionCtx, args: tuple, separate_setup: bool,
                 dual: bool) -> Any:
    """`forward` (then `setup_context`, if the Function has one), recording nothing
    and, in forward mode, carrying no tangents (`jvp` gives the outputs theirs)."""
    with no_grad():
        if dual:
            DUAL.active = False
        try:
            if separate_setup:
                result = cls.forward(*args)
                cls.setup_context(ctx, args, result)
                return result
            return cls.forward(ctx, *args)
        finally:
            if dual:
                DUAL.active = True


def _outputs(ctx: FunctionCtx, outputs: tuple, tensors: list, record: bool) -> list:
    """Forward's outputs as the call returns them: each tensor made an output of
    `ctx` (see `_as_output`), anything else as it is."""
    dirty = {id(t) for t in ctx._dirty}
    if not dirty <= {id(o) for o in outputs}:
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned "
            "as output. The inputs that are modified inplace must all be outputs of the "
            "Function."
        )
    non_diff = {id(t) for t in ctx._non_differentiable}
    inputs = {id(t) for t in tensors}
    final = []
    for nr, out in enumerate(outputs):
        if isinstance(out, Tensor):
            is_dirty = id(out) in dirty
            out = _as_output(out, is_dirty, id(out) in inputs, record)
            if record and id(out) not in non_diff and out.dtype.is_floating_point:
                _attach(ctx, out, nr, is_dirty)
        final.append(out)
    return final


def _as_output(out: Tensor, dirty: bool, is_input: bool, record: bool) -> Tensor:
    """An output tensor before it is attached: a dirty one (modified in place by
    forward) counts one more in-place op, as in PyTorch; an input returned unchanged
    comes back as a view of itself; a view refuses in-place changes afterwards."""
    if dirty:
        if record and out.is_leaf and out.requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place "
                "operation."
            )
        if record:
            check_inplace(out)
        out._version_counter.value += 1
    elif is_input:
        out = make_view(out, out._data.view())
    if out._view is not None and not dirty:
        # An in-place op on this view must not rewrite its history: that would
        # bypass the custom backward (`view_rebase_error` says so).
        out._view.creation_meta = IN_CUSTOM_FUNCTION
    return out


def _attach(ctx: FunctionCtx, out: Tensor, nr: int, dirty: bool) -> None:
    """Make `out` output `nr` of `ctx` (a dirty input gets `ctx` as its new history)."""
    if not dirty:
        out._grad_fn = ctx
        out._output_nr = nr
        return
    rebase_history(out, ctx)
    if out._view is None:
        out._output_nr = nr  # rebase_history numbers a lone output 0


def _record_call(ctx: FunctionCtx, tensors: list, final: list) -> None:
    """What the node keeps of a recorded call: the outputs' and inputs' shapes and
    dtypes, the forward's trace (anomaly mode), and the tensors forward saved."""
    ctx._output_meta = tuple(
        (o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), np.float32)
        for o in final
    )
    ctx._input_meta = tuple(
        (t._data.shape, t._data.dtype) if fn is not None else None
        for t, (fn, _) in zip(tensors, ctx.next_functions)
    )
    if ANOMALY.enabled:
        ctx._forward_trace = capture_forward_trace()
        ctx._plain = False
    for i, t in enumerate(ctx._to_save):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{i} is of type {type(t).__name__}"
            )
    # Outputs are saved without a reference to themselves (no cycle).
    out_ids = {id(o) for o in final if isinstance(o, Tensor)}
    ctx._ctx_saved = tuple(
        None if t is None else SavedTensor(t, is_output=id(t) in out_ids)
        for t in ctx._to_save
    )

def _forward_tangents(ctx: FunctionCtx, args: tuple, tangents_in: list, outputs: list) -> None:
    """Forward mode through a custom Function: its `jvp` gets one tangent per input
    (zeros for a tensor without one, unless `set_materialize_grads(False)`; None for
    what is not a tensor) and returns one per output, which the outputs then carry."""
    grads = []
    for a, t in zip(args, tangents_in):
        if t is None and isinstance(a, Tensor) and ctx._materialize_grads:
            t = Tensor._make(np.zeros_like(a._data))
        grads.append(t)
    ctx._in_jvp = True
    DUAL.active = False  # (jvp's own ops carry no tangents either)
    try:
        result = ctx._function.jvp(ctx, *grads)
    finally:
        DUAL.active = True
        ctx._in_jvp = False
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(result)})")
    dirty = {id(t) for t in ctx._dirty}
    for out, tangent in zip(outputs, result):
        if not isinstance(out, Tensor) or tangent is None:
            continue
        if tangent.shape != out.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size "
                f"[{', '.join(map(str, out.shape))}] while the given forward gradient is of "
                f"size [{', '.join(map(str, tangent.shape))}].")
        if id(out) in dirty and tangent_of(out) is tangent:
            continue  # (jvp updated the input's tangent in place, as it must)
        (update_tangent if id(out) in dirty else set_tangent)(out, tangent)


def _positional(cls, args: tuple, kwargs: dict, separate_setup: bool) -> tuple:
    """The call's arguments as `forward`'s positional ones, keywords bound to their
    places (PyTorch's rule: a separate `setup_context` also sees the defaults)."""
    if separate_setup:
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args
    bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)  # None: ctx
    return bound.args[1:]

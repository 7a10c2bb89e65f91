"""`minigrad.autograd.functional`: Jacobians, Hessians and their products with a
vector, for a function of tensors, as PyTorch's `torch.autograd.functional`.

Everything here is built on `autograd.grad`:

* `vjp(f, x, v)`, v^T J: one backward pass from f(x), seeded with `v`.
* `jacobian(f, x)`: one backward pass per output element (a row of J each),
  stacked.
* `jvp(f, x, v)`, J v, by the "double backward trick": the gradient g(u) = u^T J
  of f with respect to x, taken with `create_graph=True` for a dummy `u`, is linear
  in `u`; differentiating g(u) . v with respect to `u` gives J v. So `jvp` needs
  every node of f to have a recordable backward (`create_graph=True`).
* `hessian`, `vhp`, `hvp`: the same for the gradient of a scalar function.

Each function takes a tensor or a tuple of tensors, and answers in the same
structure; `create_graph=True` makes the answers differentiable, `strict=True`
refuses outputs that do not depend on an input (instead of answering zeros).
`vectorize=True` and `strategy="forward-mode"` (which PyTorch runs only vectorised)
need vmap, PyTorch's batching of whole functions, which minigrad does not have: they
raise `NotImplementedError`. (For a Jacobian-vector product by forward mode, use
`autograd.forward_ad` directly.)
"""

from __future__ import annotations

from collections.abc import Callable

from .._registry import namespace
from ..grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..tensor import Tensor
from .entry_points import grad as autograd_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- packing arguments and answers ---------------------------------------------------------


def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """Whether `inp` was a tuple, and `inp` as a tuple of tensors (checked)."""
    is_tuple = isinstance(inp, tuple)
    inp = inp if is_tuple else (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, inp


def _unpack(res, was_tuple):
    """Undo `_as_tuple` on an answer: `was_tuple` is one flag, or two (outputs,
    inputs) for a nested answer such as a Jacobian."""
    if isinstance(was_tuple, tuple):
        outputs_were, inputs_were = was_tuple
        if not inputs_were:
            res = tuple(el[0] for el in res)
        return res if outputs_were else res[0]
    return res if was_tuple else res[0]


def _fresh(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the inputs, so that `func` differentiates with respect
    to these and not to the same tensors it may also capture: a view (in the graph)
    when the answer must be differentiable, else a detached copy that requires grad
    only if `need_graph`."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _detach_unless(res: tuple, create_graph: bool) -> tuple:
    """The answer without history, unless the caller asked for a graph."""
    if isinstance(res[0], Tensor):
        return res if create_graph else tuple(t.detach() for t in res)
    return tuple(_detach_unless(r, create_graph) for r in res)


def _answer(outputs: tuple, is_outputs_tuple: bool, result: tuple, is_result_tuple: bool,
            create_graph: bool) -> tuple:
    """`(func's output, the product)`, each in the structure the caller used."""
    return (_unpack(_detach_unless(outputs, create_graph), is_outputs_tuple),
            _unpack(_detach_unless(result, create_graph), is_result_tuple))


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _prepare_v(v, fn_name: str, create_graph: bool, other: tuple, is_other_tuple: bool,
               none_message: str):
    """`v` as a tuple matching `other`, or None where PyTorch allows it to be left
    out (a single one-element tensor)."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _fresh(v, create_graph, need_graph=False)
        _validate_v(v, other, is_other_tuple)
    elif len(other) != 1 or other[0].nelement() != 1:
        raise RuntimeError(none_message)
    return v


# -- strict mode ---------------------------------------------------------------------------

_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should "
               "ensure that your function is thrice differentiable and that the hessian "
               "depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when "
               "running in strict mode.",
}


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """In strict mode: every one of `tensors` must depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


_NO_GRADIENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    """Zeros (shaped like `refs[i]`) where a gradient is None, or strict mode's error
    naming the backward pass (`stage`) that found no dependence."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_NO_GRADIENT[stage].format(i=i))
            g = namespace().zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
          retain_graph: bool | None = None) -> tuple:
    """`autograd.grad` that skips the outputs which need no gradient (None for every
    input when none is left) and answers None for inputs the outputs do not use."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return autograd_grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept),
                         allow_unused=True, create_graph=create_graph,
                         retain_graph=retain_graph)


def _call(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple[bool, tuple]:
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                  fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


# -- the public functions ------------------------------------------------------------------


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(inputs), v^T J)`: the product of the vector `v` (shaped like the output)
    with the Jacobian of `func` at `inputs`, one backward pass. `v` may be left out
    when the output has a single element."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, "vjp", create_graph, outputs, is_outputs_tuple,
                       "The vector v can only be None if the user-provided function returns "
                       "a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return _answer(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(inputs), J v)`: the Jacobian of `func` times the vector `v` (shaped like
    the inputs), by the double backward trick (see the module docstring). `v` may be
    left out when the input has a single element."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, "jvp", create_graph, inputs, is_inputs_tuple,
                       "The vector v can only be None if the input to the user-provided "
                       "function is a single Tensor with a single element.")
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # u^T J is linear in u, so u's value does not matter (zeros: no inf or nan).
        dummies = tuple(namespace().zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return _answer(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def _forward_mode_refused(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"minigrad does not implement {what}: it needs vmap (batching a whole function), "
        "which minigrad does not have; use vectorize=False and strategy=\"reverse-mode\", "
        "or minigrad.autograd.forward_ad for forward mode"
    )


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of `func` at `inputs`: for output i and input j, a tensor of
    sizes `output_i.shape + input_j.shape`; a tuple (of tuples) where `func` takes
    or returns tuples. Computed row by row, one backward pass per output element."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "minigrad.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "minigrad.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.')
        _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError(  # (PyTorch's text, with its missing space)
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`.")
        raise _forward_mode_refused('strategy="forward-mode"')

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "minigrad.autograd.functional.jacobian: `strict=True` and "
                    "`vectorized=True` are not supported together. Please either set "
                    "`strict=False` or `vectorize=False`.")
            raise _forward_mode_refused("vectorize=True")

        jac: list = []
        for i, out in enumerate(outputs):
            rows: tuple = tuple([] for _ in inputs)  # rows[j]: d out[k] / d input j
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent "
                                f"of input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        rows[j].append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent "
                                f"of input {j}. This is not allowed in strict mode.")
                        rows[j].append(namespace().zeros_like(inp))
            jac.append(tuple(namespace().stack(r, dim=0).view(out.shape + inp.shape)
                             for r, inp in zip(rows, inputs)))
        return _unpack(_detach_unless(tuple(jac), create_graph),
                       (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of the scalar function `func` at `inputs`: the Jacobian of its
    gradient (computed with `create_graph=True`). For inputs i and j, a tensor of
    sizes `input_i.shape + input_j.shape`."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_gradient(func: Callable, inputs, v, create_graph: bool, strict: bool,
                              fn_name: str):
    """What `vhp` and `hvp` share: the inputs and `v` prepared, `func` called and
    checked to return one element, and its gradient with a graph."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, fn_name, create_graph, inputs, is_inputs_tuple,
                   "The vector v can only be None if the input to the user-provided function "
                   "is a single Tensor with a single element.")
    is_outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(inputs), v^T H)`: the vector `v` times the Hessian of the scalar function
    `func`, by differentiating its gradient once more, seeded with `v`."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = \
            _scalar_function_gradient(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return _answer(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(inputs), H v)`: the Hessian of the scalar function `func` times the
    vector `v`, by the double backward trick applied to its gradient (slower than
    `vhp`, which equals it when the Hessian is symmetric)."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = \
            _scalar_function_gradient(func, inputs, v, create_graph, strict, "hvp")
        dummies = tuple(namespace().zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)  # (jac: as PyTorch checks)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(double_back, dummies, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return _answer(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)

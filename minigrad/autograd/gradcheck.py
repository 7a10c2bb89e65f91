"""`gradcheck` and `gradgradcheck`: is a backward formula right? Compare it with
finite differences, as PyTorch's `torch.autograd.gradcheck` does.

For a function f of tensors, the Jacobian is computed twice:

* numerically, column by column: nudge one input element by -eps and +eps (in
  place, in the input's own memory), run f, and take the central difference
  (f(x + eps) - f(x - eps)) / (2 eps);
* analytically, row by row: one backward pass per output element, seeded with that
  element's one-hot vector (`autograd.grad`), twice, to see that backward gives the
  same answer each time.

They must agree within `atol + rtol * |numerical|`, element by element; if not, a
`GradcheckError` shows both Jacobians (rows: input elements, columns: output
elements). Then two more checks: a zero output gradient must give zero input
gradients ("backward not multiplied by grad_output"), and so must an output
gradient that is undefined (`check_undefined_grad`).

Use float64 inputs: with eps = 1e-6, float32's rounding swamps the difference
(gradcheck warns). `gradgradcheck` runs the same check on the function that
computes the gradient with `create_graph=True`, so it checks the backward of the
backward too.

With `check_forward_ad=True` the Jacobian is also computed by forward mode
(`autograd.forward_ad`), one input element's unit tangent at a time, and compared the
same way. minigrad implements the slow mode for real tensors; the options that need
vmap (`check_batched_grad`, `check_batched_forward_grad`) or PyTorch's randomised
fast mode raise `NotImplementedError`.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable

import numpy as np

from .._dtype import float64
from .._generator import Generator
from .._registry import namespace
from ..tensor import Tensor
from . import forward_ad
from .entry_points import grad as autograd_grad
from .graph import Node
from .record import record

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` and `gradgradcheck` when a check fails."""


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    return tuple(x) if isinstance(x, list) else (x,)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _inputs_requiring_grad(inputs: tuple) -> list:
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def _all_zero(t: Tensor) -> bool:
    return not t.detach().numpy().any()


def _refuse(what: str) -> NotImplementedError:
    return NotImplementedError(f"minigrad's gradcheck does not implement {what}")


# -- the public functions ------------------------------------------------------------------


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of `func` at `inputs` (those that require grad) against
    finite differences. Returns True, or raises `GradcheckError` saying what is
    wrong (returns False instead when `raise_exception=False`)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if check_batched_forward_grad:
        raise _refuse("check_batched_forward_grad=True (it needs vmap)")
    if check_batched_grad:
        raise _refuse("check_batched_grad=True (it needs vmap)")
    if fast_mode:
        raise _refuse("fast_mode=True; use the default fast_mode=False")
    try:
        _check(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """`gradcheck` of the function that maps (inputs, grad_outputs) to the gradients
    of `func` (taken with `create_graph=True`): checks second derivatives. Without
    `grad_outputs`, random ones in [-1, 1) are drawn from the global generator, as
    PyTorch draws them."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_like(o, gen_non_contig_grad_outputs)
                                    for o in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    n_out = len(tupled_grad_outputs)
    diff_inputs = {i for i, x in enumerate(tupled_inputs)
                   if isinstance(x, Tensor) and x.requires_grad}

    def gradients(*args):
        # (every tensor made to require grad again, as PyTorch does: forward mode hands
        # this function detached dual tensors)
        args = tuple(x.requires_grad_() if isinstance(x, Tensor) else x for x in args)
        input_args = args[:-n_out]
        outputs = _differentiable_outputs(func(*input_args))
        grads_in = autograd_grad(outputs, tuple(x for i, x in enumerate(input_args)
                                                if i in diff_inputs),
                                 args[-n_out:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads_in if g is not None)

    return gradcheck(gradients, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_like(t: Tensor, noncontiguous: bool) -> Tensor:
    """A tensor like `t` with values uniform in [-1, 1) (float64 if `t` is not
    floating point), requiring grad: PyTorch's `testing.make_tensor(low=-1, high=1)`,
    which doubles the last dim and keeps every second column for a non-contiguous
    one."""
    mg = namespace()
    dtype = t.dtype if t.is_floating_point() else float64
    shape = tuple(t.shape)
    noncontiguous = noncontiguous and int(np.prod(shape)) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    out = mg.empty(shape, dtype=dtype).uniform_(-1, 1)
    if noncontiguous:
        out = out[..., 1::2]
    return out.requires_grad_(True)


# -- the checks ----------------------------------------------------------------------------


def _check(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
           check_grad_dtypes, check_forward_ad, check_backward_ad) -> None:
    """PyTorch's order: the backward Jacobians, then the forward-mode ones (and how
    forward mode treats a missing tangent), then the checks only backward has."""
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = _as_tuple(func(*tupled_inputs))
    outputs = _differentiable_outputs(func_out)
    for forward in (False, True):
        if not (check_forward_ad if forward else check_backward_ad):
            continue
        if not outputs:
            _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps)
        else:
            _compare_jacobians(func, tupled_inputs, func_out, outputs, eps, atol, rtol,
                               nondet_tol, check_grad_dtypes, forward)
        if forward and check_undefined_grad:
            _check_undefined_tangents(func, tupled_inputs)
    if not check_backward_ad:
        return
    _check_backward_multiplies_by_grad_output(outputs, tupled_inputs)
    if check_undefined_grad:
        _check_undefined_output_grads(func, tupled_inputs)


def _check_inputs(inputs: tuple) -> None:
    """Warn about inputs that are not float64; refuse overlapping memory (a stride of
    0: nudging one element would nudge others) and inputs none of which require grad."""
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp.dtype is not float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not "
                    "of double precision floating point or complex. ", stacklevel=4)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _compare_jacobians(func, inputs, func_out, outputs, eps, atol, rtol, nondet_tol,
                       check_grad_dtypes, forward: bool = False) -> None:
    """The numerical and analytical Jacobian of each output with respect to each input
    must be close (`allclose`, with their dtypes promoted). The analytical one comes
    from backward passes, or with `forward` from forward-mode AD."""
    mg = namespace()
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    numerical = [n for o, n in zip(func_out, numerical) if o.requires_grad]
    by_tangents = _forward_jacobians(func, inputs, func_out, check_grad_dtypes) \
        if forward else None
    mode = "computed with forward mode " if forward else ""
    for i, o in enumerate(outputs):
        if forward:
            analytical = [per_input[i] for per_input in by_tangents]
        else:
            analytical = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            dtype = a.dtype if a.dtype is n.dtype else float64  # (both floating point)
            if not mg.allclose(a.to(dtype), n.to(dtype), rtol, atol):
                raise GradcheckError(
                    f"Jacobian {mode}mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{n}\nanalytical:{a}\n")


def _check_no_differentiable_outputs(func, inputs, func_out, eps) -> None:
    """With no output that requires grad, every numerical derivative must be zero."""
    for per_output in zip(*_numerical_jacobians(func, inputs, func_out, eps)):
        for jacobian in per_output:
            if not _all_zero(jacobian):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# -- the numerical Jacobian: one column per input element --------------------------------


def _numerical_jacobians(func, inputs: tuple, func_out: tuple, eps: float) -> list:
    """`jacobians[k][j]`: the finite-difference Jacobian of output k with respect to
    the j-th input that requires grad, sized (input numel, output numel)."""
    per_input = []
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            per_input.append(_numerical_jacobian_wrt(func, inputs, idx, func_out, eps))
    return [tuple(col) for col in zip(*per_input)] if per_input else []


def _numerical_jacobian_wrt(func, inputs: tuple, idx: int, func_out: tuple, eps: float):
    inp = inputs[idx]
    memory = inp.data  # (no version bump and no graph: the input itself stays intact)
    jacobians = [o.new_zeros((inp.numel(), o.numel())) for o in func_out
                 if isinstance(o, Tensor) and o.is_floating_point()]
    for column, where in enumerate(itertools.product(*(range(n) for n in memory.shape))):
        entry = memory[where]
        orig = entry.clone()
        entry.copy_(orig - eps)
        before = _outputs_of(func, inputs)
        entry.copy_(orig + eps)
        after = _outputs_of(func, inputs)
        entry.copy_(orig)
        for k, (a, b) in enumerate(zip(before, after)):
            _check_same_dtype_and_shape(a, b, eps, where)
            if k < len(jacobians):
                jacobians[k][column] = ((b - a) / (2 * eps)).detach().reshape(-1)
    return jacobians


def _outputs_of(func, inputs: tuple) -> tuple:
    return tuple(o.clone() for o in _as_tuple(func(*inputs)))


def _check_same_dtype_and_shape(a: Tensor, b: Tensor, eps: float, where: tuple) -> None:
    on = f"on index {where} " if where is not None else ""
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when "
                             f"inputs are perturbed {on}by {eps}, but got: shapes {a.shape} "
                             f"and {b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when "
                             f"inputs are perturbed {on}by {eps}, but got: dtypes {a.dtype} "
                             f"and {b.dtype}.")


# -- the analytical Jacobian: one row per output element ---------------------------------


_NONDET_NOTE = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _analytical_jacobians(inputs: tuple, output: Tensor, nondet_tol: float,
                          check_grad_dtypes: bool) -> list:
    """The Jacobian of `output` with respect to each input that requires grad, by
    backward passes (computed twice: backward must give the same answer again)."""
    diff_inputs = _inputs_requiring_grad(inputs)
    first, sizes_ok, types_ok = _stacked_rows(diff_inputs, _jacobian_rows(output, diff_inputs))
    second, _, _ = _stacked_rows(diff_inputs, _jacobian_rows(output, diff_inputs))
    reentrant = all(a.numel() == 0 or (a - b).abs().max() <= nondet_tol
                    for a, b in zip(first, second))
    # (PyTorch's two flags are swapped here: a wrong size is reported as a dtype
    # mismatch, when dtypes are checked, and a wrong dtype as a wrong size.)
    if not sizes_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not types_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical "
            f"gradient matches numerical gradient.The tolerance for nondeterminism was "
            f"{nondet_tol}." + _NONDET_NOTE)
    return first


def _jacobian_rows(output: Tensor, diff_inputs: list) -> list:
    """`rows[i][j]`: the gradient of input i for output element j (None if unused)."""
    seed = namespace().zeros(output.shape, dtype=output.dtype)  # (contiguous)
    flat = seed.view(-1)
    rows: list = [[] for _ in diff_inputs]
    for j in range(flat.numel()):
        flat.zero_()
        flat[j] = 1.0
        grads = autograd_grad(output, diff_inputs, seed, retain_graph=True, allow_unused=True)
        for i, g in enumerate(grads):
            rows[i].append(None if g is None else g.clone())
    return rows


def _stacked_rows(diff_inputs: list, rows: list) -> tuple[list, bool, bool]:
    """The rows as one (input numel, output numel) matrix per input, and whether every
    gradient had its input's size and dtype."""
    sizes_ok = types_ok = True
    jacobians = []
    for inp, grads in zip(diff_inputs, rows):
        jacobian = inp.new_zeros((inp.numel(), len(grads)))
        for j, g in enumerate(grads):
            if g is None:
                continue  # (a zero column)
            if g.size() != inp.size():
                sizes_ok = False
            elif g.dtype != inp.dtype:
                types_ok = False
            jacobian[:, j] = g.reshape(-1)
        jacobians.append(jacobian)
    return jacobians, sizes_ok, types_ok


# -- the Jacobian by forward mode: one column per input element ------------------------------


def _float_outputs(outputs: tuple) -> list:
    return [o for o in outputs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _dual_inputs(inputs: tuple) -> tuple[list, list]:
    """Each input that requires grad made dual with a zero tangent (its value detached),
    the others as they are; and those tangents, read back from the dual tensors."""
    zeros_like = namespace().zeros_like
    duals, tangents = [], []
    for inp in inputs:
        if isinstance(inp, Tensor) and inp.requires_grad:
            inp = forward_ad.make_dual(inp.detach(), zeros_like(inp))
            tangents.append(forward_ad.unpack_dual(inp).tangent)
        duals.append(inp)
    return duals, tangents


def _forward_jacobians(func, inputs: tuple, func_out: tuple, check_grad_dtypes: bool) -> list:
    """`jacobians[j][k]`: the Jacobian of floating-point output k with respect to the
    j-th input that requires grad, sized (input numel, output numel) like the
    numerical one: each row is the outputs' tangents when that input element's
    tangent is 1 and every other tangent 0 (one forward pass per input element)."""
    diff_inputs = _inputs_requiring_grad(inputs)
    jacobians = [[o.new_zeros((inp.numel(), o.numel())) for o in _float_outputs(func_out)]
                 for inp in diff_inputs]
    with forward_ad.dual_level():
        duals, tangents = _dual_inputs(inputs)
        for j, tangent in enumerate(tangents):
            # (element by element in row-major order, whatever the tangent's layout)
            for row, where in enumerate(itertools.product(*map(range, tangent.shape))):
                tangent[where] = 1.0
                outs = _float_outputs(_as_tuple(func(*duals)))
                for k, out in enumerate(outs):
                    value, t = forward_ad.unpack_dual(out)
                    if check_grad_dtypes and t is not None and value.dtype != t.dtype:
                        raise GradcheckError("Forward AD gradient has dtype mismatch.")
                    if t is None:
                        jacobians[j][k][row].zero_()
                    else:
                        jacobians[j][k][row].copy_(t.reshape(-1))
                tangent[where] = 0.0
    return jacobians


def _check_undefined_tangents(func, inputs: tuple) -> None:
    """Forward mode must treat an input without a tangent as one whose tangent is
    zero: for each input in turn, its tangent is made a tensor of zeros, then left out
    (a plain tensor), the others keeping random tangents; both runs must give the
    same output tangents."""
    mg = namespace()
    generator = Generator()  # (its own, as PyTorch's: the global one is left alone)
    with forward_ad.dual_level():
        duals, tangents = _dual_inputs(inputs)
        for tangent in tangents:
            tangent.copy_(mg.rand(tangent.numel(), generator=generator, dtype=tangent.dtype)
                          .view_as(tangent))
        for idx, inp in enumerate(inputs):
            if not (isinstance(inp, Tensor) and inp.requires_grad):
                continue
            kept = duals[idx]
            duals[idx] = forward_ad.make_dual(inp.detach(), mg.zeros_like(inp))
            with_zeros = _float_outputs(_as_tuple(func(*duals)))
            duals[idx] = inp.detach()
            without = _float_outputs(_as_tuple(func(*duals)))
            duals[idx] = kept
            for k, (a, b) in enumerate(zip(with_zeros, without)):
                t1, t2 = forward_ad.unpack_dual(a).tangent, forward_ad.unpack_dual(b).tangent
                if t1 is not None and t2 is not None and not mg.allclose(t1, t2):
                    raise GradcheckError(
                        "Mismatch in tangent values for output with index: ", k,
                        " when input: ", inp, " has an undefined tangent value. ",
                        " Got: ", t1, " but expected: ", t2)


# -- what backward must do with zero or undefined output gradients -------------------------


def _check_backward_multiplies_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    """Zero output gradients must give zero input gradients of the inputs' dtype and
    size."""
    diff_inputs = _inputs_requiring_grad(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    zeros = [namespace().zeros_like(o) for o in outputs]
    grads = autograd_grad(outputs, diff_inputs, zeros, allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if not _all_zero(gi):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")


class UndefinedGradBackward(Node):
    """The node of `_undefined_grad(t)`: whatever gradient arrives, it hands on none
    (PyTorch's "undefined" gradient), so the nodes below get no gradient."""

    def backward(self, grad):
        return (None,)


def _undefined_grad(t: Tensor) -> Tensor:
    """`t` again, with a node that turns its gradient into an undefined one."""
    out = Tensor._make(t._data)
    record(UndefinedGradBackward, out, t)
    return out


_UNDEFINED_WARNING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, "
    'you can call this function with "check_undefined_grad=False" to disable the feature')


def _check_undefined_output_grads(func, inputs: tuple) -> None:
    """Backward must accept undefined output gradients (all of them, and one at a
    time when there are several) and give undefined or zero input gradients."""
    diff_inputs = _inputs_requiring_grad(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    outputs = _differentiable_outputs(func(*inputs))
    checks = [[_undefined_grad(o) for o in outputs if isinstance(o, Tensor)]]
    if len(checks[0]) > 1:
        for undefined in range(len(outputs)):
            again = _differentiable_outputs(func(*inputs))
            checks.append([_undefined_grad(o) if k == undefined else o
                           for k, o in enumerate(again)])
    for outs in checks:
        zeros = [namespace().zeros_like(o) for o in outs]
        try:
            grads = autograd_grad(outs, diff_inputs, zeros, allow_unused=True)
        except RuntimeError as e:
            warnings.warn(_UNDEFINED_WARNING, stacklevel=2)
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        if any(g is not None and not _all_zero(g) for g in grads):
            warnings.warn(_UNDEFINED_WARNING, stacklevel=2)
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are "
                'undefined or zero. Please look at "Notes about undefined output gradients" '
                'in "tools/autograd/derivatives.yaml"')

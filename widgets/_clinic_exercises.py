"""Exercises of lesson 10, the error clinic (names start with ``l10_``).

As in `_exercise_bank`, every expected answer is computed by running the scenario with
minigrad, and coding exercises run the learner's function and describe what is wrong.
"""

from __future__ import annotations

import math

import numpy as np

from ._exercise_kit import (
    EXERCISES,
    _choice,
    _code,
    _reference,
    _value,
    node_name,
    raised,
    reference_result,
)


def _mg():
    import minigrad

    return minigrad


def _values(t) -> list[float]:
    return np.asarray(t.detach().numpy(), np.float64).tolist()


# -- case 1: an optimizer step between graph and backward (the GAN pattern) --------------------


def _gan(torch, bias: bool = True):
    torch.manual_seed(0)
    disc, gen = torch.nn.Linear(2, 1, bias=bias), torch.nn.Linear(1, 2)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    fake = gen(torch.ones(4, 1))
    score = disc(fake)
    (score ** 2).mean().backward(retain_graph=True)
    opt_d.step()
    return (-score).mean(), disc


@_value("l10_gan_failing_node",
        "the node at which loss_g.backward() stops after opt_d.step(), when the "
        "discriminator is nn.Linear(2, 1, bias=False)",
        hint="Run explain(loss_g) or step through it: which node saved the discriminator's "
             "weight?",
        explain="Without a bias, Linear is a plain matrix product, MmBackward0, which saved "
                "the weight to compute the gradient for its input; the optimizer step "
                "changed that weight in place.")
def _l10_gan_failing_node():
    torch = _mg()
    loss_g, _ = _gan(torch, bias=False)
    error = raised(loss_g.backward)
    assert error is not None and "modified by an inplace operation" in error
    disc_node = loss_g.grad_fn.next_functions[0][0].next_functions[0][0]
    return node_name(disc_node)


_choice("l10_why_gan",
        "After opt_d.step(), loss_g.backward() fails although loss_g was built before the "
        "step. Why?",
        [("a", "step() changed the discriminator's weight in place (its version went up), and "
               "AddmmBackward0 had saved that weight to compute the gradient for its input.",
          ""),
         ("b", "step() frees the buffers of every graph the parameters belong to.",
          "Only backward frees buffers, and only those of the graph it ran through; step() "
          "writes new values into the parameters and nothing else."),
         ("c", "The first backward already used the discriminator's part of the graph.",
          "It kept it: retain_graph=True. Without the step, the second backward would run."),
         ("d", "zero_grad() was not called between the two backward passes.",
          "Missing zero_grad() makes gradients add up (a silent mistake), it never raises.")],
        correct="a",
        explain="The version check is what fails: the message shows the weight as the "
                "transposed [2, 1] tensor Linear multiplied by, and a version that has moved "
                "on since it was saved.")


# -- case 2: ReLU(inplace=True) or += after an op that saved its output ------------------------


@_value("l10_predict_inplace_relu",
        "h = x.sigmoid(); out = nn.ReLU(inplace=True)(h): does out.sum().backward() raise?",
        hint="What does sigmoid keep for its backward formula, its input or its output? And "
             "what does an in-place ReLU write into?",
        explain="SigmoidBackward0 saved its output h; the in-place ReLU wrote into h, so the "
                "saved value is stale and backward refuses.")
def _l10_predict_inplace_relu():
    torch = _mg()
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    out = torch.nn.ReLU(inplace=True)(x.sigmoid())
    return raised(out.sum().backward) is not None


@_code("l10_relu_out_of_place",
       "block(torch, x): sigmoid, then ReLU, so that backward works",
       hint="sigmoid saves its result; use torch.nn.ReLU() (not inplace=True) or "
            "torch.relu(h), which make a new tensor.",
       explain="The out-of-place ReLU leaves sigmoid's saved result at its version.")
def _l10_relu_out_of_place(fn):
    torch = _mg()
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    out = fn(torch, x)
    if out is None or not hasattr(out, "grad_fn"):
        return "return the block's output tensor."
    # sigmoid is never negative, so ReLU changes no value here: look for it in the graph
    names, stack, seen = set(), [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            names.add(type(node).__name__)
            stack.extend(n for n, _ in node.next_functions)
    if "SigmoidBackward0" not in names:
        return "the block has no sigmoid: apply x.sigmoid() (or torch.sigmoid(x)) first."
    if not names & {"ReluBackward0", "ClampBackward1", "ClampMinBackward0",
                    "ThresholdBackward0", "MaximumBackward0"}:
        return ("the block has no ReLU after the sigmoid: apply torch.relu or nn.ReLU() to "
                "its result (out of place).")
    want = np.maximum(1 / (1 + np.exp(-np.array([-1.0, 0.5, 2.0]))), 0)
    if not np.allclose(_values(out), want, rtol=1e-5):
        return f"the output is {_values(out)}, expected relu(sigmoid(x)) = {want.tolist()}."
    error = raised(out.sum().backward)
    if error is not None:
        return f"backward failed: {error}"
    s = want
    if not np.allclose(_values(x.grad), s * (1 - s), rtol=1e-5):
        return f"x.grad is {_values(x.grad)}, expected sigmoid'(x) = {(s * (1 - s)).tolist()}."
    return None


# -- case 3: a leaf that requires grad used in an in-place operation ---------------------------


def _leaf_inplace_raises() -> set[str]:
    torch = _mg()
    raising = set()

    def try_(key, fn):
        if raised(fn) is not None:
            raising.add(key)

    w = torch.ones(2, requires_grad=True)
    try_("a", lambda: w.add_(1))

    def under_no_grad():
        with torch.no_grad():
            w.add_(1)

    try_("b", under_no_grad)
    try_("c", lambda: w.data.add_(1))
    try_("d", lambda: w + 1)
    try_("e", lambda: w[0].mul_(2))
    return raising


@_value("l10_leaf_inplace",
        "which of a) w.add_(1) b) with no_grad(): w.add_(1) c) w.data.add_(1) d) w + 1 "
        "e) w[0].mul_(2) raise, for a leaf w that requires grad",
        hint="Autograd refuses to record an in-place change of a leaf (or a view of one); "
             "under no_grad nothing is recorded, .data is outside autograd.",
        explain="a and e would be recorded on the leaf itself; b is the optimizer's way "
                "(no_grad), c hides the change from autograd, d makes a new tensor.")
def _l10_leaf_inplace():
    return _leaf_inplace_raises()


# -- case 4: element 0 of tensors does not require grad ----------------------------------------


@_value("l10_what_has_a_graph",
        "which of a) (w * 2).sum() b) w.argmax() c) (w > 0).sum() d) w.detach().sum() "
        "e) (w * 2).sum() computed under no_grad() have a grad_fn, for w requiring grad",
        hint="Only differentiable ops on tensors that require grad, with grad mode on, "
             "record a node.",
        explain="Only a: argmax and comparisons give integer/bool results with no "
                "gradient, detach() leaves the graph, no_grad() records nothing.")
def _l10_what_has_a_graph():
    torch = _mg()
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    with torch.no_grad():
        e = (w * 2).sum()
    candidates = {"a": (w * 2).sum(), "b": w.argmax(), "c": (w > 0).sum(),
                  "d": w.detach().sum(), "e": e}
    return {k for k, t in candidates.items() if t.grad_fn is not None}


# -- case 5: backward through the graph a second time in an RNN-style loop ---------------------


def reference_rnn(torch, w, xs):
    h = torch.zeros(1, 2)
    losses = []
    for x in xs:
        h = (h.detach() @ w + x).tanh()
        loss = (h ** 2).sum()
        loss.backward()
        losses.append(loss.item())
    return losses


def _rnn_inputs(torch):
    w = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
    xs = [torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]]), torch.tensor([[0.5, 0.5]])]
    return w, xs


@_reference("l10_rnn_detach", [()], {"losses": (1e-5, 1e-8), "w.grad": (1e-5, 1e-8)})
def _l10_rnn_detach_reference() -> dict:
    torch = _mg()
    w, xs = _rnn_inputs(torch)
    return {"losses": reference_rnn(torch, w, xs), "w.grad": _values(w.grad)}


@_code("l10_rnn_detach",
       "run(torch, w, xs): h = tanh(h @ w + x) over xs, one backward per step of "
       "(h ** 2).sum(); return the losses as floats",
       hint="Carry h across steps, but cut it from the previous step's graph at the start "
            "of each step: h.detach().",
       explain="Each step's graph now starts at a detached h: backward never reaches the "
               "previous step's freed buffers (truncated backpropagation through time).")
def _l10_rnn_detach(fn):
    torch = _mg()
    w, xs = _rnn_inputs(torch)
    try:
        got = fn(torch, w, xs)
    except RuntimeError as error:
        if "second time" in str(error):
            return "the second step went back through the first step's freed graph."
        raise
    want = reference_result("l10_rnn_detach", 0)
    if not isinstance(got, list) or len(got) != len(xs) or any(type(v) is not float for v in got):
        return f"return one Python float per step ({len(xs)} here), got {got!r}."
    if not want["losses"].close(got):
        return f"the losses are {got}, expected {want['losses']}."
    if w.grad is None or not want["w.grad"].close(_values(w.grad)):
        return "w.grad differs from one backward per step through that step's graph only."
    return None


# -- case 6: .grad is None ---------------------------------------------------------------------


@_value("l10_grad_none",
        "after backward, which of a = leaf, b = leaf.double(), c = a * 2, d = a re-created "
        "after the loss was built have .grad None",
        hint="Only leaves that the loss was computed from get a .grad.",
        explain="b and c are non-leaf results; d is a new leaf the loss never used; only a "
                "gets its gradient.")
def _l10_grad_none():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.double()
    c = a * 2
    loss = (b.sum() + (c * c).sum())
    d = torch.tensor([1.0, 2.0], requires_grad=True)
    loss.backward()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {k for k, t in {"a": a, "b": b, "c": c, "d": d}.items() if t.grad is None}


# -- case 7: numpy() on a tensor that requires grad --------------------------------------------


@_code("l10_to_numpy",
       "as_array(t): the values of t as a numpy array, for a t that requires grad",
       hint="Leave the graph explicitly first: t.detach().numpy().",
       explain="detach() says you no longer need the graph; numpy() then shares memory "
               "with no autograd involved.")
def _l10_to_numpy(fn):
    torch = _mg()
    # A second tensor of another shape and dtype: an answer fitted to the first (a fixed
    # list, a flattening reshape, a float32 copy) fails it.
    for t in (torch.tensor([1.0, 2.0], requires_grad=True) * 3,
              torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64,
                           requires_grad=True).exp()):
        want = t.detach().clone().numpy()
        with _counting_data(torch) as through_data:
            got = fn(t)
        if through_data:
            return ("you went through .data, which the clinic says never to use (it hides "
                    "changes from the version counter): leave the graph with detach().")
        if not isinstance(got, np.ndarray):
            return f"return a numpy array, got {type(got).__name__}."
        if got.shape != want.shape or got.dtype != want.dtype:
            return (f"for a {want.dtype} tensor of shape {list(want.shape)} you returned a "
                    f"{got.dtype} array of shape {list(got.shape)}: keep t's shape and dtype.")
        if not np.allclose(got, want):
            return f"the values are {got.tolist()}, expected {want.tolist()}."
    return None


def _counting_data(torch):
    from ._exercise_bank import calls_of

    return calls_of(torch.Tensor, "data")


# -- case 8: a silent wrong gradient through .data ---------------------------------------------


@_value("l10_data_silent_grad",
        "a = [0, 1]; y = a.exp(); y.data.add_(1); y.sum().backward(): a.grad",
        hint="exp's backward multiplies by its saved result, which .data changed unseen.",
        explain="exp(a) + 1 instead of exp(a), and no error: the version counter of y never "
                "saw the change.")
def _l10_data_silent_grad():
    torch = _mg()
    a = torch.tensor([0.0, 1.0], requires_grad=True)
    y = a.exp()
    y.data.add_(1)
    y.sum().backward()
    return _values(a.grad)


# -- case 9: non-scalar outputs and backward(gradient=v) ---------------------------------------


@_value("l10_vjp",
        "x = [1, 2, 3]; y = x * x; y.backward(gradient=[2, -1, 0.5]): x.grad",
        hint="backward(gradient=v) computes v^T J, the gradient of (y * v).sum().",
        explain="2x weighted by v: one vector-Jacobian product, not the Jacobian.")
def _l10_vjp():
    torch = _mg()
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(gradient=torch.tensor([2.0, -1.0, 0.5]))
    return _values(x.grad)


@_value("l10_transfer_vjp_exp",
        "x = [0, 1]; y = x.exp(); y.backward(gradient=[2, 0]): x.grad",
        hint="The gradient of (y * v).sum(): each element of v weights the derivative of its "
             "own y, here exp(x).",
        explain="v * exp(x) = [2 * e**0, 0 * e**1] = [2, 0]: the 0 in v switches the second "
                "element off entirely.")
def _l10_transfer_vjp_exp():
    torch = _mg()
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    x.exp().backward(gradient=torch.tensor([2.0, 0.0]))
    return _values(x.grad)


# -- case 10: nan gradients from a finite forward pass -----------------------------------------


@_code("l10_safe_sqrt",
       "safe_sqrt(torch, x): sqrt(x) (within 0.01) for x >= 0 whose gradient is finite "
       "everywhere (and 1 / (2 sqrt(x)) within 1% where x > 0)",
       hint="Keep the input of sqrt away from 0 (clamp(min=...)) so its formula never "
            "divides by zero; a mask applied afterwards does not help (0 * inf is nan).",
       explain="The boundary is moved before the op, so no inf is ever made.")
def _l10_safe_sqrt(fn):
    torch = _mg()
    for values in ([0.0, 0.25, 4.0], [9.0, 0.0, 1.0, 0.0]):  # the second: new places of 0
        x = torch.tensor(values, requires_grad=True)
        out = fn(torch, x)
        if out is None or not hasattr(out, "grad_fn"):
            return "return the result tensor."
        if not np.allclose(_values(out), np.sqrt(values), rtol=1e-3, atol=0.01):
            return (f"for x = {values} the values are {_values(out)}, expected sqrt(x) "
                    f"within 0.01: {np.sqrt(values).tolist()}.")
        out.sum().backward()
        grad = _values(x.grad)
        if not all(math.isfinite(g) for g in grad):
            return f"for x = {values} x.grad is {grad}: still not finite at 0."
        away = [(g, 0.5 / math.sqrt(v)) for g, v in zip(grad, values) if v > 0]
        if not all(math.isclose(g, want, rel_tol=1e-2) for g, want in away):
            return (f"for x = {values} x.grad is {grad}; away from 0 it should be "
                    "1 / (2 sqrt(x)), within 1%.")
    return None


# -- case 11: frozen weights that still move ---------------------------------------------------


@_value("l10_stale_grad_moves",
        "w = [2, 2] with SGD(lr=0.5): w.sum().backward(); opt.step(); "
        "w.requires_grad_(False); opt.step(); opt.step(): w",
        hint="requires_grad_(False) stops new gradients, but w.grad from the last backward "
             "is still there, and step() uses it.",
        explain="Three steps with the same stale gradient: 2 - 3 * 0.5 = 0.5. Set "
                "w.grad = None (or zero_grad()) as well, or leave w out of the optimizer.")
def _l10_stale_grad_moves():
    torch = _mg()
    w = torch.tensor([2.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.5)
    w.sum().backward()
    opt.step()
    w.requires_grad_(False)
    opt.step()
    opt.step()
    return _values(w)


@_value("l10_frozen_eval_records",
        "model.eval(); model.requires_grad_(False); x = torch.ones(1, 2, "
        "requires_grad=True): does model(x) have a grad_fn?",
        hint="A result is recorded when grad mode is on and some input requires grad. Is "
             "either condition changed by eval() or by freezing the parameters?",
        explain="Yes: x requires grad, so the output is recorded (AddmmBackward0) even with "
                "every parameter frozen and the model in eval mode; only torch.no_grad() "
                "(or inference_mode) stops recording.")
def _l10_frozen_eval_records():
    torch = _mg()
    model = torch.nn.Linear(2, 1)
    model.eval()
    model.requires_grad_(False)
    return model(torch.ones(1, 2, requires_grad=True)).grad_fn is not None


# -- case 12: ops without a useful gradient ----------------------------------------------------


@_value("l10_threshold_grad",
        "x = [-2, 0.5, 3]; loss = (x * x * (x > 1)).sum(); loss.backward(): x.grad",
        hint="The comparison is a constant mask as far as autograd is concerned: no gradient "
             "flows through it, only through the multiplication by x.",
        explain="The mask passes the gradient where it is 1; how the threshold moves is "
                "invisible to autograd.")
def _l10_threshold_grad():
    torch = _mg()
    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    (x * x * (x > 1)).sum().backward()
    return _values(x.grad)


CLINIC_EXERCISES = tuple(name for name in EXERCISES if name.startswith("l10_"))

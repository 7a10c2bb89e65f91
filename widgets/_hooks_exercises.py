"""Exercises of lesson 12, what backward keeps (names start with ``l12_``).

As in `_exercise_bank`, every expected answer is computed by running the scenario with
minigrad, and coding exercises run the learner's hooks on fresh graphs and say what is
wrong.
"""

from __future__ import annotations

import numpy as np

from ._exercise_kit import _choice, _code, _value, raised


def _mg():
    import minigrad

    return minigrad


def _packed_count(build) -> int:
    """How often a pack hook is called while `build(torch)` runs."""
    torch = _mg()
    calls = []

    def pack(tensor):
        calls.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        build(torch)
    return len(calls)


def _values(tensor) -> np.ndarray:
    return np.asarray(tensor.detach().numpy(), np.float64)


@_value("l12_pack_count",
        "how many times the pack hook is called for loss = (a.sin() * a.exp() * 3.0).sum()",
        hint="Go op by op with the table of lesson 4: sin keeps its input, exp its output, "
             "a * b both factors (when both need a gradient), and a Python number is "
             "saved without being packed.",
        explain="sin packs a, the first * packs both factors, exp packs its result: four. "
                "The 3.0 is saved as a number, which no hook sees, and the second * needs "
                "no other factor because 3.0 wants no gradient.")
def _l12_pack_count():
    def build(torch):
        a = torch.tensor([0.5, 1.0], requires_grad=True)
        return (a.sin() * a.exp() * 3.0).sum()

    return _packed_count(build)


def block(torch, x, weights):
    """The lesson's stack of `tanh(x @ w)` layers (what checkpointing recomputes)."""
    for w in weights:
        x = (x @ w).tanh()
    return x


def _mlp_inputs(torch, layers: int):
    gen = np.random.default_rng(0)
    x = torch.tensor(gen.standard_normal((32, 16)).tolist(), requires_grad=True)
    weights = [torch.tensor((gen.standard_normal((16, 16)) / 4).tolist(), requires_grad=True)
               for _ in range(layers)]
    return x, weights


@_value("l12_checkpoint_saved",
        "how many tensors the counting hook sees for loss = (checkpoint(block, x, *weights, "
        "use_reentrant=False) ** 2).mean() with six layers and a batch of 32",
        hint="Inside the checkpointed function, checkpoint's own hooks take every saved "
             "tensor (the innermost hooks win). Yours see what checkpoint keeps to run the "
             "function again, its inputs, and what is saved outside it.",
        explain="checkpoint keeps its inputs, x and the six weights (through your hooks), "
                "and `** 2` keeps its input, the block's output: eight, whatever the batch. "
                "The layers' results are not kept; backward recomputes them.")
def _l12_checkpoint_saved():
    def build(torch):
        x, weights = _mlp_inputs(torch, layers=6)
        out = torch.utils.checkpoint.checkpoint(lambda x, *ws: block(torch, x, ws), x,
                                                *weights, use_reentrant=False)
        return (out ** 2).mean()

    return _packed_count(build)


_choice("l12_why_no_version_check",
        "Why does PyTorch not version-check a saved tensor that saved-tensor hooks packed?",
        [("a", "The unpack hook decides what comes back (a copy from a store, a tensor "
               "moved back from another device): a new tensor whose version says nothing "
               "about the one that was saved.", ""),
         ("b", "Hooked tensors cannot be modified in place.",
          "They can: with pass-through hooks, y.add_(1) changed the very tensor backward "
          "then used."),
         ("c", "The pack hook copies every tensor, so the saved values never change.",
          "Only if your hook copies. Pass-through hooks keep the tensor itself, and the "
          "gradient came out wrong."),
         ("d", "It is a minigrad shortcut; PyTorch raises the usual error.",
          "PyTorch 2.13 gave the same silently wrong gradient side by side above.")],
        correct="a",
        explain="The version belongs to the tensor that was saved; what unpack returns may "
                "be another tensor entirely, so the hooks have to take care of it.")


def _hooked_grads(torch, hooks, build):
    """x.grad of `build(x)` under `hooks`, and the plain x.grad (None: hooks raised)."""
    grads = []
    for use_hooks in (True, False):
        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        if use_hooks:
            with torch.autograd.graph.saved_tensors_hooks(*hooks):
                loss = build(x)
        else:
            loss = build(x)
        loss.backward()
        grads.append(x.grad)
    return grads


def _as_hooks(result) -> str | None:
    if not (isinstance(result, tuple) and len(result) == 2 and all(map(callable, result))):
        return f"return a pair (pack, unpack) of functions, not {result!r}."
    return None


def _input_changed(x):
    u = x * 1
    loss = u.sin().sum()
    u.mul_(2)
    return loss


_CHANGED_AFTER_SAVING = {
    "y = x.exp(); y.add_(1) (a saved output)": lambda x: x.exp().add_(1).sum(),
    "u = x * 1; loss = u.sin().sum(); u.mul_(2) (a saved input)": _input_changed,
}


@_code("l12_version_checked_hooks",
       "version_checked_hooks(): saved-tensor hooks that raise RuntimeError at backward "
       "when a saved tensor was modified in place after it was saved",
       hint="pack: return (tensor, tensor._version). unpack: compare the tensor's _version "
            "now with the one packed; raise RuntimeError when they differ, else return it.",
       explain="With hooks the check is yours to make: the version counter is still there, "
               "PyTorch just does not look at it for a hooked tensor.")
def _l12_version_checked_hooks(fn):
    torch = _mg()
    hooks = fn()
    problem = _as_hooks(hooks)
    if problem:
        return problem
    got, plain = _hooked_grads(torch, hooks, lambda x: (x.exp() * x).sum())
    if not np.allclose(_values(got), _values(plain), rtol=1e-5):
        return (f"with nothing modified, x.grad is {got} with your hooks and {plain} "
                "without.")
    for case, build in _CHANGED_AFTER_SAVING.items():
        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(*hooks):
            loss = build(x)
        error = raised(loss.backward)
        if error is None:
            return f"after {case}, backward ran: your unpack hook must notice the change."
        if not error.startswith("RuntimeError"):
            return f"after {case}, raise RuntimeError, not {error}"
    return None


@_value("l12_post_accumulate_sees",
        "w = tensor([1., -1.], requires_grad=True); w.register_hook(lambda g: g * 2); a "
        "post-accumulate hook records p.grad.tolist(); (3 * w).sum().backward() twice, "
        ".grad never zeroed: what does the hook record the second time?",
        hint="The tensor hook changes the gradient before it reaches .grad; the "
             "post-accumulate hook runs after the addition into .grad.",
        explain="Each backward brings 3 * 2 = 6 per entry (the tensor hook ran first), and "
                "the second is added to the first: the hook sees 12.")
def _l12_post_accumulate_sees():
    torch = _mg()
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    w.register_hook(lambda g: g * 2)
    recorded = []
    w.register_post_accumulate_grad_hook(lambda p: recorded.append(p.grad.tolist()))
    for _ in range(2):
        (3 * w).sum().backward()
    return recorded[-1]


def _sgd_reference(torch, values, lr, steps):
    """The parameters after `steps` plain SGD steps on loss(params), step() after
    backward, `.grad` zeroed each time."""
    params = [torch.tensor(v, requires_grad=True) for v in values]
    for _ in range(steps):
        _loss(params).backward()
        with torch.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                p.grad = None
    return params


def _loss(params):
    w, b = params
    return ((w * w).sum() * b * b).sum() + (w * b).sum()


@_code("l12_sgd_in_backward",
       "sgd_in_backward(params, lr): register hooks so that every backward through the "
       "params takes a plain SGD step (p <- p - lr * p.grad) on each of them, inside "
       "backward, and leaves no gradient behind",
       hint="One post-accumulate-grad hook per parameter. In it: update p in place without "
            "recording a graph, then free its gradient.",
       explain="The step runs as each gradient is ready and each .grad is dropped at once: "
               "at most one parameter's gradient lives at a time, and the result is the "
               "usual loop's.")
def _l12_sgd_in_backward(fn):
    torch = _mg()
    values, lr = [[1.0, -2.0, 0.5], [0.25]], 0.05
    params = [torch.tensor(v, requires_grad=True) for v in values]
    fn(params, lr)
    for step in range(1, 3):
        _loss(params).backward()
        left = [i for i, p in enumerate(params) if p.grad is not None]
        if left:
            return (f"after backward number {step}, params[{left[0]}].grad is "
                    f"{params[left[0]].grad}: free it in the hook (set it to None).")
        expected = _sgd_reference(torch, values, lr, step)
        for p, e in zip(params, expected):
            if not np.allclose(_values(p), _values(e), rtol=1e-6):
                return (f"after {step} backward pass(es) a parameter is {p.detach()}, "
                        f"plain SGD gives {e.detach()}.")
    return None


@_value("l12_multi_grad_count",
        "a, b leaves; c = a * b; d = b * 2; register_multi_grad_hook((a, b, c, d), fn); "
        "c.sum().backward(inputs=[b]): how many of the gradients fn receives are not None?",
        hint="Which of the four does this backward reach, and which of those does it need "
             "to compute the gradient of b?",
        explain="d is not in c's graph, and a's gradient is not asked for: fn gets None for "
                "both. The pass computes c's gradient on its way to b's: two.")
def _l12_multi_grad_count():
    torch = _mg()
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    c = a * b
    d = b * 2
    got = []
    torch.autograd.graph.register_multi_grad_hook((a, b, c, d), got.append)
    c.sum().backward(inputs=[b])
    return sum(g is not None for g in got[0])

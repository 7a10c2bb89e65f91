"""The course's exercises: each answer is computed by running the scenario in minigrad.

Value exercises register a function returning the expected answer; coding exercises
register a function that runs the learner's code and returns a problem description
(or None when it behaves). Names start with the lesson: ``l3_...`` is lesson 3.
"""

from __future__ import annotations

import numpy as np

from ._exercise_kit import (
    _choice,
    _code,
    _reference,
    _value,
    next_names,
    node_name,
    raised,
    reference_result,
)


def _mg():
    import minigrad

    return minigrad


def _raises(fn) -> bool:
    return raised(fn) is not None


def backward_passes(fn, *args):
    """(fn(*args), how many backward passes it started meanwhile): a check that an
    answer used autograd, not a formula worked out by hand. The passes are counted at
    minigrad's public ways into the engine: `Tensor.backward`, `autograd.backward`
    and `autograd.grad`."""
    torch = _mg()
    started = []
    entries = [(torch.Tensor, "backward"), (torch.autograd, "backward"),
               (torch.autograd, "grad")]
    originals = [getattr(owner, name) for owner, name in entries]

    def counting(original):
        def entry(*a, **k):
            started.append(original)
            return original(*a, **k)
        return entry

    for (owner, name), original in zip(entries, originals):
        setattr(owner, name, counting(original))
    try:
        result = fn(*args)
    finally:
        for (owner, name), original in zip(entries, originals):
            setattr(owner, name, original)
    return result, len(started)


def calls_of(cls, method: str):
    """A context manager counting calls of `cls.method` (a plain method or a property)
    while it is open; yields the list of the objects it was called on."""
    import contextlib

    @contextlib.contextmanager
    def counting():
        original = cls.__dict__[method]
        seen: list = []
        if isinstance(original, property):
            def getter(self):
                seen.append(self)
                return original.fget(self)

            wrapped = property(getter, original.fset, original.fdel, original.__doc__)
        else:
            def wrapped(self, *args, **kwargs):
                seen.append(self)
                return original(self, *args, **kwargs)

        setattr(cls, method, wrapped)
        try:
            yield seen
        finally:
            setattr(cls, method, original)

    return counting()


def _close(a, b) -> bool:
    a = np.asarray(a.detach().numpy() if hasattr(a, "detach") else a, np.float64)
    b = np.asarray(b.detach().numpy() if hasattr(b, "detach") else b, np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6)


# -- lesson 0: start here ---------------------------------------------------------------


@_value("l0_add_node", "type(c.grad_fn).__name__ for c = a + b",
        hint="Print type(c.grad_fn).__name__; the node is named after the op, plus "
             "'Backward' and a number.",
        explain="Each op records a node named <Op>Backward<N>; for + it is AddBackward0.")
def _l0_add_node():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    return node_name(a + b)


@_value("l0_is_leaf", "c.is_leaf for c = a + b",
        hint="A leaf is a tensor you created yourself, not the result of an op on "
             "tensors that require grad.",
        explain="c was produced by an op on tensors that require grad, so it is not a leaf.")
def _l0_is_leaf():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    return (a + b).is_leaf


@_code("l0_grad_of_square", "grad_of_square(values): d/dx of (x * x).sum() via autograd",
       hint="Make a tensor with requires_grad=True, build (x * x).sum(), call "
            ".backward() and return x.grad.",
       explain="autograd found 2 * x, exactly the derivative of x squared.")
def _l0_grad_of_square(fn):
    for values in ([1.0, 2.0, 3.0], [-0.5, 4.0]):
        got, passes = backward_passes(fn, values)
        if got is None:
            return "your function returned None; return x.grad."
        if not passes:
            return ("your function ran no backward pass: let autograd find the gradient "
                    "(call .backward() on (x * x).sum()).")
        if not _close(got, 2 * np.asarray(values)):
            return f"for {values} you returned {got}, expected twice the values."
    return None


@_value("l0_vjp", "a.grad after c = a * b; c.backward(gradient=[2, -1]) with a = [1, 2], "
        "b = [3, 4]",
        hint="backward(gradient=v) puts v @ J into a.grad; for c = a * b, J = diag(b), so "
             "a.grad = v * b.",
        explain="The vector-Jacobian product: each element's gradient is weighted by v.")
def _l0_vjp():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    (a * b).backward(gradient=torch.tensor([2.0, -1.0]))
    return a.grad


_choice("l0_why_accumulate",
        "You run the cell with loss.backward() a second time and a.grad doubles. Why?",
        [("a", "The second pass computed a wrong gradient.",
          "Both passes computed the same, right gradient; the second was added to the "
          "first."),
         ("b", "backward() adds into .grad; it never replaces it.", ""),
         ("c", ".grad keeps a running average of all passes.",
          "It is a plain sum: two passes with the same gradient give twice that gradient."),
         ("d", "Re-running a cell re-runs every cell before it.",
          "Only that cell runs again; the leaves keep what earlier passes put into .grad.")],
        correct="b",
        explain="Accumulation across backward calls is on purpose (several batches can add "
                "up before one step); clear .grad between passes unless you want the sum.")


# -- lesson 1: the backward graph -------------------------------------------------------


def _l1_ab():
    torch = _mg()
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0])
    return a, b, a * b


@_value("l1_next_functions",
        "next_names(c.grad_fn) for c = a * b, where only a requires grad",
        hint="One entry per input of the op, in order: a leaf that requires grad leads to "
             "its AccumulateGrad; an input that needs no gradient gives (None, 0).",
        explain="a's gradient goes to its AccumulateGrad; b needs none, so (None, 0).")
def _l1_next_functions():
    _, _, c = _l1_ab()
    return next_names(c.grad_fn)


@_value("l1_saved", "which tensor MulBackward0 keeps when only a requires grad: "
        "'a', 'b' or 'both'",
        hint="d(a*b)/da is b. Which value does the backward formula for a need? Look at "
             "c.grad_fn._saved_self and c.grad_fn._saved_other.",
        explain="Only b is saved: it is the factor in a's gradient, and b needs no gradient "
                "itself, so a is not needed.")
def _l1_saved():
    a, b, c = _l1_ab()
    keeps_a = c.grad_fn._saved_self is a
    keeps_b = c.grad_fn._saved_other is b
    return {(True, True): "both", (True, False): "a", (False, True): "b"}[(keeps_a, keeps_b)]


def _l1_long(torch):
    h = torch.tensor([1.0, 2.0], requires_grad=True)
    g = torch.tensor([3.0, 4.0], requires_grad=True)
    i = g / h
    j = i + h
    k = (j * i).sum()
    return h, g, i, j, k


@_value("l1_h_grad", "h.grad in the longer example (h feeds both / and +)",
        hint="Two streams reach h's AccumulateGrad: one from DivBackward0, one from "
             "AddBackward0. Compute both and add them (or run the cell and read h.grad).",
        explain="The two streams into h's AccumulateGrad were summed.")
def _l1_h_grad():
    h, _, _, _, k = _l1_long(_mg())
    k.backward()
    return h.grad


@_code("l1_count_leaves",
       "count_accumulate_grads(root): how many distinct AccumulateGrad nodes are below root",
       hint="Walk next_functions from root.grad_fn with a stack, skip None, remember the "
            "nodes you have seen (by id), count those named AccumulateGrad.",
       explain="Each leaf has exactly one AccumulateGrad, however many ops use it.")
def _l1_count_leaves(fn):
    torch = _mg()
    h, g, i, j, k = _l1_long(torch)
    x = torch.tensor([1.0], requires_grad=True)
    y = torch.tensor([2.0])
    cases = [(k, 2), ((x * y).sum(), 1), ((x * x * x).sum(), 1), ((h + g + x).sum(), 3)]
    for root, want in cases:
        got = fn(root)
        if got != want:
            return f"for a graph with {want} leaf tensor(s) you returned {got!r}."
    return None


@_value("l1_transfer_h_grad",
        "h.grad for the same k = ((g / h + h) * (g / h)).sum() with h = [2, 1], g = [4, 3]",
        hint="dk/dh = i (through +) + (2i + h) * (-g / h**2) (through /), with i = g / h.",
        explain="Same graph, new values: both streams are still summed before h's "
                "AccumulateGrad runs.")
def _l1_transfer_h_grad():
    torch = _mg()
    h = torch.tensor([2.0, 1.0], requires_grad=True)
    g = torch.tensor([4.0, 3.0], requires_grad=True)
    i = g / h
    ((i + h) * i).sum().backward()
    return h.grad


_choice("l1_why_once",
        "Two gradient streams reach h's AccumulateGrad. Why does the node run only once?",
        [("a", "The engine adds the streams in the node's input buffer and runs the node "
               "when its dependency count says every stream has arrived.", ""),
         ("b", "A leaf keeps only the first gradient that reaches it; the second is dropped.",
          "Nothing is dropped: h.grad = -18 is -21 (through /) plus 3 (through +)."),
         ("c", "AccumulateGrad runs once per stream; the stepper just draws the two runs "
               "as one.",
          "The stepper shows the engine's real steps, and a pre-hook on the node fires "
          "once, with the already summed gradient [[-18, -4]]."),
         ("d", "Leaves are visited once because their nodes have the smallest sequence "
               "numbers.",
          "The order of the ready queue decides *when* a node runs, not how often; the "
          "engine counts the edges into a node and waits for all of them.")],
        correct="a",
        explain="One input buffer per node, one run per node: the sum happens before the "
                "node sees anything.")

@_value("l1_broadcast_shapes",
        "[a.grad.shape, b.grad.shape] as tuples after (a + b).sum().backward() with a of "
        "shape (3, 1) and b of shape (4,)",
        hint="A gradient always has the shape of its tensor: the (3, 4) gradient of a + b is "
             "summed back over the dimensions that broadcasting stretched.",
        explain="AddBackward0 hands on a (3, 4) gradient; the engine sums it to (3, 1) for a "
                "and to (4,) for b.")
def _l1_broadcast_shapes():
    torch = _mg()
    a = torch.ones(3, 1, requires_grad=True)
    b = torch.ones(4, requires_grad=True)
    (a + b).sum().backward()
    return [tuple(a.grad.shape), tuple(b.grad.shape)]


@_value("l1_broadcast_transfer",
        "[a.grad, b.grad] after (a * b).sum().backward() with a = [[1], [2], [3]] and "
        "b = [1, 2, 3, 4]",
        hint="Each a[i] multiplies every b[j]: its gradient is the sum of b. Each b[j] "
             "meets every a[i]: its gradient is the sum of a.",
        explain="Each input gets the (3, 4) gradient summed back to its shape: every a[i] "
                "the sum of b, every b[j] the sum of a.")
def _l1_broadcast_transfer():
    torch = _mg()
    a = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    b = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    (a * b).sum().backward()
    return [a.grad, b.grad]


# -- lesson 2: reassignment is not in-place --------------------------------------------


def _l2_abc(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0], requires_grad=True)
    return a, b, c


@_value("l2_c_grad", "c.grad after x = a * b; x = x * c; x.sum().backward()",
        hint="d(a*b*c)/dc = a*b; autograd kept the a*b tensor alive as a saved input.",
        explain="c's gradient is the old value of x (a * b), which autograd kept.")
def _l2_c_grad():
    a, b, c = _l2_abc(_mg())
    x = a * b
    x = x * c
    x.sum().backward()
    return c.grad


@_value("l2_x1_grad", "x1.grad after x2.sum().backward() (no retain_grad)",
        hint="x1 is not a leaf. Without retain_grad(), is its gradient stored?",
        explain="Non-leaf tensors do not keep .grad unless you ask with retain_grad().")
def _l2_x1_grad():
    import warnings

    a, b, c = _l2_abc(_mg())
    x1 = a * b
    x2 = x1 * c
    x2.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x1.grad


@_value("l2_mul_inplace_raises",
        "does x = a * b; x.mul_(c); x.sum().backward() raise?",
        hint="Which tensors did the first MulBackward0 save: its inputs a and b, or its "
             "output x? Only a saved tensor that changed can trip the check.",
        explain="a * b saved its inputs, not its output, so changing x in place is safe.")
def _l2_mul_inplace_raises():
    a, b, c = _l2_abc(_mg())
    x = a * b
    x.mul_(c)
    return _raises(lambda: x.sum().backward())


@_value("l2_inplace_saved_self",
        "x = a * b; x.mul_(c): what does x.grad_fn._saved_self.tolist() give?",
        hint="The in-place node needs the value x had *before* the multiplication (the "
             "factor in c's gradient), so it keeps a copy of it.",
        explain="The in-place MulBackward0 kept a copy of x's old values (a * b); x itself "
                "now holds a * b * c.")
def _l2_inplace_saved_self():
    a, b, c = _l2_abc(_mg())
    x = a * b
    x.mul_(c)
    return x.grad_fn._saved_self.tolist()


@_code("l2_keep_intermediate",
       "grads_with_intermediate(a, b, c): return (a.grad, x1.grad) for x1 = a*b, "
       "x2 = x1*c, loss = (x2 ** 2).sum()",
       hint="Call x1.retain_grad() before loss.backward(), and return x1.grad itself.",
       explain="retain_grad() asked autograd to store the gradient arriving at x1.")
def _l2_keep_intermediate(fn):
    torch = _mg()
    for values in ([1.0, 2.0], [-0.5, 3.0]):  # the lesson's a, then a new one
        problem = _l2_keep_intermediate_once(torch, fn, values)
        if problem:
            return problem
    return None


def _l2_keep_intermediate_once(torch, fn, a_values):
    a, b, c = _l2_abc(torch)
    a = torch.tensor(a_values, requires_grad=True)
    with calls_of(type(a), "retain_grad") as retained:
        got = fn(a, b, c)
    if not isinstance(got, tuple) or len(got) != 2:
        return "return a tuple (a.grad, x1.grad)."
    ga, gx1 = got
    if ga is None or gx1 is None:
        return "one of the gradients is None; did you call retain_grad() before backward()?"
    if gx1 is c or getattr(gx1, "requires_grad", False):
        return "the second value is not a gradient: return x1.grad after backward()."
    if not any(t.grad is gx1 for t in retained):
        return ("the second value is not the .grad of a tensor you called retain_grad() "
                "on: call x1.retain_grad() before backward() and return x1.grad.")
    av, bv, cv = (t.detach().numpy().astype(np.float64) for t in (a, b, c))
    if not _close(ga, 2 * av * bv * bv * cv * cv):
        return f"a.grad is {ga}, expected 2 * a * b**2 * c**2 (from the loss (x2 ** 2).sum())."
    if not _close(gx1, 2 * av * bv * cv * cv):
        return f"x1.grad is {gx1}, expected 2 * x2 * c (d(x2 ** 2).sum()/dx1)."
    return None


@_value("l2_transfer_b_grad",
        "b.grad after x = a * b; x = x + c; x = x * a; x.sum().backward() "
        "(a = [1, 2], b = [3, 4], c = [5, 6])",
        hint="x = (a * b + c) * a, so dx/db = a * a.",
        explain="Every reassignment made a new node; the graph still reaches b through "
                "the first x.")
def _l2_transfer_b_grad():
    a, b, c = _l2_abc(_mg())
    x = a * b
    x = x + c
    x = x * a
    x.sum().backward()
    return b.grad


_choice("l2_why_copy",
        "x = a * b; x.mul_(c). Why does the in-place MulBackward0 keep a copy of x's old "
        "values instead of x itself?",
        [("a", "x itself now holds a * b * c, but c's gradient needs the values x had "
               "before the multiplication, a * b.", ""),
         ("b", "Keeping x itself would make a reference cycle.",
          "The copy is about values, not memory management: after mul_, x holds a * b * c."),
         ("c", "Because x is a leaf.",
          "x = a * b has a grad_fn, so it is not a leaf; an in-place op on a leaf that "
          "requires grad would be refused outright."),
         ("d", "It does keep x itself, and that is why backward fails.",
          "Backward does not fail here (exercise 2.3): _saved_self holds [3, 8] while x "
          "holds [15, 48].")],
        correct="a",
        explain="The values needed for c's gradient would be overwritten, so they are kept "
                "aside before the write.")

# -- lesson 3: retain_graph and freed buffers ---------------------------------------------


def _l3_setup(torch):
    x = torch.tensor([1.0, 0.0], dtype=torch.float64)
    t = torch.eye(2, dtype=torch.float64, requires_grad=True)
    a = torch.ones(2, dtype=torch.float64, requires_grad=True)
    return x, t, a


@_value("l3_failing_iteration",
        "the loop that reuses y = t @ a, with loss.backward() called in the even "
        "iterations only (every iteration builds its loss): which iteration raises?",
        hint="Building a loss on top of y reads only y's values; what needs y's saved "
             "tensors is a backward through MvBackward0.",
        explain="Iteration 0's backward frees y's saved tensors; iteration 1 only builds a "
                "loss, which needs y's values, not its buffers; the next backward, in "
                "iteration 2, needs them and fails.")
def _l3_failing_iteration():
    torch = _mg()
    x, t, a = _l3_setup(torch)
    y = t @ a
    for i in range(6):
        loss = ((t @ (x + y) - x) ** 2).mean()
        if i % 2 == 0 and _raises(loss.backward):
            return i
    return None


@_value("l3_add_twice", "does y = (a + 1).sum(); y.backward(); y.backward() raise?",
        hint="Print the saves of AddBackward0 and SumBackward0: is any tensor saved?",
        explain="Neither node saves a tensor, so there is nothing to free: the graph can be "
                "run again (a.grad then holds 2).")
def _l3_add_twice():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (a + 1).sum()
    y.backward()
    return _raises(y.backward)


@_value("l3_mul_twice", "does y = (a * 2).sum(); y.backward(); y.backward() raise?",
        hint="MulBackward0 keeps the number 2 as a saved (wrapped) tensor.",
        explain="The saved factor 2 is released by the first backward, so the second fails.")
def _l3_mul_twice():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (a * 2).sum()
    y.backward()
    return _raises(y.backward)


L3_FREED_CHOICES = ("y.tolist()", "y.grad_fn.next_functions", "y.grad_fn._saved_self")


@_value("l3_what_is_freed",
        "after y = t @ a; loss = (y * y).sum(); loss.backward(), which of "
        f"{', '.join(L3_FREED_CHOICES)} raises?",
        hint="backward frees the buffers inside the nodes. The tensors you hold and the "
             "links between nodes stay.",
        explain="Only the saved tensors are released: y keeps its values and the graph keeps "
                "its structure.")
def _l3_what_is_freed():
    torch = _mg()
    t = torch.eye(2, requires_grad=True)
    a = torch.ones(2, requires_grad=True)
    y = t @ a
    (y * y).sum().backward()
    attempts = {
        "y.tolist()": lambda: y.tolist(),
        "y.grad_fn.next_functions": lambda: y.grad_fn.next_functions,
        "y.grad_fn._saved_self": lambda: y.grad_fn._saved_self,
    }
    failing = [expr for expr in L3_FREED_CHOICES if _raises(attempts[expr])]
    return failing[0] if len(failing) == 1 else failing


def reference_l3_train(w, xs, lr):
    """The loop of exercise 3.7, fixed: s = w.exp() recorded in every step."""
    torch = _mg()
    losses = []
    for x in xs:
        s = w.exp()
        loss = ((s * x).sum() - 1) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


# Two runs: the one the lesson shows, and one with other sizes, values and step size,
# so that an answer fitted to the first (a fixed lr, a fixed count) fails the second.
_L3_TRAIN_CASES = (
    ([0.1, -0.2], [[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], 0.1),
    ([0.3, 0.0, -0.5], [[1.0, -1.0, 0.5], [0.2, 0.4, 1.0], [1.5, 0.0, -0.5],
                        [0.0, 1.0, 1.0]], 0.05),
)


@_reference("l3_fix_loop", _L3_TRAIN_CASES, {"losses": (1e-5, 1e-7), "w": (1e-5, 1e-6)})
def _l3_fix_loop_reference(w_values, rows, lr) -> dict:
    torch = _mg()
    w = torch.tensor(w_values, requires_grad=True)
    losses = reference_l3_train(w, torch.tensor(rows), lr)
    return {"losses": losses, "w": w.detach().numpy().tolist()}


@_code("l3_fix_loop",
       "train(w, xs, lr): one SGD step per row x of xs on ((w.exp() * x).sum() - 1) ** 2, "
       "without the error of a hoisted s = w.exp(); return the losses as floats",
       hint="s = w.exp() is part of the graph: record it inside the loop, from the current "
            "w. retain_graph=True would silence the error but keep the first w's values.",
       explain="Every step records s from the current w, so it has fresh buffers and the "
               "losses follow the updates.")
def _l3_fix_loop(fn):
    torch = _mg()
    for case, (w_values, rows, lr) in enumerate(_L3_TRAIN_CASES):
        w = torch.tensor(w_values, requires_grad=True)
        xs = torch.tensor(rows)
        got = fn(w, xs, lr)
        want = reference_result("l3_fix_loop", case)
        if not isinstance(got, list) or len(got) != len(rows):
            return (f"return a list with one loss per row of xs ({len(rows)} here), "
                    f"got {got!r}.")
        kinds = sorted({type(v).__name__ for v in got if type(v) is not float})
        if kinds:
            return (f"the list holds {', '.join(kinds)} values: return Python floats "
                    "(loss.item()); a loss tensor keeps its iteration's whole graph alive.")
        if not want["losses"].close(got):
            return (f"for w = {w_values}, lr = {lr}: the losses are "
                    f"{[round(v, 5) for v in got]}, expected {want['losses']}."
                    " Is s recomputed from the current w, and is lr used?")
        if not want["w"].close(w):
            return (f"for w = {w_values}, lr = {lr}: w ends at "
                    f"{np.round(w.detach().numpy(), 5).tolist()}, expected "
                    f"{want['w']}: one SGD step per row.")
    return None


L3_TWICE = {"a.exp().sum()": lambda a: a.exp().sum(), "(a - 1).mean()": lambda a: (a - 1).mean(),
            "(a * a).sum()": lambda a: (a * a).sum(), "(a + a).sum()": lambda a: (a + a).sum()}


@_value("l3_transfer_twice",
        "which of " + ", ".join(L3_TWICE) + " can run backward twice without "
        "retain_graph? (a set of the expressions)",
        hint="A graph can run backward again when none of its nodes saved a tensor. "
             "Which ops need a value from the forward pass for their gradient?",
        explain="exp saves its result and a * a saves a; subtraction, mean and addition save "
                "no tensor, so there is nothing to free.")
def _l3_transfer_twice():
    torch = _mg()
    ok = set()
    for expr, build in L3_TWICE.items():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = build(a)
        y.backward()
        if not _raises(y.backward):
            ok.add(expr)
    return ok


_choice("l3_why_free",
        "Why does backward release the saved tensors by default?",
        [("a", "Saved activations are most of a training step's memory, and a graph is "
               "normally used once: they go as soon as their node has run.", ""),
         ("b", "Because computing the gradients a second time would give a wrong result.",
          "A second backward is legitimate: retain_graph=True allows it, and graphs that "
          "save nothing can always run twice (exercise 3.2)."),
         ("c", "Because the values are stale after the optimizer's step anyway.",
          "Stale values are caught by the version counter (lesson 4); buffers are freed "
          "even when nothing changes."),
         ("d", "backward deletes the whole graph, nodes and links included.",
          "Only saved tensors are released: grad_fn and next_functions stay "
          "(exercise 3.4).")],
        correct="a",
        explain="Freeing is a memory decision; retain_graph=True is how you opt out.")

# -- lesson 4: in-place operations and version counters ---------------------------------


def _saved_role(torch, build):
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True).clone()
    y = build(x)
    roles = set(type(y.grad_fn).saves.values()) & {"input", "output"}
    tensors = [name for name, _ in y.grad_fn.saved_items()]
    if not tensors:
        return "nothing"
    return roles.pop() if len(roles) == 1 else "both"


@_value("l4_sin_saves", "what does x.sin() save: 'input', 'output' or 'nothing'?",
        hint="d sin(x)/dx = cos(x): which tensor must be kept to compute it?",
        explain="cos(x) needs x, so SinBackward0 saves its input.")
def _l4_sin_saves():
    return _saved_role(_mg(), lambda x: x.sin())


@_value("l4_sigmoid_saves", "what does x.sigmoid() save: 'input', 'output' or 'nothing'?",
        hint="The derivative of s = sigmoid(x) can be written as s * (1 - s).",
        explain="s * (1 - s) only needs the result, so SigmoidBackward0 saves its output.")
def _l4_sigmoid_saves():
    return _saved_role(_mg(), lambda x: x.sigmoid())


@_value("l4_plus_saves", "what does x + 3 save: 'input', 'output' or 'nothing'?",
        hint="The derivative of x + 3 is 1 everywhere.",
        explain="Addition's gradient is the incoming gradient unchanged: nothing to save.")
def _l4_plus_saves():
    return _saved_role(_mg(), lambda x: x + 3)


@_value("l4_version", "x._version after x.add_(1); x[0] = 5; x.mul_(2) on a fresh tensor",
        hint="Every in-place operation bumps the counter by one.",
        explain="Three in-place writes, version 3.")
def _l4_version():
    torch = _mg()
    x = torch.zeros(3)
    x.add_(1)
    x[0] = 5
    x.mul_(2)
    return x._version


@_value("l4_view_version",
        "base._version after v = base[1:]; v.mul_(2); v.add_(1) on a fresh tensor",
        hint="A view shares its base's version counter.",
        explain="Both writes went through the view into the shared counter.")
def _l4_view_version():
    torch = _mg()
    base = torch.zeros(4)
    v = base[1:]
    v.mul_(2)
    v.add_(1)
    return base._version


@_value("l4_exp_input_write_raises",
        "u = 2 * t; loss = u.exp().sum(); u[0] = 666: does loss.backward() raise?",
        hint="Look up ExpBackward0 in the op table: does it keep its input u or its output?",
        explain="exp saved its output, a tensor of its own that the write to u does not "
                "touch; nothing saved u, so backward runs (and t.grad is 2 * exp(2 * t): "
                "the graph was recorded before the write).")
def _l4_exp_input_write_raises():
    torch = _mg()
    t = torch.arange(3.0, requires_grad=True)
    u = 2 * t
    loss = u.exp().sum()
    u[0] = 666
    return _raises(loss.backward)


@_value("l4_mutation_allowed_grad",
        "inside allow_mutation_on_saved_tensors(): t = tensor([1., 2., 3.], "
        "requires_grad=True); u = t * 1; loss = (u ** 3).sum(); u.add_(1); "
        "loss.backward(): what is t.grad?",
        hint="PowBackward0 saved u. Inside the context, which values of u does it get back "
             "at backward: those before or after add_(1)?",
        explain="The write found u saved, so u was copied first and PowBackward0 used the "
                "copy: the gradient 3 * u ** 2 of the values before add_(1).")
def _l4_mutation_allowed_grad():
    torch = _mg()
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        u = t * 1
        loss = (u ** 3).sum()
        u.add_(1)
        loss.backward()
    return t.grad


@_value("l4_increment_version",
        "base = torch.zeros(4); view = base[2:]; increment_version(view); "
        "increment_version([base, view]): what is base._version?",
        hint="increment_version adds one for each tensor it is given, and a view shares "
             "its base's counter.",
        explain="One for the view, then one for each tensor of the list: all three land in "
                "the counter base and view share.")
def _l4_increment_version():
    torch = _mg()
    base = torch.zeros(4)
    view = base[2:]
    torch.autograd.graph.increment_version(view)
    torch.autograd.graph.increment_version([base, view])
    return base._version


@_value("l4_sigmoid_breaks",
        "u = 2 * t; s = u.sigmoid(); loss = s.sum(): which in-place change makes "
        "loss.backward() raise: 'input' (u[0] = 666), 'output' (s[0] = 666), 'both' or "
        "'neither'?",
        hint="Look up SigmoidBackward0 in the op table: does it keep its input or its "
             "output?",
        explain="SigmoidBackward0 saves its output s, so only a change to s breaks backward; "
                "u can be modified freely.")
def _l4_sigmoid_breaks():
    return _which_change_breaks(lambda u: u.sigmoid(), lambda u, s: s.sum())


def _which_change_breaks(op, make_loss) -> str:
    """'input', 'output', 'both' or 'neither': which of u[0] = 666 and s[0] = 666, for
    u = 2 * t, s = op(u) and loss = make_loss(u, s), makes loss.backward() raise."""
    torch = _mg()

    def breaks(change_output: bool) -> bool:
        t = torch.arange(3.0, requires_grad=True)
        u = 2 * t
        s = op(u)
        loss = make_loss(u, s)
        (s if change_output else u)[0] = 666
        return _raises(loss.backward)

    broken = {"input": breaks(False), "output": breaks(True)}
    if all(broken.values()):
        return "both"
    return next((k for k, v in broken.items() if v), "neither")


@_code("l4_exp_plus_one",
       "exp_plus_one(x): return exp(x) + 1 so that backward works (x requires grad)",
       hint="y = x.exp(); y += 1 modifies the output that ExpBackward0 saved. Use an "
            "out-of-place addition instead.",
       explain="The saved output of exp stays at version 0, so backward can use it.")
def _l4_exp_plus_one(fn):
    torch = _mg()
    # The second input has another length and other values: an answer fitted to the
    # first (say, + x.max() for + 1) fails it.
    for values in ([0.0, 1.0, -1.0], [2.0, -0.5]):
        x = torch.tensor(values, requires_grad=True)
        y = fn(x)
        if not _close(y, np.exp(values) + 1):
            return f"for x = {values} the values are {y}, expected exp(x) + 1."
        err = raised(y.sum().backward)
        if err:
            return f"backward failed: {err}"
        if not _close(x.grad, np.exp(values)):
            return f"for x = {values}, x.grad is {x.grad}, expected exp(x)."
    return None


@_value("l4_transfer_tanh_times_input",
        "u = 2 * t; s = u.tanh(); loss = (s * u).sum(): which in-place change makes "
        "loss.backward() raise: 'input' (u[0] = 666), 'output' (s[0] = 666), 'both' or "
        "'neither'?",
        hint="Two nodes save something now: TanhBackward0 (see the op table) and the "
             "MulBackward0 of s * u, whose inputs both require grad.",
        explain="tanh saves its output s, and s * u saves both s and u: each change breaks "
                "a saved tensor.")
def _l4_transfer_tanh_times_input():
    return _which_change_breaks(lambda u: u.tanh(), lambda u, s: (s * u).sum())


_choice("l4_why_10x",
        "y = 10 * x; y += 1 can still be backpropagated, y = x.exp(); y += 1 cannot. Why?",
        [("a", "ExpBackward0 saved its output y, whose version has moved; nothing saved "
               "the y of 10 * x (MulBackward0 kept only the number 10).", ""),
         ("b", "+= on the result of a multiplication is not really in place.",
          "It is in place in both cases: y._version goes from 0 to 1 after 10 * x too. "
          "What differs is whether a node saved y."),
         ("c", "exp cannot be differentiated after an addition.",
          "The mathematics is fine; the engine refuses because a saved value changed "
          "('is at version 1; expected version 0')."),
         ("d", "10 * x makes a copy of x, x.exp() does not.",
          "Neither copies x. MulBackward0 keeps the number 10, ExpBackward0 keeps its "
          "result tensor.")],
        correct="a",
        explain="Only a saved tensor that changed can break backward: which one is saved "
                "is in the op table.")

# -- lesson 5: unbind and multi-output nodes -----------------------------------------------


def _l5_bcd(torch):
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b, c, d = a.unbind()
    return a, b, c, d


@_value("l5_output_nr", "[b.output_nr, c.output_nr, d.output_nr] for b, c, d = a.unbind()",
        hint="All three share one UnbindBackward0; output_nr says which output each one is.",
        explain="One node, three outputs, numbered 0, 1, 2.")
def _l5_output_nr():
    _, b, c, d = _l5_bcd(_mg())
    return [b.output_nr, c.output_nr, d.output_nr]


@_value("l5_edges", "next_names(e.grad_fn) for e = b * c * d",
        hint="e = (b * c) * d: the last multiplication's inputs are the product b * c "
             "and d, the third output of unbind.",
        explain="The outer MulBackward0 points to the inner one and to output 2 of unbind.")
def _l5_edges():
    _, b, c, d = _l5_bcd(_mg())
    return next_names((b * c * d).grad_fn)


@_value("l5_grad", "a.grad after e = b * c * d; e.backward() with a = [1, 2, 3]",
        hint="de/db = c * d, de/dc = b * d, de/dd = b * c; UnbindBackward0 puts the three "
             "gradients back in their slots.",
        explain="UnbindBackward0 gathered the three gradients into one tensor shaped like a.")
def _l5_grad():
    a, b, c, d = _l5_bcd(_mg())
    (b * c * d).backward()
    return a.grad


@_value("l5_inplace_raises", "does b.mul_(2) raise for b, c, d = a.unbind()?",
        hint="b is one of several views returned by a single function.",
        explain="In-place changes to outputs of a multi-output view function are refused.")
def _l5_inplace_raises():
    _, b, _, _ = _l5_bcd(_mg())
    return _raises(lambda: b.mul_(2))


@_code("l5_double_first",
       "double_first_product(a): unbind a 3-vector and return (2 * b) * c * d, no in-place",
       hint="b = b * 2 makes a new tensor; b *= 2 would modify the unbind output.",
       explain="An out-of-place multiply leaves the unbind outputs untouched.")
def _l5_double_first(fn):
    torch = _mg()
    # The second input is chosen so that a function equal to 2 * b only near b = 1
    # (b * b + 1 has the same value and slope there) fails it.
    for values in ([1.0, 2.0, 3.0], [-1.5, 0.5, 2.0]):
        b, c, d = values
        a = torch.tensor(values, requires_grad=True)
        out = fn(a)
        if not _close(out, np.array(2 * b * c * d)):
            return f"for a = {values} the value is {out}, expected 2 * b * c * d = {2 * b * c * d}."
        out.backward()
        want = [2 * c * d, 2 * b * d, 2 * b * c]
        if not _close(a.grad, want):
            return f"for a = {values}, a.grad is {a.grad}, expected {want}."
    return None


@_value("l5_transfer_grad",
        "a.grad after b, c, d = a.unbind(); (b * c + d * d).backward() with a = [2, 1, 4]",
        hint="d/db = c, d/dc = b, d/dd = 2 d; UnbindBackward0 puts them back in order.",
        explain="Each slot of the buffer got its own gradient; unbind stacked them.")
def _l5_transfer_grad():
    torch = _mg()
    a = torch.tensor([2.0, 1.0, 4.0], requires_grad=True)
    b, c, d = a.unbind()
    (b * c + d * d).backward()
    return a.grad


L5_CHUNK_OR_MIN = ("chunk", "min", "both", "neither")


@_value("l5_chunk_or_min",
        "h = a * 1 for a 2 x 3 a that requires grad: which of h.chunk(3, dim=1)[0].mul_(2) "
        "and h.min(dim=1)[0].mul_(2) (each on a fresh h) raises: 'chunk', 'min', 'both' or "
        "'neither'?",
        hint="Which of the two returns several views of h made by one node, like unbind, "
             "and which returns new tensors, like max(dim=...)?",
        explain="chunk returns views of h, all made by one SplitBackward0: changing one in "
                "place is refused, as for unbind. min(dim=1)'s values are a new tensor, not "
                "a view, so mul_ is an ordinary in-place op.")
def _l5_chunk_or_min():
    torch = _mg()
    a = torch.tensor([[1.0, 5.0, 2.0], [3.0, 2.0, 0.5]], requires_grad=True)
    chunk = _raises(lambda: (a * 1).chunk(3, dim=1)[0].mul_(2))
    smallest = _raises(lambda: (a * 1).min(dim=1)[0].mul_(2))
    return {(True, True): "both", (True, False): "chunk", (False, True): "min",
            (False, False): "neither"}[(chunk, smallest)]


_choice("l5_why_refused",
        "Why is b.mul_(2) refused after b, c, d = a.unbind()?",
        [("a", "b is one of several views made by one node; its history cannot be "
               "rewritten alone, so autograd refuses instead of guessing.", ""),
         ("b", "b is a leaf that requires grad.",
          "b has a grad_fn (UnbindBackward0): it is a view of a, not a leaf."),
         ("c", "In-place operations are never allowed on views.",
          "A single-output view can be changed in place: u[0] = 666 is rewritten as "
          "CopySlices (lesson 4)."),
         ("d", "UnbindBackward0 saved b, and the version check would fail.",
          "UnbindBackward0 saves no tensor, and the error comes at the in-place call, "
          "before any backward.")],
        correct="a",
        explain="Multi-output views share one node; changing one output in place has no "
                "history to be rebased onto.")

# -- lesson 6: detach, .data, numpy(), item() ---------------------------------------------


@_value("l6_detach_zero_raises",
        "y = a.exp(); y.detach().zero_(): does y.sum().backward() raise?",
        hint="detach() shares the memory and the version counter with y.",
        explain="The shared counter moved, so autograd notices the change and refuses.")
def _l6_detach_zero_raises():
    torch = _mg()
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.exp()
    y.detach().zero_()
    return _raises(lambda: y.sum().backward())


@_value("l6_data_grad", "y = a.exp(); y.data.zero_(); y.sum().backward(): what is a.grad?",
        hint=".data shares memory but has its own version counter: autograd sees nothing, "
             "and the saved output of exp is now all zeros.",
        explain="The gradient is silently wrong: exp's saved output was zeroed.")
def _l6_data_grad():
    torch = _mg()
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.exp()
    y.data.zero_()
    y.sum().backward()
    return a.grad


@_value("l6_numpy_raises", "does a.numpy() raise when a requires grad?",
        hint="numpy() would hand out memory autograd cannot track.",
        explain="You have to say so explicitly: a.detach().numpy().")
def _l6_numpy_raises():
    torch = _mg()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return _raises(a.numpy)


@_code("l6_record_losses",
       "run(w, steps): a loop that returns its losses as plain Python floats",
       hint="Append loss.item() (or float(loss)), not loss itself: the tensor would keep "
            "its whole graph alive.",
       explain="Plain floats carry no graph, so each iteration's graph can be freed.")
def _l6_record_losses(fn):
    torch = _mg()
    # Two runs with other values and lengths: a list fitted to the first fails the second.
    for values, steps in (([1.0, -2.0], 3), ([0.5, 3.0, -1.0], 2)):
        w = torch.tensor(values, requires_grad=True)
        got = fn(w, steps)
        loss = float(sum(v * v for v in values))
        if not isinstance(got, list) or len(got) != steps:
            return f"return a list with one loss per step ({steps} here), got {got!r}."
        bad = [type(v).__name__ for v in got if type(v) is not float]
        if bad:
            return f"the list holds {', '.join(sorted(set(bad)))} values, not Python floats."
        if not np.allclose(got, [loss] * steps):
            return (f"for w = {values} the losses are {got}; (w ** 2).sum() is {loss} at "
                    "every step.")
        want = [2 * steps * v for v in values]
        if w.grad is None or not _close(w.grad, want):
            return (f"w.grad is {w.grad}, expected {steps} steps of 2 * w = {want}: call "
                    "loss.backward() in every step.")
    return None


@_value("l6_transfer_detach_mul",
        "y = a * 3; y.detach().zero_(): does y.sum().backward() raise?",
        hint="The version of y moved, but did any node save y?",
        explain="y moved to version 1, but MulBackward0 saved only the number 3: nothing "
                "to check, no error (and here the gradient is right).")
def _l6_transfer_detach_mul():
    torch = _mg()
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 3
    y.detach().zero_()
    return _raises(lambda: y.sum().backward())


_choice("l6_why_silent",
        "Why does y.data.zero_() give a wrong gradient without an error, when "
        "y.detach().zero_() raises?",
        [("a", ".data shares y's memory but has a version counter of its own, so the "
               "write never shows in the version ExpBackward0 checks.", ""),
         ("b", ".data is a copy, so zeroing it changes nothing.",
          "It is not a copy: writing through .data changed y (the first cell of the "
          "lesson), which is why the gradient comes out as zeros."),
         ("c", "exp's saved output is not version-checked.",
          "It is: the same write through detach() makes backward raise."),
         ("d", "zero_() does not count as an in-place operation.",
          "Through detach() the same zero_() moves the version and backward raises.")],
        correct="a",
        explain="The version counter is the only witness of an in-place change, and .data "
                "does not report to it.")

# -- lesson 7: graphs in training loops ------------------------------------------------------


def _l7_model(torch):
    """A 2 -> 1 linear model with fixed weights, and a tiny data set."""
    model = torch.nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -0.5]]))
        model.bias.fill_(0.0)
    x = torch.tensor([[1.0, 2.0], [3.0, 1.0], [0.0, 1.0]])
    y = torch.tensor([[1.0], [2.0], [0.0]])
    return model, x, y


@_value("l7_forgot_zero_grad",
        "w.grad after three loss.backward() calls with loss = (3 * w).sum(), no zero_grad",
        hint="Each backward adds its gradient (3 per element) into w.grad.",
        explain="Gradients accumulate: three calls, three times 3.")
def _l7_forgot_zero_grad():
    torch = _mg()
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (3 * w).sum().backward()
    return w.grad


@_value("l7_hoisted_fails_at",
        "f = w + x hoisted out of the loop (zero_grad, loss = (f.sum() - target) ** 2, "
        "backward, step; four iterations): in which iteration does backward() raise?",
        hint="Which tensors does the shared AddBackward0 save? What does the first backward "
             "free there?",
        explain="AddBackward0 saves nothing, so the shared node has nothing to free and "
                "backward never raises. The loop is still wrong, silently: f keeps the first "
                "w's values, so the loss never changes.")
def _l7_hoisted_fails_at():
    torch = _mg()
    w = torch.nn.Parameter(torch.tensor([0.5, -1.0]))
    x, target = torch.tensor([1.0, 2.0]), torch.tensor(3.0)
    opt = torch.optim.SGD([w], lr=0.05)
    f = w + x
    for step in range(4):
        opt.zero_grad()
        loss = (f.sum() - target) ** 2
        if _raises(loss.backward):
            return step
        opt.step()
    return None


@_value("l7_rewrap_grad",
        "w.grad after f = nn.Parameter(w @ x); (f * (w @ x)).sum().backward(), "
        "w = ones(2, 2), x = [1, 2]",
        hint="f is a new leaf: only the second w @ x is in the loss's graph. Treat f as a "
             "constant.",
        explain="Only the second w @ x reaches w; f is a fresh leaf, a constant [3, 3] as "
                "far as w is concerned, so w.grad is f times x (outer), half of what a "
                "graph through both factors would give.")
def _l7_rewrap_grad():
    torch = _mg()
    w = torch.nn.Parameter(torch.ones(2, 2))
    x = torch.tensor([1.0, 2.0])
    f = torch.nn.Parameter(w @ x)
    (f * (w @ x)).sum().backward()
    return w.grad


@_value("l7_weight_version",
        "model.weight._version after nn.Linear(2, 1) and three SGD steps",
        hint="Linear's initialisation writes the weight in place once; every step once more.",
        explain="One in-place initialisation plus one update per step: version 4.")
def _l7_weight_version():
    torch = _mg()
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(4, 2)
    for _ in range(3):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return model.weight._version


def reference_l7_train(torch, model, x, y, steps, lr):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@_reference("l7_fix_loop", [(5, 0.05)], {"losses": (1e-5, 1e-8), "weight": (1e-5, 1e-6)})
def _l7_fix_loop_reference(steps, lr) -> dict:
    torch = _mg()
    model, x, y = _l7_model(torch)
    losses = reference_l7_train(torch, model, x, y, steps, lr)
    return {"losses": losses, "weight": model.weight.detach().numpy().tolist()}


@_code("l7_fix_loop",
       "train(model, x, y, steps, lr): SGD on the MSE loss; return the losses as floats",
       hint="Inside the loop: opt.zero_grad(), then the prediction and the loss from "
            "model(x), backward, step; record loss.item().",
       explain="A fresh graph every iteration, and clean gradients for every step.")
def _l7_fix_loop(fn):
    torch = _mg()
    model, x, y = _l7_model(torch)
    try:
        got = fn(model, x, y, 5, 0.05)
    except RuntimeError as error:
        if "second time" in str(error):
            return ("backward() ran through an old graph a second time: compute the "
                    "prediction inside the loop, so each step records its own graph.")
        raise
    want = reference_result("l7_fix_loop", 0)
    if not isinstance(got, list) or len(got) != 5:
        return f"return a list with one loss per step (5 here), got {got!r}."
    if any(type(v) is not float for v in got):
        return "return the losses as Python floats (loss.item())."
    if len(set(got)) == 1:
        return (f"the loss never changes ({got[0]:.5f} every step): is the prediction "
                "computed from the current weights, inside the loop?")
    if not want["losses"].close(got):
        return (f"the losses are {[round(v, 5) for v in got]}, expected "
                f"{want['losses']}: is zero_grad() called every step?")
    if not want["weight"].close(model.weight):
        return "the final weights differ from plain SGD on the MSE loss."
    return None


@_value("l7_transfer_accumulate",
        "w = [1, 3] (requires grad): (2 * w).sum().backward() twice, then "
        "(w * w).sum().backward(). What is w.grad?",
        hint="Every backward adds into w.grad: 2, 2, then 2 * w.",
        explain="Three backward calls, three contributions added: the deliberate use of "
                "this is gradient accumulation.")
def _l7_transfer_accumulate():
    torch = _mg()
    w = torch.tensor([1.0, 3.0], requires_grad=True)
    (2 * w).sum().backward()
    (2 * w).sum().backward()
    (w * w).sum().backward()
    return w.grad


_choice("l7_why_shared_acc",
        "compare_graphs shows w's AccumulateGrad shared by two iterations' graphs. Why?",
        [("a", "The leaf holds its AccumulateGrad weakly: while some graph (here the kept "
               "losses) refers to it, every new graph reuses it.", ""),
         ("b", "Every leaf owns one AccumulateGrad for its whole life.",
          "The leaf keeps it only weakly: drop every graph that refers to it and the next "
          "graph gets a new one (the cell above shows the tag disappearing)."),
         ("c", "The optimizer keeps the graph of the last step.",
          "SGD keeps the parameters, not graphs; it is the list `losses` that keeps "
          "graph 1 alive."),
         ("d", "AccumulateGrad is a single global node shared by all leaves.",
          "There is one per leaf: its `variable` is that leaf.")],
        correct="a",
        explain="Sharing needs a living graph: keep nothing and each iteration builds its "
                "own accumulator.")

# -- lesson 8: write your own Function ---------------------------------------------------------


def _l8_functions(torch):
    class MyExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

    return MyExp


@_value("l8_node_name", "type(y.grad_fn).__name__ for y = MyExp.apply(x)",
        hint="A custom Function's node is named after the class, plus 'Backward'.",
        explain="MyExp's node is MyExpBackward (no number: it is not a built-in op).")
def _l8_node_name():
    torch = _mg()
    x = torch.tensor([1.0], requires_grad=True)
    return type(_l8_functions(torch).apply(x).grad_fn).__name__


@_value("l8_output_modified_raises",
        "y = MyExp.apply(x); y.add_(1): does y.sum().backward() raise?",
        hint="MyExp saved its output with ctx.save_for_backward(result).",
        explain="The saved output changed version, so reading ctx.saved_tensors raises.")
def _l8_output_modified_raises():
    torch = _mg()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = _l8_functions(torch).apply(x)
    y.add_(1)
    return _raises(lambda: y.sum().backward())


@_value("l8_output_modified_from_input",
        "y = MyExpFromInput.apply(x) (saves x, recomputes exp in backward); y.add_(1): "
        "does y.sum().backward() raise?",
        hint="Which tensor does MyExpFromInput keep for backward? Was that one modified?",
        explain="Only saved tensors are version-checked: the output was not saved.")
def _l8_output_modified_from_input():
    torch = _mg()

    class MyExpFromInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.exp()

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = MyExpFromInput.apply(x)
    y.add_(1)
    return _raises(lambda: y.sum().backward())


@_value("l8_gradient_count",
        "how many values must backward return for forward(ctx, x, scale)?",
        hint="One per argument of forward after ctx, tensors or not (None for a number).",
        explain="One gradient per forward input: two, the second one None.")
def _l8_gradient_count():
    import re

    torch = _mg()

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.scale = scale
            return x * scale

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.scale  # one value short: the engine says how many it wants

    x = torch.tensor([1.0], requires_grad=True)
    error = raised(lambda: Scale.apply(x, 3.0).sum().backward())
    return int(re.search(r"expected (\d+)", error).group(1))


@_code("l8_square",
       "Square: a custom Function computing x * x that saves what backward needs",
       hint="forward: ctx.save_for_backward(x); return x * x. backward: (x,) = "
            "ctx.saved_tensors; return 2 * x * grad.",
       explain="Square saves its input; its gradient is 2 x, checked against autograd.")
def _l8_square(cls):
    torch = _mg()
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        return "pass the class itself (a subclass of minigrad.autograd.Function)."
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = cls.apply(x)
    if not _close(y, [1.0, 4.0, 9.0]):
        return f"forward gives {y}, expected x * x = [1, 4, 9]."
    if type(y.grad_fn).__name__ != f"{cls.__name__}Backward":
        return "the output has no custom node: did forward return a tensor computed from x?"
    if not y.grad_fn.saved_tensors:
        return "nothing was saved: backward needs x, so call ctx.save_for_backward(x)."
    # weights other than ones: backward must multiply by the incoming gradient
    err = raised(lambda: (y * torch.tensor([1.0, 10.0, -3.0])).sum().backward())
    if err:
        return f"backward failed: {err}"
    if not _close(x.grad, [2.0, -40.0, -18.0]):
        return (f"for loss = (Square.apply(x) * [1, 10, -3]).sum() x.grad is {x.grad}, "
                "expected 2 * x * grad = [2, -40, -18]: multiply by the incoming gradient.")
    return None


@_code("l8_tanh_saves_output",
       "MyTanh: x.tanh() that still backpropagates after its input is changed in place",
       hint="d tanh(x)/dx = 1 - tanh(x)**2 needs only the output: save the result, "
            "not x, and compute grad * (1 - result * result).",
       explain="MyTanh saves its output, so an in-place change of the input cannot "
               "invalidate it (the same choice the built-in tanh makes).")
def _l8_tanh_saves_output(cls):
    torch = _mg()
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        return "pass the class itself (a subclass of minigrad.autograd.Function)."
    values = [0.5, -1.0, 2.0]
    a = torch.tensor(values, requires_grad=True)
    h = a * 1
    y = cls.apply(h)
    if not _close(y, np.tanh(np.asarray(values, np.float32))):
        return f"forward gives {y}, expected tanh(x)."
    if type(y.grad_fn).__name__ != f"{cls.__name__}Backward":
        return "the output has no custom node: did forward return a tensor computed from x?"
    h.mul_(3)
    weights = [2.0, -1.0, 0.5]  # the incoming gradient is not all ones
    err = raised(lambda: (y * torch.tensor(weights)).sum().backward())
    if err and "inplace" in err:
        return ("backward refused because the saved input was changed in place: save "
                "something that the in-place change of the input does not touch.")
    if err:
        return f"backward failed: {err}"
    want = (1 - np.tanh(np.asarray(values, np.float64)) ** 2) * weights
    if a.grad is None or not _close(a.grad, want.astype(np.float32)):
        return (f"for loss = (MyTanh.apply(h) * {weights}).sum() a.grad is {a.grad}, "
                f"expected grad * (1 - tanh(a)**2) = {np.round(want, 4).tolist()}.")
    return None


@_value("l8_transfer_gradient_count",
        "how many values must backward return for forward(ctx, x, weight, eps, mode)?",
        hint="One per argument of forward after ctx.",
        explain="Four inputs, four return values (None for the number and the string).")
def _l8_transfer_gradient_count():
    import re

    torch = _mg()

    class Four(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, eps, mode):
            return x * weight + eps

        @staticmethod
        def backward(ctx, grad):
            return grad, grad  # short: the engine says how many it wants

    x = torch.tensor([1.0], requires_grad=True)
    w = torch.tensor([2.0], requires_grad=True)
    error = raised(lambda: Four.apply(x, w, 0.1, "fast").sum().backward())
    return int(re.search(r"expected (\d+)", error).group(1))


_choice("l8_why_save_output",
        "MyTanh saves its output rather than its input. Why is that the better choice?",
        [("a", "1 - tanh(x)**2 needs only the output, so nothing is recomputed and an "
               "in-place change of the input cannot invalidate it.", ""),
         ("b", "Saving the input is not allowed in a custom Function.",
          "It is allowed: MyExpFromInput saves its input and works."),
         ("c", "The output is never modified in place.",
          "It can be (y.add_(1)), and then reading the saved output raises; the choice "
          "decides which change breaks backward, not that none can."),
         ("d", "Saved outputs are not version-checked.",
          "They are: MyExp's saved output raised after y.add_(1).")],
        correct="a",
        explain="Save what the formula needs; when that is the output, the input is free "
                "to change.")


# -- lesson 9: the engine ------------------------------------------------------------------


def run_node(node, grads):
    """Run one backward node's formula, as the engine does once the node is ready.

    `grads` holds the summed gradient for each output of the node (tensors, or None
    for an output no stream reached). Returns one gradient per entry of
    `node.next_functions` (None where no gradient is needed). For an AccumulateGrad
    node this adds the gradient into its leaf's `.grad` and returns ()."""
    torch = _mg()
    arrays = [None if g is None else np.array(g.detach().numpy(), copy=True) for g in grads]
    outputs = node.apply(arrays)
    return tuple(None if o is None else torch.tensor(o) for o in outputs)


def random_graph(torch, seed: int):
    """A small random graph of element-wise ops with shared inputs (diamonds, x * x);
    returns (leaves, loss). The same seed builds the same graph again."""
    rng = np.random.default_rng(seed)
    leaves = [torch.tensor(rng.uniform(-1, 1, 3).tolist(), requires_grad=True)
              for _ in range(int(rng.integers(2, 4)))]
    pool = list(leaves)
    for _ in range(int(rng.integers(3, 9))):
        a, b = pool[int(rng.integers(len(pool)))], pool[int(rng.integers(len(pool)))]
        pool.append(_RANDOM_OPS[int(rng.integers(len(_RANDOM_OPS)))](a, b))
    return leaves, (pool[-1] * pool[-2]).sum()


_RANDOM_OPS = (lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b,
               lambda a, b: a.tanh(), lambda a, b: a.sin(), lambda a, b: a * 0.5)


def _engine_order(loss) -> list:
    from minigrad.autograd import backward_events

    return [e.node for e in backward_events(loss, trace=True)
            if type(e).__name__ == "NodeStarted"]


def _diamond(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()
    loss = (s * 3 + s.sin()).sum()
    return x, s, loss


@_value("l9_shared_deps",
        "in loss = (s * 3 + s.sin() + s * s).sum() with s = x.exp(), how many "
        "streams does ExpBackward0 wait for?",
        hint="Count the edges that point at ExpBackward0: which nodes have it in their "
             "next_functions, and how many times each?",
        explain="s * 3 and s.sin() give one edge each, s * s two (both of its inputs are "
                "s): the engine runs ExpBackward0 when its count drops from 4 to 0.")
def _l9_shared_deps():
    from minigrad.autograd import backward_events

    torch = _mg()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()
    loss = (s * 3 + s.sin() + s * s).sum()
    events = backward_events(loss, trace=True)
    started = next(events)
    events.close()
    return started.dependencies[s.grad_fn]


@_value("l9_transfer_order",
        "the order the engine runs the nodes of loss = (a * a + x).sum() with "
        "a = x.tanh() (a list of node names)",
        hint="A node is ready when all its streams arrived; among ready nodes the one "
             "made last runs first. x feeds both tanh and +: when is its AccumulateGrad "
             "ready?",
        explain="x's AccumulateGrad waits for two streams, from AddBackward0 and from "
                "TanhBackward0, so it runs last.")
def _l9_transfer_order():
    torch = _mg()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x.tanh()
    return [type(n).__name__ for n in _engine_order((a * a + x).sum())]


_choice("l9_why_not_recursion",
        "Why does the engine count dependencies and keep a ready queue instead of "
        "recursing from the loss?",
        [("a", "Recursion runs a shared node once per path (2**n times for n stacked "
               "diamonds) and needs one Python frame per node of a long chain; counting "
               "runs each node once, with its streams summed, in a loop.", ""),
         ("b", "Recursion gives wrong gradients on a diamond.",
          "The sum comes out right, since gradients add up whichever way they travel; "
          "the cost is the repeated work, and the depth."),
         ("c", "Python has no recursion.",
          "It has, up to sys.getrecursionlimit() frames; a 20 000-op chain goes past "
          "that, a loop does not."),
         ("d", "The queue makes backward run in parallel.",
          "minigrad's engine runs one node at a time; the queue decides which ready "
          "node runs next (the one made last).")],
        correct="a",
        explain="Dependency counts make 'ready' exact, so every node runs once with all of "
                "its gradient, and an explicit queue has no depth limit.")


@_code("l9_my_backward",
       "my_backward(root): run backward with your own dependency counts, input buffers "
       "and ready queue; return the nodes in the order they ran",
       hint="Count edges with an iterative walk; start the root's buffer with "
            "torch.ones(root.shape); pop the ready node with the largest _sequence_nr(); "
            "sum streams per (node, output_nr); push a node when its count reaches 0.",
       explain="Your engine ran every node once, in PyTorch's order, and filled the same "
               ".grad as minigrad's engine on random graphs.")
def _l9_my_backward(fn):
    torch = _mg()
    for seed in range(25):
        leaves, loss = random_graph(torch, seed)
        order = fn(loss)
        if not isinstance(order, list):
            return f"return the list of nodes in the order they ran, got {order!r}."
        ref_leaves, ref_loss = random_graph(torch, seed)
        ref = _engine_order(ref_loss)  # a full traced backward: fills ref_leaves' .grad
        names = [type(n).__name__ for n in order]
        counts = {}
        for node in order:
            counts[id(node)] = counts.get(id(node), 0) + 1
        twice = sorted({type(n).__name__ for n in order if counts[id(n)] > 1})
        if twice:
            return (f"graph {seed}: {', '.join(twice)} ran more than once; a node must "
                    "wait until every stream into it has arrived (its count is 0).")
        if len(order) != len(ref):
            return (f"graph {seed}: your engine ran {len(order)} nodes, minigrad's "
                    f"{len(ref)}: {names}.")
        mine = [n for n in names if n != "AccumulateGrad"]
        theirs = [type(n).__name__ for n in ref if type(n).__name__ != "AccumulateGrad"]
        if mine != theirs:
            return (f"graph {seed}: the order {mine} differs from the engine's {theirs}: "
                    "run the ready node with the largest _sequence_nr() first.")
        for i, (leaf, ref_leaf) in enumerate(zip(leaves, ref_leaves)):
            if (leaf.grad is None) != (ref_leaf.grad is None) or (
                    leaf.grad is not None and not _close(leaf.grad, ref_leaf.grad)):
                return (f"graph {seed}: leaf {i} has .grad {leaf.grad}, minigrad's engine "
                        f"gives {ref_leaf.grad}.")
    return None

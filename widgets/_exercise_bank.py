"""The course's exercises: each answer is computed by running the scenario in minigrad.

Value exercises register a function returning the expected answer; coding exercises
register a function that runs the learner's code and returns a problem description
(or None when it behaves). Names start with the lesson: ``l3_...`` is lesson 3.
"""

from __future__ import annotations

import numpy as np

from .exercises import _code, _value, next_names, node_name, raised


def _mg():
    import minigrad

    return minigrad


def _raises(fn) -> bool:
    return raised(fn) is not None


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
        got = fn(values)
        if got is None:
            return "your function returned None; return x.grad."
        if not _close(got, 2 * np.asarray(values)):
            return f"for {values} you returned {got}, expected twice the values."
    return None


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
       "x2 = x1*c, loss = x2.sum()",
       hint="Call x1.retain_grad() before loss.backward().",
       explain="retain_grad() asked autograd to store the gradient arriving at x1.")
def _l2_keep_intermediate(fn):
    torch = _mg()
    a, b, c = _l2_abc(torch)
    got = fn(a, b, c)
    if not isinstance(got, tuple) or len(got) != 2:
        return "return a tuple (a.grad, x1.grad)."
    ga, gx1 = got
    if ga is None or gx1 is None:
        return "one of the gradients is None; did you call retain_grad() before backward()?"
    if not _close(ga, b.detach() * c.detach()):
        return f"a.grad is {ga}, expected b * c."
    if not _close(gx1, c.detach()):
        return f"x1.grad is {gx1}, expected c (d(x1*c)/dx1)."
    return None


# -- lesson 3: retain_graph and freed buffers ---------------------------------------------


def _l3_setup(torch):
    x = torch.tensor([1.0, 0.0], dtype=torch.float64)
    t = torch.eye(2, dtype=torch.float64, requires_grad=True)
    a = torch.ones(2, dtype=torch.float64, requires_grad=True)
    return x, t, a


@_value("l3_failing_iteration",
        "in the loop that reuses y = t @ a, which iteration (0, 1, ...) raises?",
        hint="The first backward frees the saved tensors of every node it visits, "
             "including MvBackward0 of y.",
        explain="Iteration 0 frees y's buffers; iteration 1 needs them again and fails.")
def _l3_failing_iteration():
    torch = _mg()
    x, t, a = _l3_setup(torch)
    y = t @ a
    for i in range(5):
        loss = ((t @ (x + y) - x) ** 2).mean()
        if _raises(loss.backward):
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


def reference_l3_loop(t, a, x, steps):
    losses = []
    for _ in range(steps):
        y = t @ a
        loss = ((t @ (x + y) - x) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
    return losses


@_code("l3_fix_loop",
       "train(t, a, x, steps): the loop of this lesson, fixed; return the list of losses",
       hint="Either build y = t @ a inside the loop, or keep it outside and call "
            "loss.backward(retain_graph=True).",
       explain="Every iteration now has the buffers it needs.")
def _l3_fix_loop(fn):
    torch = _mg()
    x, t, a = _l3_setup(torch)
    got = fn(t, a, x, 3)
    x2, t2, a2 = _l3_setup(torch)
    want = reference_l3_loop(t2, a2, x2, 3)
    if not isinstance(got, list) or len(got) != 3:
        return f"return a list with one loss per step (3 here), got {got!r}."
    if not np.allclose([float(v) for v in got], want):
        return f"the losses are {got}, expected {want}."
    if not _close(t.grad, t2.grad) or not _close(a.grad, a2.grad):
        return "t.grad or a.grad differ from what the loop should accumulate."
    return None


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


@_value("l4_square_raises",
        "u = 2 * t; loss = (u ** 2).sum(); u[0] = 666: does loss.backward() raise?",
        hint="PowBackward0 saves its input u.",
        explain="u ** 2 saved u, and u has been changed since, so backward refuses.")
def _l4_square_raises():
    torch = _mg()
    t = torch.arange(3.0, requires_grad=True)
    u = 2 * t
    loss = (u ** 2).sum()
    u[0] = 666
    return _raises(loss.backward)


@_value("l4_sigmoid_breaks",
        "u = 2 * t; s = u.sigmoid(); loss = s.sum(): which in-place change makes "
        "loss.backward() raise: 'input' (u[0] = 666), 'output' (s[0] = 666), 'both' or "
        "'neither'?",
        hint="Look up SigmoidBackward0 in the op table: does it keep its input or its "
             "output?",
        explain="SigmoidBackward0 saves its output s, so only a change to s breaks backward; "
                "u can be modified freely.")
def _l4_sigmoid_breaks():
    torch = _mg()

    def breaks(change_output: bool) -> bool:
        t = torch.arange(3.0, requires_grad=True)
        u = 2 * t
        s = u.sigmoid()
        loss = s.sum()
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
    x = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)
    y = fn(x)
    if not _close(y, np.exp([0.0, 1.0, -1.0]) + 1):
        return f"the values are {y}, expected exp(x) + 1."
    err = raised(lambda: y.sum().backward())
    if err:
        return f"backward failed: {err}"
    if not _close(x.grad, np.exp([0.0, 1.0, -1.0])):
        return f"x.grad is {x.grad}, expected exp(x)."
    return None


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
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = fn(a)
    if not _close(out, np.array(12.0)):
        return f"the value is {out}, expected 2 * 1 * 2 * 3 = 12."
    out.backward()
    if not _close(a.grad, [12.0, 6.0, 4.0]):
        return f"a.grad is {a.grad}, expected [12, 6, 4]."
    return None


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
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    got = fn(w, 3)
    if not isinstance(got, list) or len(got) != 3:
        return f"return a list with one loss per step, got {got!r}."
    bad = [type(v).__name__ for v in got if type(v) is not float]
    if bad:
        return f"the list holds {', '.join(sorted(set(bad)))} values, not Python floats."
    return None


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
        "f = w * x hoisted out of the loop: in which iteration does backward() raise?",
        hint="The first backward frees what MulBackward0 saved; the second graph still "
             "ends in that same MulBackward0.",
        explain="Iteration 0 runs and frees f's saved tensors; iteration 1 needs them again.")
def _l7_hoisted_fails_at():
    torch = _mg()
    w = torch.nn.Parameter(torch.tensor([0.5, -1.0]))
    x, target = torch.tensor([1.0, 2.0]), torch.tensor(3.0)
    opt = torch.optim.SGD([w], lr=0.05)
    f = w * x
    for step in range(4):
        opt.zero_grad()
        loss = (f.sum() - target) ** 2
        if _raises(loss.backward):
            return step
        opt.step()
    return None


@_value("l7_rewrap_grad",
        "w.grad after f = nn.Parameter(w @ x); (f ** 2).sum().backward()",
        hint="nn.Parameter(...) makes a new leaf: does the graph of the loss reach w?",
        explain="The Parameter is a fresh leaf, cut off from w: no gradient reaches w.")
def _l7_rewrap_grad():
    torch = _mg()
    w = torch.nn.Parameter(torch.ones(2, 2))
    x = torch.tensor([1.0, 2.0])
    f = torch.nn.Parameter(w @ x)
    (f ** 2).sum().backward()
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
    ref_model, ref_x, ref_y = _l7_model(torch)
    want = reference_l7_train(torch, ref_model, ref_x, ref_y, 5, 0.05)
    if not isinstance(got, list) or len(got) != 5:
        return f"return a list with one loss per step (5 here), got {got!r}."
    if any(type(v) is not float for v in got):
        return "return the losses as Python floats (loss.item())."
    if len(set(got)) == 1:
        return (f"the loss never changes ({got[0]:.5f} every step): is the prediction "
                "computed from the current weights, inside the loop?")
    if not np.allclose(got, want, rtol=1e-5):
        return (f"the losses are {[round(v, 5) for v in got]}, expected "
                f"{[round(v, 5) for v in want]}: is zero_grad() called every step?")
    if not _close(model.weight, ref_model.weight):
        return "the final weights differ from plain SGD on the MSE loss."
    return None


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
        "same, with MyExpFromInput (saves x, recomputes exp in backward): does it raise?",
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
    err = raised(lambda: y.sum().backward())
    if err:
        return f"backward failed: {err}"
    if not _close(x.grad, [2.0, -4.0, 6.0]):
        return f"x.grad is {x.grad}, expected 2 * x = [2, -4, 6]."
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
    err = raised(lambda: y.sum().backward())
    if err and "inplace" in err:
        return ("backward refused because the saved input was changed in place: save "
                "something that the in-place change of the input does not touch.")
    if err:
        return f"backward failed: {err}"
    want = 1 - np.tanh(np.asarray(values, np.float64)) ** 2
    if a.grad is None or not _close(a.grad, want.astype(np.float32)):
        return f"a.grad is {a.grad}, expected 1 - tanh(a)**2 = {np.round(want, 4).tolist()}."
    return None

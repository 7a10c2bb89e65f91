"""How element-wise results are laid out in memory, compared with PyTorch.

PyTorch gives an element-wise result the memory order of its operands: `x.t().exp()`
is transposed like `x.t()`, so it is not contiguous and `.view(-1)` refuses it. The
strides, contiguity, the view error and the values are compared (for the `*_like`
factories too, which keep their model's layout), and so is what a matrix product
saves (`_saved_self_sym_strides`) when its operand is such a result.
"""

from __future__ import annotations

import pytest

M23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

# name -> program of (library, x), where x is a 2x3 float32 tensor
LAYOUTS = {
    "exp of a transpose": lambda m, x: x.t().exp(),
    "relu of a transpose": lambda m, x: x.t().relu(),
    "sigmoid of a transpose": lambda m, x: x.t().sigmoid(),
    "clamp of a transpose": lambda m, x: x.t().clamp(0, 4),
    "negation": lambda m, x: -x.t(),
    "times a number": lambda m, x: x.t() * 2,
    "plus a number": lambda m, x: x.t() + 1,
    "number minus": lambda m, x: 1 - x.t(),
    "number over": lambda m, x: 2 / x.t(),
    "square": lambda m, x: x.t() ** 2,
    "number to the power": lambda m, x: 2 ** x.t(),
    "transpose plus row-major": lambda m, x: x.t() + m.ones(3, 2),
    "row-major plus transpose": lambda m, x: m.ones(3, 2) + x.t(),
    "transpose times transpose": lambda m, x: x.t() * x.t(),
    "transpose over row-major": lambda m, x: x.t() / m.ones(3, 2),
    "transpose to a tensor power": lambda m, x: x.t() ** x.t(),
    "transpose plus a broadcast row": lambda m, x: x.t() + m.ones(2),
    "a broadcast row plus transpose": lambda m, x: m.ones(2) + x.t(),
    "transpose plus a broadcast column": lambda m, x: x.t() + m.ones(3, 1),
    "transpose in float64": lambda m, x: x.t() * m.ones(3, 2, dtype=m.float64),
    "strided transpose": lambda m, x: x.t()[::2] * 1,
    "permuted 3-D": lambda m, x: x.reshape(1, 2, 3).permute(2, 0, 1).exp(),
    "permuted 3-D plus row-major": lambda m, x: x.reshape(1, 2, 3).permute(2, 1, 0)
    + m.ones(3, 2, 1),
    "row-major plus permuted 3-D": lambda m, x: m.ones(3, 2, 1)
    + x.reshape(1, 2, 3).permute(2, 1, 0),
    "clone": lambda m, x: x.t().clone(),
    "contiguous": lambda m, x: x.t().contiguous(),
    "comparison": lambda m, x: x.t() > 2,
    "mse_loss, no reduction": lambda m, x: m.nn.functional.mse_loss(
        x.t(), m.ones(3, 2), reduction="none"),
    "row-major stays row-major": lambda m, x: x.exp() + x * 2,
    # the element-wise ops of two or three tensors computed by numpy (they were
    # row-major; found by the random programs' layouts)
    "hypot of a transpose": lambda m, x: m.hypot(x.t(), m.ones(3, 2)),
    "fmod of a transpose by a number": lambda m, x: m.fmod(x.t(), 1.5),
    "row-major copysign of a transpose": lambda m, x: m.copysign(m.ones(3, 2), x.t()),
    "xlogy with a column": lambda m, x: m.xlogy(x.t(), m.ones(3, 1)),
    "floor_divide of a transpose": lambda m, x: x.t() // 2,
    "clamp_min of a transpose by a tensor": lambda m, x: x.t().clamp_min(m.ones(3, 2)),
    "clamp of a transpose by tensors": lambda m, x: x.t().clamp(m.ones(3, 2), m.ones(2) * 5),
    "lerp of a transpose": lambda m, x: m.lerp(x.t(), m.ones(3, 2), 0.25),
    "addcmul of a transpose": lambda m, x: m.addcmul(x.t(), m.ones(3, 2), m.ones(3, 2)),
    "addcdiv onto a row-major": lambda m, x: m.addcdiv(m.ones(3, 2), x.t(), m.ones(3, 2)),
    "isclose of a transpose": lambda m, x: m.isclose(x.t(), m.ones(3, 2)),
    "transpose equals row-major": lambda m, x: x.t() == m.ones(3, 2),
    "bitwise and of a transposed mask": lambda m, x: (x.t() > 2) & (m.ones(3, 2) > 0),
    "where by a transposed condition": lambda m, x: m.where(x.t() > 2, m.ones(3, 2), 0.0),
    # (PyTorch's masked_fill clones into row-major order: minigrad's had kept x's)
    "masked_fill of a transpose": lambda m, x: x.t().masked_fill(x.t() > 2, 0.5),
    "zeros like a transpose": lambda m, x: m.zeros_like(x.t()),
    "ones like a transpose, float64": lambda m, x: m.ones_like(x.t(), dtype=m.float64),
    "full like a transpose": lambda m, x: m.full_like(x.t(), 2.0),
    "zeros like a permuted 3-D": lambda m, x: m.zeros_like(x.reshape(1, 2, 3).permute(2, 0, 1)),
}


def _layout(m, program: str):
    x = m.tensor(M23, requires_grad=True)
    y = LAYOUTS[program](m, x)
    try:
        y.view(-1)
        view = "ok"
    except RuntimeError as error:
        view = str(error)
    return y.shape, y.stride(), y.is_contiguous(), view, y.double().reshape(-1).tolist()


@pytest.mark.parametrize("program", list(LAYOUTS))
def test_element_wise_results_are_laid_out_as_in_pytorch(torch, program):
    import minigrad

    mg, pt = _layout(minigrad, program), _layout(torch, program)
    assert mg[:4] == (tuple(pt[0]), pt[1], pt[2], pt[3].replace("torch", "minigrad"))
    assert mg[4] == pytest.approx(pt[4])


def test_matrix_product_of_a_transposed_result_saves_its_strides(torch):
    # mm saves its operands' strides for backward: a result that kept its operand's
    # transposed layout is saved as column-major, and its gradient comes back so.
    import minigrad

    def saved(m):
        x = m.tensor(M23, requires_grad=True)
        a = x.t().exp()
        out = a @ m.ones(2, 4)
        out.sum().backward()
        return (out.grad_fn._saved_self_sym_strides, x.grad.stride(),
                x.grad.double().reshape(-1).tolist())

    mg, pt = saved(minigrad), saved(torch)
    assert mg[:2] == pt[:2]
    assert mg[2] == pytest.approx(pt[2])


# A leaf's `.grad` follows the leaf's layout (PyTorch's layout contract).
LEAF_GRADS = {
    "times two": lambda m, w: w * 2,
    "exp": lambda m, w: w.exp(),
    "matrix product": lambda m, w: w @ m.ones(2, 2),
    "two streams": lambda m, w: w * 2 + w * 3,
    "through t()": lambda m, w: w.t() * 2,
}


def _leaf_grad(m, program: str, leaf: str, how: str):
    base = m.tensor(M23)
    w = (base.t() if leaf == "transposed" else base[:, ::2]).detach().requires_grad_()
    out = LEAF_GRADS[program](m, w).sum()
    if how == "backward(inputs=)":
        out.backward(inputs=[w])
    else:
        out.backward()
    return w.grad.stride(), w.grad._version, w.grad.double().reshape(-1).tolist()


@pytest.mark.parametrize("how", ["backward", "backward(inputs=)"])
@pytest.mark.parametrize("leaf", ["transposed", "strided"])
@pytest.mark.parametrize("program", list(LEAF_GRADS))
def test_leaf_grads_follow_the_leafs_layout(torch, program, leaf, how):
    import minigrad

    mg, pt = _leaf_grad(minigrad, program, leaf, how), _leaf_grad(torch, program, leaf, how)
    assert mg[:2] == pt[:2]
    assert mg[2] == pytest.approx(pt[2])


# Gradient streams laid out in a permuted 3-D order: the first stream is a fresh
# array that owns its memory (as a fresh PyTorch tensor does) and is dense, so the
# second is added into it in place, and the leaf's `.grad` counts that write in its
# `_version`. (q is x permuted; c is laid out as q.)
PERMUTED_STREAMS = {
    "two streams": lambda q, c: q * c + q * c,
    "exp and a product": lambda q, c: (q * c).exp() + q * c,
    "three streams": lambda q, c: q * c + q * c + (q * c).sin(),
    "transposed, for comparison": lambda q, c: q.transpose(0, 2) * 2 + q.transpose(0, 2) * 3,
}


@pytest.mark.parametrize("program", list(PERMUTED_STREAMS))
def test_permuted_gradient_streams_sum_in_place_as_in_pytorch(torch, program):
    import minigrad

    def run(m):
        x = m.arange(24.0).reshape(2, 3, 4).div(24).requires_grad_()
        c = m.ones(2, 3, 4).add(1).permute(2, 0, 1)  # memory runs through dims 1, 2, 0
        PERMUTED_STREAMS[program](x.permute(2, 0, 1), c).sum().backward()
        return x.grad.stride(), x.grad._version, x.grad.double().reshape(-1).tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[:2] == pt[:2]
    assert mg[2] == pytest.approx(pt[2])


# The same for a 0-d tensor: the op's gradient is the first stream into x (its node
# was made last), then `x * 2`'s is added into it in place. numpy makes a scalar of a
# 0-d result (amax's, logsumexp's, nansum's, repeat's sum) and softmax's was a view
# of a one-element array: both added out of place (`.grad._version` 0, PyTorch's 1).
# Found by the random programs.
ZERO_D_STREAMS = {
    "amax": lambda x: x.amax(), "amin": lambda x: x.amin(),
    "logsumexp": lambda x: x.logsumexp(0), "nansum": lambda x: x.nansum(),
    "repeat": lambda x: x.repeat(2), "softmax": lambda x: x.softmax(0),
    "log_softmax": lambda x: x.log_softmax(-1),
    "expand (a view, for comparison)": lambda x: x.unsqueeze(0).expand(2, 1) * 1,
}


@pytest.mark.parametrize("program", list(ZERO_D_STREAMS))
def test_0d_gradient_streams_sum_in_place_as_in_pytorch(torch, program):
    import minigrad

    def run(m):
        x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
        (x * 2 + ZERO_D_STREAMS[program](x)).sum().backward()
        return x.grad._version, x.grad.item()

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert mg[1] == pytest.approx(pt[1])


EXPANDS = [((1, 1), (2, 1)), ((1,), (2, 1)), ((3,), (1, 3)), ((3,), (2, 1, 3)), ((3, 1), (3, 4)),
           ((1, 3), (1, 1, 3)), ((2, 1, 3), (2, 5, 3)), ((), (2, 1)), ((), (1,)), ((2,), (1, 1, 2))]


@pytest.mark.parametrize(("shape", "target"), EXPANDS, ids=str)
def test_expanded_views_have_pytorchs_strides(torch, shape, target):
    # A dim that keeps size 1 keeps its stride, as in PyTorch (numpy's broadcast_to
    # gives it 0): it shows in `stride()` and in what mm saves as `_saved_self_sym_strides`.
    import minigrad

    def strides(lib):
        x = lib.ones(shape, dtype=lib.float64)
        w = lib.ones(target[-1], 2, dtype=lib.float64, requires_grad=True)
        e = x.expand(target)
        saved = (e.reshape(-1, target[-1]) @ w).grad_fn._saved_self_sym_strides \
            if len(target) == 2 else None
        return e.stride(), e.is_contiguous(), saved

    assert strides(minigrad) == strides(torch)


# The gradient of an element-wise op of a transposed tensor, where the formula first
# scales `grad` alone (reciprocal's `-grad * (result * result)`, rsqrt's `-0.5 * grad *
# ...`): PyTorch's scaled gradient is a fresh row-major tensor (from `sum()`'s spread-out
# one), which lays out the result; the leaf's `.grad`, transposed back, is then a copy
# (version 1). minigrad's fused kernel had taken the saved result's layout (version 0).
# (Found by the random programs.) exp and sin, `grad * ...`, for comparison. max(),
# min() and median() share the gradient into PyTorch's row-major zeros (minigrad's had
# taken the input's layout, so the leaf's `.grad` was not a copy: version 0).
@pytest.mark.parametrize("op", ["reciprocal", "rsqrt", "exp", "sin", "max", "min", "median"])
@pytest.mark.parametrize("perm", [(1, 0), (2, 0, 1)], ids=str)
def test_gradients_of_a_transposed_tensor_are_laid_out_as_pytorchs(torch, op, perm):
    import numpy as np

    import minigrad

    def run(m):
        shape = (2, 3) if len(perm) == 2 else (2, 1, 3)
        x = m.tensor(np.arange(1.0, 7.0).reshape(shape), dtype=m.float64, requires_grad=True)
        y = getattr(x.permute(*perm), op)()
        y.sum().backward(retain_graph=True)
        first = x.grad._version
        (y * 2).sum().backward()
        return x.grad.stride(), first, x.grad._version, x.grad.tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[:3] == pt[:3]
    assert np.allclose(mg[3], pt[3], rtol=1e-12)


# A dim of size 1 has a stride too. numpy's contiguity ignores it, PyTorch's
# TensorIterator does not: unless every operand has the result's shape and is
# contiguous (its fast path), it sorts the dims by the operands' strides, a size-1
# dim's included, so `x.movedim(0, -1)` of a (1, 2, 1) `x` (strides (1, 1, 2)) lays a
# broadcast sum out column-major. A Python number counts as a 0-d operand (`x * 2`,
# `x > 0`, `where(c, grad, 0)`), so it takes that path too; `x.exp()` does not.
ODD_UNIT_STRIDES = {
    "x + x.movedim(0, -1)": lambda m, x: x + x.movedim(0, -1),
    "x.movedim(0, -1) + x": lambda m, x: x.movedim(0, -1) + x,
    "column of stride 2 plus a (1,)": lambda m, x: x[0].t() * 1 + m.ones(1),
    "column of stride 2 times a number": lambda m, x: x.movedim(0, -1) * 2,
    "column of stride 2 plus a number": lambda m, x: x.movedim(0, -1) + 2.5,
    "column of stride 2 compared with a number": lambda m, x: x.movedim(0, -1) > 1,
    "column of stride 2 exp (fast path)": lambda m, x: x.movedim(0, -1).exp(),
    "row of strides (1, 1) plus a row": lambda m, x: x.reshape(2, 1).t() + m.ones(2),
    "row of strides (1, 1) in float64": lambda m, x: x.reshape(2, 1).t().double() * 3,
    "where by a compared row": lambda m, x: m.where(x.reshape(2, 1).t() > 1, x.reshape(2, 1).t(),
                                                    m.ones(1, 1)),
    "maximum with a 1x1x1": lambda m, x: m.maximum(x.movedim(0, -1), m.ones(1, 1, 1)),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("program", list(ODD_UNIT_STRIDES))
def test_size_one_dims_strides_lay_results_out_as_in_pytorch(torch, program, requires_grad):
    import minigrad

    def run(m):
        x = m.tensor([[[1.0], [2.0]]], requires_grad=requires_grad)  # (1, 2, 1)
        y = ODD_UNIT_STRIDES[program](m, x)
        return tuple(y.shape), y.stride(), y.double().reshape(-1).tolist()

    assert run(minigrad) == run(torch)


def test_captured_gradient_keeps_size_one_dims_strides(torch):
    # grad() hands back the gradient the engine computed, a dim of size 1 keeping its
    # stride (minigrad's copy of it had taken the row-major one).
    import minigrad

    def run(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).reshape(1, 2, 3).permute(2, 1, 0)
        x.requires_grad_()
        g, = m.autograd.grad(x ** 2, x, m.ones(3, 2, 1) * 1)
        return g.stride(), g.tolist()

    assert run(minigrad) == run(torch)


def test_random_broadcasts_of_permuted_operands_are_laid_out_as_in_pytorch(torch):
    # Permutations of tensors with dims of size 1, broadcast against each other by
    # the element-wise ops that lay out a result from two tensors or a number.
    import random

    import minigrad

    ops = {"add": lambda m, a, b: a + b, "mul": lambda m, a, b: m.mul(a, b),
           "div": lambda m, a, b: a / b, "gt": lambda m, a, b: a > b,
           "maximum": lambda m, a, b: m.maximum(a, b), "atan2": lambda m, a, b: m.atan2(a, b),
           "where": lambda m, a, b: m.where(a > b, a, b), "plus a number": lambda m, a, b: a + 2,
           "compared with a number": lambda m, a, b: a > 0.5}
    rng = random.Random(0)
    checked = 0
    while checked < 300:
        nd = rng.choice([2, 3, 4])
        ndims = (nd, rng.choice([nd, nd - 1]))
        shapes = [[rng.choice([1, 1, 2, 3]) for _ in range(n)] for n in ndims]
        perms = [rng.sample(range(len(s)), len(s)) for s in shapes]
        try:
            torch.broadcast_shapes(*(torch.Size([s[i] for i in p]) for s, p in zip(shapes, perms)))
        except RuntimeError:
            continue
        name = rng.choice(sorted(ops))
        dtype = rng.choice(["float32", "float64"])
        got = []
        for m in (minigrad, torch):
            a, b = (m.arange(float(math_prod(s)), dtype=getattr(m, dtype)).reshape(s).permute(*p)
                    for s, p in zip(shapes, perms))
            y = ops[name](m, a, b)
            got.append((tuple(y.shape), y.stride()))
        assert got[0] == got[1], (name, dtype, shapes, perms)
        checked += 1


def math_prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ldexp is `input * 2**other` in PyTorch, the power `pow(2.0, other)` (row-major
# whatever other's layout) for a float32 or integer input, `full((), 2.0).pow(other)`
# (laid out as other) for float64; a float input with an integer exponent goes to its
# own kernel instead, writing into `empty_like(input)`, resized (with a warning) where
# the exponent broadcasts it, and it takes no bool exponent.
LDEXPS = [("float32", "float32", (3, 1), False), ("float64", "float64", (3, 1), False),
          ("float32", "float64", (3, 1), False), ("int64", "float32", (3, 1), False),
          ("float32", "int64", (3, 1), False), ("float64", "int64", (3, 2), True),
          ("float32", "int64", (1, 2), True), ("float64", "bool", (3, 1), False),
          ("float64", "bool", (3, 2), True), ("int64", "bool", (3, 1), False)]


@pytest.mark.parametrize(("input_dtype", "exponent_dtype", "shape", "transposed"), LDEXPS)
def test_ldexp_is_laid_out_as_in_pytorch(torch, input_dtype, exponent_dtype, shape,
                                         transposed):
    import warnings

    import minigrad

    def run(m):
        x = (m.arange(6).reshape(3, 2) % 4).to(getattr(m, input_dtype))[:shape[0], :shape[1]]
        x = x.t().contiguous().t() if transposed else x.contiguous()
        n = (m.arange(6).reshape(2, 3) % 3).to(getattr(m, exponent_dtype)).t()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                y = m.ldexp(x, n)
            except NotImplementedError as error:
                y = str(error)
        said = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        if isinstance(y, str):
            return y, said
        return str(y.dtype).split(".")[-1], y.stride(), y.double().tolist(), said

    assert run(minigrad) == run(torch)


# The gradients of a permuted tensor, for ops whose backward PyTorch lays out by the
# input: erf's `2 / sqrt(pi) * exp(-self**2) * grad` multiplies the gradient last, into
# a factor laid out as self (minigrad's fused kernel had been laid out by the gradient
# first: row-major); take's `zeros_like(self).put_(index, grad)` starts from zeros laid
# out as self (minigrad's zeros were row-major, and its put_ refused to write into
# anything else); maximum's `where(self == other, grad / 2, grad)` is laid out by the
# comparison, which minigrad computed on arrays as numpy lays it out. A permuted leaf
# then keeps its gradient as is (version 0 for erf), and the gradient through
# permute() is row-major again.
PERMUTED_GRADS = {
    "erf": lambda m, x: x.erf(),
    "erfc": lambda m, x: x.erfc(),
    "erfinv": lambda m, x: (x * 0.1).erfinv(),
    "take": lambda m, x: x.take(m.tensor([0, 3, 1, 3])),
    "put": lambda m, x: x.put(m.tensor([0, 4]), m.tensor([9.0, 8.0], dtype=m.float64)),
    "maximum with a row": lambda m, x: m.maximum(x, m.ones(x.shape[-1], dtype=m.float64) * 3),
    "minimum with itself flipped": lambda m, x: m.minimum(x, x.flip(0)),
    # (`grad * (result / self)` and `(2 / (n - 1) * grad) * (self - mean)`: each
    # step laid out by its operands, a size-1 dim's stride too)
    "prod over the last dim, kept": lambda m, x: x.prod(-1, keepdim=True),
    "var over the last dim, kept": lambda m, x: x.var(-1, keepdim=True),
    "std over dim 0": lambda m, x: x.std(0),
    # (relu's threshold_backward and clamp's where(min <= self <= max, grad, 0) take
    # self first; masked_select's backward scatters into zeros_like(self))
    "relu": lambda m, x: (x - 3).relu(),
    "clamp": lambda m, x: x.clamp(2, 5),
    "masked_select": lambda m, x: x.masked_select(x > 3),
}


@pytest.mark.parametrize("op", list(PERMUTED_GRADS))
@pytest.mark.parametrize(("shape", "perm"), [((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)),
                                             ((4, 1, 3), (2, 1, 0))], ids=str)
def test_gradients_of_permuted_inputs_are_laid_out_as_in_pytorch(torch, op, shape, perm):
    import numpy as np

    import minigrad

    def run(m):
        base = m.arange(float(math_prod(shape)), dtype=m.float64).reshape(shape) % 7 + 1
        leaf = base.permute(*perm).detach().requires_grad_()
        y = PERMUTED_GRADS[op](m, leaf)
        (y * m.ones(y.shape, dtype=y.dtype)).sum().backward()
        root = base.clone().requires_grad_()
        y2 = PERMUTED_GRADS[op](m, root.permute(*perm))
        g, = m.autograd.grad((y2 * 1.5).sum(), root)
        return (y.stride(), leaf.grad.stride(), leaf.grad._version, g.stride(), g._version,
                leaf.grad.tolist(), g.tolist())

    mg, pt = run(minigrad), run(torch)
    assert mg[:5] == pt[:5]
    assert np.allclose(mg[5], pt[5], rtol=1e-12) and np.allclose(mg[6], pt[6], rtol=1e-12)



# TensorIterator's fast setup, where every operand has the result's shape (no number
# among them): 4-D operands that are all channels-last give a channels-last result,
# operands that are all dense with the same strides give those strides, a size-1 dim's
# included; sorting the dims, as minigrad did, puts the size-1 dims elsewhere. A
# number among the operands (`a + 1`) turns the fast setup off: then the sort decides.
FAST_SETUPS = {
    "channels-last squared": lambda m, a: a ** 2,
    "channels-last exp": lambda m, a: a.exp(),
    "channels-last times itself": lambda m, a: a * a,
    "channels-last plus a number": lambda m, a: a + 1,
    "channels-last compared": lambda m, a: a > 1,
    "dense with a size-1 dim, exp": lambda m, a: a.reshape(3, 1, 3).movedim(1, 0).exp(),
    "dense with a size-1 dim, maximum": lambda m, a: m.maximum(a[0].mT, a[0].mT),
}


@pytest.mark.parametrize("program", list(FAST_SETUPS))
def test_fast_setup_layouts_as_in_pytorch(torch, program):
    import minigrad

    def run(m):
        a = m.arange(9.0).reshape(1, 3, 1, 3).permute(2, 3, 1, 0)  # (1, 3, 3, 1), (3, 1, 3, 9)
        y = FAST_SETUPS[program](m, a)
        return tuple(y.shape), y.stride(), y.double().reshape(-1).tolist()

    assert run(minigrad) == run(torch)


# PyTorch allocates the result of prod, var, std and cumprod row-major whatever the
# input's layout (minigrad's numpy reductions had kept a permuted input's layout).
@pytest.mark.parametrize("op", ["prod", "var", "std", "cumprod", "sum", "mean"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize(("shape", "perm"), [((2, 3, 4), (2, 0, 1)), ((4, 1, 3), (2, 1, 0))],
                         ids=str)
def test_reductions_of_permuted_inputs_are_row_major(torch, op, dim, keepdim, shape, perm):
    import warnings

    import numpy as np

    import minigrad

    def run(m):
        x = (m.arange(float(math_prod(shape)), dtype=m.float64).reshape(shape) % 5 + 1)
        x = x.permute(*perm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (no degrees of freedom left over a size-1 dim)
            y = x.cumprod(dim) if op == "cumprod" else getattr(x, op)(dim, keepdim=keepdim)
        return tuple(y.shape), y.stride(), y.reshape(-1).tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[:2] == pt[:2]
    assert np.allclose(mg[2], pt[2], rtol=1e-12, equal_nan=True)


# grad() returns the gradient the engine captured itself: a sum's or an expand's
# spread-out gradient keeps its 0 strides and views the caller's grad_outputs (sharing
# its version counter, and refusing in-place writes through a 0 stride); minigrad had
# returned a dense copy. A mean's division makes a new tensor, and a leaf's `.grad`
# follows AccumulateGrad's layout contract, dense either way.
EXPANDED_GRADS = {
    "sum over dim 0": lambda x: x.sum(0),
    "sum over dim 1": lambda x: x.sum(1),
    "sum over dim 1, kept": lambda x: x.sum(1, keepdim=True),
    "sum over both dims": lambda x: x.sum((0, 1)),
    "sum of all": lambda x: x.sum(),
    "mean over dim 0": lambda x: x.mean(0),
    "sum of an expand": lambda x: x[:1].expand(4, 3).sum(0),
    "sum of a non-leaf": lambda x: (x * 2).sum(0),
}


@pytest.mark.parametrize("program", list(EXPANDED_GRADS))
def test_grad_returns_the_spread_out_gradient_as_it_is(torch, program):
    import minigrad

    def run(m):
        x = m.tensor(M23, requires_grad=True)
        y = EXPANDED_GRADS[program](x)
        given = m.ones(y.shape) * 2
        g, = m.autograd.grad(y, x, given)
        try:
            g.add_(1)
            written = "ok"
        except RuntimeError as error:
            written = str(error)
        given.add_(1)  # (seen through a view of it)
        x2 = m.tensor(M23, requires_grad=True)
        EXPANDED_GRADS[program](x2).backward(m.ones(y.shape))
        return (g.stride(), g.is_contiguous(), written, g._version, g.tolist(),
                x2.grad.stride())

    assert run(minigrad) == run(torch)


def test_grad_of_a_non_leaf_keeps_its_0_strides(torch):
    import minigrad

    def run(m):
        x = m.tensor(M23, requires_grad=True)
        h = x * 2
        g, = m.autograd.grad(h.sum(1), h, m.ones(2))
        return g.stride(), g.tolist()

    assert run(minigrad) == run(torch)


# Gradients of permuted leaves, dims of size 1 among them, through grad() and into
# `.grad` (kept as it comes where it fits the leaf's layout, so a size-1 dim's stride
# shows), with a second operand of the permuted shape, of its last dim or all ones.
# threshold_backward's TensorIterator takes self before grad_output (minigrad's
# np.where had laid the gradient out by grad alone). pow's gradients are PyTorch's
# nested formulas (`grad * (exponent * self.pow(exponent - 1))`, `grad * where(cond,
# 0, result * self.log())`), each step laid out by its own operands, where minigrad's
# fused kernels had laid the result out by one sort over all of them; atan2's too
# (`grad * other * recip`, the reciprocal masked in place, so it keeps its layout).
PERMUTED_LEAF_GRADS = {
    "threshold at 3": lambda m, x, o: m.nn.functional.threshold(x, 3.0, -1.0),
    "threshold at 0": lambda m, x, o: m.nn.functional.threshold(x, 0.0, 0.0),
    "pow by a number": lambda m, x, o: x ** 2.5,
    "pow by a tensor": lambda m, x, o: (x.abs() + 0.5) ** o,
    "a tensor to the power": lambda m, x, o: o.abs() ** x,
    "itself to its power": lambda m, x, o: (x.abs() + 0.5) ** x,
    "a number to the power": lambda m, x, o: 2.0 ** x,
    "zero to the power": lambda m, x, o: 0.0 ** (x - 3),
    "atan2 over another": lambda m, x, o: m.atan2(x, o),
    "atan2 of another": lambda m, x, o: m.atan2(o, x),
    # (`grad * (self - result).exp()`, grad and result unsqueezed with PyTorch's
    # strides for the new dims; numpy's expand_dims and one product had differed)
    "logsumexp over the last dim": lambda m, x, o: x.logsumexp(-1),
    "logsumexp over dim 1, kept": lambda m, x, o: x.logsumexp(1, keepdim=True),
    "logsumexp over dims 0 and -1": lambda m, x, o: x.logsumexp((0, -1)),
    # (`sum_backward(...) * self.isnan().logical_not()`, the spread-out gradient
    # first; nanmean divides by a count, an integer sum, which is row-major)
    "nansum over dim 1": lambda m, x, o: x.nansum(1),
    "nansum of all": lambda m, x, o: x.nansum(),
    "nanmean over dim 1": lambda m, x, o: x.nanmean(1),
    "nanmean over the last dim, kept": lambda m, x, o: x.nanmean(-1, keepdim=True),
    "nanmean of all": lambda m, x, o: x.nanmean(),
}


# PyTorch allocates an integer or bool sum row-major too (numpy's kept the input's
# layout: nanmean's count of a permuted input divided its gradient in that layout).
@pytest.mark.parametrize("dims", [1, (0, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("kind", ["bool", "int64"])
def test_integer_sums_of_permuted_inputs_are_row_major(torch, dims, keepdim, kind):
    import minigrad

    def run(m):
        x = (m.arange(24.0).reshape(2, 3, 4) % 7).permute(2, 0, 1)
        x = x == 3 if kind == "bool" else x.long()
        y = x.sum(dims, keepdim=keepdim)
        return tuple(y.shape), y.stride(), y.reshape(-1).tolist()

    assert run(minigrad) == run(torch)
PERMUTED_LEAVES = [((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((4, 1, 3), (2, 1, 0)),
                   ((1, 3, 1), (2, 0, 1)), ((3, 1, 4), (0, 2, 1)), ((1, 4), (1, 0))]


@pytest.mark.parametrize("op", list(PERMUTED_LEAF_GRADS))
@pytest.mark.parametrize(("shape", "perm"), PERMUTED_LEAVES, ids=str)
@pytest.mark.parametrize("other", ["same", "last", "ones"])
def test_gradients_of_permuted_leaves_with_size_one_dims(torch, op, shape, perm, other):
    import warnings

    import numpy as np

    import minigrad

    permuted = tuple(shape[p] for p in perm)
    other_shape = {"same": permuted, "last": permuted[-1:], "ones": (1,) * len(permuted)}[other]

    def run(m):
        base = m.arange(float(math_prod(shape)), dtype=m.float64).reshape(shape) % 7 + 1
        x = base.permute(*perm).detach().requires_grad_()
        o = m.arange(float(math_prod(other_shape)), dtype=m.float64).reshape(other_shape)
        o = (o % 5 - 1.5).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = PERMUTED_LEAF_GRADS[op](m, x, o)
            g, go = m.autograd.grad((y * 1.5).sum(), [x, o], allow_unused=True)
            x2 = base.permute(*perm).detach().requires_grad_()
            PERMUTED_LEAF_GRADS[op](m, x2, o.detach()).sum().backward()
        return ((g.stride(), None if go is None else go.stride(), x2.grad.stride(),
                 x2.grad._version), g.tolist(), x2.grad.tolist())

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert np.allclose(mg[1], pt[1], rtol=1e-12, equal_nan=True)
    assert np.allclose(mg[2], pt[2], rtol=1e-12, equal_nan=True)


# cumprod's gradient (no zero among the factors): `reversed_cumsum(result * grad) /
# input`, the cumsum row-major, so the division lays it out (numpy's one expression
# had differed for permuted inputs with size-1 dims).
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize(("shape", "perm"), PERMUTED_LEAVES, ids=str)
def test_cumprod_gradient_of_a_permuted_leaf_as_in_pytorch(torch, shape, perm, dim):
    import numpy as np

    import minigrad

    def run(m):
        base = m.arange(float(math_prod(shape)), dtype=m.float64).reshape(shape) % 7 + 1
        x = base.permute(*perm).detach().requires_grad_()
        g, = m.autograd.grad((x.cumprod(dim) * 1.5).sum(), x)
        return g.stride(), g.tolist()

    mg, pt = run(minigrad), run(torch)
    assert mg[0] == pt[0]
    assert np.allclose(mg[1], pt[1], rtol=1e-12)


# A leaf's first `.grad`, when AccumulateGrad copies the incoming gradient (here
# `clone`'s backward hands on `sum()`'s spread-out one): PyTorch's copy takes the
# leaf's strides exactly, a dim of size 1 included (numpy's copy chose that one itself).
@pytest.mark.parametrize(("shape", "perm"), PERMUTED_LEAVES + [((1, 3, 1), (0, 2, 1))], ids=str)
def test_a_copied_first_grad_keeps_the_leafs_strides(torch, shape, perm):
    import minigrad

    def run(m):
        base = m.arange(float(math_prod(shape)), dtype=m.float64).reshape(shape)
        x = base.permute(*perm).detach().requires_grad_()
        x.clone().sum().backward()
        return x.stride(), x.grad.stride(), x.grad._version, x.grad.tolist()

    assert run(minigrad) == run(torch)

"""Each derivative has one source, its formulas: a node's plain backward (which runs on
arrays: the formulas compiled for arrays, `ArrayFormulaNode`, whose helpers may run a
fused kernel on arrays, `@on_arrays`; or a hand-written backward not converted yet)
gives what its formulas give run on tensors (what a `create_graph=True` backward
runs), for every node class the sample programs below reach. Every node class with
formulas (but the declared element-wise ops, whose fused kernels
`test_declarations.py` compares bit for bit) must be reached here, by itself or by a
class whose formulas it shares, or be named in `NOT_YET_REACHED`: this is the one
registry-wide test of every array version against its formula."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.autograd.graph import Node
from minigrad.ops.declaration import DECLARATIONS
from minigrad.ops.formulas import BACKWARD_OPS, ArrayFormulaNode, FormulaNode

F64 = minigrad.float64


def _x(*shape, positive=False, seed=0):
    rng = np.random.default_rng(seed + len(shape) * 7 + sum(shape))
    values = rng.uniform(0.5, 2.0, shape) if positive else rng.normal(0, 1, shape)
    return minigrad.tensor(values, dtype=F64, requires_grad=True)


def _square():
    """A well-conditioned symmetric positive definite 3x3 matrix made from a leaf."""
    g = _x(3, 3, seed=40)
    return g @ g.mT + 3 * minigrad.eye(3, dtype=minigrad.float64)


def _programs():
    """One op each, on leaves that require grad (float64)."""
    a, b, m, v = _x(3, 4), _x(3, 4, seed=1), _x(4, 5, seed=2), _x(4, seed=3)
    p, s = _x(3, 4, positive=True), _x(2, 3, 4, seed=4)
    idx = minigrad.tensor([2, 0, 2])
    F = minigrad.nn.functional
    return {
        "add": lambda: a + b, "add_alpha": lambda: a.add(b, alpha=2.5),
        "add_number": lambda: a + 2.0, "sub": lambda: a - b,
        "sub_alpha": lambda: a.sub(b, alpha=3), "rsub_number": lambda: 2.0 - a,
        "rsub_tensors": lambda: a.__rsub__(b), "mul": lambda: a * b,
        "mul_number": lambda: a * 2.5, "div": lambda: a / p, "div_number": lambda: a / 4.0,
        "div_rounded": lambda: a.div(p, rounding_mode="floor"),
        "pow_number": lambda: a ** 3, "pow_tensors": lambda: p ** b, "rpow": lambda: 2.0 ** a,
        "clamp": lambda: a.clamp(-0.5, 0.5),
        "sum": lambda: a.sum(), "sum_dim": lambda: a.sum(1), "sum_keep": lambda: a.sum(0, True),
        "mean": lambda: a.mean(), "mean_dim": lambda: a.mean(1),
        "mean_dims_keep": lambda: s.mean((0, -1), True), "mean_all_dims": lambda: s.mean(None),
        "sum_all_dims": lambda: s.sum(()), "sum_dims": lambda: s.sum((-1, 0)),
        "mean_empty": lambda: _x(0, 3).mean(0), "sum_0d": lambda: _x().sum(0),
        "max": lambda: a.max(), "max_dim": lambda: a.max(1)[0],
        "prod": lambda: p.prod(1), "var": lambda: a.var(1), "std": lambda: a.std(),
        "cumsum": lambda: a.cumsum(1), "norm": lambda: a.norm(),
        "view": lambda: a.view(4, 3), "reshape": lambda: a.t().reshape(12),
        "t": lambda: a.t(), "transpose": lambda: s.transpose(0, -1),
        "permute": lambda: s.permute(2, 0, 1), "squeeze": lambda: _x(3, 1).squeeze(),
        "squeeze_dim": lambda: _x(3, 1).squeeze(-1), "unsqueeze": lambda: a.unsqueeze(-1),
        "select": lambda: a[1], "slice": lambda: a[:, 1:3], "expand": lambda: v.expand(3, 4),
        "alias": lambda: a[...], "unbind": lambda: a.unbind(1), "split": lambda: a.split(3, 1),
        "mm": lambda: a.mm(m), "mv": lambda: m.t().mv(v), "dot": lambda: v.dot(v * 2),
        "matmul": lambda: s.matmul(m), "bmm": lambda: s.bmm(_x(2, 4, 2, seed=5)),
        "linear": lambda: minigrad.nn.functional.linear(a, m.t(), _x(5, seed=6)),
        # (the products' other branches: a column-major operand, alpha and beta, one
        # operand without grad)
        "mm_column_major": lambda: a.t().mm(b), "mm_one_grad": lambda: a.detach().mm(m),
        "addmm_scaled": lambda: minigrad.addmm(_x(5, seed=6), a, m, beta=0.5,
                                               alpha=-1.5),
        "addmm_column_major": lambda: minigrad.addmm(_x(4, 4, seed=6), a.t(), b, alpha=2),
        "mv_one_grad": lambda: m.t().detach().mv(v),
        "cat": lambda: minigrad.cat([a, b], 0), "stack": lambda: minigrad.stack([a, b], 1),
        "index": lambda: a[idx], "narrow": lambda: a.narrow(1, 1, 2),
        "where": lambda: minigrad.where(a > 0, a, b),
        "masked_fill": lambda: a.masked_fill(a > 0, 1.5),
        "softmax": lambda: a.softmax(1), "log_softmax": lambda: a.log_softmax(0),
        "relu": lambda: a.relu(), "sigmoid": lambda: a.sigmoid(), "tanh": lambda: a.tanh(),
        "prod_all": lambda: p.prod(), "min": lambda: a.min(), "min_dim": lambda: a.min(1)[0],
        "maximum": lambda: minigrad.maximum(a, b), "minimum": lambda: minigrad.minimum(a, b),
        "clone": lambda: a.clone(), "to": lambda: a.to(minigrad.float32),
        "diagonal": lambda: a.diagonal(), "abs": lambda: a.abs(), "sign": lambda: a.sign(),
        "masked_fill_tensor": lambda: a.masked_fill(a > 0, b.sum()),
        "round": lambda: a.round(), "round_decimals": lambda: a.round(decimals=1),
        "split_sizes": lambda: a.split([1, 3], 1),
        "copy_": lambda: a.clone().copy_(b), "zero_": lambda: a.clone().zero_(),
        # (shape, picking and padding ops)
        "diag_embed": lambda: a.diag_embed(), "diag": lambda: minigrad.diag(a),
        "repeat": lambda: a.repeat(2, 1), "roll": lambda: a.roll(1, 1),
        "rot90": lambda: a.rot90(), "tril": lambda: a.tril(), "triu": lambda: a.triu(1),
        "unfold": lambda: s.unfold(2, 2, 1), "pad": lambda: F.pad(a, (1, 2)),
        **{f"pad_{mode}_{n}d": (lambda mode=mode, n=n: F.pad(
            _x(1, 2, *(4, 5, 3)[:n], seed=20 + n), (1, 2) * n, mode=mode))
           for mode in ("reflect", "replicate") for n in (1, 2, 3)},
        "pixel_shuffle": lambda: F.pixel_shuffle(_x(1, 4, 2, 3, seed=14), 2),
        "pixel_unshuffle": lambda: F.pixel_unshuffle(_x(1, 1, 4, 6, seed=15), 2),
        "channel_shuffle": lambda: F.channel_shuffle(_x(1, 4, 2, 2, seed=16), 2),
        "adaptive_avg_pool2d": lambda: F.adaptive_avg_pool2d(_x(1, 2, 4, 5, seed=17), (2, 3)),
        # (element-wise functions and losses written as formulas)
        "angle": lambda: a.angle(), "frac": lambda: a.frac(), "glu": lambda: F.glu(a, 1),
        "hardshrink": lambda: F.hardshrink(a, 0.3), "softshrink": lambda: F.softshrink(a, 0.3),
        "hardtanh": lambda: F.hardtanh(a, -0.5, 0.5),
        "threshold": lambda: F.threshold(a, 0.1, 2.0),
        "soft_margin_loss": lambda: F.soft_margin_loss(a, b.sign().detach()),
        "pairwise_distance": lambda: F.pairwise_distance(a, b),
        # (reductions, sorts and scans)
        "logsumexp": lambda: a.logsumexp(1), "logcumsumexp": lambda: a.logcumsumexp(1),
        "median": lambda: a.median(), "nansum": lambda: a.nansum(), "amax": lambda: a.amax(1),
        "sort": lambda: a.sort(1), "kthvalue": lambda: a.kthvalue(2, 1),
        "cummax": lambda: a.cummax(1),
        # (linear algebra: scaled products, factorisations)
        "addmv": lambda: minigrad.addmv(_x(3, seed=30), a, v),
        "addr": lambda: minigrad.addr(a, _x(3, seed=31), v),
        "baddbmm": lambda: minigrad.baddbmm(_x(2, 3, 2, seed=32), s, _x(2, 4, 2, seed=33)),
        "addbmm": lambda: minigrad.addbmm(_x(3, 2, seed=34), s, _x(2, 4, 2, seed=35)),
        "vdot": lambda: v.vdot(v * 2),
        "linalg_cross": lambda: minigrad.linalg.cross(_x(2, 3, seed=36), _x(2, 3, seed=37)),
        "det": lambda: minigrad.linalg.det(_square()),
        "slogdet": lambda: (minigrad.linalg.slogdet(_square())[1],),
        "inv": lambda: minigrad.linalg.inv(_square()),
        "solve": lambda: minigrad.linalg.solve(_square(), _x(3, 2, seed=38)),
        "cholesky": lambda: minigrad.linalg.cholesky(_square()),
        "cholesky_deprecated": lambda: minigrad.cholesky(_square()),
        "svd": lambda: tuple(minigrad.linalg.svd(_x(4, 3, seed=41), full_matrices=False)),
        "svd_full_wide": lambda: tuple(minigrad.linalg.svd(_x(3, 5, seed=42))),
        "solve_triangular": lambda: minigrad.linalg.solve_triangular(
            _square().triu(), _x(3, 2, seed=39), upper=True),
        "fill_": lambda: a.clone().fill_(2.0), "fill_tensor": lambda: a.clone().fill_(b.sum()),
        "gelu": lambda: F.gelu(a), "leaky_relu": lambda: F.leaky_relu(a, 0.1),
        "prelu": lambda: F.prelu(a, b.reshape(-1)[:1] * 0.5),
        "rrelu": lambda: F.rrelu(a, 0.1, 0.3), "rrelu_training": lambda: F.rrelu(a, training=True),
        "bce": lambda: F.binary_cross_entropy(a.sigmoid(), b.sigmoid().detach()),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(a, b.sigmoid().detach()),
        "huber": lambda: F.huber_loss(a, b), "smooth_l1": lambda: F.smooth_l1_loss(a, b),
        "huber_none": lambda: F.huber_loss(a, b, reduction="none", delta=0.5),
        "smooth_l1_sum": lambda: F.smooth_l1_loss(a, b, reduction="sum", beta=0.5),
        "bce_weighted_sum": lambda: F.binary_cross_entropy(
            a.sigmoid(), b.sigmoid().detach(), weight=p[0].detach(), reduction="sum"),
        "bce_none_target": lambda: F.binary_cross_entropy(a.sigmoid().detach(), b.sigmoid(),
                                                          reduction="none"),
        "bce_logits_weights": lambda: F.binary_cross_entropy_with_logits(
            a, b.sigmoid(), weight=p[:, :1].detach(), pos_weight=p[0].detach()),
        "bce_logits_none": lambda: F.binary_cross_entropy_with_logits(
            a, b.sigmoid(), pos_weight=p[1].detach(), reduction="none"),
        "index_mask": lambda: s[s[:, :, 0] > 0], "index_lists": lambda: s[[1, 0, 1], :, [0, 3, 3]],
        "index_put": lambda: _put(a, (minigrad.tensor([2, 0]),), b[:2]),
        "index_put_mask": lambda: _put(a, (a > 0.3,), v.sum()),
        "index_put_impl": lambda: BACKWARD_OPS["index_backward"](
            a * 1.0, (None, minigrad.tensor([3, 0, 3, 1])), _x(3, 4, seed=42)),
        "layer_norm": lambda: F.layer_norm(a, (4,)),
        "layer_norm_affine": lambda: F.layer_norm(s, (3, 4), _x(3, 4, seed=42), _x(3, 4, seed=43)),
        "layer_norm_bias_only": lambda: F.layer_norm(s, (4,), None, _x(4, seed=44)),
        "batch_norm": lambda: F.batch_norm(_x(4, 3, 5, seed=45), minigrad.zeros(3, dtype=F64),
                                           minigrad.ones(3, dtype=F64), _x(3, seed=46),
                                           _x(3, seed=47), training=True),
        "batch_norm_eval": lambda: F.batch_norm(
            _x(4, 3, seed=48), minigrad.tensor([0.1, -0.2, 0.3], dtype=F64),
            minigrad.tensor([1.5, 0.5, 2.0], dtype=F64), _x(3, seed=49), None),
        "mse_loss": lambda: minigrad.nn.functional.mse_loss(a, b),
        "cross_entropy": lambda: minigrad.nn.functional.cross_entropy(a, idx),
        "conv2d": lambda: F.conv2d(_x(2, 2, 5, 5, seed=7), _x(3, 2, 3, 3, seed=8),
                                   _x(3, seed=9), padding=1),
        "conv1d_grouped": lambda: F.conv1d(_x(1, 4, 6, seed=10), _x(4, 2, 2, seed=11),
                                           stride=2, groups=2),
        "max_pool2d": lambda: F.max_pool2d(_x(1, 2, 4, 4, seed=12), 2),
        "avg_pool2d": lambda: F.avg_pool2d(_x(1, 2, 4, 5, seed=13), 2, padding=1),
        # (the Scalar overloads and backward ops that only formulas call)
        "add_scalar": lambda: BACKWARD_OPS["add_scalar"](a, 2.5),
        "mul_scalar": lambda: BACKWARD_OPS["mul_scalar"](a, 2.5),
        "div_scalar": lambda: BACKWARD_OPS["div_scalar"](a, 4.0),
        "cumprod": lambda: p.cumprod(1),
        "cumprod_zero": lambda: (p * (a > 0)).cumprod(0),
        "flip": lambda: BACKWARD_OPS["flip"](s, (0, -1)),
        "index_select": lambda: BACKWARD_OPS["index_select"](a, 1, idx),
        "logit": lambda: BACKWARD_OPS["logit"](a.sigmoid(), None),
        "logit_eps": lambda: BACKWARD_OPS["logit"](a.sigmoid(), 0.3),
        "log_sigmoid": lambda: BACKWARD_OPS["log_sigmoid"](a),
        "embedding": lambda: F.embedding(minigrad.tensor([[0, 2], [2, 1]]), a, padding_idx=1),
        "leaky_relu_": lambda: F.leaky_relu(a * 1.0, 0.1, inplace=True),
        "prod_zero": lambda: (p * (a > 0)).prod(1), "prod_all_zero": lambda: (p * (a > 0)).prod(),
        "var_all": lambda: s.var(None, correction=0),
        "std_dims": lambda: s.std((0, 2), keepdim=True),
        "norm_1": lambda: minigrad.linalg.vector_norm(a, 1, dim=-1),
        "norm_inf": lambda: minigrad.linalg.vector_norm(a, float("inf"), dim=0),
        "norm_3": lambda: minigrad.linalg.vector_norm(s, 3, dim=(0, 1), keepdim=True),
        "max_dim_keep": lambda: a.max(0, True)[0], "cumsum_0": lambda: s.cumsum(0),
        "unbind_0": lambda: s.unbind(0), "chunk": lambda: s.chunk(2, -1),
        "softmax_0d": lambda: _x().softmax(0), "clamp_min": lambda: a.clamp(min=0.1),
        "pow_zero": lambda: a ** 0, "pow_half": lambda: p ** 0.5,
        "mul_broadcast": lambda: a * v, "div_broadcast": lambda: p / _x(4, positive=True),
        "where_number": lambda: minigrad.where(a > 0, a, 0.0),
        "mse_sum": lambda: F.mse_loss(a, b, reduction="sum"),
        "nll_weighted": lambda: F.nll_loss(a.log_softmax(1), idx, weight=p[0].detach(),
                                           ignore_index=0),
        "nll2d_weighted": lambda: F.nll_loss(
            _x(2, 3, 2, 2, seed=40), minigrad.tensor([[[0, 2], [1, 2]], [[2, 1], [0, 0]]]),
            weight=p[0, :3].detach(), ignore_index=1),
        "nll2d_none_3d": lambda: F.nll_loss(_x(2, 3, 4, seed=41),
                                            minigrad.tensor([[0, 2, 1, 1], [2, 0, 0, 1]]),
                                            reduction="none"),
    }


def _put(x, index: tuple, values):
    """`x[index] = values` on a copy of `x` (IndexPutBackward0)."""
    y = x * 1.0
    y[index] = values
    return y


# Node classes with formulas whose plain backward is written by hand and that the
# programs above do not reach yet: each is a hand-written twin of its formulas that
# no test here compares with them. (The Scalar overloads and the ops below are ones
# only formulas call, not in the namespace: `BACKWARD_OPS`.)
NOT_YET_REACHED: set[str] = set()


def _summed_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    """A gradient summed down to its input's shape, as the engine sums it."""
    if a.shape == shape:
        return a
    return minigrad.tensor(a).sum_to_size(shape).numpy()


def _check(node: Node, grads: list[np.ndarray]) -> None:
    with minigrad.no_grad():
        plain = node.apply(grads)  # (`backward(*grads)`, or a multi-output node's own)
        # (the node's own: a node whose inputs' gradients come from one call has its own)
        by_formula = node.apply_recording([minigrad.tensor(g) for g in grads])
    for i, (got, want) in enumerate(zip(plain, by_formula)):
        if not node.needs_grad(i):
            continue
        leaf = getattr(node.next_functions[i][0], "variable", None)
        shape = None if leaf is None else tuple(leaf.shape)
        want = want.numpy()
        got = np.asarray(got)
        if shape is not None:
            got, want = _summed_to(got, shape), _summed_to(want, shape)
        assert got.dtype == want.dtype, (type(node).__name__, i)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15,
                                   err_msg=f"{type(node).__name__} input {i}")


@pytest.mark.parametrize("name", sorted(_programs()))
def test_a_plain_backward_gives_what_its_formulas_give(name):
    out = _programs()[name]()
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(5)
    grads = [rng.normal(0, 1, o.shape) for o in outs]
    node = outs[0].grad_fn
    if not type(node).formulas or not type(node).recordable:
        pytest.skip(f"{type(node).__name__} has no formulas that record PyTorch's graph")
    _check(node, grads)


def _formulas_of(cls: type) -> type:
    """The class whose formulas (and plain backward) `cls` has: itself, or the parent it
    takes them from (`TBackward1`, `t_()`'s node, has `TBackward0`'s)."""
    owner = next(c for c in cls.__mro__ if "formulas" in vars(c))
    if owner is cls or not issubclass(cls, ArrayFormulaNode):
        return cls  # (a hand-written backward of its own, or one its parent wrote)
    return owner


def _reached() -> set[str]:
    found = set()
    for o in (p() for p in _programs().values()):
        cls = type((o if not isinstance(o, tuple) else o[0]).grad_fn)
        found |= {cls.__name__, _formulas_of(cls).__name__}
    return found


def _plain_backwards_with_formulas() -> set[str]:
    """Every node class with formulas whose plain backward runs on arrays. (The nodes
    of ops built from a kernel and a formula, `unary_op` and `binary_op`, run fused
    kernels that `test_declarations.py` compares with their formulas bit for bit, on
    edge values too; a `FormulaNode` runs its formulas themselves.)"""
    generated = {d.node for d in DECLARATIONS if d.generated}
    found = set()
    for cls in _all_classes():
        if (cls.formulas and cls.recordable and not cls.__name__.startswith("_")
                and not issubclass(cls, FormulaNode) and cls not in generated
                and cls.__module__.startswith("minigrad.ops")):
            found.add(_formulas_of(cls).__name__)
    return found


def test_every_plain_backward_is_compared_with_its_formulas():
    reached = _reached()
    missing = _plain_backwards_with_formulas() - reached - NOT_YET_REACHED
    assert not missing, f"add a program reaching {sorted(missing)}"
    assert not NOT_YET_REACHED & reached, "reached now: take it off NOT_YET_REACHED"


def test_every_array_formula_node_compiles():
    """(They compile when first run: here all of them, so that a formula calling
    something without an array version fails in the tests, not in a program.)"""
    from minigrad.ops.formulas import compile_on_arrays

    classes = [c for c in _all_classes() if issubclass(c, ArrayFormulaNode)
               and c is not ArrayFormulaNode and c.formulas]
    assert len(classes) >= 15
    for cls in classes:
        assert callable(compile_on_arrays(cls)), cls.__name__


def test_the_view_ops_backwards_are_their_formulas():
    for name in ("ViewBackward0", "TBackward0", "TransposeBackward0", "PermuteBackward0",
                 "UnsqueezeBackward0", "SqueezeBackward1", "AliasBackward0", "SelectBackward0",
                 "SliceBackward0", "SumBackward0", "SumBackward1", "MeanBackward0",
                 "MeanBackward1"):
        cls = next(c for c in _all_classes() if c.__name__ == name)
        assert issubclass(cls, ArrayFormulaNode), name
        assert vars(cls)["backward"] in (ArrayFormulaNode._compiled_first,) or \
            vars(cls)["backward"].__code__.co_filename.startswith("<plain backward of"), name


def _all_classes():
    found, stack = [], list(Node.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        found.append(cls)
    return found

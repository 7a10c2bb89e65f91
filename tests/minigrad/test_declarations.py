"""The op declarations (`minigrad/ops/declaration.py`): each formula, run as minigrad
code on tensors, gives what the fused kernel a plain backward runs gives; and what is
built from the declarations (namespace, methods, node classes) is all there."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.arrays.dispatch import VECTORISED_MIN
from minigrad.autograd.graph import INPUT, OUTPUT
from minigrad.ops.declaration import DECLARATIONS as ALL_DECLARATIONS
from minigrad.ops.declaration import ROLES, Formula

EDGES = [0.0, -0.0, -1.0, 1.0, 0.5, -2.5, 30.0, -30.0, 1000.0, -1000.0, np.inf, -np.inf,
         np.nan, 1e-30, -1e-30]

# The ops built from a kernel and a formula (the hand-written ones are registered
# with `declare` and tested with their families).
DECLARATIONS = [d for d in ALL_DECLARATIONS if d.generated]
UNARY = [d for d in DECLARATIONS if len(d.formulas) == 1]
BINARY = [d for d in DECLARATIONS if len(d.formulas) == 2]


def _values(rng, n: int, dtype) -> np.ndarray:
    """`n` values: the edges first, then random ones of several magnitudes."""
    random = rng.normal(0, 3, n) * rng.choice([1e-3, 1.0, 10.0], n)
    return np.concatenate([EDGES, random])[:n].astype(dtype)


def _gradient(rng, n: int, dtype) -> np.ndarray:
    grad = rng.uniform(-2, 2, n).astype(dtype)
    grad[:4] = [0.0, -0.0, 1.0, -1.0]
    return grad


def _same(fused: np.ndarray, formula: np.ndarray) -> None:
    """Equal bit for bit: nan where the other is nan, and the same sign of zero."""
    assert fused.dtype == formula.dtype and fused.shape == formula.shape
    np.testing.assert_array_equal(fused, formula)
    both = ~np.isnan(fused)
    assert (np.signbit(fused) == np.signbit(formula))[both].all()


@pytest.mark.parametrize("n", [40, VECTORISED_MIN + 7])  # short: numba; long: numpy's ufuncs
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", UNARY, ids=lambda d: d.name)
def test_unary_formula_and_fused_kernel_agree(d, dtype, n):
    rng = np.random.default_rng(7)
    x = minigrad.tensor(_values(rng, n, dtype), requires_grad=True)
    y = getattr(minigrad, d.name)(x)
    grad = _gradient(rng, y.numel(), dtype)
    (fused,) = y.grad_fn.backward(grad)  # what a plain backward runs
    with minigrad.no_grad():
        formula = d.formulas[0](minigrad.tensor(grad), self=x.detach(),
                                result=y.detach()).numpy()
    _same(fused, formula)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shapes", [((60,), (60,)), ((3, 20), (20,)), ((4, 1), (1, 15))])
@pytest.mark.parametrize("d", BINARY, ids=lambda d: d.name)
def test_binary_formulas_and_fused_kernels_agree(d, shapes, dtype):
    rng = np.random.default_rng(11)
    a_shape, b_shape = shapes
    a = minigrad.tensor(_values(rng, int(np.prod(a_shape)), dtype).reshape(a_shape),
                        requires_grad=True)
    b = minigrad.tensor(rng.permutation(_values(rng, int(np.prod(b_shape)), dtype))
                        .reshape(b_shape), requires_grad=True)
    y = getattr(minigrad, d.name)(a, b)
    grad = _gradient(rng, y.numel(), dtype).reshape(y.shape)
    fused = y.grad_fn.backward(grad)
    for formula, from_kernel in zip(d.formulas, fused):
        with minigrad.no_grad():
            by_formula = formula(minigrad.tensor(grad), self=a.detach(), other=b.detach())
        _same(from_kernel, by_formula.numpy())


def test_what_a_node_saves_follows_from_its_formulas():
    for d in DECLARATIONS:
        used = {name for f in d.formulas for name in f.uses}
        assert set(d.saves) == used, d.name
        assert all(d.saves[name] == ROLES[name] for name in used)
    saves = {d.node.__name__: d.saves for d in DECLARATIONS}
    assert saves["ExpBackward0"] == {"result": OUTPUT}
    assert saves["LogBackward0"] == {"self": INPUT}
    assert saves["Atan2Backward0"] == {"self": INPUT, "other": INPUT}


def test_a_formula_reads_only_the_names_it_uses():
    f = Formula("self", "grad * (result + 1)")
    assert f.uses == ("result",)
    assert repr(f) == "self: grad * (result + 1)"
    assert Formula("other", "grad * -self * other.exp()").uses == ("self", "other")


def _every_formula():
    """Every backward and tangent formula of every node class."""
    from minigrad.autograd.graph import Node

    classes, stack = [], [Node]
    while stack:
        cls = stack.pop()
        classes.append(cls)
        stack.extend(cls.__subclasses__())
    for cls in classes:
        yield from cls.__dict__.get("formulas", ())
        if isinstance(cls.__dict__.get("tangent"), Formula):
            yield cls.__dict__["tangent"]


def test_the_names_a_formula_reads_are_found_as_the_parser_finds_them():
    """Formulas are scanned for names at import and parsed only when first run: the
    scan finds the names the parser does."""
    import ast

    formulas = list(_every_formula())
    assert len(formulas) > 250
    for f in formulas:
        parsed = {n.id for n in ast.walk(ast.parse(f.text, mode="eval"))
                  if isinstance(n, ast.Name)}
        assert f.names == parsed, f.text
    scanned = Formula("self", 'gelu_backward(grad, self, approximate="tanh").sum(0, '
                      'keepdim=True) * (other == None)')
    assert scanned.names == {"gelu_backward", "grad", "self", "other"}


def test_every_declared_name_is_a_function_and_a_method():
    for d in DECLARATIONS:
        for name, fn in d.functions.items():
            assert getattr(minigrad, name) is fn
            # (an alias, `negative`, is the op's own function, named after the op)
            assert fn.__name__ in (name, d.name, d.name + "_")
            assert fn.__module__ == d.node.__module__
        for name, fn in d.methods.items():
            assert getattr(minigrad.Tensor, name) is fn
        assert d.node.__module__ == f"minigrad.ops.{d.family}"
    assert minigrad.log1p.__doc__.startswith("log(1 + x)")
    assert hasattr(minigrad.Tensor, "atan2_") and not hasattr(minigrad, "atan2_")
    assert minigrad.negative.__wrapped__ is minigrad.neg.__wrapped__
    assert minigrad.Tensor.negative_ is minigrad.neg_.__wrapped__
    assert hasattr(minigrad.Tensor, "sign_") and not hasattr(minigrad, "sign_")


def test_in_place_variants_bump_the_version_and_keep_the_input_as_pytorch_does():
    x = minigrad.tensor([0.5, 2.0], dtype=minigrad.float64, requires_grad=True)
    y = x * 1
    y.log1p_()
    assert y._version == 1 and type(y.grad_fn).__name__ == "Log1PBackward0"
    saved = y.grad_fn._saved_self  # a recorded copy of y from before the write
    assert saved.tolist() == [0.5, 2.0] and type(saved.grad_fn).__name__ == "CloneBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1 / 1.5, 1 / 3.0])


def _node_classes_with_formulas():
    from minigrad.autograd.graph import Node

    found, stack = [], list(Node.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.formulas and cls.recordable and not cls.__name__.startswith("_"):
            found.append(cls)
    return found


def test_every_recordable_formula_names_only_what_it_can_reach():
    # A formula `create_graph=True` may run reads `grad`, the node's saved names and
    # what formulas can call: a misspelt or missing helper would surface only as a
    # NameError in the middle of someone's double backward.
    from minigrad.ops.formulas import names

    _names = names
    classes = _node_classes_with_formulas()
    assert len(classes) > 30
    for cls in classes:
        for f in cls.formulas:
            # (a formula for several inputs is handed `grad_input_mask`: which of
            # them are wanted)
            mask = {"grad_input_mask"} if len(f.inputs) > 1 else set()
            # (`unshown`: what a node keeps for its formula but shows no `_saved_` for;
            # `grads`: the gradients of every output of a multi-output node)
            unknown = (f.names - {"grad", "grads", *cls.saves, *getattr(cls, "unshown", ())}
                       - mask - set(_names()))
            assert not unknown, f"{cls.__name__}: {f!r} names {sorted(unknown)}"


def _every_node_class():
    from minigrad.autograd.graph import Node

    found, stack = [], list(Node.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        found.append(cls)
    return found


def test_every_formula_compiles_and_names_only_what_it_can_reach():
    """Every backward and tangent formula of every node class, compiled now (a plain
    program compiles a formula only when it first runs): each name it reads is a
    saved value of its node, one of its inputs (`self_t`, `self_p`), or an op,
    factory or helper formulas can call (`formulas.names()`), so a misspelt or
    missing helper fails here, not in someone's double backward."""
    from minigrad.ops.formulas import Formula, names
    from minigrad.ops.tangent_formulas import _PRODUCTS, _input_names, kind_of

    callable_names = set(names()) | set(_PRODUCTS) | {"dense"}
    checked = 0
    for cls in _every_node_class():
        saved = {*cls.saves, *cls.saved_defaults, *getattr(cls, "unshown", ())}
        for f in cls.formulas:
            f.compile()
            mask = {"grad_input_mask"} if len(f.inputs) > 1 else set()
            unknown = f.names - {"grad", "grads", *mask, *saved} - callable_names
            assert not unknown, f"{cls.__name__}: {f!r} names {sorted(unknown)}"
            checked += 1
        kind = kind_of(cls) if cls.tangent is not None else None
        if isinstance(kind, Formula):
            kind.compile()
            inputs = set(_input_names(cls))
            reachable = {"result", *saved, *inputs, *(i + "_p" for i in inputs),
                         *(i + "_t" for i in inputs)} | callable_names
            # (a tangent also reads what the op keeps on its node under a private
            # name, `_where`: those are set at run time, not declared)
            unknown = {n for n in kind.names - reachable if not n.startswith("_")}
            assert not unknown, f"{cls.__name__}: tangent {kind.text!r} names {sorted(unknown)}"
            checked += 1
    assert checked > 300


def test_a_misspelt_helper_is_caught_by_the_name_check():
    from minigrad.ops.formulas import names

    f = Formula("self", "sum_backwards(grad, sizes, dims, keepdim)")
    f.compile()  # (it parses: the name is wrong, not the syntax)
    assert f.names - {"grad", "sizes", "dims", "keepdim"} - set(names()) == {"sum_backwards"}


def test_one_table_of_helpers_each_beside_its_op():
    """Backward and tangent helpers are registered by one decorator into one table,
    from the module of the op they serve; a name is registered once."""
    from minigrad.ops import formulas

    assert formulas.HELPERS["unbind_backward"].__module__ == "minigrad.ops.multi_output"
    assert formulas.HELPERS["sum_backward"].__module__ == "minigrad.ops.reductions"
    assert formulas.HELPERS["pow_backward"].__module__ == "minigrad.ops.powers"
    assert formulas.HELPERS["cumprod_jvp"].__module__ == "minigrad.ops.cumprod"
    assert formulas.HELPERS["batch_norm_jvp"].__module__ == "minigrad.ops.normalization"
    assert not set(formulas.HELPERS) & set(formulas.BACKWARD_OPS)
    with pytest.raises(ValueError, match="registered already"):
        formulas.helper(formulas.HELPERS["sum_backward"])


# The base class of each declared element-wise op's node, which says how its plain
# backward lays the gradient out (see `ops/declaration.py`): chosen from the parsed
# formula. atanh's `grad * 1 / (...)` scales `grad` first (its `grad * 1` is laid out
# by `grad` alone), which the earlier choice by regular expressions missed.
BASES = {
    "_DeclaredUnarySavingNothing": {"neg", "deg2rad", "rad2deg"},
    "_DeclaredZerosLikeGrad": {"floor", "ceil", "trunc", "sign"},
    "_DeclaredZeroGradient": {"sgn"},
    "_DeclaredUnaryScalingGradFirst": {"reciprocal", "rsqrt", "atanh"},
    "_DeclaredUnarySavedFirst": {"relu", "erf", "erfc", "erfinv"},
}
# The ops whose fused backward is checked for the formula's layout, by which check.
FACTOR_FIRST = {"reciprocal", "log1p", "expm1", "sin", "cos", "tan", "cosh", "sinh", "sqrt",
                "rsqrt", "abs", "log2", "log10", "erf", "erfc", "erfinv", "asin", "acos",
                "atan", "asinh", "acosh", "atanh"}
HELPER_FIRST = {"sinc", "sgn"}


def test_each_declared_unary_gets_its_base_class_from_its_parsed_formula():
    bases = {d.name: d.node.__mro__[1].__name__ for d in UNARY}
    assert len(bases) == 37
    expected = {name: base for base, names in BASES.items() for name in names}
    assert bases == {name: expected.get(name, "_DeclaredUnary") for name in bases}
    checks = {d.name: getattr(d.node.layout_check, "__name__", None) for d in UNARY}
    assert {n for n, c in checks.items() if c == "fused_lays_out_alike"} == FACTOR_FIRST
    assert {n for n, c in checks.items() if c == "fused_lays_out_as_helper"} == HELPER_FIRST
    assert {n for n, c in checks.items() if c is not None} == FACTOR_FIRST | HELPER_FIRST


@pytest.mark.parametrize(("formula", "scales", "saved_first", "check"), [
    ("-grad * (result * result)", True, False, "fused_lays_out_alike"),
    ("-0.5 * grad * result.pow(3)", True, False, "fused_lays_out_alike"),
    ("grad * 1 / (1 - self.pow(2))", True, False, "fused_lays_out_alike"),
    ("grad * result", False, False, None),
    ("grad * self.cos()", False, False, "fused_lays_out_alike"),
    ("grad / (2 * result)", False, False, "fused_lays_out_alike"),
    ("1.1283791670955126 * (-self.pow(2)).exp() * grad", False, True, "fused_lays_out_alike"),
    ("threshold_backward(grad, result, 0)", False, True, None),
    ("tanh_backward(grad, result)", False, False, None),
    ("result * grad", False, True, None),
    ("sinc_backward(grad, self)", False, False, "fused_lays_out_as_helper"),
    ("sigmoid_backward(grad, result)", False, False, None),
])
def test_how_a_formula_lays_out_its_result_is_read_off_its_steps(formula, scales,
                                                                 saved_first, check):
    from minigrad.ops import declaration

    assert declaration._scales_grad_first(formula) is scales
    assert declaration._saved_first(formula) is saved_first
    assert getattr(declaration._layout_check(formula), "__name__", None) == check

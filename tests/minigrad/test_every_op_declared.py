"""Every public op name comes from a declaration (`minigrad/ops/declaration.py`).

The namespace and the Tensor methods are built from the declarations alone: an op
given a public name any other way (a function added to `minigrad/__init__.py`, a
method set on Tensor by hand) fails here.
"""

from __future__ import annotations

import inspect
import types

import pytest

import minigrad
from minigrad.autograd.graph import Node
from minigrad.autograd.inplace import AsStridedBackward0
from minigrad.ops.declaration import DECLARATIONS, methods, namespace
from minigrad.ops.formulas import ArrayFormulaNode, FormulaNode
from minigrad.ops.no_derivative import NoDerivative

# The modules beneath the ops whose public names are not ops: factories, dtypes, grad
# mode, the generator, save/load, warn-always, memory formats, and the classes `Tensor`,
# `Size`, `device`.
NOT_OPS = {"minigrad._creation", "minigrad._random", "minigrad._dtype", "minigrad.grad_mode",
           "minigrad._generator", "minigrad.serialization", "minigrad.tensor",
           "minigrad._device", "minigrad._warn", "minigrad._memory_format"}


def _origin(obj) -> str | None:
    """The module that defines `obj` (a function, class, property or instance)."""
    if isinstance(obj, property):
        obj = obj.fget
    if inspect.isfunction(obj) or inspect.isclass(obj):
        return obj.__module__
    return type(obj).__module__


def _undeclared_functions(module: types.ModuleType) -> list[str]:
    declared = namespace()
    wrong = []
    for name in dir(module):
        obj = getattr(module, name)
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        if name in declared:
            if declared[name] is not obj:  # (the declared object itself: no wrapper)
                wrong.append(name)
        elif _origin(obj) not in NOT_OPS:
            wrong.append(name)
    return wrong


def _undeclared_methods(cls: type) -> list[str]:
    """Tensor attributes set by an op module or by `minigrad/__init__.py` without a
    declaration (those of tensor.py and autograd are the tensor's own mechanism)."""
    declared = methods()
    wrong = []
    for name in dir(cls):
        owner = next(k for k in cls.__mro__ if name in k.__dict__)
        if owner is object:
            continue
        obj = owner.__dict__[name]
        if name in declared:
            if declared[name] is not obj:
                wrong.append(name)
        elif name != "__getattr__":  # (the "minigrad has part of PyTorch's API" error)
            origin = _origin(obj)
            if origin == "minigrad" or origin.startswith("minigrad.ops"):
                wrong.append(name)
    return wrong


def test_every_name_of_the_namespace_is_declared_or_not_an_op():
    assert _undeclared_functions(minigrad) == []


def test_every_tensor_method_and_operator_of_an_op_is_declared():
    assert _undeclared_methods(minigrad.Tensor) == []


def test_an_op_added_by_hand_is_caught(monkeypatch):
    def gelu(x):
        return x

    def lshift(self, other):
        return self

    gelu.__module__ = "minigrad.ops.activations"  # (as if written in an op module...)
    lshift.__module__ = "minigrad"  # (... or in minigrad/__init__.py)
    monkeypatch.setattr(minigrad, "gelu", gelu, raising=False)
    monkeypatch.setattr(minigrad.Tensor, "gelu", gelu, raising=False)
    monkeypatch.setattr(minigrad.Tensor, "__lshift__", lshift, raising=False)
    assert _undeclared_functions(minigrad) == ["gelu"]
    assert sorted(_undeclared_methods(minigrad.Tensor)) == ["__lshift__", "gelu"]
    # (a declared name bound to another object is caught too: a wrapper would cost a frame)
    monkeypatch.setattr(minigrad, "mul", lambda a, b: a * b)
    assert "mul" in _undeclared_functions(minigrad)


def _op_node_classes() -> set[type[Node]]:
    found, stack = set(), list(Node.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if (cls.__module__.startswith("minigrad.ops.") and not cls.__name__.startswith("_")
                and cls not in (FormulaNode, ArrayFormulaNode)):
            found.add(cls)
    return found


def test_every_node_class_of_an_op_is_declared_by_one_op():
    """(But NotImplemented, which PyTorch records for every op it gives no derivative.)"""
    declared = [cls for d in DECLARATIONS for cls in d.nodes]
    own = [cls for cls in declared if cls is not NoDerivative]
    assert len(own) == len(set(own))
    # (as_strided's node is the autograd's own too: a view's history rebuilt after an
    # in-place op on its base is an AsStridedBackward0)
    assert _op_node_classes() | {AsStridedBackward0} == set(declared)
    assert {d.name for d in DECLARATIONS if NoDerivative in d.nodes} == {
        "floor_divide", "heaviside", "hardsigmoid_backward"}


@pytest.mark.parametrize(("name", "operators"), [
    ("mul", {"__mul__", "__rmul__", "__imul__"}), ("pow", {"__pow__", "__rpow__", "__ipow__"}),
    ("neg", {"__neg__"}), ("matmul", {"__matmul__", "__rmatmul__"}),
    ("index", {"__getitem__"}), ("permute", {"T"}),
])
def test_a_declaration_says_which_operators_run_the_op(name, operators):
    (d,) = [d for d in DECLARATIONS if d.name == name]
    assert operators <= set(d.attributes)
    for attr in operators:
        assert minigrad.Tensor.__dict__[attr] is d.attributes[attr]


def test_aliases_share_the_function_and_methods_name_the_alias():
    # (each function form names itself in the error for a non-tensor input, so an
    # alias's function is its own wrapper around the op's one function)
    assert minigrad.clip.__wrapped__ is minigrad.clamp.__wrapped__ is minigrad.Tensor.clamp
    assert minigrad.Tensor.clip_ is minigrad.Tensor.clamp_
    assert minigrad.swapaxes.__wrapped__ is minigrad.transpose.__wrapped__ \
        is minigrad.Tensor.swapdims
    assert minigrad.multiply is minigrad.mul
    # (PyTorch's overloads name the alias in their error)
    with pytest.raises(TypeError, match=r"^multiply\(\) received an invalid combination"):
        minigrad.ones(2).multiply("a")
    assert not hasattr(minigrad.Tensor, "multiply_")

"""A formula for several inputs (`input, weight, bias: convolution_backward(...,
grad_input_mask)`) and a formula for a list of tensors (`tensors:
cat_tensors_backward(...)`), as PyTorch's derivatives.yaml writes them: the nodes that
compute every input's gradient in one call are formula nodes, their plain backward
compiled from that one formula (`compile_on_arrays`), which runs once, told by
`grad_input_mask` which gradients are wanted."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.ops import formulas
from minigrad.ops.formulas import ARRAY_HELPERS, ArrayFormulaNode, Formula, slots

F = minigrad.nn.functional
F64 = minigrad.float64

ONE_CALL = ("ConvolutionBackward0", "NativeBatchNormBackward0", "NativeLayerNormBackward0",
            "CatBackward0", "StackBackward0", "MaxPool2DWithIndicesBackward0",
            "AvgPool2DBackward0")


def _leaf(*shape, seed=0, requires_grad=True):
    values = np.random.default_rng(seed).normal(0, 1, shape)
    return minigrad.tensor(values, dtype=F64, requires_grad=requires_grad)


def _node_class(name: str) -> type:
    from minigrad.autograd.graph import Node

    found, stack = [], list(Node.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        found.append(cls)
    return next(c for c in found if c.__name__ == name)


def test_a_formula_names_the_inputs_it_gives_gradients_to():
    one = Formula("self", "grad * other")
    several = Formula("input, weight, bias", "convolution_backward(grad, grad_input_mask)")
    assert one.inputs == ("self",)
    assert several.inputs == ("input", "weight", "bias")
    assert repr(several).startswith("input, weight, bias: ")


@pytest.mark.parametrize("name", ONE_CALL)
def test_the_one_call_nodes_plain_backward_is_their_formulas(name):
    cls = _node_class(name)
    assert issubclass(cls, ArrayFormulaNode)
    assert "apply" not in vars(cls)
    backward = vars(cls)["backward"]
    assert backward is ArrayFormulaNode._compiled_first or \
        backward.__code__.co_filename.startswith("<plain backward of"), name
    assert callable(formulas.compile_on_arrays(cls))


def test_where_each_formula_puts_its_gradients():
    conv = _node_class("ConvolutionBackward0")
    assert [f.inputs for f in conv.formulas] == [("input", "weight", "bias")]
    assert slots(conv, 3) == [(0, 1, 2)]
    # (inputs named in another order than next_functions has them)
    bn2 = _node_class("NativeBatchNormBackwardBackward0")
    assert slots(bn2, 5) == [(1, 2, 0), 3, 4]
    # (a list: one input per tensor)
    assert slots(_node_class("CatBackward0"), 4) == [(0, 1, 2, 3)]
    assert slots(_node_class("MulBackward0"), 2) == [0, 1]


def _spy(monkeypatch, name: str) -> list:
    """Record the `grad_input_mask` each call of helper `name`'s array version gets."""
    masks, real = [], ARRAY_HELPERS[name]

    def spy(*args):
        masks.append(tuple(args[-1]))
        return real(*args)

    monkeypatch.setitem(ARRAY_HELPERS, name, spy)
    for cls in (_node_class("ConvolutionBackward0"), _node_class("NativeLayerNormBackward0")):
        # (compiled again, with the spy bound)
        monkeypatch.setattr(cls, "backward", formulas.compile_on_arrays(cls))
    return masks


def test_one_call_is_told_which_gradients_are_wanted(monkeypatch):
    masks = _spy(monkeypatch, "convolution_backward")
    x = _leaf(1, 2, 5, 5, requires_grad=False)
    w, b = _leaf(3, 2, 3, 3, seed=1), _leaf(3, seed=2)
    F.conv2d(x, w, b).sum().backward()
    assert masks == [(False, True, True)]
    assert x.grad is None and w.grad is not None and b.grad is not None
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 9.0))


def test_an_input_not_wanted_gets_no_gradient(monkeypatch):
    masks = _spy(monkeypatch, "native_layer_norm_backward")
    x, w = _leaf(2, 4, requires_grad=False), _leaf(4, seed=1)
    b = _leaf(4, seed=2)
    F.layer_norm(x, (4,), w, b).sum().backward()
    assert masks == [(False, True, True)]
    assert x.grad is None
    # The same formula on tensors (create_graph=True): the one call gives the two
    # gradients wanted, as outputs 1 and 2 of one node.
    gw, gb = minigrad.autograd.grad(F.layer_norm(x, (4,), w, b).sum(), [w, b],
                                    create_graph=True)
    assert gw.grad_fn is gb.grad_fn
    assert gw.grad_fn.name() == "NativeLayerNormBackwardBackward0"
    assert (gw.output_nr, gb.output_nr) == (1, 2)
    np.testing.assert_allclose(gw.detach().numpy(), w.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(gb.detach().numpy(), np.full(4, 2.0))


def test_a_list_formula_gives_each_tensor_its_piece():
    a, b = _leaf(2, 3), _leaf(2, 3, seed=1)
    c = _leaf(2, 3, seed=2, requires_grad=False)
    y = minigrad.cat([a, c, b], -1)
    g = _leaf(2, 9, seed=3, requires_grad=False)
    ga, gb = minigrad.autograd.grad(y, [a, b], g)
    np.testing.assert_array_equal(ga.numpy(), g.numpy()[:, :3])
    np.testing.assert_array_equal(gb.numpy(), g.numpy()[:, 6:])
    s = minigrad.stack([a, c, b], 1)
    out = s.grad_fn.backward(np.arange(18.0).reshape(2, 3, 3))
    assert out[1] is None
    np.testing.assert_array_equal(out[2], np.arange(18.0).reshape(2, 3, 3)[:, 2])


def test_what_a_node_saves_is_what_its_formulas_that_will_run_read():
    from minigrad.ops.formulas import names_read

    x = _leaf(1, 2, 5, 5, requires_grad=False)
    w, b = _leaf(3, 2, 3, 3, seed=1, requires_grad=False), _leaf(3, seed=2)
    node = F.conv2d(x, w, b).grad_fn
    # (bias alone needs a gradient, yet the one formula for all three runs: it reads
    # input and weight, which the node saves)
    assert {"input", "weight", "grad_input_mask"} <= names_read(node)
    assert node._saved_input is x and node._saved_weight is w
    a, c = _leaf(2, 3), _leaf(2, 3, seed=1, requires_grad=False)
    assert names_read((a * c).grad_fn) == {"grad", "other"}
    assert names_read(minigrad.cat([c, a]).grad_fn) >= {"sizes", "dim"}

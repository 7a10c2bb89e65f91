"""The short lane (`ops/short_lane.py`) gives what the general path gives.

Every op that has a short lane runs twice on the same input: once as it is (the lane
taken, which the test checks), once with the lane closed (the general path). The
values, the node, its edges and saved values, and the gradients must be the same.
Inputs the lane must leave to the general path are checked to go there.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest

import minigrad
from minigrad.arrays import direct
from minigrad.ops import short_lane

OPS = {
    "mul": lambda y: y * 1.25,
    "add": lambda y: y + 0.5,
    "sub": lambda y: y - 0.75,
    "sin": lambda y: y.sin(),  # saves its input
    "exp": lambda y: y.exp(),  # saves its result
    "neg": lambda y: -y,  # saves nothing
}


_LANE_TABLES = ("VECTOR_VECTOR", "VECTOR_SCALAR")  # (the lane's kernel tables)


class _Counting:
    """A kernel table that notes each result array its kernels fill (the last
    argument of a kernel call), the lookup itself left to the real table."""

    def __init__(self, table, made: list) -> None:
        self.table, self.made = table, made

    def __getitem__(self, kernel):
        entry = self.table[kernel]

        def call(*args):
            self.made.append(args[-1])
            return entry(*args)
        return call


@pytest.fixture
def lane_count(monkeypatch):
    """How many results the lane made (the lane itself is untouched): each of its
    kernel calls makes one."""
    made = []
    for name in _LANE_TABLES:
        monkeypatch.setattr(short_lane, name, _Counting(getattr(short_lane, name), made))
    return made


def _closed(monkeypatch):
    """The lane closed: no array has the flags it asks for, so it leaves every op to
    the general path (which calls `dispatch`'s own functions and tables)."""
    monkeypatch.setattr(short_lane, "PLAIN", 1 << 30)


def _run(op, make_input, made=None):
    """Value, node facts and the input's gradient of `op` after a non-leaf step.
    (`made`: the lane's count, which then counts `op` alone.)"""
    x = make_input()
    y = x * 1.0 if x.requires_grad else x  # (a non-leaf input)
    if made is not None:
        made.clear()
    out = op(y)
    node = out.grad_fn
    facts = None
    if node is not None:
        saved = {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}
        facts = (type(node).__name__, [(type(fn).__name__, nr) for fn, nr in node.next_functions],
                 {k: (v.tolist(), v._version) if isinstance(v, minigrad.Tensor) else v
                  for k, v in saved.items()})
        out.sum().backward()
    grad = None if x.grad is None else x.grad.numpy().tobytes()
    return out.detach().numpy().tobytes(), facts, grad


def _vector(n=7, dtype=minigrad.float64, requires_grad=True):
    return lambda: minigrad.tensor(np.linspace(-1.5, 2.0, n), dtype=dtype,
                                   requires_grad=requires_grad)


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_lane_gives_what_the_general_path_gives(name, lane_count, monkeypatch):
    lane = _run(OPS[name], _vector(), lane_count)
    assert len(lane_count) == 1, "the lane was not taken"
    _closed(monkeypatch)
    general = _run(OPS[name], _vector(), lane_count)
    assert not lane_count
    assert lane == general
    assert lane[1] is not None


def test_a_leaf_input_gets_its_accumulator_edge(lane_count):
    x = _vector()()
    out = x * 2.0
    assert len(lane_count) == 1
    (fn, nr), (none, zero) = out.grad_fn.next_functions
    assert type(fn).__name__ == "AccumulateGrad" and fn.variable is x and nr == 0
    assert (none, zero) == (None, 0)
    out.sum().backward()
    assert x.grad.tolist() == [2.0] * 7


CASES_LEFT_TO_THE_GENERAL_PATH = {
    "float32": _vector(dtype=minigrad.float32),
    "no gradient needed": _vector(requires_grad=False),
    "2-D": lambda: minigrad.tensor(np.ones((2, 3)), requires_grad=True),
    "long for unary ops": _vector(n=5000),
}


@pytest.mark.parametrize("case", sorted(CASES_LEFT_TO_THE_GENERAL_PATH))
def test_other_inputs_take_the_general_path(case, lane_count, monkeypatch):
    make = CASES_LEFT_TO_THE_GENERAL_PATH[case]
    for name in ("sin", "exp") if case.startswith("long") else sorted(OPS):
        seen = _run(OPS[name], make, lane_count)
        assert not lane_count, name
        with monkeypatch.context() as m:
            _closed(m)
            assert _run(OPS[name], make) == seen


def test_views_modes_and_numbers_take_the_general_path(lane_count):
    x = _vector()()
    y = x * 1.0
    lane_count.clear()
    view = y[1:]  # a view (row-major, still): its base's version counts
    view * 2.0
    y.t() * 2.0
    y * 2  # an int, not a float
    y * np.float64(2.0)
    y.add(0.5, alpha=2)
    with minigrad.no_grad():
        y * 2.0
    with pytest.warns(UserWarning, match="Anomaly"), minigrad.autograd.detect_anomaly():
        z = y * 2.0
    assert z.grad_fn._forward_trace is not None  # (the general path records it)
    import minigrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        dual = fwAD.make_dual(y.detach(), minigrad.ones(7, dtype=minigrad.float64))
        assert fwAD.unpack_dual(dual.sin()).tangent is not None
    assert not lane_count


def test_a_read_only_vector_takes_the_general_path(lane_count):
    data = np.linspace(0.0, 1.0, 5)
    data.flags.writeable = False
    with warnings.catch_warnings():  # (PyTorch's warning of a read-only array, once)
        warnings.simplefilter("ignore")
        x = minigrad.from_numpy(data).requires_grad_()
    out = x.sin()
    assert not lane_count
    out.sum().backward()
    # (numpy's cos comes from a vector math library on AVX-512 machines: a few ulps)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(data), rtol=4 * np.finfo(float).eps)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="the kernels run as plain Python")
def test_a_direct_call_table_finds_the_compiled_entry_at_first_lookup():
    from minigrad.kernels import elementwise as K

    table = direct.DirectCalls(direct.VECTOR64, direct.FLOAT64, direct.VECTOR64)
    entry = table[K.mul_scalar]  # (numba loads or compiles it now)
    assert entry is not K.mul_scalar and callable(entry) and table[K.mul_scalar] is entry
    assert entry is K.mul_scalar.overloads[table.signature].entry_point
    a, out = np.arange(4.0), np.empty(4)
    entry(a, 3.0, out)
    assert out.tolist() == [0.0, 3.0, 6.0, 9.0]


def test_a_plain_python_kernel_stands_for_itself():
    table = direct.DirectCalls(direct.VECTOR64, direct.VECTOR64)

    def double(x, out):  # (as a kernel is under NUMBA_DISABLE_JIT=1)
        out[:] = 2 * x

    assert table[double] is double


# -- the short-vector functions of `arrays/dispatch.py` ------------------------------------

def _short_calls():
    from minigrad.arrays import dispatch
    from minigrad.kernels import elementwise as K

    return [
        (lambda a: dispatch.short_vector_and_number(K.mul_scalar, a, 1.5), lambda a: a * 1.5),
        (lambda a: dispatch.short_vector(K.sin, a), np.sin),
        (lambda a: dispatch.short_vectors(K.sin_backward, a, a), lambda a: a * np.cos(a)),
    ]


def test_the_short_functions_run_the_kernel_on_plain_short_vectors():
    a = np.linspace(-1.0, 1.0, 9)
    for short, expected in _short_calls():
        out = short(a)
        assert out is not None and out.flags.c_contiguous and out.base is None
        assert np.allclose(out, expected(a), rtol=0, atol=1e-15)


def test_the_short_functions_leave_other_arrays_to_the_general_way():
    base = np.linspace(-1.0, 1.0, 18)
    read_only = base.copy()
    read_only.flags.writeable = False
    others = {
        "float32": base.astype(np.float32),
        "2-D": base.reshape(2, 9),
        "strided": base[::2],
        "read-only": read_only,
        "empty": base[:0].copy(),
        "long": np.ones(1 << 18),  # (threads or numpy's vectorised form take these)
    }
    for name, a in others.items():
        for short, _ in _short_calls():
            assert short(a) is None, name


def test_two_vectors_of_different_lengths_are_not_short():
    from minigrad.arrays import dispatch
    from minigrad.kernels import elementwise as K

    assert dispatch.short_vectors(K.sin_backward, np.ones(3), np.ones(4)) is None


def _lane_node_classes():
    """Every node class the lane makes: `+`, `-` and `*` with a number, and every
    declared element-wise op of one tensor."""
    from minigrad.ops import arithmetic, declaration

    found, todo = [], [declaration._DeclaredUnary]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return [arithmetic.AddBackward0, arithmetic.SubBackward0, arithmetic.MulBackward0, *found]


def test_the_lanes_node_classes_keep_node_init():
    # (`plain_node` makes their nodes without calling `__init__`)
    from minigrad.autograd.graph import Node

    classes = _lane_node_classes()
    assert len(classes) > 40
    assert all(cls.__init__ is Node.__init__ for cls in classes)


def test_a_plain_node_is_the_node_its_class_makes():
    from minigrad.autograd.graph import plain_node
    from minigrad.ops.arithmetic import MulBackward0

    edges = ((None, 0), (None, 0))
    made, plain = MulBackward0(edges, None), plain_node(MulBackward0, edges)
    assert type(plain) is MulBackward0 and plain.next_functions is edges
    assert plain._seq == made._seq + 1 and plain._saved == {} and plain._saved is not made._saved
    assert plain._input_meta is None and plain._recorded_by is None and plain._plain


def test_an_op_in_a_create_graph_backward_knows_which_backward_recorded_it(monkeypatch):
    # (sin's formula `grad * self.cos()` runs `cos` through the lane in a
    # `create_graph=True` backward: `plain_node` then makes the node through
    # `__init__`, which sets `_recorded_by`)
    from minigrad.autograd import graph

    made = []

    def watching(cls, edges):
        node = graph.plain_node(cls, edges)
        made.append(node)
        return node

    x = minigrad.tensor(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    y = (x * 1.0).sin()
    monkeypatch.setattr(short_lane, "plain_node", watching)
    (g,) = minigrad.autograd.grad(y.sum(), x, create_graph=True)
    assert made, "the lane was not taken"
    assert all(node._recorded_by is not None for node in made)
    assert np.allclose(g.detach().numpy(), np.cos(np.linspace(-1.0, 1.0, 5)))

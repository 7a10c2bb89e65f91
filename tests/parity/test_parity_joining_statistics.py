"""cat, stack, var, std, norm / vector_norm, prod, cumsum, bmm, batched matmul,
split by sizes and einsum against PyTorch: values, gradients, nodes (with
`next_functions`), saved values, versions and error texts."""

from __future__ import annotations

import numpy as np
import pytest
from parity_harness import check
from test_parity_bad_input import compare

M = [[1.0, 2.0, 3.5], [-4.0, 5.0, 0.5]]
Z = [[1.0, 0.0, 3.0], [0.0, 0.0, 2.0]]  # (two zeros in a column, one in a row)
Z1 = [[1.0, 0.0, 3.0], [4.0, 5.0, 2.0]]  # (one zero)


def _leaf(c, *shape, dtype="float64", requires_grad=True, shift=0):
    """A leaf of `shape` with distinct, uneven values."""
    n = int(np.prod(shape))
    values = ((np.arange(n) * 0.37 + shift) % 2.3 - 1.1).reshape(shape)
    return c.leaf(values.tolist(), dtype, requires_grad=requires_grad)


JOINING = {
    "cat": lambda c: c.m.cat([c.leaf([[1.0, 2], [3, 4]]), c.leaf([[5.0, 6]])]),
    "cat dim 1": lambda c: c.m.cat((c.leaf([[1.0, 2], [3, 4]]), c.leaf([[5.0], [6]])), 1),
    "cat negative dim, one input without grad": lambda c: c.m.cat(
        [c.leaf([[1.0, 2], [3, 4]]), c.leaf([[5.0], [6]], requires_grad=False)], -1) * 2,
    "cat promotes": lambda c: c.m.cat([c.leaf([1.0, 2], "float32"), c.leaf([5.0, 6])]),
    "cat with an integer tensor": lambda c: c.m.cat([c.leaf([1.0, 2]), c.m.tensor([3, 4])]),
    "cat skips an empty 1-D tensor": lambda c: c.m.cat([c.leaf([]), c.leaf([[1.0, 2]])]),
    "cat of one tensor three times": lambda c: (lambda x: c.m.cat([x, x, x]))(c.leaf([1.0, 2])),
    "concat": lambda c: c.m.concat([c.leaf([1.0, 2]), c.leaf([3.0, 4])]),
    "concatenate": lambda c: c.m.concatenate([c.leaf([1.0, 2]), c.leaf([3.0, 4])], 0),
    "stack": lambda c: c.m.stack([c.leaf([1.0, 2]), c.leaf([3.0, 4])]),
    "stack last dim": lambda c: c.m.stack([c.leaf([[1.0, 2]]), c.leaf([[3.0, 4]])], 2),
    "stack negative dim": lambda c: c.m.stack(
        [c.leaf([1.0, 2]), c.leaf([3.0, 4], requires_grad=False)], -1).sum(),
    "stack 0-d": lambda c: c.m.stack([c.leaf(1.0), c.leaf(3.0)]),
    "split by sizes": lambda c: c.m.split(c.leaf(M), [1, 2], 1),
    "split by sizes, one used": lambda c: c.leaf(M).split([2, 0, 1], dim=1)[2] * 3,
}

STATISTICS = {
    "var": lambda c: c.leaf(M).var(),
    "var dim": lambda c: c.leaf(M).var(1),
    # no values left along the dim after the correction: nan, and inf in the
    # gradient's factor (found by the random programs)
    "var dim of one row": lambda c: c.leaf([[1.0, 2.0, 3.0]]).var(0),
    "var dim, correction = count": lambda c: c.leaf([[1.0, 2.0, 3.0]]).var(1, correction=3),
    "var unbiased=False": lambda c: c.leaf(M).var(unbiased=False),
    "var correction=0": lambda c: c.leaf(M).var(correction=0),
    "var dims keepdim": lambda c: c.leaf(M).var(dim=(0, 1), keepdim=True),
    "var positional": lambda c: c.m.var(c.leaf(M), -1, True, True),
    "var float32": lambda c: c.leaf(M, "float32").var(0),
    "var 1-D": lambda c: c.leaf([1.0, 2.0, 4.0]).var(0),
    "var 0-d": lambda c: c.leaf(2.0).var(),
    "var no degrees of freedom": lambda c: c.leaf([3.0]).var(),
    "var correction=2": lambda c: c.leaf(M).var(1, correction=2),
    "var float correction": lambda c: c.leaf(M).var(correction=1.5),
    "std": lambda c: c.leaf(M).std(),
    "std dim keepdim": lambda c: c.m.std(c.leaf(M), dim=1, keepdim=True),
    "std of a constant row": lambda c: c.leaf([[1.0, 1.0], [2.0, 3.0]]).std(1),
    "std float32": lambda c: c.leaf(M, "float32").std(),
    "norm": lambda c: c.leaf(M).norm(),
    "norm p=1": lambda c: c.leaf(M).norm(p=1),
    "norm dim": lambda c: c.leaf(M).norm(dim=1),
    "norm keepdim": lambda c: c.leaf(M).norm(2, 1, True),
    "norm inf with ties": lambda c: c.leaf([[1.0, -3.0, 3.0], [0.0, 0.0, 0.0]]).norm(
        float("inf"), 1),
    "norm -inf": lambda c: c.leaf(M).norm(float("-inf")),
    "vector_norm ord 3": lambda c: c.m.linalg.vector_norm(c.leaf(M), ord=3, dim=1),
    "norm p=1.5 with zeros": lambda c: c.leaf(Z).norm(1.5),
    "norm p=0.5": lambda c: c.leaf(Z1).norm(0.5),
    "norm p=0": lambda c: c.leaf(M).norm(0),
    "norm of a zero row": lambda c: c.leaf([[0.0, 0.0], [1.0, 2.0]]).norm(dim=1),
    "norm p=None": lambda c: c.leaf(M).norm(None),
    "torch.norm dim": lambda c: c.m.norm(c.leaf(M), dim=0),
    "norm float32": lambda c: c.leaf(M, "float32").norm(),
    "norm 0-d": lambda c: c.leaf(-2.0).norm(),
    "linalg.norm": lambda c: c.m.linalg.norm(c.leaf(M)),
    "linalg.norm dim": lambda c: c.m.linalg.norm(c.leaf(M), dim=1),
    "linalg.norm of a vector, ord 1": lambda c: c.m.linalg.norm(c.leaf(M)[0], 1),
    "linalg.norm ord, dim, keepdim": lambda c: c.m.linalg.norm(c.leaf(M), 1, 1, True),
    "linalg.norm fro": lambda c: c.m.linalg.norm(c.leaf(M), "fro"),
    "linalg.norm dims": lambda c: c.m.linalg.norm(c.leaf(M), dim=(0, 1)),
    "matrix_norm fro": lambda c: c.m.linalg.matrix_norm(c.leaf(M)),
    "matrix_norm 1": lambda c: c.m.linalg.matrix_norm(c.leaf(M), 1),
    "matrix_norm -1 keepdim": lambda c: c.m.linalg.matrix_norm(c.leaf(M), -1, keepdim=True),
    "matrix_norm inf, 3-D, dims swapped": lambda c: c.m.linalg.matrix_norm(
        _leaf(c, 2, 3, 4), float("inf"), (2, 0)),
    "matrix_norm -inf, 3-D, keepdim": lambda c: c.m.linalg.matrix_norm(
        _leaf(c, 2, 3, 4), float("-inf"), (-1, 0), True),
    "matrix_norm fro, negative dims": lambda c: c.m.linalg.matrix_norm(
        _leaf(c, 2, 3, 4), "fro", (-1, 0)),
    "matrix_norm inf of no rows": lambda c: c.m.linalg.matrix_norm(
        c.leaf([[]]).reshape(0, 3), float("inf")) + c.leaf(1.0),
    "linalg.norm ord 1 (a matrix norm)": lambda c: c.m.linalg.norm(c.leaf(M), 1),
    "linalg.norm ord -inf, dims": lambda c: c.m.linalg.norm(_leaf(c, 2, 3, 4), float("-inf"),
                                                             (2, 1), True),
    "norm fro over two dims": lambda c: c.leaf(M).norm("fro", (1, 0)),
    "prod": lambda c: c.leaf(M).prod(),
    "prod dim": lambda c: c.leaf(M).prod(1),
    "prod keepdim": lambda c: c.m.prod(c.leaf(M), 0, keepdim=True),
    "prod one zero": lambda c: c.leaf(Z1).prod(),
    "prod two zeros": lambda c: c.leaf(Z).prod(),
    "prod dim with zeros": lambda c: c.leaf(Z).prod(1),
    "prod dim 0 with zeros": lambda c: c.leaf(Z).prod(0),
    "prod 0-d": lambda c: c.leaf(3.0).prod(),
    "prod of integers": lambda c: c.m.tensor([[1, 2], [3, 4]]).prod(1),
    "prod float32": lambda c: c.leaf(M, "float32").prod(1),
    "cumsum": lambda c: c.leaf(M).cumsum(1),
    "cumsum dim 0": lambda c: c.m.cumsum(c.leaf(M), dim=0),
    "cumsum float32 accumulates in double": lambda c: c.leaf([0.1] * 7, "float32").cumsum(0),
    "cumsum of integers": lambda c: c.m.tensor([1, 2, 3]).cumsum(0),
    "cumsum dtype": lambda c: c.leaf(M, "float32").cumsum(0, dtype=c.m.float64),
    "cumsum 0-d": lambda c: c.leaf(2.0).cumsum(0),
}

PRODUCTS = {
    "bmm": lambda c: c.m.bmm(_leaf(c, 2, 3, 4), _leaf(c, 2, 4, 5, shift=1)),
    "bmm method": lambda c: _leaf(c, 2, 3, 4).bmm(_leaf(c, 2, 4, 2, shift=1,
                                                        requires_grad=False)),
    "3-D @ 3-D": lambda c: _leaf(c, 2, 3, 4) @ _leaf(c, 2, 4, 5, shift=1),
    "3-D @ 2-D (folded)": lambda c: _leaf(c, 2, 3, 4) @ _leaf(c, 4, 5, shift=1),
    "3-D @ 2-D without grad": lambda c: _leaf(c, 2, 3, 4) @ _leaf(c, 4, 5, shift=1,
                                                                 requires_grad=False),
    "3-D without grad @ 2-D": lambda c: _leaf(c, 2, 3, 4, requires_grad=False) @ _leaf(
        c, 4, 5, shift=1),
    "3-D @ 1-D": lambda c: _leaf(c, 2, 3, 4) @ _leaf(c, 4, shift=1),
    "2-D @ 3-D": lambda c: _leaf(c, 5, 3) @ _leaf(c, 2, 3, 4, shift=1),
    "2-D without grad @ 3-D": lambda c: _leaf(c, 5, 3, requires_grad=False) @ _leaf(
        c, 2, 3, 4, shift=1),
    "1-D @ 3-D": lambda c: _leaf(c, 3) @ _leaf(c, 2, 3, 4, shift=1),
    "4-D @ 3-D (broadcast)": lambda c: _leaf(c, 3, 1, 3, 4) @ _leaf(c, 2, 4, 5, shift=1),
    "4-D @ its transpose": lambda c: (lambda z: z @ z.transpose(-1, -2))(_leaf(c, 3, 1, 3, 4)),
    "matmul float32": lambda c: c.m.matmul(_leaf(c, 2, 3, 4, dtype="float32"),
                                           _leaf(c, 2, 4, 5, shift=1, dtype="float32")),
    "transposed 3-D @ 2-D": lambda c: _leaf(c, 2, 4, 3).transpose(1, 2) @ _leaf(
        c, 4, 5, shift=1, requires_grad=False),
    "transposed 3-D @ 1-D (bmm)": lambda c: _leaf(c, 2, 4, 3).transpose(1, 2) @ _leaf(
        c, 4, shift=1, requires_grad=False),
    "linear without bias, 3-D": lambda c: c.m.nn.functional.linear(_leaf(c, 2, 3, 4),
                                                                   _leaf(c, 5, 4, shift=1)),
    "reshape of a sliced tensor aliases": lambda c: c.leaf(M)[:, :2].reshape(4),
}


def _einsum(equation, *shapes, dtype="float64"):
    return lambda c: c.m.einsum(equation, *[_leaf(c, *s, shift=i, dtype=dtype)
                                            for i, s in enumerate(shapes)])


EINSUM = {
    "ij,jk->ik": _einsum("ij,jk->ik", (2, 3), (3, 4)),
    "ij,jk (implicit output)": _einsum("ij,jk", (2, 3), (3, 4)),
    "bij,bjk->bik": _einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    "bij,bkj->bik": _einsum("bij,bkj->bik", (2, 3, 4), (2, 5, 4)),
    "i,i->": _einsum("i,i->", (3,), (3,)),
    "ij->ji": _einsum("ij->ji", (2, 3)),
    "ii->i": _einsum("ii->i", (3, 3)),
    "ii (trace)": _einsum("ii", (3, 3)),
    "ij->": _einsum("ij->", (2, 3)),
    "ij->i": _einsum("ij->i", (2, 3)),
    "i,j->ij (outer)": _einsum("i,j->ij", (3,), (4,)),
    "ij,j->i": _einsum("ij,j->i", (3, 2), (2,)),
    "bi,bi->b": _einsum("bi,bi->b", (4, 3), (4, 3)),
    "ij,ij->ij": _einsum("ij,ij->ij", (2, 3), (2, 3)),
    "float32": _einsum("ij,jk->ik", (2, 3), (3, 4), dtype="float32"),
    "ijk,ik->j (size-1 dims)": _einsum("ijk,ik->j", (1, 2, 3), (1, 3)),
    "Ab,bc->cA (operands swapped for bmm)": _einsum("Ab,bc->cA", (2, 3), (3, 4)),
    "i...->... (ellipsis)": _einsum("i...->...", (3, 3)),
    "...ik,...j->ij (ellipsis summed)": _einsum("...ik, ...j -> ij", (1, 2, 3), (3,)),
    "...ij,...jk->...ik (batched ellipsis)": _einsum("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
    "b...,b...->... (broadcast ellipsis)": _einsum("b...,b...->...", (2, 3), (2, 1)),
    "...ii->...i (ellipsis diagonal)": _einsum("...ii->...i", (2, 3, 3)),
    "i...,i... (implicit ellipsis output)": _einsum("i...,i...", (2, 3, 4), (2, 1, 4)),
    "operands as a list": lambda c: c.m.einsum("ij,jk->ik", [_leaf(c, 2, 3),
                                                             _leaf(c, 3, 2, shift=1)]),
    "diagonal": lambda c: _leaf(c, 3, 4).diagonal(),
    "diagonal offset": lambda c: c.m.diagonal(_leaf(c, 3, 4), 1),
    "diagonal negative offset, dims": lambda c: c.m.diagonal(_leaf(c, 2, 3, 4), -1, 1, 2),
}

CASES = {**JOINING, **STATISTICS, **PRODUCTS, **EINSUM}


@pytest.mark.parametrize("case", list(CASES))
def test_joining_statistics_products(torch, case):
    check(torch, CASES[case])


A = "a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], requires_grad=True)\n"
ERRORS = {
    "cat empty": "torch.cat([])",
    "cat sizes": A + "torch.cat([a, torch.zeros(2, 4)])",
    "cat dims": A + "torch.cat([a, torch.zeros(3)])",
    "cat 0-d": "torch.cat([torch.tensor(1.), torch.tensor(2.)])",
    "cat dim range": A + "torch.cat([a, a], 2)",
    "cat of a tensor": A + "torch.cat(a)",
    "cat of a number": A + "torch.cat([a, 1])",
    "stack empty": "torch.stack([])",
    "stack sizes": A + "torch.stack([a, torch.zeros(3, 2)])",
    "stack dim range": A + "torch.stack([a, a], 3)",
    "var unbiased and correction": A + "a.var(unbiased=False, correction=1)",
    "var int unbiased": A + "a.var(0, 1)",
    "var dim range": A + "a.var(dim=5)",
    "var of integers": "torch.tensor([1, 2]).var()",
    "var no degrees of freedom warns": "torch.tensor([1.]).var()",
    "std no degrees of freedom warns": "torch.tensor([1.]).std(0)",
    "var unknown keyword": A + "a.var(foo=1)",
    "norm of integers": "torch.tensor([1, 2]).norm()",
    "vector_norm of integers": "torch.linalg.vector_norm(torch.tensor([1, 2]))",
    "vector_norm ord str": A + "torch.linalg.vector_norm(a, ord='fro')",
    "vector_norm narrowing dtype": A + "torch.linalg.vector_norm(a.double(), dtype=torch.float32)",
    "prod tuple dim": A + "a.prod(dim=(0, 1))",
    "prod dim range": A + "a.prod(5)",
    "prod keepdim without dim": A + "a.prod(keepdim=True)",
    "cumsum without dim": A + "a.cumsum()",
    "cumsum dim range": A + "a.cumsum(2)",
    "cumsum float dim": A + "a.cumsum(0.5)",
    "split negative size": A + "a.split([1, -1, 3], 1)",
    "split sizes sum": A + "a.split([2], 1)",
    "einsum subscripts": A + "torch.einsum('i,i->', a, a)",
    "einsum fewer operands": A + "torch.einsum('ij,jk->ik', a)",
    "einsum more operands": A + "torch.einsum('ij->ij', a, a)",
    "einsum sizes": A + "torch.einsum('ij,ij->i', a, a.t())",
    "einsum bad subscript": A + "torch.einsum('i1->i', a)",
    "einsum repeated sizes": A + "torch.einsum('ii->i', a)",
    "einsum equation type": A + "torch.einsum(1, a)",
    "einsum operand type": A + "torch.einsum('ij->ij', 1)",
    "matrix_norm order": A + "torch.linalg.matrix_norm(a, 3)",
    "matrix_norm order string": A + "torch.linalg.matrix_norm(a, 'foo')",
    "matrix_norm of a vector": A + "torch.linalg.matrix_norm(a[0], 1)",
    "matrix_norm of integers": "torch.linalg.matrix_norm(torch.ones(2, 2, dtype=torch.int64))",
    "matrix_norm one dim": A + "torch.linalg.matrix_norm(a, dim=(0,))",
    "matrix_norm same dims": A + "torch.linalg.matrix_norm(a, 1, dim=(0, -2))",
    "matrix_norm dim range": A + "torch.linalg.matrix_norm(a, dim=(0, 5))",
    "matrix_norm narrowing dtype": A + "torch.linalg.matrix_norm(a.double(), dtype=torch.float32)",
    "matrix_norm -1 of no columns": "torch.linalg.matrix_norm(torch.ones(3, 0), -1)",
    "linalg.norm three dims": A + "torch.linalg.norm(a, 1, dim=(0, 1, 1))",
    "linalg.norm ord of a 3-D input": "torch.linalg.norm(torch.ones(2, 2, 2), 1)",
    "linalg.norm fro over one dim": A + "torch.linalg.norm(a, 'fro', dim=0)",
    "linalg.norm matrix order 3": A + "torch.linalg.norm(a, 3)",
    "norm unknown string": A + "torch.norm(a, 'foo')",
    "einsum two ellipses": A + "torch.einsum('...i...->i', a)",
    "einsum broken ellipsis": A + "torch.einsum('i..j->i', a)",
    "einsum output ellipses": A + "torch.einsum('...->......', a)",
    "einsum broken output ellipsis": A + "torch.einsum('ij->i..', a)",
    "einsum ellipsis too few dims": A + "torch.einsum('ijk...->i', a)",
    "einsum ellipsis sizes": A + "torch.einsum('...i,...i', a, torch.ones(3, 3))",
    "einsum output label twice": A + "torch.einsum('ij->ii', a)",
    "einsum output label unknown": A + "torch.einsum('ij->k', a)",
    "einsum bad output subscript": A + "torch.einsum('i j->j 1', a)",
    "einsum no operands": "torch.einsum('i->i')",
    "einsum empty operand list": "torch.einsum('i->i', [])",
    "bmm of matrices": A + "torch.bmm(a, a)",
    "bmm sizes": "torch.bmm(torch.zeros(2, 3, 4), torch.zeros(3, 4, 5))",
    "bmm dtypes": "torch.bmm(torch.zeros(2, 3, 4), torch.zeros(2, 4, 5, dtype=torch.float64))",
    "bmm of integers": "torch.bmm(torch.ones(2, 3, 4, dtype=torch.int64), "
                       "torch.ones(2, 4, 5, dtype=torch.int64))",
    "matmul 3-D sizes": "torch.zeros(2, 3, 4) @ torch.zeros(2, 5, 4)",
    "matmul 3-D batch": "torch.zeros(2, 3, 4) @ torch.zeros(3, 4, 5)",
    "matmul 3-D dtypes": "torch.zeros(2, 3, 4) @ torch.zeros(2, 4, 5, dtype=torch.float64)",
    "matmul 3-D @ 2-D sizes": "torch.zeros(2, 3, 4) @ torch.zeros(5, 4)",
    "diagonal same dims": A + "a.diagonal(0, 1, 1)",
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_joining_statistics_products_errors(torch, name):
    compare(torch, ERRORS[name])


@pytest.mark.parametrize("call", [
    lambda m, a: m.einsum("i,i,i->", a[0], a[0], a[0]),
])
def test_what_minigrad_leaves_out_is_refused_clearly(call):
    import minigrad

    a = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(NotImplementedError, match="minigrad"):
        call(minigrad, a)

"""`minigrad.linalg`: PyTorch's `torch.linalg`, the part minigrad has: norms (of vectors
and matrices), products (`vecdot`, `multi_dot`, `matrix_power`, `cross`), `diagonal`
and `vander`, determinants, inverses, solves, the Cholesky factorisation and the
singular value decomposition (`svd`, `svdvals`)."""

from __future__ import annotations

from .ops.matrix_functions import linalg_cross as cross
from .ops.matrix_functions import linalg_diagonal as diagonal
from .ops.matrix_functions import matrix_power, multi_dot, vander, vecdot
from .ops.matrix_norms import linalg_norm as norm
from .ops.matrix_norms import matrix_norm
from .ops.solvers import _LinAlgError as LinAlgError
from .ops.solvers import (
                          cholesky,
                          cholesky_ex,
                          det,
                          inv,
                          inv_ex,
                          slogdet,
                          solve,
                          solve_ex,
                          solve_triangular,
)
from .ops.statistics import vector_norm
from .ops.svd import svd, svdvals

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "inv",
           "inv_ex", "matrix_norm", "matrix_power", "multi_dot", "norm", "slogdet", "solve",
           "solve_ex", "solve_triangular", "svd", "svdvals", "vander", "vecdot",
           "vector_norm"]

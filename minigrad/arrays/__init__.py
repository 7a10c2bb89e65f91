"""numpy-only helpers beneath `Tensor`: they know arrays, shapes and kernels, never
tensors or graphs.

* `broadcasting`: broadcast shapes, PyTorch's shape errors, summing a gradient back
  down to an input's shape (`sum_to`).
* `layout`: how PyTorch lays out a result in memory (`result_order`, `fresh_result`),
  flat views for the kernels, density.
* `dispatch`: calling the numba kernels: one input or two, broadcasting, numpy's
  vectorised forms for long arrays, and splitting long arrays across the cores.
* `scalars`: Python numbers as kernel arguments, dims as PyTorch stores them.
"""

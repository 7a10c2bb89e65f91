"""pytest/nbval over notebooks/: only the course (solution) notebooks.

The learner versions in notebooks/learner/ stop at their first unsolved exercise on
purpose, so running them under nbval would only report those stops.
"""

import os

collect_ignore = ["learner"]

# (the kernels nbval's kernel inherits this: a lesson's stored outputs do not hold the
# one line minigrad prints when it first compiles, on an empty numba cache)
os.environ["MINIGRAD_COMPILE_NOTICE"] = "off"

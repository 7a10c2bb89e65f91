"""pytest/nbval over notebooks/: only the course (solution) notebooks.

The learner versions in notebooks/learner/ stop at their first unsolved exercise on
purpose, so running them under nbval would only report those stops.
"""

collect_ignore = ["learner"]

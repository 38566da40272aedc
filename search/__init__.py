"""The numba chess core: board, move generation, evaluator features and search.

Kernels (``@njit(cache=True)``, arrays and scalars only) live in private modules; the public
functions here validate inputs and convert from python-chess at the boundary
(:mod:`search.convert`).
"""

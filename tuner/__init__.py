"""movetuner: learn a chess evaluation function's weights from the moves strong players chose.

Packages: ``search`` (numba chess core, evaluator, search), ``objectives`` (losses and their
gradients over arrays), ``tuner`` (data, optimizers, command line).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("movetuner")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]

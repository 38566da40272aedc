"""movetuner: learn a chess evaluation function's weights from the moves strong players chose.

Packages: ``search`` (numba chess core, evaluators, search), ``objectives`` (losses and their
gradients over arrays), ``tuner`` (everything else). ``tuner`` has a room for each kind of work:

* ``tuner/ingest/``: PGN and position files to position sets (a new input format goes here);
* ``tuner/methods/``: the tuning methods, one module each, and their registry (a new method);
* ``tuner/training/``: what methods run inside: the driver, settings, data, executors, run
  folders, update rules;
* ``tuner/arena/``: matches, SPRT, ratings, EPD suites, move-match, comparisons, plots (a new
  benchmark);
* ``tuner/export/``: weights for other engines (a new export format);
* ``tuner/commands/``: one module per ``tuner`` subcommand; ``tuner/cli.py`` dispatches;
* ``tuner/uci.py``: the UCI engine; ``config.py``, ``errors.py``, ``cores.py``, ``limits.py``:
  the plumbing every room uses.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("movetuner")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]

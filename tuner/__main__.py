"""``python -m tuner`` is the same as the ``tuner`` console script."""

from tuner.cli import main

raise SystemExit(main())

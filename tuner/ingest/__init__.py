"""PGN ingestion: grandmaster games to position sets (``tuner ingest``).

Public API:

* :func:`ingest` builds a position set folder from PGN files (see :mod:`tuner.ingest.schema`
  for the format) and returns its manifest;
* :class:`IngestConfig` holds the filters and the split;
* :func:`read_split` and :func:`read_manifest` read a position set back (optimizers use them),
  its splits Parquet or compact (:mod:`tuner.ingest.compact`, 40 bytes a position;
  :mod:`tuner.ingest.convert` converts between them and bullet text).
"""

from tuner.ingest.filters import IngestConfig
from tuner.ingest.pipeline import ingest
from tuner.ingest.reader import read_manifest, read_split
from tuner.ingest.schema import SCHEMA, SCHEMA_VERSION, SPLITS

__all__ = ["SCHEMA", "SCHEMA_VERSION", "SPLITS", "IngestConfig", "ingest", "read_manifest", "read_split"]

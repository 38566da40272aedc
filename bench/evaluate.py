"""Speed of the numba evaluator on positions from real games, single-threaded.

Prints one JSON line:
- ``source``: where the positions come from (``gm`` files, or ``random playouts`` when the
  GM folder, ``../shared/datasets/gm`` or ``$MOVETUNER_GM_DIR``, is absent), ``positions``;
- ``eval_per_s_best`` / ``eval_per_s_median``: positions scored per second by
  ``evaluate_batch_kernel`` (features and weighted sum, the search's path), best and median
  of ``repeats`` timed passes over all positions, after a warm-up pass (compilation);
- ``features_per_s_best`` / ``features_per_s_median``: the same for ``features_batch_kernel``
  (sorted CSR feature rows, the datasets' path), and ``mean_active_features``;
- ``reference_per_s``: the plain-Python oracle (``tests/oracles/reference_features.py``) on a small
  subset, the baseline, and ``speedup`` = eval_per_s_best / reference_per_s;
- ``scores_match_reference``: whether the timed kernel's scores equal ``w . phi`` of the
  oracle's features on that subset (the speed is of a correct evaluator);
- ``target_eval_per_s`` and ``target_met`` (issue 3: at least one million per second).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path

import numpy as np
from common import bench_boards, timed

from search.core.convert import from_chess
from search.evaluation.feature_kernels import evaluate_batch_kernel, features_batch_kernel
from search.params.weights import load_weights

REPO = Path(__file__).resolve().parents[1]
N_POSITIONS = 50_000
N_REFERENCE = 1_000
REPEATS = 7
TARGET = 1_000_000


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help, and no stray arguments
    boards, source = bench_boards(N_POSITIONS)
    arrays = np.ascontiguousarray(np.stack([from_chess(b) for b in boards]))
    w = np.ascontiguousarray(load_weights("classic").values, dtype=np.int32)

    evaluate_batch_kernel(arrays[:100], w)  # compile, or load numba's cache
    indptr, _, _ = features_batch_kernel(arrays[:100])
    n = len(arrays)
    eval_times = timed(lambda: evaluate_batch_kernel(arrays, w), REPEATS)
    feat_times = timed(lambda: features_batch_kernel(arrays), REPEATS)
    indptr, _, _ = features_batch_kernel(arrays)

    # the oracle lives with the tests it serves; load that file by path
    spec = importlib.util.spec_from_file_location("reference_features", REPO / "tests" / "oracles" / "reference_features.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reference_features = module.reference_features

    step = max(1, n // N_REFERENCE)
    subset = boards[::step][:N_REFERENCE]
    start = time.perf_counter()
    reference = [reference_features(board) for board in subset]
    reference_rate = len(subset) / (time.perf_counter() - start)
    # the timed kernel's scores must be the oracle's w . phi on the subset
    scores = evaluate_batch_kernel(arrays[::step][:N_REFERENCE], w)
    agrees = all(
        int(np.dot(w[idx].astype(np.int64), np.asarray(val, dtype=np.int64))) == score
        for (idx, val), score in zip(reference, scores)
    )

    eval_best = n / min(eval_times)
    out = {
        "source": source,
        "positions": n,
        "threads": 1,
        "repeats": REPEATS,
        "eval_per_s_best": round(eval_best),
        "eval_per_s_median": round(n / statistics.median(eval_times)),
        "features_per_s_best": round(n / min(feat_times)),
        "features_per_s_median": round(n / statistics.median(feat_times)),
        "mean_active_features": round(float(indptr[-1]) / n, 1),
        "reference_positions": len(subset),
        "reference_per_s": round(reference_rate),
        "speedup": round(eval_best / reference_rate),
        "scores_match_reference": agrees,
        "target_eval_per_s": TARGET,
        "target_met": eval_best >= TARGET,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

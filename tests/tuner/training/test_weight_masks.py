"""The catalogue's tuning bounds are the ones every tuner keeps the weights in: Texel, MMTO's
Adam option and the bootstrap methods clip to them, the genetic algorithm's genes stay inside
them, and a start weight outside them widens its bound instead of being moved."""

from __future__ import annotations

import numpy as np

from search.params.catalog import FEATURE_INDEX, weight_bounds
from search.params.weights import load_weights
from tuner.methods.ga import GaConfig, make_codec
from tuner.training.optim import to_search_weights
from tuner.training.tune_config import TuneConfig
from tuner.training.weight_masks import tuning_bounds

KNIGHT = FEATURE_INDEX["mg.material.knight"]
PST = FEATURE_INDEX["mg.pst.knight.e4"]


def test_bounds_come_from_the_catalogue_and_widen_for_the_start() -> None:
    start = load_weights("classic").values.copy()
    low, high = tuning_bounds(start)
    cat_low, cat_high = (np.array(b) for b in weight_bounds())
    np.testing.assert_array_equal(low, cat_low)  # classic lies inside the bounds
    np.testing.assert_array_equal(high, cat_high)
    assert (cat_low[KNIGHT], cat_high[KNIGHT]) == (0, 3000)
    assert (cat_low[PST], cat_high[PST]) == (-500, 500)
    start[PST] = 640
    low, high = tuning_bounds(start)
    assert (low[PST], high[PST]) == (-500, 640)
    # the float weights of Texel, MMTO's Adam and the bootstrap methods are rounded within them
    master = start.astype(np.float64)
    master[PST], master[KNIGHT] = 900.0, -40.0
    w = to_search_weights(master, low, high)
    assert (w[PST], w[KNIGHT]) == (640, 0)


def test_ga_genes_stay_inside_the_catalogue_bounds() -> None:
    w0 = load_weights("classic").values
    codec = make_codec(TuneConfig(train=("material", "pst")), GaConfig(span=5000), w0)
    cat_low, cat_high = (np.array(b) for b in weight_bounds())
    np.testing.assert_array_equal(codec.low, cat_low[codec.trainable])
    np.testing.assert_array_equal(codec.high, cat_high[codec.trainable])
    narrow = make_codec(TuneConfig(train=("material",)), GaConfig(span=50), w0)
    # the material values lie 50 cp inside their catalogue bounds (0 .. 3000): the span decides
    np.testing.assert_array_equal(narrow.low, w0[narrow.trainable] - 50)
    np.testing.assert_array_equal(narrow.high, w0[narrow.trainable] + 50)
    assert len(narrow.trainable) == 10

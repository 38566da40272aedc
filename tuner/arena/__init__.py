"""Where weight sets and engines are measured against each other: engine-vs-engine matches
(:mod:`.match`) with SPRT (:mod:`.sprt`) and ratings (:mod:`.ratings`), EPD test suites
(:mod:`.epd`), move-match on held-out positions (:mod:`.movematch`), external UCI engines
(:mod:`.engines`), the method comparison of ``tuner bench compare`` (:mod:`.compare`) and
the plots of a run (:mod:`.plots`). A new benchmark goes here, its command in
:mod:`tuner.commands`."""

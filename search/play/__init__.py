"""The playing search: a selective alpha-beta for play and self-play (:mod:`search.play.kernel`,
its tables :mod:`search.play.tables`, the iterative-deepening player :mod:`search.play.searcher`),
beside the exact search that training needs (:mod:`search.tree`), which it leaves as it is."""

"""The move-probability model and the probability-limited search it drives: the model's features
(:mod:`~search.pls.move_catalog`, :mod:`~search.pls.move_model_kernels`), its API
(:mod:`~search.pls.move_model`), alpha-beta with model ordering
(:mod:`~search.pls.model_ordering`) and the probability-limited search (:mod:`~search.pls.pls`,
:mod:`~search.pls.pls_kernels`, :mod:`~search.pls.pls_sweep`). Imports from every other room."""

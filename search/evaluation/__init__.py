"""The evaluators behind one seam: the linear terms (:mod:`~search.evaluation.feature_kernels`,
plug-in terms in :mod:`~search.evaluation.terms_kernels`, the incremental material and
piece-square part in :mod:`~search.evaluation.material_pst`), the network
(:mod:`~search.evaluation.network`, :mod:`~search.evaluation.network_kernels`), the static score
the searches call (:mod:`~search.evaluation.static_eval`, its cache
:mod:`~search.evaluation.eval_cache`), the public API (:mod:`~search.evaluation.evaluation_api`,
:mod:`~search.evaluation.evaluators`) and the weights and evaluator checks
(:mod:`~search.evaluation.validate`). Imports only :mod:`search.core` and :mod:`search.params`."""

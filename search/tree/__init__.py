"""The tree searches: quiescence (:mod:`~search.tree.quiescence`), alpha-beta
(:mod:`~search.tree.alphabeta`), batched searches and sweeps (:mod:`~search.tree.batch`, their
work queue :mod:`~search.tree.work_queue`), the public API (:mod:`~search.tree.search_api`),
iterative deepening (:mod:`~search.tree.iterative`), the bootstrap trees
(:mod:`~search.tree.bootstrap_tree`) and two numba helpers (:mod:`~search.tree.borrow`,
:mod:`~search.tree.kernel_cache`). Imports only :mod:`search.core`, :mod:`search.params` and
:mod:`search.evaluation`."""

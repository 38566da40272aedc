"""The evaluation's parameters: the feature catalogue (:mod:`~search.params.catalog`: every term
declared once, with its group, bounds and layout hash), an engine author's plug-in terms
(:mod:`~search.params.terms`), and the weights files (:mod:`~search.params.weights`,
:mod:`~search.params.weights_base`, :mod:`~search.params.weights_text`, the shipped sets in
:mod:`~search.params.weight_sets`). Plain Python (no kernel); imports only :mod:`search.core`."""

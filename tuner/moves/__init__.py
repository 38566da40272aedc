"""The move-probability model's training and measurement (``tuner moves``): position sets to
the arrays of :mod:`objectives.move_choice`, Adam with L2 chosen on the validation split
(:mod:`tuner.moves.train`), and the model as a move predictor (:mod:`tuner.moves.measure`).
The model itself is :mod:`search.pls.move_model`; ``docs/move-model.md`` describes all three."""

"""The tuning methods, one module each: MMTO (:mod:`.mmto`, its network form
:mod:`.network_mmto`), the genetic algorithm (:mod:`.ga`), Texel (:mod:`.texel`) and the
search-bootstrapping family: RootStrap (:mod:`.rootstrap`), TreeStrap(minimax)
(:mod:`.treestrap_mm`), TreeStrap(alpha-beta) (:mod:`.treestrap_ab`) and TD-Leaf (:mod:`.tdleaf`,
its network form :mod:`.network_tdleaf`), over what they share (:mod:`.bootstrap`, and
:mod:`.search_targets` for RootStrap's and TreeStrap's update).

A new method is a module here plus one line in :data:`tuner.methods.registry.BUILTIN` (or a
:func:`tuner.methods.registry.register` call from a plug-in); the outer loop they share is
:mod:`tuner.training.driver`.
"""

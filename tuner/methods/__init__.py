"""The tuning methods, one module each: MMTO (:mod:`.mmto`, its network form
:mod:`.network_mmto`), the genetic algorithm (:mod:`.ga`), Texel (:mod:`.texel`) and the
bootstrapping family (:mod:`.bootstrap`).

A new method is a module here plus one line in :data:`tuner.methods.registry.BUILTIN` (or a
:func:`tuner.methods.registry.register` call from a plug-in); the outer loop they share is
:mod:`tuner.training.driver`.
"""

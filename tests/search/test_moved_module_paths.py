"""The module paths of the flat ``search`` package before the rooms (``search.board``, ...) are
aliases of the modules that now hold them (search/__init__.py), for the scripts and term
plug-ins written against them: each imports, warns once with the new path, and holds the same
objects; names that were never modules stay missing."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import search

#: every module of ``search/`` before the rooms (git show f0c3212~1:search), with where it went;
#: ``pls`` (now ``search.pls.pls``) is the room's own name: its names are read from the room
FLAT = {
    "alphabeta": "tree", "attacks": "core", "batch": "tree", "bits": "core", "board": "core",
    "bootstrap_tree": "tree", "borrow": "tree", "catalog": "params", "convert": "core",
    "eval_cache": "evaluation", "evaluation_api": "evaluation", "evaluators": "evaluation",
    "feature_kernels": "evaluation", "fen_batch": "core", "input_limits": "core", "iterative": "tree",
    "kernel_cache": "tree", "material_pst": "evaluation", "model_ordering": "pls", "move_catalog": "pls",
    "move_model": "pls", "move_model_kernels": "pls", "movegen": "core", "network": "evaluation",
    "network_kernels": "evaluation", "perft": "core", "pls_kernels": "pls", "pls_sweep": "pls",
    "quiescence": "tree", "quiet": "core", "replay": "core", "search_api": "tree", "static_eval": "evaluation",
    "terms": "params", "terms_kernels": "evaluation", "types": "core", "weight_sets": "params",
    "weights": "params", "weights_base": "params", "weights_text": "params", "work_queue": "tree",
}


def _import_afresh(name: str) -> tuple[object, list[warnings.WarningMessage]]:
    sys.modules.pop(name, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(name)
    return module, caught


@pytest.mark.parametrize("old", sorted(FLAT))
def test_each_old_path_is_an_alias_of_its_room_module(old: str) -> None:
    new = f"search.{FLAT[old]}.{old}"
    assert search.moved_module_homes(old) == (new,)
    alias, caught = _import_afresh(f"search.{old}")
    real = importlib.import_module(new)
    public = [k for k in vars(real) if not k.startswith("__")]
    assert public and all(getattr(alias, k) is getattr(real, k) for k in public)
    assert [(w.category, str(w.message)) for w in caught] == [
        (search.MovedModuleWarning, f"search.{old} is now {new}; the old path is an alias (import the new one)")]
    assert caught[0].filename == __file__  # the importer's line, not importlib's


def test_the_split_validate_holds_both_halves() -> None:
    alias, caught = _import_afresh("search.validate")
    assert search.moved_module_homes("validate") == ("search.core.validate", "search.evaluation.validate")
    assert alias.InvalidBoardError is search.InvalidBoardError  # type: ignore[attr-defined]
    assert alias.InvalidWeightsError is search.InvalidWeightsError  # type: ignore[attr-defined]
    assert "search.core.validate and search.evaluation.validate" in str(caught[0].message)


def test_the_old_pls_modules_names_are_read_from_its_room() -> None:
    import search.pls.pls as real

    with pytest.warns(search.MovedModuleWarning, match=r"search.pls.PlsSearcher is now search.pls.pls.PlsSearcher") as caught:
        from search.pls import PlsSearcher
    assert PlsSearcher is real.PlsSearcher
    assert caught[0].filename == __file__
    with pytest.raises(ImportError):
        from search.pls import NoSuchName  # noqa: F401


@pytest.mark.parametrize("missing", ["search.nothing", "search.core.board2", "search.core", "search.board.x"])
def test_names_that_were_never_modules_stay_missing(missing: str) -> None:
    if missing == "search.core":  # a room is a package of its own, not an alias
        assert importlib.import_module(missing).__file__.endswith("search/core/__init__.py")  # type: ignore[union-attr]
        return
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(missing)

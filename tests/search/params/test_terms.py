"""An engine author's own terms as a plug-in (search.params.terms, docs/own-terms.md), with the example
docs/examples/rook_behind_passer.py: its numba extractor against its python-chess reference,
one-line refusals of broken plug-in files, and, in a process with the plug-in (the catalogue is
read once per process), the catalogue hash, old weights files, w . phi == evaluate, the search,
MMTO, Texel and the GA (stages tied, from a configuration naming the plug-in) tuning the term
on the sample, a hybrid network refused, the export, and the refusal of a file made with
the term in a process without it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import chess
import numpy as np
import pytest

from search.params.catalog import CATALOG_HASH, N_FEATURES
from search.core.convert import from_chess
from search.params.terms import TermsFileError, load_plugin
from search.params.weights import WeightsFileError, load_weights

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "rook_behind_passer.py"


def _count(plugin, board: chess.Board) -> list[int]:  # type: ignore[no-untyped-def]
    counts = np.zeros(plugin.n_base, dtype=np.int64)
    plugin.count(from_chess(board), counts)
    return [int(c) for c in counts]


def test_example_extractor_equals_its_reference_on_the_shipped_games(real_boards: list[chess.Board]) -> None:
    plugin = load_plugin(EXAMPLE)
    fired = 0
    for board in real_boards:
        got = _count(plugin, board)
        assert got == plugin.reference(board), board.fen()
        fired += got != [0]
    assert fired > 20  # the term is not always zero on real games
    # hand-made cases: White's rook behind its passed d-pawn; blocked by a piece between; not passed
    assert _count(plugin, chess.Board("4k3/8/8/3P4/8/8/8/3RK3 w - - 0 1")) == [1]
    assert _count(plugin, chess.Board("4k3/8/8/3P4/8/3N4/8/3RK3 w - - 0 1")) == [0]
    assert _count(plugin, chess.Board("4k3/4p3/8/3P4/8/8/8/3RK3 w - - 0 1")) == [0]
    assert _count(plugin, chess.Board("3rk3/8/8/8/3p4/8/8/4K3 b - - 0 1")) == [-1]


def test_a_plugin_written_against_the_flat_package_still_loads_and_counts(
        tmp_path: Path, real_boards: list[chess.Board], monkeypatch: pytest.MonkeyPatch) -> None:
    """A plug-in importing ``search.board`` (the path before the rooms) loads, counts as the
    example does, and carries one note naming its file and line and the new path."""
    source = EXAMPLE.read_text()
    assert "from search.core.board import" in source
    old = tmp_path / "old_paths.py"
    old.write_text(source.replace("from search.core.board import", "from search.board import"))
    monkeypatch.delitem(sys.modules, "search.board", raising=False)  # the alias warns at its first import
    line = 1 + source.splitlines().index(next(s for s in source.splitlines() if s.startswith("from search.core.board")))
    plugin, example = load_plugin(old), load_plugin(EXAMPLE)
    assert plugin.notes == (f"{old}:{line}: MovedModuleWarning: search.board is now search.core.board; "
                            "the old path is an alias (import the new one)",)
    assert example.notes == ()
    assert [_count(plugin, b) for b in real_boards[:300]] == [_count(example, b) for b in real_boards[:300]]


def test_the_command_line_prints_a_plugins_notes_in_one_line_each(tmp_path: Path) -> None:
    old = tmp_path / "old_paths.py"
    old.write_text(EXAMPLE.read_text().replace("from search.core.board import", "from search.board import"))
    out = tmp_path / "gm.json"
    proc = subprocess.run([sys.executable, "-m", "tuner", "--terms", str(old), "export", "gm", "--format", "json",
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "search.board" in line]
    assert notes == [f"tuner: note: {old}:18: MovedModuleWarning: search.board is now search.core.board; "
                     "the old path is an alias (import the new one)"]
    assert "passers.rook_behind" in out.read_text()


@pytest.mark.parametrize("source, message", [
    ("NAME = 'x'\nGROUP = 'g'\nTERMS = ((\n", "line 3: syntax error"),
    ("raise RuntimeError('boom')\n", "importing the plug-in failed: RuntimeError: boom"),
    ("NAME = 'x'\nGROUP = 'g'\nTERMS = (('t', (), (1,)),)\ndef reference(b): return [0]\n", "does not define count"),
    ("NAME = 'x'\nGROUP = 'g'\nTERMS = (('t', ('a', 'b'), (1,)),)\ncount = reference = print\n",
     "defaults must be 2 integer(s)"),
    ("NAME = 'x'\nGROUP = 'g'\nTERMS = (('t', (), (1,)),)\ndef count(b, c): pass\nreference = count\n",
     "count must be an @njit function"),
])
def test_a_broken_plugin_file_is_refused_in_one_line(tmp_path: Path, source: str, message: str) -> None:
    path = tmp_path / "bad_terms.py"
    path.write_text(source)
    with pytest.raises(TermsFileError) as err:
        load_plugin(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(path)) and message in text, text


def test_a_plugin_path_that_is_no_file_says_what_it_is(tmp_path: Path) -> None:
    # a FIFO would block the import; a folder or a missing file is named as such
    fifo = tmp_path / "terms.py"
    os.mkfifo(fifo)
    for path, message in ((fifo, "not a regular file: a FIFO"), (tmp_path, "a folder, not a term plug-in file"),
                          (tmp_path / "missing.py", "no such term plug-in file")):
        with pytest.raises(TermsFileError) as err:
            load_plugin(path)
        assert str(err.value) == f"{path}: {message}"


def test_a_broken_plugin_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad_terms.py"
    path.write_text("NAME = 'x'\n")
    proc = subprocess.run([sys.executable, "-m", "tuner", "--terms", str(path), "eval", chess.STARTING_FEN,
                           "--weights", "classic"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"tuner: error: {path}: the plug-in does not define GROUP (see docs/own-terms.md)"]


_IN_PLUGIN_PROCESS = textwrap.dedent('''
    import json, sys, warnings
    import chess, numpy as np
    from search.params import catalog
    from search.core.convert import from_chess
    from search.evaluation.evaluation_api import evaluate_batch_units, features_batch
    from search.tree.search_api import search_many, signed_features
    from search.params.weights import load_weights
    from tuner.cli import main

    sample, out = sys.argv[1], sys.argv[2]
    report = {"hash": catalog.CATALOG_HASH, "builtin_hash": catalog.BUILTIN_HASH, "n": catalog.N_FEATURES}
    names = ["mg.passers.rook_behind", "eg.passers.rook_behind"]
    idx = [catalog.FEATURE_INDEX[n] for n in names]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = load_weights("classic")  # a built-in (old catalogue) file
        legacy = load_weights(sys.argv[3])  # a file of the legacy catalogue 26fcb341cd55f948
    report["old_loaded"] = [int(old.values[i]) for i in idx] + [int(legacy.values[i]) for i in idx]
    report["notes"] = [str(c.message) for c in caught]
    w = old.values.copy()
    w[idx] = [60, 90]
    fens = ["4k3/8/8/3P4/8/8/8/3RK3 w - - 0 1", "3rk3/8/8/8/3p4/8/8/4K3 w - - 0 1",
            "r3k3/8/8/3P4/8/8/8/3RK3 b - - 0 1"]
    boards = np.stack([from_chess(chess.Board(f)) for f in fens])
    indptr, ind, val = features_batch(boards)
    dots = [int(np.dot(w[ind[indptr[p]:indptr[p + 1]]], val[indptr[p]:indptr[p + 1]])) for p in range(len(fens))]
    report["w_dot_phi"] = dots
    report["evaluate"] = [int(v) for v in evaluate_batch_units(boards, w)]
    res = search_many(boards, 1, w)
    leaf_scores = evaluate_batch_units(res.leaves, w)
    report["search_equals_leaf_eval"] = bool(all(
        res.scores[p] == (leaf_scores[p] if res.pv_len[p] % 2 == 0 else -leaf_scores[p])
        for p in range(len(fens)) if res.kinds[p] == 0))
    from search.evaluation.validate import check_evaluator
    pair = check_evaluator(w)
    report["recheck"] = bool(np.array_equal(check_evaluator(pair)[0], w) and check_evaluator(pair)[1] is pair[1])
    ip, si, sv = signed_features(res.leaves, np.ones(len(fens), dtype=np.int8))
    report["signed_rows_equal"] = bool(np.array_equal(ip, features_batch(res.leaves)[0]))
    # MMTO's compact table renumbers the plug-in's features (tuner.methods.mmto.TO_TABLE): its
    # objective and gradient, in catalogue order, equal the reference kernel's on the same rows
    from objectives.mmto import objective as reference_objective
    from search.tree.search_api import sweep
    from tuner.methods.mmto import EVAL_SCALE, _keep_rows, table_objective
    rook = ["4k3/8/8/3P4/8/8/8/3RK3 w - - 0 1", "3rk3/8/2p5/3p4/8/8/3P4/3RK3 w - - 0 1",
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"]
    sw = sweep(np.stack([from_chess(chess.Board(f)) for f in rook]), 1, w)
    played_rows = sw.pos_ptr[:-1]
    leaves = _keep_rows(sw, played_rows, 0.0)
    keep_signs = np.where(sw.kinds == 0, sw.signs, 0).astype(np.int8)
    r_ip, r_ind, r_val = signed_features(sw.leaves, keep_signs)
    r_off = np.where(sw.kinds == 0, 0, sw.scores).astype(np.int64)
    ref = reference_objective(sw.pos_ptr, played_rows, r_off, r_ip, r_ind, r_val, w,
                              0.02, EVAL_SCALE)
    total, grad = table_objective(leaves, w, 0.02, loss="sigmoid", results=np.full(len(rook), np.nan), mu=0.0,
                                  k_cp=0.0)
    report["table_objective"] = [bool(total == ref.total), bool(np.array_equal(grad, ref.gradient)),
                                 bool(np.any(grad[idx] != 0))]
    codes = {}
    for method, extra in (("texel", ["--epochs", "2", "--k", "1.0", "--lr", "5"]),
                          ("mmto", ["--iterations", "2", "--depth", "1"])):
        codes[method] = main(["tune", "--method", method, "--data", sample, "--out", f"{out}/{method}",
                              "--train", "passers", "--max-train", "1000", "--threads", "1", "--keep", "last",
                              *extra])
        doc = json.loads(open(f"{out}/{method}/weights.json").read())
        report[method] = {"terms": doc.get("terms"), "hash": doc["catalog_hash"],
                          "weights": [doc["weights"][n] for n in names]}
    # the GA, one gene per term for both stages (--tie-stages), from a configuration that names
    # the plug-in (top-level terms, relative to the TOML's folder): the run records it resolved
    import contextlib, io, os, pathlib
    cfg = pathlib.Path(out) / "ga.toml"
    rel = os.path.relpath(os.environ["MOVETUNER_TERMS"], out)
    cfg.write_text(f'method = "ga"\\nterms = "{rel}"\\nstart = "classic"\\ntrain = ["passers"]\\n'
                   'max_train = 1000\\nthreads = 1\\n[ga]\\ngenerations = 2\\npopulation = 6\\nsample = 100\\n'
                   'tie_stages = true\\n')
    codes["ga"] = main(["tune", "--config", str(cfg), "--data", sample, "--out", f"{out}/ga", "--quiet"])
    doc = json.loads(open(f"{out}/ga/weights.json").read())
    report["ga"] = {"terms": doc.get("terms"), "weights": [doc["weights"][n] for n in names],
                    "recorded": [line for line in open(f"{out}/ga/config.toml") if line.startswith("terms")]}
    # a hybrid network's linear part takes the built-in terms only: refused in one line
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        codes["hybrid"] = main(["tune", "--method", "mmto", "--start", "network:8x8x8+gm", "--data", sample,
                                "--out", f"{out}/hybrid", "--quiet"])
    report["hybrid_error"] = err.getvalue().strip().splitlines()
    # the move model measures the built-in evaluation: the same probabilities with the plug-in
    from search.pls.move_model import load_move_model, move_probabilities
    report["move_probs"] = [float(p) for p in move_probabilities(boards, load_move_model("gm")).probabilities]
    report["codes"] = codes
    report["export_code"] = main(["export", f"{out}/texel/weights.json", "--format", "c", "--out", f"{out}/w.h"])
    report["export"] = open(f"{out}/w.h").read()
    print(json.dumps(report))
''')


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory: pytest.TempPathFactory, sample_set: Path) -> dict:  # type: ignore[type-arg]
    out = tmp_path_factory.mktemp("terms")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MOVETUNER_TERMS": str(EXAMPLE)}
    legacy = ROOT / "tests" / "data" / "catalog_26fcb341cd55f948" / "classic.json"
    proc = subprocess.run([sys.executable, "-c", _IN_PLUGIN_PROCESS, str(sample_set), str(out), str(legacy)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report: dict = json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[type-arg]
    report["out"] = str(out)
    return report


@pytest.mark.slow
def test_the_catalogue_hash_changes_with_the_term_and_old_files_load(plugin_run: dict) -> None:  # type: ignore[type-arg]
    assert plugin_run["builtin_hash"] == CATALOG_HASH != plugin_run["hash"]
    assert plugin_run["n"] == N_FEATURES + 2
    assert plugin_run["old_loaded"] == [20, 20, 20, 20]  # the term's features read as its defaults
    assert any("built-in feature catalogue" in n and "rook_behind_passer" in n for n in plugin_run["notes"])


@pytest.mark.slow
def test_the_term_scores_in_features_evaluation_and_search(plugin_run: dict) -> None:  # type: ignore[type-arg]
    assert plugin_run["w_dot_phi"] == plugin_run["evaluate"]
    plain = load_weights("classic").values
    from search.evaluation.evaluation_api import evaluate_batch_units
    fens = ["4k3/8/8/3P4/8/8/8/3RK3 w - - 0 1", "3rk3/8/8/8/3p4/8/8/4K3 w - - 0 1",
            "r3k3/8/8/3P4/8/8/8/3RK3 b - - 0 1"]
    base = evaluate_batch_units(np.stack([from_chess(chess.Board(f)) for f in fens]), plain)
    # the term adds 60 x phase + 90 x (24 - phase) per net count, side to move's view (phases 2,
    # 2, 4: White's rook behind its passer; Black's; White's again with Black to move)
    assert [int(v) for v in np.array(plugin_run["evaluate"]) - base] == [
        60 * 2 + 90 * 22, -(60 * 2 + 90 * 22), -(60 * 4 + 90 * 20)]
    assert plugin_run["search_equals_leaf_eval"] and plugin_run["signed_rows_equal"]
    assert plugin_run["recheck"]  # the kernel pair is checked again as it is (tuner uci's warm-up does so)
    assert plugin_run["table_objective"] == [True, True, True]  # MMTO's compact table with the term


@pytest.mark.slow
@pytest.mark.parametrize("method", ["texel", "mmto"])
def test_mmto_and_texel_tune_the_term_on_the_sample(plugin_run: dict, method: str) -> None:  # type: ignore[type-arg]
    assert plugin_run["codes"][method] == 0
    made = plugin_run[method]
    assert made["hash"] == plugin_run["hash"]
    assert made["terms"]["name"] == "rook_behind_passer" and made["terms"]["group"] == "passers"
    assert made["weights"] != [20, 20], made  # the term's weights moved from their defaults


@pytest.mark.slow
def test_the_ga_ties_the_terms_stages_from_a_configuration_naming_the_plugin(plugin_run: dict) -> None:  # type: ignore[type-arg]
    assert plugin_run["codes"]["ga"] == 0
    made = plugin_run["ga"]
    assert made["terms"]["name"] == "rook_behind_passer"
    mg, eg = made["weights"]
    assert mg == eg  # one gene sets both copies
    assert made["recorded"] == [f'terms = "{EXAMPLE.resolve()}"\n']


@pytest.mark.slow
def test_a_hybrid_network_is_refused_with_a_plugin(plugin_run: dict) -> None:  # type: ignore[type-arg]
    assert plugin_run["codes"]["hybrid"] == 2
    assert plugin_run["hybrid_error"] == [
        "tuner tune: error: 'network:8x8x8+gm': a hybrid network's linear part takes the built-in terms only, "
        "not plug-in 'rook_behind_passer' (docs/own-terms.md); use a pure network or the linear evaluator"]


@pytest.mark.slow
def test_the_move_model_is_the_same_with_a_plugin(plugin_run: dict) -> None:  # type: ignore[type-arg]
    from search.pls.move_model import load_move_model, move_probabilities

    fens = ["4k3/8/8/3P4/8/8/8/3RK3 w - - 0 1", "3rk3/8/8/8/3p4/8/8/4K3 w - - 0 1",
            "r3k3/8/8/3P4/8/8/8/3RK3 b - - 0 1"]
    boards = np.stack([from_chess(chess.Board(f)) for f in fens])
    assert plugin_run["move_probs"] == [float(p) for p in move_probabilities(boards, load_move_model("gm")).probabilities]


def test_tune_settings_name_their_plugin_relative_to_their_folder(tmp_path: Path) -> None:
    from tuner.cli import main, tune_settings_terms

    cfg = tmp_path / "sub" / "run.toml"
    cfg.parent.mkdir()
    cfg.write_text('method = "texel"\nterms = "../mine.py"\n')
    assert tune_settings_terms(["tune", "--config", str(cfg), "--data", "x"]) == (str(cfg.parent / "../mine.py"), str(cfg))
    assert tune_settings_terms(["tune", f"--config={cfg}"]) is not None
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.toml").write_text('terms = "/abs/mine.py"\n')
    assert tune_settings_terms(["tune", "--resume", str(tmp_path / "run")]) == (
        "/abs/mine.py", str(tmp_path / "run" / "config.toml"))
    assert tune_settings_terms(["eval", "--config", str(cfg)]) is None
    assert tune_settings_terms(["tune", "--data", "x"]) is None
    # a TOML naming another file than --terms: one line naming the TOML
    other = tmp_path / "other.py"
    other.write_text("")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["--terms", str(other), "tune", "--config", str(cfg)])
    assert code == 2
    assert err.getvalue().strip() == f"tuner: error: {cfg}: its terms = '{cfg.parent / '../mine.py'}' is not the --terms file {other}"


@pytest.mark.slow
def test_the_export_names_the_term(plugin_run: dict) -> None:  # type: ignore[type-arg]
    assert plugin_run["export_code"] == 0
    assert "passers" in plugin_run["export"] and "rook_behind" in plugin_run["export"]
    assert plugin_run["hash"] in plugin_run["export"]


@pytest.mark.slow
def test_a_file_made_with_the_term_is_refused_without_it(plugin_run: dict) -> None:  # type: ignore[type-arg]
    path = Path(plugin_run["out"]) / "texel" / "weights.json"
    with pytest.raises(WeightsFileError) as err:
        load_weights(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(path))
    assert "rook_behind_passer" in text and "--terms" in text

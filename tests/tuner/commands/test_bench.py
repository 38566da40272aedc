"""``tuner bench move-match`` and ``tuner bench plot``; top-k credit and ranks with ties."""

from __future__ import annotations

import json
import re
from pathlib import Path

import chess
import numpy as np
import pytest
from tests.conftest import played_positions

from search.tree.search_api import move_match, sweep
from search.params.weights import load_weights
from tuner.cli import main
from tuner.training.positions import check_played, from_boards
from tuner.arena.movematch import measure, ranks, top_k_credit


def test_top_k_credit_and_rank_share_ties() -> None:
    # three positions: played move unique best; tied with two others for best; third of four
    pos_ptr = np.array([0, 3, 6, 10])
    scores = np.array([50, 10, 0, 7, 7, 7, 40, 30, 20, 10])
    played = np.array([0, 4, 8])
    assert top_k_credit(pos_ptr, played, scores, 1).tolist() == pytest.approx([1, 1 / 3, 0])
    assert top_k_credit(pos_ptr, played, scores, 3).tolist() == pytest.approx([1, 1, 1])
    assert top_k_credit(pos_ptr, played, scores, 2).tolist() == pytest.approx([1, 2 / 3, 0])
    assert ranks(pos_ptr, played, scores).tolist() == pytest.approx([1, 2, 3])


def test_top_one_credit_equals_the_search_kernels_move_match(real_games: list[list[chess.Move]]) -> None:
    boards, moves, ids = played_positions(real_games, 400)
    pos = from_boards(boards, moves, ids)
    w = load_weights("material").values  # many ties: the fractional credit matters
    index = check_played(pos)
    sw = sweep(pos.boards, 1, w, leaves=False)
    credit = top_k_credit(sw.pos_ptr, sw.pos_ptr[:-1] + index, sw.scores, 1)
    assert np.allclose(credit, move_match(pos.boards, pos.played, w, 1)[0])
    stats = measure(pos, index, w, depth=1, budget=100_000, batch=128)
    assert stats.top1 == pytest.approx(credit.mean()) and stats.top1 <= stats.top3 and stats.mean_rank >= 1
    # the 95% interval: z = 1.95996 sample standard deviations of the per-position credits over sqrt(n)
    assert np.array_equal(stats.credits, credit)
    half = 1.959963984540054 * credit.std(ddof=1) / np.sqrt(len(credit))
    assert stats.top1_ci95 == pytest.approx((credit.mean() - half, credit.mean() + half))
    assert stats.top3_ci95 is not None and stats.top3_ci95[0] <= stats.top3 <= stats.top3_ci95[1] <= 1


def test_move_match_command_reports_each_weight_set(sample_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "move-match", "--weights", "material", "classic", "--data", str(sample_set),
                 "--split", "test", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["split"] == "test" and doc["positions"] > 150
    for name in ("material", "classic"):
        r = doc["weights"][name]
        assert 0 < r["top1"] <= r["top3"] <= 1 and 1 <= r["mean_rank"] <= r["mean_legal_moves"]
    assert doc["weights"]["classic"]["top1"] > doc["weights"]["material"]["top1"]
    for name in ("material", "classic"):
        r = doc["weights"][name]
        assert r["top1_ci95"][0] < r["top1"] < r["top1_ci95"][1] and r["top3_ci95"][0] <= r["top3"] <= r["top3_ci95"][1]
    # the later set against the first: the paired difference of the credits, narrower than the two intervals'
    paired = doc["top1_vs_first"]["classic"]
    assert paired["first"] == "material"
    assert paired["diff"] == pytest.approx(doc["weights"]["classic"]["top1"] - doc["weights"]["material"]["top1"],
                                           abs=2e-5)
    low, high = paired["ci95"]
    assert low < paired["diff"] < high
    assert main(["bench", "move-match", "--weights", "classic", "material", "--data", str(sample_set),
                 "--max-positions", "50"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("50 positions") and table[2].startswith("classic")
    assert re.search(r"classic\s+\d+\.\d\d%\s+\[\d+\.\d\d, \d+\.\d\d\]%", table[2])
    assert table[4].startswith("top-1 material - classic: ") and "95% interval [" in table[4] and "paired" in table[4]


def test_move_match_refuses_missing_data_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "move-match", "--weights", "classic", "--data", str(tmp_path / "none")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_plot_writes_metric_and_pst_pngs(sample_set: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["tune", "--data", str(sample_set), "--out", str(run), "--iterations", "1", "--inner-steps", "4",
                 "--max-train", "300", "--max-validation", "50", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["bench", "plot", str(run)]) == 0
    written = [Path(line) for line in capsys.readouterr().out.split()]
    assert [p.name for p in written] == ["metrics.png", "pst.png"]
    for p in written:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert main(["bench", "plot", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err

    # the panels' series and labels name the metrics as metrics.jsonl does (j_l1, not J_R)
    from tuner.arena.plots import panels_of

    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for _, series in panels_of("mmto"):
        for key, label in series:
            assert key in records[-1], key
            for word in re.findall(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b", label):
                assert word in records[-1], (label, word)


def test_pst_figure_shows_the_change_from_the_start_in_readable_digits() -> None:
    import matplotlib.pyplot as plt

    from search.params.catalog import FEATURE_INDEX
    from tuner.arena.plots import CELL_FONT_SIZE, pst_figure

    start = load_weights("classic").values
    tuned = start.copy()
    tuned[FEATURE_INDEX["mg.pst.knight.e4"]] += 7
    tuned[FEATURE_INDEX["eg.pst.king.a1"]] -= 12
    fig = pst_figure(tuned, "t", start)
    try:
        texts = {(ax.get_title(), t.get_text()): t.get_fontsize() for ax in fig.axes for t in ax.texts}
        assert set(texts) == {("mg knight", "+7"), ("eg king", "-12")}  # only the squares that changed
        assert min(texts.values()) >= CELL_FONT_SIZE >= 8
        assert "change from the start weights" in fig._suptitle.get_text()
    finally:
        plt.close(fig)
    fig = pst_figure(start, "t")  # without a start: the values themselves
    try:
        knight = next(ax for ax in fig.axes if ax.get_title() == "mg knight")
        assert str(start[FEATURE_INDEX["mg.pst.knight.e4"]]) in [t.get_text() for t in knight.texts]
    finally:
        plt.close(fig)


def test_every_help_text_prints_percent_signs_once() -> None:
    """argparse %-formats argument help but not descriptions or epilogs: a '%%' there is printed
    as is (``bench epd --help`` said "95%%")."""
    import argparse

    from tuner.cli import build_parser

    def parsers(p: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser]]:
        out = [(name, p)]
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    out += parsers(sub, f"{name} {sub_name}")
        return out

    found = parsers(build_parser(), "tuner")
    assert {"tuner bench epd", "tuner bench match", "tuner tune"} <= {n for n, _ in found}
    for name, p in found:
        assert "%%" not in p.format_help(), name
    assert "with 95% intervals" in dict(found)["tuner bench epd"].format_help()


@pytest.mark.parametrize("as_json", [True, False])
def test_a_match_stopped_by_ctrl_c_prints_the_figures_of_the_pairs_finished(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, as_json: bool) -> None:
    """A long match or SPRT stopped by Ctrl-C (or SIGTERM) printed only "interrupted": its PGN kept
    the finished pairs, but their W/D/L and Elo had to be counted again from it. Now the command
    prints them (``interrupted`` in the JSON), then stops with the usual exit code."""
    import tuner.commands.bench as bench
    from tuner.arena.match import GameRecord, Opening

    def stopped(*args, on_pair, **kwargs):  # type: ignore[no-untyped-def]
        opening = Opening("test", chess.STARTING_FEN)
        on_pair(0, (GameRecord("1.1", opening, "A", ("e2e4",), ((30, 5),), "1-0", "checkmate"),
                    GameRecord("1.2", opening, "B", ("e2e4",), ((30, 5),), "1/2-1/2", "stalemate")))
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run_match", stopped)
    argv = ["bench", "match", "classic", "material", "--games", "4", "--depth", "1", "--workers", "1",
            "--out", str(tmp_path / "g.pgn")]
    assert main([*argv, "--json"] if as_json else argv) == 130
    out = capsys.readouterr().out
    if as_json:
        doc = json.loads(out)
        assert (doc["games"], doc["wins"], doc["draws"], doc["losses"], doc["interrupted"]) == (2, 1, 1, 0, True)
    else:
        assert out.startswith("interrupted: the figures of the 2 games finished (of 4)\n")
        assert "W/D/L from classic's view: 1 / 1 / 0" in out

"""``tuner ingest`` of position files (issue 27): every line format, written here from the
positions of the shipped sample games with the results of their games, gives the rows
python-chess says it should; bad lines are counted by reason with file:line; compressed,
CRLF and UTF-16 files read the same; the split is by Zobrist key and the same for any number of
workers; and a position file with results only trains Texel and is refused by MMTO."""

from __future__ import annotations

import bz2
import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import polars as pl
import pytest
import zstandard
from tests.conftest import SAMPLE_PGN, without_compile_note

from tuner.cli import main
from tuner.errors import TunerError
from tuner.ingest import SCHEMA, SPLITS, IngestConfig, ingest, read_split
from tuner.ingest.positions import LineChunk, hash_splits
from tuner.ingest.sources import LINE_BLOCK_BYTES, FileDigest, check_inputs, iter_games

WHITE_POINTS = {"1-0": "1.0", "0-1": "0.0", "1/2-1/2": "0.5"}
VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900, chess.KING: 0}


class Sample:
    """A position of a sample game: the board, the game's result and the move played."""

    def __init__(self, board: chess.Board, result: str, move: chess.Move) -> None:
        self.board, self.result, self.move = board, result, move

    @property
    def score(self) -> int:
        """A stand-in search score: the material balance in centipawns, White's view."""
        return sum(VALUES[p.piece_type] * (1 if p.color else -1) for p in self.board.piece_map().values())

    @property
    def mover_score(self) -> int:
        return self.score if self.board.turn else -self.score


def sample_positions(games: int) -> list[Sample]:
    out = []
    with SAMPLE_PGN.open(encoding="utf-8") as fh:
        for _ in range(games):
            game = chess.pgn.read_game(fh)
            assert game is not None
            board = game.board()
            for move in game.mainline_moves():
                out.append(Sample(board.copy(stack=False), game.headers["Result"], move))
                board.push(move)
    return out


POSITIONS = sample_positions(6)

#: each format: a line per position, and whether the line carries the counters, a score, a move
FORMATS: dict[str, tuple[Callable[[Sample], str], bool, bool, bool]] = {
    "float_brackets": (lambda s: f"{s.board.fen()} [{WHITE_POINTS[s.result]}]", True, False, False),
    "result_brackets": (lambda s: f"{s.board.fen()} [{s.result}]", True, False, False),
    "texel_tuner": (lambda s: f"{s.board.fen()}; [{WHITE_POINTS[s.result]}]", True, False, False),
    "ethereal": (lambda s: f"{s.board.fen()} [{WHITE_POINTS[s.result]}] {s.mover_score}", True, True, False),
    "bare_result": (lambda s: f"{s.board.fen()} {s.result}", True, False, False),
    "zurichess": (lambda s: f'{s.board.epd()} c9 "{s.result}";', False, False, False),
    "epd_operations": (lambda s: f'{s.board.epd()} id "sample {s.board.fullmove_number}"; ce {s.mover_score}; '
                                 f'pm {s.board.san(s.move)}; c9 "{s.result}"; hmvc {s.board.halfmove_clock}; '
                                 f"fmvn {s.board.fullmove_number};", True, True, True),
    "uci_moves": (lambda s: f'{s.board.epd()} bm {s.move.uci()}; c9 "{s.result}";', False, False, True),
    "bullet": (lambda s: f"{s.board.fen()} | {s.score} | {WHITE_POINTS[s.result]}", True, True, False),
}


def write(path: Path, lines: list[str], newline: str = "\n") -> Path:
    path.write_text("".join(line + newline for line in lines), encoding="utf-8", newline="")
    return path


def run(files: list[Path], out: Path, **options: object) -> tuple[dict, str]:  # type: ignore[type-arg]
    workers = int(options.pop("workers", 1))  # type: ignore[call-overload]
    log = io.StringIO()
    manifest = ingest(files, out, IngestConfig(**options), workers=workers, progress=False, log=log)  # type: ignore[arg-type]
    return manifest, log.getvalue()


def all_rows(folder: Path) -> pl.DataFrame:
    return pl.concat([read_split(folder, s) for s in SPLITS]).sort("game_id")


def expected_rows(samples: list[Sample], counters: bool, scored: bool, moved: bool) -> list[dict]:  # type: ignore[type-arg]
    """The rows python-chess says a file of ``samples`` gives (single-legal positions dropped,
    the first of each repeated position and move kept)."""
    seen = set()
    rows = []
    for i, s in enumerate(samples):
        board = s.board if counters else chess.Board(s.board.epd())
        n_legal = board.legal_moves.count()
        key = (chess.polyglot.zobrist_hash(board), s.move.uci() if moved else None)
        if n_legal <= 1 or key in seen:
            continue
        seen.add(key)
        rows.append({"game_id": i, "source_line": i + 1, "fen": board.fen(), "ply": board.ply(),
                     "stm": 0 if board.turn else 1, "result": s.result, "n_legal": n_legal, "zobrist": key[0],
                     "move": s.move.uci() if moved else None, "score": s.score if scored else None})
    return rows


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_gives_the_rows_python_chess_expects(tmp_path: Path, fmt: str) -> None:
    line, counters, scored, moved = FORMATS[fmt]
    path = write(tmp_path / "sample.epd", [line(s) for s in POSITIONS])
    manifest, log = run([path], tmp_path / "set")
    assert log == ""
    assert manifest["lines"] == {"read": len(POSITIONS), "kept": len(POSITIONS), "rejected": 0, "rejected_by_reason": {}}
    assert manifest["inputs"][0]["kind"] == "positions" and manifest["inputs"][0]["lines"] == len(POSITIONS)
    assert manifest["games"]["read"] == 0
    rows = all_rows(tmp_path / "set")
    assert rows.columns == list(SCHEMA)
    expected = expected_rows(POSITIONS, counters, scored, moved)
    assert rows.select(list(expected[0])).to_dicts() == expected
    assert rows["white_elo"].null_count() == rows["event"].null_count() == rows.height
    assert set(rows["source"]) == {"sample.epd"}
    assert manifest["positions"]["kept"] == len(expected)
    assert manifest["positions"]["dropped_by_reason"]["duplicate"] == sum(1 for _ in POSITIONS) - len(expected) \
        - manifest["positions"]["dropped_by_reason"]["single_legal"]


def test_results_from_the_movers_view_are_stored_from_whites(tmp_path: Path) -> None:
    mover = {("1-0", True): "1.0", ("1-0", False): "0.0", ("0-1", True): "0.0", ("0-1", False): "1.0"}
    lines = [f"{s.board.fen()} [{mover.get((s.result, s.board.turn), '0.5')}]" for s in POSITIONS]
    run([write(tmp_path / "mover.epd", lines)], tmp_path / "mover", results_view="mover")
    run([write(tmp_path / "white.epd", [FORMATS["float_brackets"][0](s) for s in POSITIONS])], tmp_path / "white")
    assert all_rows(tmp_path / "mover").drop("source").equals(all_rows(tmp_path / "white").drop("source"))


# ---------------------------------------------------------------------------------------------
# bad lines

def test_bad_lines_are_counted_by_reason_with_file_and_line(tmp_path: Path) -> None:
    good = [f"{s.board.fen()} [{WHITE_POINTS[s.result]}]" for s in POSITIONS[:40]]
    start = chess.Board()
    knights = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1"
    bad = {
        "bad_fen": "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [1.0]",
        "illegal_position": "k6R/8/8/8/8/8/8/K7 w - - 0 1 [0.5]",  # the side not to move is in check
        "bad_result": f"{start.fen()} [2-0]",
        "bad_score": f"{start.fen()} [1.0] lots",
        "bad_move": f'{start.epd()} pm Zz9; c9 "1-0";',
        "illegal_move": f'{start.epd()} pm e2e5; c9 "1-0";',
        "ambiguous_move": f'{knights.rsplit(" ", 2)[0]} pm Nd2; c9 "1-0";',
        "no_label": start.fen(),
        "bad_line": f"{start.fen()} | 12 | 1.0 | extra",
    }
    probability = f"{start.fen()} [0.6]"
    lines = ["# positions of the sample games", ""] + good[:20] + list(bad.values()) + [probability] + good[20:]
    path = write(tmp_path / "mixed.epd", lines)
    manifest, log = run([path], tmp_path / "set")
    where = {reason: lines.index(text) + 1 for reason, text in bad.items()}
    assert manifest["lines"]["read"] == len(lines) - 2  # the comment and the blank line are no records
    assert manifest["lines"]["rejected_by_reason"] == {**dict.fromkeys(bad, 1), "bad_result": 2}
    assert manifest["lines"]["kept"] == len(good)
    problems = manifest["problems"]
    assert problems["count"] == len(bad) + 1
    listed = [(p["file"], p["line"], p["reason"]) for p in problems["first"]]
    assert listed[:len(bad)] == [(str(path), where[r], r) for r in bad]
    assert listed[len(bad)] == (str(path), lines.index(probability) + 1, "bad_result")
    assert "probability" in problems["first"][len(bad)]["detail"]
    printed = log.splitlines()
    assert printed[0].startswith(f"{path}:{where['bad_fen']}: bad_fen: bad FEN:")
    assert printed[1].startswith(f"{path}:{where['illegal_position']}: illegal_position: impossible position: "
                                 "the side not to move is in check")
    assert len(printed) == len(bad) + 1  # ten problems: all printed
    assert "Traceback" not in log
    kept = all_rows(tmp_path / "set")
    assert set(kept["source_line"]) <= {i + 1 for i, text in enumerate(lines) if text in good}


def test_a_file_without_a_valid_position_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "notes.txt", ["just some notes", "about chess"])
    assert main(["ingest", "--no-progress", "--workers", "1", str(path), "--out", str(tmp_path / "set")]) == 2
    err = without_compile_note(capsys.readouterr().err.strip())
    assert err.startswith(f"tuner ingest: error: {path}: no valid position in its 2 line(s)") and "\n" not in err
    assert "; first problem at line 1: bad_fen (" in err  # the place, as a game file's refusal names it
    assert not (tmp_path / "set").exists()


# ---------------------------------------------------------------------------------------------
# the same rows whatever the packaging

def _compress(data: bytes, suffix: str) -> bytes:
    return {".gz": gzip.compress, ".bz2": bz2.compress, ".zst": zstandard.ZstdCompressor().compress}[suffix](data)


@pytest.mark.parametrize("variant", [".epd.gz", ".epd.bz2", ".epd.zst", ".fen", "crlf", "utf-16", "no-suffix"])
def test_packaging_does_not_change_the_rows(tmp_path: Path, variant: str) -> None:
    lines = [FORMATS["zurichess"][0](s) for s in POSITIONS]
    plain = write(tmp_path / "plain.epd", lines)
    data = plain.read_bytes()
    if variant.endswith((".gz", ".bz2", ".zst")):
        other = tmp_path / f"packed{variant}"
        other.write_bytes(_compress(data, variant[4:]))
    elif variant == "crlf":
        other = write(tmp_path / "crlf.epd", lines, "\r\n")
    elif variant == "utf-16":
        other = tmp_path / "wide.epd"
        other.write_bytes(data.decode("utf-8").encode("utf-16"))
    else:  # told from PGN by its lines alone
        other = tmp_path / ("positions" + (variant if variant == ".fen" else ".data"))
        other.write_bytes(data)
    run([plain], tmp_path / "a")
    manifest, _ = run([other], tmp_path / "b")
    assert manifest["inputs"][0]["kind"] == "positions"
    assert all_rows(tmp_path / "a").drop("source").equals(all_rows(tmp_path / "b").drop("source"))


def test_large_files_are_read_in_bounded_blocks(tmp_path: Path) -> None:
    lines = [FORMATS["bullet"][0](s) for s in POSITIONS]
    repeats = 3 * LINE_BLOCK_BYTES // sum(len(x) + 1 for x in lines) + 1
    path = write(tmp_path / "big.txt", lines * repeats)
    inputs = check_inputs([path])
    digests = [FileDigest()]
    items = list(iter_games(inputs, digests))
    blocks = [b for b in items if isinstance(b, LineChunk)]
    longest = max(len(x) for x in lines) + 1
    assert len(blocks) == len(items) >= 3 and all(len(b.data) <= LINE_BLOCK_BYTES + longest for b in blocks)
    assert b"".join(b.data for b in blocks) == path.read_bytes()
    assert digests[0].lines == len(lines) * repeats
    assert [b.line for b in blocks] == [1 + sum(x.data.count(b"\n") for x in blocks[:i]) for i in range(len(blocks))]


# ---------------------------------------------------------------------------------------------
# split, workers, mixed inputs, old sets

def test_split_follows_the_zobrist_key_and_not_the_workers(tmp_path: Path) -> None:
    path = write(tmp_path / "s.epd", [FORMATS["bullet"][0](s) for s in sample_positions(20)])
    one, _ = run([path], tmp_path / "w1", split=(0.6, 0.2, 0.2), seed=3)
    two, _ = run([path], tmp_path / "w2", split=(0.6, 0.2, 0.2), seed=3, workers=2)
    for name in SPLITS:
        assert (tmp_path / "w1" / f"{name}.parquet").read_bytes() == (tmp_path / "w2" / f"{name}.parquet").read_bytes()
    total = one["positions"]["kept"]
    for name, fraction in zip(SPLITS, (0.6, 0.2, 0.2), strict=True):
        rows = read_split(tmp_path / "w1", name)
        assert abs(rows.height / total - fraction) < 0.05
        assert (hash_splits(rows["zobrist"].to_numpy(), (0.6, 0.2, 0.2), 3) == SPLITS.index(name)).all()
    run([path], tmp_path / "seed4", split=(0.6, 0.2, 0.2), seed=4)
    assert read_split(tmp_path / "seed4", "train")["zobrist"].to_list() != read_split(tmp_path / "w1", "train")["zobrist"].to_list()


def test_pgn_and_position_files_in_one_set(tmp_path: Path) -> None:
    epd = write(tmp_path / "s.epd", [FORMATS["zurichess"][0](s) for s in POSITIONS])
    manifest, _ = run([SAMPLE_PGN, epd], tmp_path / "set")
    assert manifest["games"]["read"] == 52 and manifest["lines"]["read"] == len(POSITIONS)
    assert [i["kind"] for i in manifest["inputs"]] == ["pgn", "positions"]
    rows = all_rows(tmp_path / "set")
    from_epd = rows.filter(pl.col("source") == "s.epd")
    assert from_epd["game_id"].min() >= 52 and from_epd["move"].null_count() == from_epd.height
    assert rows.filter(pl.col("source") != "s.epd")["move"].null_count() == 0


def test_sets_of_schema_version_1_read_with_a_null_score(tmp_path: Path) -> None:
    run([SAMPLE_PGN], tmp_path / "set")
    for name in SPLITS:
        path = tmp_path / "set" / f"{name}.parquet"
        pl.read_parquet(path).drop("score").write_parquet(path)
    manifest_path = tmp_path / "set" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["schema_version"] = 1
    manifest_path.write_text(json.dumps(manifest))
    rows = read_split(tmp_path / "set", "train")
    assert rows.columns == list(SCHEMA) and rows["score"].null_count() == rows.height
    assert read_split(tmp_path / "set", "train", columns=["fen", "score"]).columns == ["fen", "score"]
    manifest["schema_version"] = 99
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(TunerError, match="schema version 99, this movetuner reads 1 and 2"):
        read_split(tmp_path / "set", "train")


# ---------------------------------------------------------------------------------------------
# end to end: Texel trains on results alone, MMTO refuses

def test_position_file_trains_texel_and_mmto_refuses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "sample.epd", [FORMATS["texel_tuner"][0](s) for s in sample_positions(20)])
    data = tmp_path / "set"
    assert main(["ingest", "--no-progress", str(path), "--out", str(data)]) == 0
    assert "lines: " in capsys.readouterr().out
    run_dir = tmp_path / "texel"
    assert main(["tune", "--method", "texel", "--epochs", "1", "--start", "classic", "--data", str(data),
                 "--out", str(run_dir), "--quiet"]) == 0
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert metrics[1]["e_train"] < metrics[0]["e_train"]
    assert metrics[1]["match_validation"] is None  # no played move to match
    weights = json.loads((run_dir / "weights.json").read_text())
    assert weights["metadata"]["iteration"] == 1  # the trained weights, not the start
    capsys.readouterr()
    for method in ("mmto", "ga", "rootstrap"):
        assert main(["tune", "--method", method, "--data", str(data), "--out", str(tmp_path / method)]) == 2
        err = capsys.readouterr().err.strip()
        assert err == (f"tuner tune: error: {data} has no played moves (a position file with results only); "
                       "methods that use results: texel")
        assert not (tmp_path / method / "metrics.jsonl").exists()

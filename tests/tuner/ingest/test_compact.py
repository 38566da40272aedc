"""tuner.ingest.compact: the 40-byte record, round trips against python-chess on the shipped
games' positions (castling, en passant, promotions, Black to move), Chess960 rights, the
nulls, the four results, and what does not fit."""

from __future__ import annotations

import chess
import chess.polyglot
import numpy as np
import pytest

from search.core.fen_batch import parse_fens
from tuner.ingest import compact as C
from tuner.ingest.compact_kernels import CODE_BLACK, CODE_CASTLING_ROOK


def test_a_record_is_at_most_40_bytes() -> None:
    assert C.RECORD.itemsize == C.RECORD_BYTES <= 40
    # the documented offsets, without padding
    offsets = {name: C.RECORD.fields[name][1] for name in C.RECORD.names}
    assert offsets == {"occupancy": 0, "pieces": 8, "stm_ep": 24, "flags": 25, "halfmove": 26, "fullmove": 28,
                       "move": 30, "score": 32, "ply": 34, "game_id": 36}


def test_mate_constants_are_the_sets_and_the_exports() -> None:
    from tuner.arena.match import MATE_CP
    from tuner.selfplay.export import MATE_TEXT

    assert (C.MATE_CP, C.MATE_TEXT) == (MATE_CP, MATE_TEXT)


def _game_rows(games: list[list[chess.Move]]) -> tuple[list[chess.Board], list[chess.Move | None], list[int], list[int]]:
    """Every position of the games with its move, ply and game; then each game's final position
    without a move."""
    boards: list[chess.Board] = []
    moves: list[chess.Move | None] = []
    plies: list[int] = []
    ids: list[int] = []
    for g, game in enumerate(games):
        board = chess.Board()
        for ply, move in enumerate(game):
            boards.append(board.copy(stack=False))
            moves.append(move)
            plies.append(ply)
            ids.append(g)
            board.push(move)
        boards.append(board.copy(stack=False))
        moves.append(None)
        plies.append(len(game))
        ids.append(g)
    return boards, moves, plies, ids


def _pack(boards: list[chess.Board], moves: list[chess.Move | None], plies: list[int], ids: list[int],
          scores: list[int | None], results: list[str]) -> np.ndarray:
    values = np.array([0 if s is None else s for s in scores])
    return C.pack([b.fen() for b in boards], moves=C.move_keys([None if m is None else m.uci() for m in moves]),
                  scores=C.score_codes(values, np.array([s is None for s in scores])),
                  results=C.result_codes(results), plies=np.array(plies), game_ids=np.array(ids))


def test_positions_of_real_games_round_trip_against_python_chess(real_games: list[list[chess.Move]]) -> None:
    boards, moves, plies, ids = _game_rows(real_games)
    n = len(boards)
    scores: list[int | None] = [None if i % 7 == 0 else (i * 37) % 2001 - 1000 for i in range(n)]
    scores[5] = C.MATE_CP + 3   # White mates in 3
    scores[6] = -(C.MATE_CP + 999)
    scores[8] = C.MAX_CP
    results = [C.RESULTS[i % 4] for i in range(n)]
    rec = _pack(boards, moves, plies, ids, scores, results)
    # what the shipped games cover
    assert sum(b.turn == chess.BLACK for b in boards) > 1000
    assert sum(b.has_legal_en_passant() for b in boards) >= 6
    assert sum(m is not None and m.promotion is not None for m in moves) >= 4
    assert sum(b.castling_rights != 0 for b in boards) > 1000
    assert sum(m is not None and b.is_castling(m) for b, m in zip(boards, moves)) > 50
    # the kernels give the oracle's bytes, the oracle's boards are python-chess's
    oracle = np.concatenate([C.record_of_board(b, move=m, score=s, result=r, ply=p, game_id=g)
                             for b, m, s, r, p, g in zip(boards, moves, scores, results, plies, ids)])
    assert oracle.tobytes() == rec.tobytes()
    assert not C.problems(rec).any()
    assert C.fens_of(rec) == [b.fen() for b in boards]
    assert [C.board_of_record(rec[i:i + 1]).fen() for i in range(0, n, 17)] == [b.fen() for b in boards[::17]]
    assert C.moves_of(rec) == [None if m is None else m.uci() for m in moves]
    values, null = C.scores_of(rec["score"])
    assert [None if z else int(v) for v, z in zip(values, null)] == scores
    assert C.results_of(rec) == results
    assert rec["ply"].tolist() == plies and rec["game_id"].tolist() == ids
    for b, m in zip(boards, moves):  # every stored move is legal in its position
        assert m is None or b.is_legal(m)
    # the position-set frame: n_legal and zobrist computed
    frame = C.frame_of(rec)
    assert frame["zobrist"].to_list() == [chess.polyglot.zobrist_hash(b) for b in boards]
    assert frame["n_legal"].to_list() == [b.legal_moves.count() for b in boards]
    assert frame["stm"].to_list() == [0 if b.turn == chess.WHITE else 1 for b in boards]
    assert frame["white_elo"].null_count() == n and frame["source"].null_count() == n
    assert frame["score"].null_count() == sum(s is None for s in scores)


def test_boards_are_the_fen_parsers_boards(real_boards: list[chess.Board]) -> None:
    fens = [b.fen() for b in real_boards]
    n = len(fens)
    rec = C.pack(fens, moves=np.zeros(n, np.uint16), scores=np.full(n, C.NO_SCORE, np.int16),
                 results=np.zeros(n, np.uint8), plies=np.zeros(n), game_ids=np.zeros(n))
    boards, ok = C.boards_of(rec)
    data = "\n".join(fens).encode()
    ends = np.cumsum([len(f) + 1 for f in fens]) - 1
    batch = parse_fens(data, ends - [len(f) for f in fens], ends)
    assert ok.all() and batch.ok.all()
    assert np.array_equal(boards, batch.boards)  # keys included
    assert np.array_equal(C.legal_counts(boards), batch.n_legal)


CHESS960 = [
    # start positions of Chess960 (Scharnagl numbers 0, 100, 959) and one with rooks on one side
    chess.Board.from_chess960_pos(0).fen(),
    chess.Board.from_chess960_pos(100).fen(),
    chess.Board.from_chess960_pos(959).fen(),
    # python-chess's documentation example: an inner rook's right is written by its file (X-FEN)
    "rn2k1r1/ppp1pp1p/3p2p1/5bn1/P7/2N2B2/1PPPPP2/2BNK1RR w Gkq - 4 11",
]


@pytest.mark.parametrize("fen", CHESS960)
def test_chess960_castling_rights_round_trip(fen: str) -> None:
    board = chess.Board(fen, chess960=True)
    move = next(m for m in board.legal_moves if board.is_castling(m)) if any(
        board.is_castling(m) for m in board.legal_moves) else next(iter(board.legal_moves))
    rec = C.pack([fen], moves=C.move_keys([move.uci()]), scores=np.array([C.NO_SCORE], np.int16),
                 results=np.zeros(1, np.uint8), plies=np.zeros(1), game_ids=np.zeros(1))
    assert C.fens_of(rec) == [board.fen()]
    assert C.board_of_record(rec).fen() == board.fen()
    assert rec.tobytes() == C.record_of_board(board, move=move).tobytes()
    rooks = [(c & 7) == CODE_CASTLING_ROOK for b in bytes(rec["pieces"][0]) for c in (b & 15, b >> 4)]
    assert sum(rooks) == bin(board.castling_rights).count("1")
    frame = C.frame_of(rec)  # python-chess counts and keys the rows the search's boards cannot hold
    assert frame["n_legal"][0] == board.legal_moves.count()
    assert frame["zobrist"][0] == chess.polyglot.zobrist_hash(board)
    assert frame["move"][0] == move.uci()


def test_standard_castling_uses_the_corner_rooks() -> None:
    rec = C.record_of_board(chess.Board())
    nibbles = [c for b in bytes(rec["pieces"][0]) for c in (b & 15, b >> 4)]
    assert nibbles[0] == nibbles[7] == CODE_CASTLING_ROOK  # a1, h1
    assert nibbles[24] == nibbles[31] == CODE_CASTLING_ROOK | CODE_BLACK  # a8, h8
    assert C.boards_of(rec)[1].all()


@pytest.mark.parametrize(("fen", "message"), [
    ("4k3/8/8/8/8/8/8/4K3 w - - 65536 40000", "halfmove clock above 65535"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 65536", "fullmove number above 65535"),
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "castling right without its rook"),
    ("4k3/8/8/8/8/8/8/4K3 w - e3 0 1", "en-passant square not on the third or sixth rank"),
    ("4k3/8/8/8/8/8/8/4K3 x - - 0 1", "not a FEN"),
    ("qqqqkqqq/qqqqqqqq/8/8/8/P7/QQQQQQQQ/QQQQKQQQ w - - 0 1", "more than 32 pieces"),
])
def test_what_does_not_fit_is_refused_naming_the_row(fen: str, message: str) -> None:
    with pytest.raises(C.CompactError, match=f"^FILE row 0: FEN .*{message}"):
        C.pack([fen], moves=np.zeros(1, np.uint16), scores=np.zeros(1, np.int16), results=np.zeros(1, np.uint8),
               plies=np.zeros(1), game_ids=np.zeros(1), label=lambda i: f"FILE row {i}")


def test_scores_plies_and_game_ids_that_do_not_fit_are_refused() -> None:
    for score in (C.MAX_CP + 1, -(C.MATE_CP + 1000), C.MATE_CP):
        with pytest.raises(C.CompactError, match=f"row 0: score {score} does not fit"):
            C.score_codes(np.array([score]))
    fen = chess.STARTING_FEN
    for plies, ids, what in (([70_000], [0], "ply 70000"), ([0], [2**32], "game id 4294967296"),
                             ([0], [-1], "game id -1")):
        with pytest.raises(C.CompactError, match=f"row 0: {what} does not fit"):
            C.pack([fen], moves=np.zeros(1, np.uint16), scores=np.zeros(1, np.int16), results=np.zeros(1, np.uint8),
                   plies=np.array(plies), game_ids=np.array(ids))
    with pytest.raises(C.CompactError, match="move 'e2e9' is not a UCI move"):
        C.move_keys(["e2e9"])
    with pytest.raises(C.CompactError, match="result '2-0' is not"):
        C.result_codes(["2-0"])


def test_every_uci_move_and_the_null_move_round_trip() -> None:
    texts = [f"{a}{b}{p}" for a in chess.SQUARE_NAMES for b in chess.SQUARE_NAMES if a != b for p in ("", "n", "q")]
    keys = C.move_keys([*texts, None])
    rec = np.zeros(len(keys), dtype=C.RECORD)
    rec["move"] = keys
    assert C.moves_of(rec) == [*texts, None]
    assert keys[-1] == C.NO_MOVE and keys.max() < 2**15


def test_damaged_records_are_named_by_their_problem() -> None:
    rec = C.record_of_board(chess.Board(), result="1-0")
    assert not C.problems(rec).any()
    cases = {
        "not one king of each colour": lambda r: r["pieces"].__setitem__((0, 2), 0x33),  # e1 king -> rook
        "a piece code that names no piece": lambda r: r["pieces"].__setitem__((0, 0), 0x17),
        "reserved bits of the flags byte": lambda r: r["flags"].__setitem__(0, 0x81),
        "a score beyond": lambda r: r["score"].__setitem__(0, 32_500),
        "a move that is no UCI move": lambda r: r["move"].__setitem__(0, 12 | 12 << 6),
        "fullmove number 0": lambda r: r["fullmove"].__setitem__(0, 0),
    }
    for text, damage in cases.items():
        bad = rec.copy()
        damage(bad)
        code = int(C.problems(bad)[0])
        assert code and text in C.problem_text(code), text


def test_training_arrays_are_what_training_builds_from_the_fens(real_games: list[list[chess.Move]]) -> None:
    from search.core.convert import uci_key
    from tuner.training.position_set import mover_results, mover_scores
    from tuner.training.positions import NO_PLAYED_MOVE

    boards, moves, plies, ids = _game_rows(real_games[:12])
    n = len(boards)
    scores: list[int | None] = [None if i % 5 == 0 else (i * 53) % 801 - 400 for i in range(n)]
    scores[3] = -(C.MATE_CP + 2)
    rec = _pack(boards, moves, plies, ids, scores, [C.RESULTS[i % 4] for i in range(n)])
    arrays = C.training_arrays(rec)
    frame = C.frame_of(rec)
    stm = frame["stm"].to_numpy()
    fens = frame["fen"].to_list()
    data = "\n".join(fens).encode()
    ends = np.cumsum([len(f) + 1 for f in fens]) - 1
    assert np.array_equal(arrays.boards, parse_fens(data, ends - [len(f) for f in fens], ends).boards)
    assert arrays.usable.all()
    assert np.array_equal(arrays.results, mover_results(frame["result"].to_list(), stm), equal_nan=True)
    expected = mover_scores(frame["score"], stm)
    assert expected is not None and np.array_equal(arrays.scores, expected, equal_nan=True)
    assert arrays.played.tolist() == [NO_PLAYED_MOVE if m is None else uci_key(m) for m in frame["move"].to_list()]
    assert arrays.game_ids.tolist() == ids and arrays.plies.tolist() == plies


def test_an_impossible_position_never_reaches_move_generation() -> None:
    rec = np.concatenate([C.record_of_board(chess.Board()),
                          C.record_of_board(chess.Board("P3k3/8/8/8/8/8/8/4K3 w - - 0 1"))])  # a pawn on the 8th rank
    assert not C.problems(rec).any()  # a record, but not a board the search may take
    assert C.fens_of(rec)[1] == "P3k3/8/8/8/8/8/8/4K3 w - - 0 1"
    with pytest.raises(C.CompactError, match="^F row 1: impossible position: a pawn stands on the first or last rank"):
        C.frame_of(rec, label=lambda i: f"F row {i}")
    with pytest.raises(C.CompactError, match="^row 1: impossible position"):
        C.training_arrays(rec)

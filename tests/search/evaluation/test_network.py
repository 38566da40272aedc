"""The network evaluator (search/evaluation/network.py, search/evaluation/network_kernels.py, docs/network.md) against
the plain-numpy reference (tests/oracles/network_reference.py): accumulators refreshed and
updated move by move, the integer forward pass, the float form, the search through the
evaluator seam against an independent minimax, and network files."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import chess
import numpy as np
import pytest
from tests.oracles.minimax import Oracle

from search.core.board import make_move
from search.core.convert import from_chess, move_from_chess, move_to_chess
from search.evaluation.evaluation_api import evaluate_batch
from search.evaluation.network import (FloatNetwork, NetworkFileError, NetworkShape, QuantizedNetwork, network_bytes,
                            parse_network, quantize, read_network, write_network)
from search.evaluation.network_kernels import (accumulators_batch_kernel, network_evaluate_batch_kernel,
                                    network_parts_batch_kernel, refresh_accumulators, update_accumulators)
from search.tree.search_api import search, search_many, sweep
from search.params.weights import load_weights

from tests.oracles.network_reference import accumulators, float_score, quantized_score

SHAPES = {"plain": NetworkShape(h=32, h2=16, h3=8), "buckets": NetworkShape(h=32, h2=16, h3=8, buckets="4"),
          "direct": NetworkShape(h=32, h2=0, h3=0, buckets="4"),
          "outputs": NetworkShape(h=32, h2=16, h3=8, outputs=4), "direct-outputs": NetworkShape(h=32, h2=0, h3=0, outputs=8)}
CLASSIC = load_weights("classic").values


def net_of(shape: NetworkShape, seed: int = 3, linear: np.ndarray | None = None) -> QuantizedNetwork:
    return quantize(FloatNetwork.initial(shape, seed=seed, linear=linear))


@pytest.fixture(scope="module")
def sample_boards(real_boards: list[chess.Board]) -> list[chess.Board]:
    return real_boards[::7]


@pytest.mark.parametrize("name", list(SHAPES))
def test_incremental_accumulators_equal_fresh_ones_after_every_move_of_the_shipped_games(
        name: str, real_games: list[list[chess.Move]]) -> None:
    net = net_of(SHAPES[name]).kernel_args()
    moves_seen = {"castle": 0, "ep": 0, "promotion": 0, "capture": 0, "king bucket change": 0}
    for game in real_games:
        board = chess.Board()
        b = from_chess(board)
        cur = np.zeros((2, 32), dtype=np.int16)
        refresh_accumulators(b, net, cur)
        for move in game:
            m = move_from_chess(b, move)
            nb = np.zeros_like(b)
            make_move(b, nb, m)
            child = np.zeros_like(cur)
            update_accumulators(cur, child, net, b, nb, m)
            fresh = np.zeros_like(cur)
            refresh_accumulators(nb, net, fresh)
            assert np.array_equal(child, fresh), (board.fen(), move.uci())
            moves_seen["castle"] += board.is_castling(move)
            moves_seen["ep"] += board.is_en_passant(move)
            moves_seen["promotion"] += move.promotion is not None
            moves_seen["capture"] += board.is_capture(move)
            if board.piece_type_at(move.from_square) == chess.KING:
                moves_seen["king bucket change"] += 1
            board.push(move)
            b, cur = nb, child
    assert all(moves_seen.values()), moves_seen  # every kind of update was exercised


@pytest.mark.parametrize("name", list(SHAPES))
def test_kernels_equal_the_numpy_reference_exactly(name: str, sample_boards: list[chess.Board]) -> None:
    shape = SHAPES[name]
    q = net_of(shape, seed=5)
    arr = np.stack([from_chess(b) for b in sample_boards])
    acc = accumulators_batch_kernel(arr, q.kernel_args())
    ref_acc = np.stack([accumulators(b, q.params, shape.bucket_table) for b in sample_boards])
    assert np.array_equal(acc, ref_acc)
    got = network_parts_batch_kernel(arr, q.kernel_args())
    ref = np.array([quantized_score(b, q.params, shape.bucket_table) for b in sample_boards])
    assert np.array_equal(got, ref)
    assert len(set(ref.tolist())) > len(ref) // 2  # the scores really vary


def test_a_hybrid_network_adds_the_linear_evaluators_score(sample_boards: list[chess.Board]) -> None:
    q = net_of(SHAPES["plain"], linear=CLASSIC)
    arr = np.stack([from_chess(b) for b in sample_boards])
    whole = network_evaluate_batch_kernel(arr, q.kernel_args())
    parts = network_parts_batch_kernel(arr, q.kernel_args())
    linear = np.rint(evaluate_batch(arr, CLASSIC) * 24).astype(np.int64)
    assert np.array_equal(whole, parts + linear)


def integer_error_bound_cp(f: FloatNetwork) -> float:
    """The stated bound (docs/network.md) of the integer form's score against the float form's,
    in centipawns, for a float network whose parameters are integers over their scales: the
    accumulators are exact; each hidden floor division loses less than 1/QA per unit, which the
    next layer (1-Lipschitz clipping, then its weights) carries forward; the last floor loses
    less than one eval unit (1/24 cp). The direct form has no hidden layer: its sums are exact
    and only the last floor loses."""
    if f.shape.direct:
        return 1.0 / 24.0
    qa = 255.0
    w3, w4 = np.abs(f.params["w3"]), np.abs(f.params["w4"])
    h3_error = (w3.sum(axis=0) + 1.0) / qa  # per unit of the second hidden layer
    return float((w4 * h3_error).sum(axis=1).max() + 1.0 / 24.0)  # the worst output bucket's row


@pytest.mark.parametrize("name", list(SHAPES))
def test_integer_and_float_forms_agree_within_the_stated_bound(name: str, sample_boards: list[chess.Board]) -> None:
    shape = SHAPES[name]
    q = net_of(shape, seed=7)
    f = q.dequantize()  # the float network whose integer form is exactly q
    assert all(np.array_equal(quantize(f).params[k], q.params[k]) for k in q.params)
    arr = np.stack([from_chess(b) for b in sample_boards])
    got = network_parts_batch_kernel(arr, q.kernel_args()) / 24.0
    ref = np.array([float_score(b, f.params, shape.bucket_table) for b in sample_boards])
    bound = integer_error_bound_cp(f)
    assert np.abs(got - ref).max() <= bound, (np.abs(got - ref).max(), bound)
    if shape.direct:  # exact sums: the integer score is the float one floored to an eval unit
        assert (ref - got >= -1e-9).all()
    else:
        assert np.abs(got - ref).mean() < bound / 4  # typical errors are far inside the worst case
    assert np.abs(ref).max() > 5 * bound  # the scores are large against the bound


class NetworkOracle(Oracle):
    """The independent minimax of tests/oracles/minimax.py with the reference network's static
    score (plus the linear part's reference score when the network carries one)."""

    def __init__(self, net: QuantizedNetwork) -> None:
        super().__init__(net.linear if net.linear is not None else np.zeros(len(CLASSIC), dtype=np.int32))
        self.net = net

    def static(self, board: chess.Board) -> int:
        return quantized_score(board, self.net.params, self.net.shape.bucket_table) + super().static(board)


@pytest.mark.parametrize("name,linear", [("plain", False), ("buckets", False), ("plain", True), ("direct", False),
                                         ("direct-outputs", False)])
def test_search_with_a_network_equals_the_independent_oracle(name: str, linear: bool,
                                                             real_boards: list[chess.Board]) -> None:
    net = net_of(SHAPES[name], seed=11, linear=CLASSIC if linear else None)
    oracle = NetworkOracle(net)
    boards = real_boards[20::97][:12]
    for depth in (0, 1, 2):
        for board in boards[: 12 if depth < 2 else 4]:
            result = search(from_chess(board), depth, net)
            assert result.score == oracle.value(board, depth), (board.fen(), depth)
            oracle.check_line(board, depth, result.score, [move_to_chess(m) for m in result.pv])


def test_batched_searches_and_sweeps_take_a_network(real_boards: list[chess.Board]) -> None:
    net = net_of(SHAPES["buckets"], seed=13)
    arr = np.stack([from_chess(b) for b in real_boards[30::50]])
    many = search_many(arr, 2, net, n_threads=2)
    for i in range(0, len(arr), 7):
        assert many.scores[i] == search(arr[i], 2, net).score
    sw1 = sweep(arr, 1, net, n_threads=1)
    sw2 = sweep(arr, 1, net, n_threads=2)
    assert np.array_equal(sw1.scores, sw2.scores) and np.array_equal(sw1.leaves, sw2.leaves)
    # a leaf's score is its static score with the sweep's sign
    rows = np.flatnonzero(sw1.kinds == 0)
    static = network_evaluate_batch_kernel(np.ascontiguousarray(sw1.leaves[rows]), net.kernel_args())
    assert np.array_equal(sw1.scores[rows], sw1.signs[rows].astype(np.int64) * static)


# ------------------------------------------------------------------ files


def test_a_network_file_round_trips_bit_for_bit(tmp_path: Path) -> None:
    for linear in (None, CLASSIC):
        q = net_of(SHAPES["buckets"], linear=linear)
        q = QuantizedNetwork(q.shape, q.params, q.linear, {"made_by": "test", "n": 3})
        path = tmp_path / "net.mtnn"
        write_network(path, q)
        back = read_network(path)
        assert back.shape == q.shape and back.metadata == q.metadata
        assert all(np.array_equal(back.params[k], q.params[k]) and back.params[k].dtype == q.params[k].dtype
                   for k in q.params)
        assert (back.linear is None) == (linear is None)
        assert network_bytes(back) == path.read_bytes()


def _resealed(data: bytes) -> bytes:
    """``data`` with its CRC recomputed (to reach the checks behind it)."""
    return data[:-4] + struct.pack("<I", zlib.crc32(data[:-4]))


@pytest.mark.parametrize("damage,message", [
    (lambda d: d[:100], "CRC-32 mismatch"),
    (lambda d: d[:-9] + bytes([d[-9] ^ 1]) + d[-8:], "CRC-32 mismatch"),
    (lambda d: b"PK\x03\x04" + d[4:], "not a movetuner network file"),
    (lambda d: b"MTNN", "truncated"),
    (lambda d: _resealed(d[:-4] + b"\x00\x00\x00\x00" + d[-4:]), "unexpected bytes"),
    (lambda d: _resealed(d[:4] + struct.pack("<I", 99) + d[8:]), "file version 99"),
    (lambda d: _resealed(d[:-200] + d[-4:]), "truncated in array"),
])
def test_a_bad_network_file_is_one_line_naming_it(tmp_path: Path, damage: object, message: str) -> None:
    path = tmp_path / "bad.mtnn"
    path.write_bytes(damage(network_bytes(net_of(SHAPES["plain"]))))  # type: ignore[operator]
    with pytest.raises(NetworkFileError) as err:
        read_network(path)
    text = str(err.value)
    assert str(path) in text and message in text and "\n" not in text


def _with_header(data: bytes, change: object) -> bytes:
    """``data`` with its JSON header changed by ``change`` (a function of the header dict),
    resealed with a valid CRC-32."""
    import json  # noqa: PLC0415

    head_len = struct.unpack("<I", data[8:12])[0]
    header = json.loads(data[12:12 + head_len])
    change(header)  # type: ignore[operator]
    head = json.dumps(header).encode()
    return _resealed(data[:8] + struct.pack("<I", len(head)) + head + data[12 + head_len:])


@pytest.mark.parametrize("change,message", [
    (lambda h: h["shape"].update(h2=True), "h2 must be an integer"),
    (lambda h: h["shape"].update(h=32.0), "h must be an integer"),
    (lambda h: h["shape"].update(buckets=["4"]), "buckets must be one of"),
    (lambda h: h.update(qa=255.0), "made with qa = 255.0"),
    (lambda h: h.update(phase_max=True), "made with phase_max = True"),
    (lambda h: h.update(metadata=0), "metadata must be an object"),
    (lambda h: h.update(metadata="x"), "metadata must be an object"),
    (lambda h: h.update(linear={"catalog_hash": h["linear"]["catalog_hash"], "n": float(h["linear"]["n"])}),
     "linear part was made for"),
])
def test_a_header_field_of_the_wrong_type_is_one_line_not_a_type_error(tmp_path: Path, change: object,
                                                                       message: str) -> None:
    # issue 58 item 4: "h2": true with a valid checksum gave a TypeError
    path = tmp_path / "typed.mtnn"
    path.write_bytes(_with_header(network_bytes(net_of(SHAPES["plain"], linear=CLASSIC)), change))
    with pytest.raises(NetworkFileError) as err:
        read_network(path)
    text = str(err.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_a_direct_network_file_reads_back_as_written(tmp_path: Path) -> None:
    net = net_of(SHAPES["direct"], seed=9)
    write_network(tmp_path / "d.mtnn", net)
    back = read_network(tmp_path / "d.mtnn")
    assert back.shape == net.shape and all(np.array_equal(back.params[k], net.params[k]) for k in net.params)
    assert back.params["w4"].shape == (1, 64) and back.params["w2"].size == 0


def test_output_buckets_pick_the_output_row_by_the_number_of_pieces(sample_boards: list[chess.Board],
                                                                  tmp_path: Path) -> None:
    # one network whose output rows differ only in their bias: each board's score moves by its bucket's bias
    shape = SHAPES["direct-outputs"]
    f = FloatNetwork.initial(shape, seed=4)
    params = dict(f.params)
    params["w4"] = np.repeat(params["w4"][:1], shape.outputs, axis=0)
    params["b4"] = np.arange(shape.outputs) * 100.0
    q = quantize(FloatNetwork(shape, params))
    flat = quantize(FloatNetwork(shape, {**params, "b4": np.zeros(shape.outputs)}))
    arr = np.stack([from_chess(b) for b in sample_boards])
    pieces = np.array([len(b.piece_map()) for b in sample_boards])
    expected_bucket = np.minimum((pieces - 2) * 8 // 32, 7)
    diff = network_parts_batch_kernel(arr, q.kernel_args()) - network_parts_batch_kernel(arr, flat.kernel_args())
    assert np.array_equal(diff, expected_bucket * 100 * 24)  # 100 cp a bucket, in eval units
    assert len(set(expected_bucket.tolist())) >= 5  # the shipped games reach most buckets
    # the file keeps them, and a network without output buckets writes the header it always wrote
    write_network(tmp_path / "o.mtnn", q)
    back = read_network(tmp_path / "o.mtnn")
    assert back.shape == shape and np.array_equal(back.params["b4"], q.params["b4"])
    assert b'"outputs": 8' in network_bytes(q) and b'"outputs"' not in network_bytes(net_of(SHAPES["plain"]))


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="h must be an integer"):
        NetworkShape(h=0)
    with pytest.raises(ValueError, match="buckets must be one of"):
        NetworkShape(buckets="9")
    with pytest.raises(ValueError, match="both be 0"):
        NetworkShape(h=32, h2=0, h3=8)
    for outputs in (0, 3, 16, True, 2.0):
        with pytest.raises(ValueError, match="outputs .output buckets. must be one of 1, 2, 4, 8"):
            NetworkShape(outputs=outputs)  # type: ignore[arg-type]
    with pytest.raises(NetworkFileError, match="y.mtnn: the shape's outputs is written only when above 1"):
        parse_network(_with_header(network_bytes(net_of(SHAPES["plain"])), lambda h: h["shape"].update(outputs=1)),
                      "y.mtnn")
    data = network_bytes(net_of(SHAPES["plain"]))
    with pytest.raises(NetworkFileError, match="x.mtnn"):
        parse_network(data.replace(b'"h": 32', b'"h": 33'), "x.mtnn")


def test_float_parameters_are_clamped_so_that_the_integers_cannot_overflow() -> None:
    shape = SHAPES["plain"]
    f = FloatNetwork.initial(shape, seed=1)
    huge = f.with_vector(f.vector() * 1e6)
    q = quantize(huge)
    # the worst accumulator: bias plus 32 rows of the largest magnitude stays inside int16
    w1 = np.abs(q.params["w1"].astype(np.int64))
    assert (np.abs(q.params["b1"].astype(np.int64)) + 32 * w1.max(axis=0)).max() <= 32767
    z2 = np.abs(q.params["b2"].astype(np.int64)) + 255 * np.abs(q.params["w2"].astype(np.int64)).sum(axis=0)
    assert z2.max() < 2**31
    assert np.array_equal(quantize(q.dequantize()).params["w2"], q.params["w2"])  # a fixed point

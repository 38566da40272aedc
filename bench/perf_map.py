"""Profile a search with Linux ``perf``, numba's kernels named (issue 57's speed work).

``perf`` cannot name numba's JIT code: its samples land on bare addresses. This script runs a
search on the start position and 20 middle-game positions (those of ``bench/play_search.py``)
and, once the kernels are loaded, writes ``/tmp/perf-PID.map``, the map of JIT symbols that
``perf report`` reads (address, size, name), for every function numba's JIT engine holds, named
``module.function`` (``search.play.kernel.negamax``). Inlined functions have no symbol of their
own: their time is their caller's.

    perf record -F 4999 -o perf.data python bench/perf_map.py --search play
    perf report -i perf.data --no-children --sort symbol

(``perf`` is Debian's ``linux-perf`` package; the script itself runs without it.) With
``--dump NAME`` it also writes the machine code of the first function whose name contains NAME
to ``NAME.bin`` and its address to ``NAME.addr``, for ``objdump -D -b binary -m i386:x86-64``
against the sample addresses of ``perf script -F ip``: how ``docs/search.md`` found where the
playing search's interior nodes spent their time. Prints one JSON line: the search, nodes,
seconds, nodes per second, functions mapped and the map's path.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import time
from pathlib import Path

import chess

from play_search import middle_games


def readable(symbol: str) -> str:
    """``module.function`` of a numba symbol (``_ZN6search4play6kernel7negamaxB...``), or the
    symbol itself when it is not an Itanium-mangled nested name."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        m = re.match(r"\d+", symbol[i:])
        assert m is not None
        length, i = int(m.group()), i + len(m.group())
        parts.append(symbol[i:i + length])
        i += length
    return ".".join(parts) or symbol


def jit_symbols() -> list[tuple[int, int, str]]:
    """(address, size, name) of every function numba's JIT engine defines, by address; a
    function's size runs to the next one's address (numba keeps no sizes)."""
    from numba.core.registry import cpu_target  # noqa: PLC0415

    engine = cpu_target.target_context.codegen()._engine
    found: dict[int, str] = {}
    for symbol in list(engine._defined_symbols):
        try:
            address = engine.get_function_address(symbol)
        except Exception:  # noqa: BLE001 (a data symbol, or one not finalized)
            continue
        if address and not symbol.startswith("_ZN08NumbaEnv"):
            found[address] = symbol
    addresses = sorted(found)
    out = []
    for k, address in enumerate(addresses):
        gap = addresses[k + 1] - address if k + 1 < len(addresses) else 4096
        out.append((address, gap if gap < 1 << 20 else 4096, found[address]))
    return out


def write_map(symbols: list[tuple[int, int, str]]) -> Path:
    """Write ``/tmp/perf-PID.map`` (names made readable, repeated ones numbered)."""
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    seen: dict[str, int] = {}
    with path.open("w") as fh:
        for address, size, symbol in symbols:
            name = readable(symbol)
            seen[name] = seen.get(name, 0) + 1
            fh.write(f"{address:x} {size:x} {name}{'' if seen[name] == 1 else f'#{seen[name]}'}\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--search", choices=("play", "exact"), default="play", help="the search to profile")
    ap.add_argument("--weights", default="nnue", help="its evaluator (default: nnue)")
    ap.add_argument("--nodes", type=int, default=250_000, help="nodes a position (default: 250,000)")
    ap.add_argument("--tt-bits", type=int, default=20, help="log2 of the table's entries (default: 20, 32 MB)")
    ap.add_argument("--dump", metavar="NAME", help="also write the code of the function named NAME to NAME.bin")
    args = ap.parse_args()

    from search.core.convert import from_chess  # noqa: PLC0415
    from search.evaluation.evaluators import load_evaluator  # noqa: PLC0415
    from search.play.searcher import PlaySearcher  # noqa: PLC0415
    from search.tree.iterative import Searcher  # noqa: PLC0415

    ev = load_evaluator(args.weights)
    boards = [chess.Board(), *middle_games()[0]]

    def make() -> PlaySearcher | Searcher:
        return PlaySearcher(ev, tt_bits=args.tt_bits) if args.search == "play" else Searcher(ev, tt_bits=args.tt_bits)

    make().think(from_chess(boards[0]), [], max_depth=2)  # load (or compile) the kernels before the map
    symbols = jit_symbols()
    path = write_map(symbols)
    if args.dump:
        match = [(a, s) for a, s, name in symbols if args.dump in readable(name)]
        if not match:
            raise SystemExit(f"bench/perf_map.py: no JIT function named like {args.dump!r}")
        address, size = match[0]
        Path(f"{args.dump}.bin").write_bytes(ctypes.string_at(address, size))
        Path(f"{args.dump}.addr").write_text(f"{address:x} {size}\n")
    nodes, start = 0, time.perf_counter()
    for board in boards:
        s = make()
        s.think(from_chess(board), [], node_limit=args.nodes)
        nodes += s.searched_nodes
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "perf_map", "search": args.search, "weights": args.weights, "positions": len(boards),
                      "nodes": nodes, "seconds": round(seconds, 3), "nps": round(nodes / seconds),
                      "functions_mapped": len(symbols), "map": str(path)}))


if __name__ == "__main__":
    main()

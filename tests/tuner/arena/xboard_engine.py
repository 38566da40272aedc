"""A tiny XBoard (CECP 2) test engine: plays the first legal move (in UCI order; option
``Pick=last``: the last), for the arena's XBoard tests. No search, no program to install.

Run as ``python xboard_engine.py MODE [LOG]``. MODE: ``ok``; ``crash`` (exits at its third
``go``); ``hang`` (never answers ``go``); ``illegal`` (answers ``move a1a1``). With LOG, every
command received is appended to that file (the tests read it for ``new``, ``level``, ``quit``).
"""

from __future__ import annotations

import sys
import time

import chess


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "ok"
    log = open(argv[1], "a", encoding="utf-8") if len(argv) > 1 else None  # noqa: SIM115
    board = chess.Board()
    force, post, pick, searches = False, False, "first", 0

    def say(text: str) -> None:
        print(text, flush=True)

    def play() -> None:
        nonlocal searches
        searches += 1
        if mode == "crash" and searches == 3:
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        if mode == "illegal":
            say("move a1a1")
            return
        moves = sorted(board.legal_moves, key=lambda m: m.uci())
        if not moves:
            return
        move = moves[0] if pick == "first" else moves[-1]
        if post:
            say(f"1 0 0 1 {move.uci()}")  # depth, score (cp), time (cs), nodes, pv
        board.push(move)
        say(f"move {move.uci()}")

    for line in sys.stdin:
        if log is not None:
            log.write(line)
            log.flush()
        words = line.split()
        if not words:
            continue
        cmd, rest = words[0], line.strip()[len(words[0]):].strip()
        if cmd == "protover":
            say('feature ping=1 setboard=1 usermove=1 sigint=0 sigterm=0 myname="tiny" '
                'option="Pick -combo first /// last" done=1')
        elif cmd == "ping":
            say(f"pong {rest}")
        elif cmd == "new":
            board, force = chess.Board(), False
        elif cmd == "setboard":
            board = chess.Board(rest)
        elif cmd == "force":
            force = True
        elif cmd == "usermove":
            board.push_uci(rest)
        elif cmd == "option" and rest.startswith("Pick="):
            pick = rest.removeprefix("Pick=")
        elif cmd == "post":
            post = True
        elif cmd == "nopost":
            post = False
        elif cmd == "go":
            force = False
            play()
        elif cmd == "quit":
            break
    del force
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Verify the shipped match openings (``datasets/openings/openings.epd``) from their moves.

:data:`OPENINGS` holds every opening of the file as (id, SAN moves), in file order; the
moves are the source of truth, the EPD lines are what they lead to. For each one:

* the moves are legal SAN from the initial position (played out with python-chess), 2 to
  :data:`MAX_PLIES` plies;
* the file's line at the same place has the position they lead to (the EPD's first four
  fields: placement, side to move, castling, en passant as python-chess writes it, i.e.
  only when a legal en-passant capture exists) and the same ``id``;
* material is level: pawn 1, knight 3, bishop 3, rook 5, queen 9 summed for each side
  (so a bishop-for-knight trade is level);
* the position is not over, and the repository's own search with the built-in ``classic``
  weights (:func:`search.tree.search_api.search`, plain alpha-beta to :data:`DEPTH` plies plus
  quiescence, side to move's view) scores it within :data:`MAX_ABS_CP` centipawns of 0;
* no two lines have the same position (first four fields) or the same id, and the file
  has exactly as many positions as :data:`OPENINGS`.

Prints one JSON line: ``openings`` (positions in the file), ``distinct`` (distinct
positions), ``max_abs_cp`` (largest absolute depth-4 score, centipawns), ``plies`` (the
shortest and longest move list), ``failures`` (``line N (id): reason``), ``all_ok`` and
``seconds``. ``--epd`` instead prints the EPD line of each entry of :data:`OPENINGS`
(how the file's lines were made: append new entries to the table, then their lines to
the file). ``--suite FILE`` instead re-checks a large suite written by ``tuner bench
openings`` with its default settings (e.g. the shipped ``datasets/openings/gnuchess-book.epd``)
line by line from each line's ``id``. Run as ``python bench/verify_openings.py [--epd | --suite] [FILE]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import chess

from search.tree.search_api import search
from search.core.convert import from_fen
from search.params.weight_sets import classic_weights
from tuner.arena.match import DEFAULT_OPENINGS

#: search depth of the balance check, plies (plus quiescence)
DEPTH = 4
#: largest accepted absolute score at DEPTH, centipawns
MAX_ABS_CP = 100
#: fewest and most plies of an opening's moves
MIN_PLIES, MAX_PLIES = 2, 10
#: material values for the level-material check (pawn units)
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
#: how many of the first openings are the original set (their order is fixed: seeded matches
#: already measured depend on it)
ORIGINAL = 110

#: every opening of the file as (id, moves in SAN with move numbers), in file order
OPENINGS: tuple[tuple[str, str], ...] = (
    # the original 110 openings, in file order
    ("Ruy Lopez, Morphy Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6"),
    ("Ruy Lopez, Berlin Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Nf6"),
    ("Italian Game, Giuoco Piano", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.c3 Nf6"),
    ("Two Knights Defence", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Nf6"),
    ("Scotch Game", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4"),
    ("Four Knights Game", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6"),
    ("Petrov Defence", "1.e4 e5 2.Nf3 Nf6 3.Nxe5 d6 4.Nf3 Nxe4"),
    ("Philidor Defence", "1.e4 e5 2.Nf3 d6 3.d4 Nf6"),
    ("Vienna Game", "1.e4 e5 2.Nc3 Nf6 3.f4 d5"),
    ("Bishop's Opening", "1.e4 e5 2.Bc4 Nf6 3.d3"),
    ("Sicilian, Open 2...d6", "1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6"),
    ("Sicilian, Open 2...Nc6", "1.e4 c5 2.Nf3 Nc6 3.d4 cxd4 4.Nxd4 Nf6"),
    ("Sicilian, Taimanov", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 Nc6"),
    ("Sicilian, Alapin", "1.e4 c5 2.c3 Nf6 3.e5 Nd5"),
    ("Sicilian, Closed", "1.e4 c5 2.Nc3 Nc6 3.g3 g6"),
    ("Sicilian, Rossolimo", "1.e4 c5 2.Nf3 Nc6 3.Bb5 g6"),
    ("French, Winawer", "1.e4 e6 2.d4 d5 3.Nc3 Bb4"),
    ("French, Classical", "1.e4 e6 2.d4 d5 3.Nc3 Nf6"),
    ("French, Tarrasch", "1.e4 e6 2.d4 d5 3.Nd2 c5"),
    ("French, Advance", "1.e4 e6 2.d4 d5 3.e5 c5 4.c3 Nc6"),
    ("Caro-Kann, Classical", "1.e4 c6 2.d4 d5 3.Nc3 dxe4 4.Nxe4 Bf5"),
    ("Caro-Kann, Advance", "1.e4 c6 2.d4 d5 3.e5 Bf5"),
    ("Caro-Kann, Panov", "1.e4 c6 2.d4 d5 3.exd5 cxd5 4.c4 Nf6"),
    ("Alekhine Defence", "1.e4 Nf6 2.e5 Nd5 3.d4 d6"),
    ("Scandinavian Defence", "1.e4 d5 2.exd5 Qxd5 3.Nc3 Qa5"),
    ("Queen's Gambit Declined", "1.d4 d5 2.c4 e6 3.Nc3 Nf6"),
    ("Slav Defence", "1.d4 d5 2.c4 c6 3.Nf3 Nf6"),
    ("Semi-Slav Defence", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 e6"),
    ("Tarrasch Defence", "1.d4 d5 2.c4 e6 3.Nc3 c5"),
    ("Nimzo-Indian Defence", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4"),
    ("Queen's Indian Defence", "1.d4 Nf6 2.c4 e6 3.Nf3 b6"),
    ("Bogo-Indian Defence", "1.d4 Nf6 2.c4 e6 3.Nf3 Bb4+"),
    ("Catalan Opening", "1.d4 Nf6 2.c4 e6 3.g3 d5"),
    ("King's Indian Defence", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6"),
    ("Grunfeld Defence", "1.d4 Nf6 2.c4 g6 3.Nc3 d5"),
    ("Benoni Defence", "1.d4 Nf6 2.c4 c5 3.d5 e6"),
    ("Benko Gambit Declined", "1.d4 Nf6 2.c4 c5 3.d5 b5 4.Nf3"),
    ("Dutch, Leningrad", "1.d4 f5 2.g3 Nf6 3.Bg2 g6"),
    ("Dutch, Stonewall", "1.d4 f5 2.c4 Nf6 3.g3 e6 4.Bg2 d5"),
    ("London System", "1.d4 d5 2.Nf3 Nf6 3.Bf4 e6"),
    ("Trompowsky Attack", "1.d4 Nf6 2.Bg5 e6"),
    ("Colle System", "1.d4 d5 2.Nf3 Nf6 3.e3 e6 4.Bd3 c5"),
    ("English, Symmetrical", "1.c4 c5 2.Nc3 Nc6 3.g3 g6"),
    ("English, Reversed Sicilian", "1.c4 e5 2.Nc3 Nf6 3.g3 d5"),
    ("English, Anglo-Indian", "1.c4 Nf6 2.Nc3 e6 3.e4 d5"),
    ("Reti Opening", "1.Nf3 d5 2.c4 e6 3.g3 Nf6"),
    ("King's Indian Attack", "1.Nf3 d5 2.g3 Nf6 3.Bg2 c6 4.O-O Bg4"),
    ("Bird Opening", "1.f4 d5 2.Nf3 Nf6 3.e3 g6"),
    ("Larsen Opening", "1.b3 e5 2.Bb2 Nc6"),
    ("Queen's Pawn, Symmetrical", "1.d4 d5 2.Nf3 Nf6"),
    ("Ponziani Opening", "1.e4 e5 2.Nf3 Nc6 3.c3 Nf6"),
    ("Owen Defence", "1.e4 b6 2.d4 Bb7"),
    ("Old Indian Defence", "1.d4 Nf6 2.c4 d6 3.Nc3 e5"),
    ("Budapest Gambit Declined", "1.d4 Nf6 2.c4 e5 3.d5"),
    ("Torre Attack", "1.d4 Nf6 2.Nf3 e6 3.Bg5 c5"),
    ("Ruy Lopez, Exchange Variation", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Bxc6 dxc6"),
    ("Ruy Lopez, Steinitz Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 d6"),
    ("Ruy Lopez, Cozio Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Nge7"),
    ("Ruy Lopez, Classical Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Bc5"),
    ("Italian Game, Hungarian Defence", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Be7"),
    ("Italian Game, Giuoco Pianissimo", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.d3 Nf6"),
    ("Two Knights, Modern Bishop's Opening", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Nf6 4.d3 Be7"),
    ("Scotch Game, Classical", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Bc5"),
    ("Scotch Game, Schmidt Variation", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Nf6"),
    ("Four Knights, Spanish Variation", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.Bb5 Bb4"),
    ("Three Knights Game", "1.e4 e5 2.Nf3 Nc6 3.Nc3 g6"),
    ("Philidor, Hanham Variation", "1.e4 e5 2.Nf3 d6 3.d4 Nd7"),
    ("Vienna Game, Falkbeer Variation", "1.e4 e5 2.Nc3 Nf6 3.Bc4 Nc6"),
    ("Centre Game Declined", "1.e4 e5 2.Nf3 Nc6 3.d3 Nf6"),
    ("Sicilian, Open 2...e6 4...Nf6", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 Nf6"),
    ("Sicilian, Moscow Variation", "1.e4 c5 2.Nf3 d6 3.Bb5+ Bd7 4.Bxd7+ Qxd7"),
    ("Sicilian, Grand Prix Attack", "1.e4 c5 2.Nc3 Nc6 3.f4 g6"),
    ("Sicilian, Alapin 2...d5", "1.e4 c5 2.c3 d5 3.exd5 Qxd5 4.d4 Nf6"),
    ("Sicilian, Hyperaccelerated Fianchetto", "1.e4 c5 2.Nf3 g6 3.c3 Bg7"),
    ("French, Exchange Variation", "1.e4 e6 2.d4 d5 3.exd5 exd5 4.Nf3 Nf6"),
    ("French, Rubinstein Variation", "1.e4 e6 2.d4 d5 3.Nc3 dxe4 4.Nxe4 Nd7"),
    ("French, Tarrasch 3...Nf6", "1.e4 e6 2.d4 d5 3.Nd2 Nf6 4.e5 Nfd7"),
    ("French, King's Indian Attack", "1.e4 e6 2.d3 d5 3.Nd2 Nf6 4.Ngf3 c5"),
    ("Caro-Kann, Exchange Variation", "1.e4 c6 2.d4 d5 3.exd5 cxd5 4.Bd3 Nc6"),
    ("Caro-Kann, Karpov Variation", "1.e4 c6 2.d4 d5 3.Nc3 dxe4 4.Nxe4 Nd7"),
    ("Scandinavian, Modern Variation", "1.e4 d5 2.exd5 Nf6 3.d4 Nxd5"),
    ("Scandinavian, 3...Qd6", "1.e4 d5 2.exd5 Qxd5 3.Nc3 Qd6"),
    ("Alekhine, Exchange Variation", "1.e4 Nf6 2.e5 Nd5 3.d4 d6 4.exd6 cxd6"),
    ("Queen's Gambit Declined, Exchange", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.cxd5 exd5"),
    ("Queen's Gambit Declined, Ragozin", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Nf3 Bb4"),
    ("Slav, Exchange Variation", "1.d4 d5 2.c4 c6 3.cxd5 cxd5 4.Nc3 Nf6"),
    ("Slav, Chebanenko Variation", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 a6"),
    ("Queen's Gambit, Baltic Defence", "1.d4 d5 2.c4 Bf5 3.Nc3 e6"),
    ("Nimzo-Indian, Rubinstein Variation", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.e3 O-O"),
    ("Nimzo-Indian, Classical Variation", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.Qc2 O-O"),
    ("Queen's Indian, Petrosian Variation", "1.d4 Nf6 2.c4 e6 3.Nf3 b6 4.a3 Bb7"),
    ("Catalan, Open", "1.d4 Nf6 2.c4 e6 3.g3 d5 4.Bg2 Be7"),
    ("King's Indian, Fianchetto Variation", "1.d4 Nf6 2.c4 g6 3.g3 Bg7 4.Bg2 O-O"),
    ("Grunfeld, Russian System", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.Nf3 Bg7"),
    ("Grunfeld, Fianchetto", "1.d4 Nf6 2.c4 g6 3.g3 Bg7 4.Bg2 d5"),
    ("Dutch, Classical", "1.d4 f5 2.c4 Nf6 3.g3 e6 4.Bg2 Be7"),
    ("London System, ...c5", "1.d4 Nf6 2.Bf4 c5 3.e3 Nc6"),
    ("Jobava London", "1.d4 d5 2.Nc3 Nf6 3.Bf4 e6"),
    ("Veresov Attack", "1.d4 d5 2.Nc3 Nf6 3.Bg5 Nbd7"),
    ("Queen's Pawn, Zukertort", "1.d4 d5 2.Nf3 Nf6 3.e3 Bf5"),
    ("English, Four Knights", "1.c4 e5 2.Nc3 Nf6 3.Nf3 Nc6"),
    ("English, Botvinnik set-up", "1.c4 c5 2.Nc3 Nc6 3.g3 g6 4.Bg2 Bg7"),
    ("English, Great Snake", "1.c4 g6 2.Nc3 Bg7 3.g3 c5"),
    ("Reti, Gambit Declined", "1.Nf3 d5 2.c4 c6 3.b3 Nf6"),
    ("Reti, King's Indian set-up", "1.Nf3 Nf6 2.g3 g6 3.Bg2 Bg7 4.O-O O-O"),
    ("Nimzo-Larsen, Classical", "1.Nf3 d5 2.b3 Nf6 3.Bb2 e6"),
    ("Hungarian Opening", "1.g3 d5 2.Bg2 Nf6 3.Nf3 c6"),
    ("Van 't Kruijs Opening", "1.e3 e5 2.d4 exd4 3.exd4 d5"),
    ("Polish Opening Declined", "1.b4 e5 2.Bb2 Bxb4 3.Bxe5 Nf6"),
    ("Nimzowitsch Defence", "1.e4 Nc6 2.d4 d6 3.Nf3 Nf6"),
    # added for 400-game matches
    ("Ruy Lopez, Closed", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6 5.O-O Be7"),
    ("Ruy Lopez, Berlin, 4.d3 Bc5", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Nf6 4.d3 Bc5"),
    ("Ruy Lopez, Berlin, Beverwijk Variation", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Nf6 4.O-O Bc5"),
    ("Ruy Lopez, Schliemann, 4.d3", "1.e4 e5 2.Nf3 Nc6 3.Bb5 f5 4.d3 fxe4 5.dxe4 Nf6"),
    ("Ruy Lopez, Bird's Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Nd4 4.Nxd4 exd4"),
    ("Ruy Lopez, Fianchetto Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 g6"),
    ("Ruy Lopez, Anderssen Variation", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6 5.d3"),
    ("Ruy Lopez, Modern Steinitz Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 d6"),
    ("Ruy Lopez, Neo-Arkhangelsk", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6 5.O-O Bc5"),
    ("Ruy Lopez, Exchange, Gligoric Variation", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Bxc6 dxc6 5.O-O f6"),
    ("Ruy Lopez, Exchange, Bronstein Variation", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Bxc6 dxc6 5.O-O Qd6"),
    ("Ruy Lopez, Wormald Attack", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6 5.Qe2"),
    ("Ruy Lopez, Caro Variation", "1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 b5 5.Bb3"),
    ("Ruy Lopez, Alapin Defence", "1.e4 e5 2.Nf3 Nc6 3.Bb5 Bb4"),
    ("Italian Game, Evans Gambit Declined", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.b4 Bb6"),
    ("Italian Game, Giuoco Piano, 5.d3 d6", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.c3 Nf6 5.d3 d6"),
    ("Italian Game, Paris Defence", "1.e4 e5 2.Nf3 Nc6 3.Bc4 d6"),
    ("Italian Game, Giuoco Pianissimo, 4.O-O", "1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.O-O Nf6 5.d3 d6"),
    ("Scotch Game, Schmidt, 5.Nxc6", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Nf6 5.Nxc6 bxc6"),
    ("Scotch Game, Steinitz Variation", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Qh4"),
    ("Scotch Game, Classical, 5.Be3", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Bc5 5.Be3 Qf6"),
    ("Scotch Game, Malaniuk Variation", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Bb4+"),
    ("Scotch Game, Potter Variation", "1.e4 e5 2.Nf3 Nc6 3.d4 exd4 4.Nxd4 Bc5 5.Nb3 Bb6"),
    ("Scotch Four Knights", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.d4 exd4 5.Nxd4"),
    ("Four Knights, Rubinstein Variation", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.Bb5 Nd4"),
    ("Four Knights, Italian Variation", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.Bc4"),
    ("Four Knights, Glek System", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.g3"),
    ("Four Knights, Spanish, Symmetrical", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.Bb5 Bb4 5.O-O O-O"),
    ("Four Knights, Spanish, Classical Defence", "1.e4 e5 2.Nf3 Nc6 3.Nc3 Nf6 4.Bb5 Bc5"),
    ("Petrov, Classical Attack", "1.e4 e5 2.Nf3 Nf6 3.Nxe5 d6 4.Nf3 Nxe4 5.d4 d5"),
    ("Petrov, Modern Attack", "1.e4 e5 2.Nf3 Nf6 3.d4 Nxe4 4.Bd3 d5 5.Nxe5"),
    ("Petrov, Three Knights", "1.e4 e5 2.Nf3 Nf6 3.Nc3 Bb4"),
    ("Petrov, Cozio Attack", "1.e4 e5 2.Nf3 Nf6 3.Nxe5 d6 4.Nf3 Nxe4 5.Qe2 Qe7"),
    ("Petrov, Nimzowitsch Attack", "1.e4 e5 2.Nf3 Nf6 3.Nxe5 d6 4.Nf3 Nxe4 5.Nc3"),
    ("Philidor, Exchange Variation", "1.e4 e5 2.Nf3 d6 3.d4 exd4 4.Nxd4 Nf6"),
    ("Philidor, Lion Variation", "1.e4 d6 2.d4 Nf6 3.Nc3 e5 4.Nf3 Nbd7"),
    ("Vienna Game, Max Lange Defence", "1.e4 e5 2.Nc3 Nc6"),
    ("Vienna Game, Paulsen Variation", "1.e4 e5 2.Nc3 Nf6 3.g3"),
    ("Vienna Game, Mieses Variation", "1.e4 e5 2.Nc3 Nc6 3.g3"),
    ("Vienna Game, Stanley Variation, 3...Bc5", "1.e4 e5 2.Nc3 Nf6 3.Bc4 Bc5"),
    ("Bishop's Opening, Berlin Defence", "1.e4 e5 2.Bc4 Nf6"),
    ("Bishop's Opening, Vienna Hybrid", "1.e4 e5 2.Bc4 Nf6 3.d3 Nc6 4.Nc3"),
    ("Bishop's Opening, Classical Variation", "1.e4 e5 2.Bc4 Bc5"),
    ("King's Gambit Declined, Classical", "1.e4 e5 2.f4 Bc5"),
    ("King's Gambit, Falkbeer Countergambit, Modern", "1.e4 e5 2.f4 d5 3.exd5 exf4 4.Nf3 Nf6"),
    ("Center Game", "1.e4 e5 2.d4 exd4 3.Qxd4 Nc6 4.Qe3"),
    ("Konstantinopolsky Opening", "1.e4 e5 2.Nf3 Nc6 3.g3"),
    ("Sicilian, Najdorf", "1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 a6"),
    ("Sicilian, Classical", "1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 Nc6"),
    ("Sicilian, Sveshnikov", "1.e4 c5 2.Nf3 Nc6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 e5"),
    ("Sicilian, Four Knights", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 Nc6"),
    ("Sicilian, Kalashnikov", "1.e4 c5 2.Nf3 Nc6 3.d4 cxd4 4.Nxd4 e5 5.Nb5 d6"),
    ("Sicilian, Lowenthal", "1.e4 c5 2.Nf3 Nc6 3.d4 cxd4 4.Nxd4 e5 5.Nb5 a6"),
    ("Sicilian, Pin Variation", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 Bb4"),
    ("Sicilian, Nimzowitsch Variation", "1.e4 c5 2.Nf3 Nf6"),
    ("Sicilian, Alapin, 2...e6", "1.e4 c5 2.c3 e6 3.d4 d5"),
    ("Sicilian, Closed, Main Line", "1.e4 c5 2.Nc3 Nc6 3.g3 g6 4.Bg2 Bg7 5.d3 d6"),
    ("Sicilian, Bowdler Attack", "1.e4 c5 2.Bc4 e6"),
    ("Sicilian, Rossolimo, 3...e6", "1.e4 c5 2.Nf3 Nc6 3.Bb5 e6"),
    ("Sicilian, Rossolimo, 3...d6", "1.e4 c5 2.Nf3 Nc6 3.Bb5 d6"),
    ("Sicilian, Moscow, 3...Nd7", "1.e4 c5 2.Nf3 d6 3.Bb5+ Nd7"),
    ("Sicilian, Prins Variation", "1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.f3"),
    ("Sicilian, Taimanov, Bastrikov Variation", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 Nc6 5.Nc3 Qc7"),
    ("Sicilian, Kan, 5.Bd3", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 a6 5.Bd3 Nf6"),
    ("Sicilian, Kan, Maroczy Bind", "1.e4 c5 2.Nf3 e6 3.d4 cxd4 4.Nxd4 a6 5.c4 Nf6"),
    ("Sicilian, Accelerated Dragon, Maroczy Bind", "1.e4 c5 2.Nf3 Nc6 3.d4 cxd4 4.Nxd4 g6 5.c4 Bg7"),
    ("Sicilian, Delayed Alapin", "1.e4 c5 2.Nf3 d6 3.c3 Nf6"),
    ("Sicilian, McDonnell Attack", "1.e4 c5 2.f4"),
    ("Sicilian, Chekhover Variation", "1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Qxd4 Nc6"),
    ("Sicilian, King's Indian Attack", "1.e4 c5 2.Nf3 e6 3.d3"),
    ("French, Winawer, Advance", "1.e4 e6 2.d4 d5 3.Nc3 Bb4 4.e5 c5"),
    ("French, Steinitz Variation", "1.e4 e6 2.d4 d5 3.Nc3 Nf6 4.e5 Nfd7"),
    ("French, Burn Variation", "1.e4 e6 2.d4 d5 3.Nc3 Nf6 4.Bg5 dxe4 5.Nxe4"),
    ("French, Classical, 4.Bg5 Be7", "1.e4 e6 2.d4 d5 3.Nc3 Nf6 4.Bg5 Be7"),
    ("French, Tarrasch, Open 4...exd5", "1.e4 e6 2.d4 d5 3.Nd2 c5 4.exd5 exd5"),
    ("French, Tarrasch, 4...Qxd5", "1.e4 e6 2.d4 d5 3.Nd2 c5 4.exd5 Qxd5"),
    ("French, Tarrasch, Guimard Variation", "1.e4 e6 2.d4 d5 3.Nd2 Nc6"),
    ("French, Tarrasch, 3...Be7", "1.e4 e6 2.d4 d5 3.Nd2 Be7"),
    ("French, Advance, 5.Nf3 Qb6", "1.e4 e6 2.d4 d5 3.e5 c5 4.c3 Nc6 5.Nf3 Qb6"),
    ("French, Advance, Nimzowitsch System", "1.e4 e6 2.d4 d5 3.e5 c5 4.Nf3"),
    ("French, Fort Knox", "1.e4 e6 2.d4 d5 3.Nc3 dxe4 4.Nxe4 Bd7"),
    ("French, Chigorin Variation", "1.e4 e6 2.Qe2"),
    ("French, Two Knights Variation", "1.e4 e6 2.Nf3 d5 3.Nc3"),
    ("French, Winawer, Fingerslip", "1.e4 e6 2.d4 d5 3.Nc3 Bb4 4.Bd2"),
    ("French, Winawer, Exchange", "1.e4 e6 2.d4 d5 3.Nc3 Bb4 4.exd5 exd5"),
    ("Caro-Kann, Tartakower Variation", "1.e4 c6 2.d4 d5 3.Nc3 dxe4 4.Nxe4 Nf6 5.Nxf6+ exf6"),
    ("Caro-Kann, Classical, 5.Ng3", "1.e4 c6 2.d4 d5 3.Nc3 dxe4 4.Nxe4 Bf5 5.Ng3 Bg6"),
    ("Caro-Kann, Advance, Short Variation", "1.e4 c6 2.d4 d5 3.e5 Bf5 4.Nf3 e6"),
    ("Caro-Kann, Advance, 4.Nc3", "1.e4 c6 2.d4 d5 3.e5 Bf5 4.Nc3 e6"),
    ("Caro-Kann, Advance, 3...c5", "1.e4 c6 2.d4 d5 3.e5 c5"),
    ("Caro-Kann, Fantasy Variation", "1.e4 c6 2.d4 d5 3.f3 e6"),
    ("Caro-Kann, Panov, 5.Nc3 e6", "1.e4 c6 2.d4 d5 3.exd5 cxd5 4.c4 Nf6 5.Nc3 e6"),
    ("Caro-Kann, Panov, 5.Nc3 Nc6", "1.e4 c6 2.d4 d5 3.exd5 cxd5 4.c4 Nf6 5.Nc3 Nc6"),
    ("Caro-Kann, Exchange, Rubinstein Variation", "1.e4 c6 2.d4 d5 3.exd5 cxd5 4.Bd3 Nc6 5.c3 Nf6"),
    ("Caro-Kann, Breyer Variation", "1.e4 c6 2.d3 d5 3.Nd2"),
    ("Pirc, Austrian Attack", "1.e4 d6 2.d4 Nf6 3.Nc3 g6 4.f4 Bg7"),
    ("Pirc, Austrian Attack, 5...O-O", "1.e4 d6 2.d4 Nf6 3.Nc3 g6 4.f4 Bg7 5.Nf3 O-O"),
    ("Pirc, Byrne Variation", "1.e4 d6 2.d4 Nf6 3.Nc3 g6 4.Bg5"),
    ("Pirc, 150 Attack", "1.e4 d6 2.d4 Nf6 3.Nc3 g6 4.Be3 Bg7 5.Qd2"),
    ("Pirc, Fianchetto", "1.e4 d6 2.d4 Nf6 3.Nc3 g6 4.g3 Bg7"),
    ("Pirc, Czech Defence", "1.e4 d6 2.d4 Nf6 3.Nc3 c6"),
    ("Modern Defence, Averbakh System", "1.d4 g6 2.c4 Bg7 3.Nc3 d6 4.e4"),
    ("Alekhine, Four Pawns Attack", "1.e4 Nf6 2.e5 Nd5 3.d4 d6 4.c4 Nb6 5.f4"),
    ("Alekhine, Modern Variation", "1.e4 Nf6 2.e5 Nd5 3.d4 d6 4.Nf3 Bg4"),
    ("Alekhine, Modern, Alburt Variation", "1.e4 Nf6 2.e5 Nd5 3.d4 d6 4.Nf3 g6"),
    ("Alekhine, Modern, Larsen Variation", "1.e4 Nf6 2.e5 Nd5 3.d4 d6 4.Nf3 dxe5 5.Nxe5"),
    ("Alekhine, Scandinavian Variation", "1.e4 Nf6 2.Nc3 d5"),
    ("Alekhine, Exchange, 5...exd6", "1.e4 Nf6 2.e5 Nd5 3.d4 d6 4.c4 Nb6 5.exd6 exd6"),
    ("Scandinavian, Main Line", "1.e4 d5 2.exd5 Qxd5 3.Nc3 Qa5 4.d4 Nf6"),
    ("Scandinavian, 3...Qd8", "1.e4 d5 2.exd5 Qxd5 3.Nc3 Qd8"),
    ("Scandinavian, 3...Qd6 4.d4 Nf6", "1.e4 d5 2.exd5 Qxd5 3.Nc3 Qd6 4.d4 Nf6"),
    ("Scandinavian, Modern, 4.c4 Nb6", "1.e4 d5 2.exd5 Nf6 3.d4 Nxd5 4.c4 Nb6"),
    ("Scandinavian, Modern, 4.Nf3 g6", "1.e4 d5 2.exd5 Nf6 3.d4 Nxd5 4.Nf3 g6"),
    ("Nimzowitsch Defence, Scandinavian Variation", "1.e4 Nc6 2.d4 d5"),
    ("Owen Defence, 3.Bd3", "1.e4 b6 2.d4 Bb7 3.Bd3 e6"),
    ("Queen's Gambit Declined, Orthodox", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Bg5 Be7"),
    ("Queen's Gambit Declined, Lasker Defence set-up", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Bg5 Be7 5.e3 O-O"),
    ("Queen's Gambit Declined, Cambridge Springs", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Bg5 Nbd7 5.e3 c6"),
    ("Queen's Gambit Declined, Harrwitz Attack", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Nf3 Be7 5.Bf4"),
    ("Queen's Gambit Declined, Three Knights", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Nf3 Be7"),
    ("Queen's Gambit Declined, Semi-Tarrasch", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Nf3 c5"),
    ("Queen's Gambit Declined, Alatortsev", "1.d4 d5 2.c4 e6 3.Nc3 Be7"),
    ("Queen's Gambit Declined, Chigorin Defence", "1.d4 d5 2.c4 Nc6"),
    ("Queen's Gambit Declined, Exchange, 5.Bg5", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.cxd5 exd5 5.Bg5 c6"),
    ("Queen's Gambit Declined, Janowski Variation", "1.d4 d5 2.c4 a6"),
    ("Queen's Gambit Declined, Marshall Defence", "1.d4 d5 2.c4 Nf6"),
    ("Queen's Gambit Declined, Ragozin, 5.Bg5 h6", "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Nf3 Bb4 5.Bg5 h6"),
    ("Tarrasch Defence, 4.cxd5 exd5", "1.d4 d5 2.c4 e6 3.Nc3 c5 4.cxd5 exd5"),
    ("Queen's Gambit Accepted, Classical", "1.d4 d5 2.c4 dxc4 3.Nf3 Nf6 4.e3 e6 5.Bxc4 c5"),
    ("Queen's Gambit Accepted, Central Variation", "1.d4 d5 2.c4 dxc4 3.e4 Nf6 4.e5 Nd5 5.Bxc4"),
    ("Queen's Gambit Accepted, Old Variation", "1.d4 d5 2.c4 dxc4 3.e3 e5 4.Bxc4 exd4 5.exd4"),
    ("Queen's Gambit Accepted, Janowski-Larsen", "1.d4 d5 2.c4 dxc4 3.Nf3 Nf6 4.e3 Bg4 5.Bxc4"),
    ("Slav, Schlechter Variation", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 g6"),
    ("Slav, 4.e3 Bf5", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.e3 Bf5"),
    ("Slav, 4.e3 Bg4", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.e3 Bg4"),
    ("Slav, Three Knights", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3"),
    ("Slav, Exchange, 5.Bf4 Nc6", "1.d4 d5 2.c4 c6 3.cxd5 cxd5 4.Nc3 Nf6 5.Bf4 Nc6"),
    ("Slav, Triangle", "1.d4 d5 2.c4 e6 3.Nc3 c6"),
    ("Semi-Slav, Meran set-up", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 e6 5.e3 Nbd7"),
    ("Semi-Slav, Moscow Variation", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 e6 5.Bg5 h6"),
    ("Semi-Slav, 5.Qc2", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 e6 5.Qc2 Nbd7"),
    ("Semi-Slav, Accelerated Meran", "1.d4 d5 2.c4 c6 3.Nf3 Nf6 4.Nc3 e6 5.e3 a6"),
    ("Nimzo-Indian, Rubinstein, 4...c5", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.e3 c5"),
    ("Nimzo-Indian, Rubinstein, 4...b6", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.e3 b6"),
    ("Nimzo-Indian, Rubinstein, 5.Bd3 d5", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.e3 O-O 5.Bd3 d5"),
    ("Nimzo-Indian, Leningrad Variation", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.Bg5"),
    ("Nimzo-Indian, Three Knights", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.Nf3 c5"),
    ("Nimzo-Indian, Samisch", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.a3 Bxc3+ 5.bxc3 c5"),
    ("Nimzo-Indian, Classical, 4...d5", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.Qc2 d5"),
    ("Nimzo-Indian, Classical, 4...c5", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.Qc2 c5"),
    ("Nimzo-Indian, Romanishin Variation", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.g3"),
    ("Nimzo-Indian, Spielmann Variation", "1.d4 Nf6 2.c4 e6 3.Nc3 Bb4 4.Qb3"),
    ("Queen's Indian, Fianchetto, 4...Bb7", "1.d4 Nf6 2.c4 e6 3.Nf3 b6 4.g3 Bb7"),
    ("Queen's Indian, Nimzowitsch Variation", "1.d4 Nf6 2.c4 e6 3.Nf3 b6 4.g3 Ba6"),
    ("Queen's Indian, Kasparov Variation", "1.d4 Nf6 2.c4 e6 3.Nf3 b6 4.Nc3 Bb7"),
    ("Queen's Indian, 4.e3 Bb7", "1.d4 Nf6 2.c4 e6 3.Nf3 b6 4.e3 Bb7"),
    ("Bogo-Indian, Nimzowitsch Variation", "1.d4 Nf6 2.c4 e6 3.Nf3 Bb4+ 4.Bd2 Qe7"),
    ("Bogo-Indian, Grunfeld Variation", "1.d4 Nf6 2.c4 e6 3.Nf3 Bb4+ 4.Nbd2 O-O"),
    ("Bogo-Indian, Exchange Variation", "1.d4 Nf6 2.c4 e6 3.Nf3 Bb4+ 4.Bd2 Bxd2+ 5.Qxd2"),
    ("Catalan, Closed", "1.d4 Nf6 2.c4 e6 3.g3 d5 4.Bg2 Be7 5.Nf3 O-O"),
    ("Catalan, 4...c6", "1.d4 Nf6 2.c4 e6 3.g3 d5 4.Bg2 c6"),
    ("Catalan, Bogo-Indian set-up", "1.d4 Nf6 2.c4 e6 3.g3 d5 4.Bg2 Bb4+"),
    ("King's Indian, Classical", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.Nf3 O-O"),
    ("King's Indian, Samisch", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.f3 O-O"),
    ("King's Indian, Four Pawns Attack", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.f4 O-O"),
    ("King's Indian, 5.Be2 O-O", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.Be2 O-O"),
    ("King's Indian, Makogonov Variation", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.h3 O-O"),
    ("King's Indian, 5.Nge2", "1.d4 Nf6 2.c4 g6 3.Nc3 Bg7 4.e4 d6 5.Nge2 O-O"),
    ("King's Indian, Fianchetto, 5.Nf3 d6", "1.d4 Nf6 2.c4 g6 3.g3 Bg7 4.Bg2 O-O 5.Nf3 d6"),
    ("Grunfeld, Exchange, 4...Nxd5", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.cxd5 Nxd5"),
    ("Grunfeld, Exchange, 5.e4", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.cxd5 Nxd5 5.e4"),
    ("Grunfeld, 4.Bf4", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.Bf4 Bg7"),
    ("Grunfeld, Russian, 5.Qb3", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.Nf3 Bg7 5.Qb3"),
    ("Grunfeld, 4.Bg5 Ne4", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.Bg5 Ne4"),
    ("Grunfeld, 4.e3", "1.d4 Nf6 2.c4 g6 3.Nc3 d5 4.e3 Bg7"),
    ("Neo-Grunfeld", "1.d4 Nf6 2.c4 g6 3.g3 d5"),
    ("Modern Benoni", "1.d4 Nf6 2.c4 c5 3.d5 e6 4.Nc3 exd5 5.cxd5 d6"),
    ("Czech Benoni", "1.d4 Nf6 2.c4 c5 3.d5 e5"),
    ("Old Benoni, 2...e5", "1.d4 c5 2.d5 e5"),
    ("Benko Gambit, 4.a4", "1.d4 Nf6 2.c4 c5 3.d5 b5 4.a4"),
    ("Dutch, Hopton Attack", "1.d4 f5 2.Bg5"),
    ("Dutch, Classical, 5.Nf3 O-O", "1.d4 f5 2.c4 Nf6 3.g3 e6 4.Bg2 Be7 5.Nf3 O-O"),
    ("Dutch, Leningrad, 4.Nf3", "1.d4 f5 2.g3 Nf6 3.Bg2 g6 4.Nf3 Bg7"),
    ("Dutch, Stonewall, 5.Nf3 c6", "1.d4 f5 2.c4 Nf6 3.g3 e6 4.Bg2 d5 5.Nf3 c6"),
    ("Dutch, 2.c4 Nf6 3.Nc3 e6", "1.d4 f5 2.c4 Nf6 3.Nc3 e6"),
    ("English, Closed", "1.c4 e5 2.Nc3 Nc6 3.g3 g6 4.Bg2 Bg7"),
    ("English, Bremen, Smyslov System", "1.c4 e5 2.Nc3 Nf6 3.g3 Bb4"),
    ("English, Symmetrical, Four Knights", "1.c4 c5 2.Nc3 Nc6 3.Nf3 Nf6"),
    ("English, Hedgehog", "1.c4 c5 2.Nf3 Nf6 3.g3 b6 4.Bg2 Bb7"),
    ("English, Caro-Kann Defensive System", "1.c4 c6 2.e4 d5"),
    ("English, Agincourt, 3.b3", "1.c4 e6 2.Nf3 d5 3.b3 Nf6"),
    ("English, Anglo-Grunfeld", "1.c4 Nf6 2.Nc3 d5 3.cxd5 Nxd5"),
    ("English, Anglo-Dutch", "1.c4 f5 2.Nc3 Nf6"),
    ("English, Four Knights, Fianchetto", "1.c4 e5 2.Nc3 Nf6 3.Nf3 Nc6 4.g3 Bb4"),
    ("English, Four Knights, 4.e3", "1.c4 e5 2.Nc3 Nf6 3.Nf3 Nc6 4.e3 Bb4"),
    ("English, Symmetrical, Rubinstein System", "1.c4 c5 2.Nc3 Nf6 3.g3 d5 4.cxd5 Nxd5"),
    ("English, Symmetrical, Anti-Benoni", "1.c4 c5 2.Nf3 Nf6 3.d4 cxd4 4.Nxd4 e6"),
    ("English, King's Indian Formation, 3.e4 d6", "1.c4 Nf6 2.Nc3 g6 3.e4 d6"),
    ("Reti, Advance Variation", "1.Nf3 d5 2.c4 d4"),
    ("Reti, Symmetrical Fianchetto", "1.Nf3 d5 2.g3 g6 3.Bg2 Bg7"),
    ("Reti, Anglo-Slav, 4...Bf5", "1.Nf3 d5 2.c4 c6 3.g3 Nf6 4.Bg2 Bf5"),
    ("London System, King's Indian set-up", "1.d4 Nf6 2.Bf4 g6 3.e3 Bg7"),
    ("London System, 2...d5 3...c5", "1.d4 d5 2.Bf4 Nf6 3.e3 c5"),
    ("London System, Accelerated, 2...c5", "1.d4 d5 2.Bf4 c5 3.e3 Nc6"),
    ("Trompowsky, 2...Ne4 3.Bf4", "1.d4 Nf6 2.Bg5 Ne4 3.Bf4"),
    ("Trompowsky, 2...d5", "1.d4 Nf6 2.Bg5 d5"),
    ("Trompowsky, 2...c5", "1.d4 Nf6 2.Bg5 c5"),
    ("Torre Attack, King's Indian set-up", "1.d4 Nf6 2.Nf3 g6 3.Bg5 Bg7"),
    ("Queen's Pawn, Torre Attack, 2...d5", "1.d4 d5 2.Nf3 Nf6 3.Bg5 e6"),
    ("Colle-Zukertort System", "1.d4 d5 2.Nf3 Nf6 3.e3 e6 4.Bd3 c5 5.b3"),
    ("Barry Attack", "1.d4 Nf6 2.Nf3 g6 3.Nc3 d5 4.Bf4"),
    ("King's Indian, 2.Nf3 g6 3.g3", "1.d4 Nf6 2.Nf3 g6 3.g3 Bg7 4.Bg2 O-O"),
    ("Polish Opening, 1...d5", "1.b4 d5 2.Bb2 Nf6"),
    ("Nimzo-Larsen, Indian Variation", "1.b3 Nf6 2.Bb2 g6"),
    ("Bird Opening, Leningrad set-up", "1.f4 Nf6 2.Nf3 g6 3.g3 Bg7 4.Bg2"),
    ("Dunst Opening", "1.Nc3 e5 2.Nf3 Nc6"),
    ("Hungarian Opening, Reversed Modern", "1.g3 e5 2.Bg2 d5"),
    ("Old Indian, Main Line", "1.d4 Nf6 2.c4 d6 3.Nc3 e5 4.Nf3 Nbd7"),
    ("Old Indian, Janowski Variation", "1.d4 Nf6 2.c4 d6 3.Nc3 Bf5"),
    ("English Defence", "1.d4 e6 2.c4 b6"),
)

_MOVE_NUMBER = re.compile(r"^\d+\.(\.\.)?")


def play(moves: str) -> chess.Board:
    """The board after ``moves`` (SAN, move numbers such as ``1.`` or ``1...`` allowed);
    ``ValueError`` naming the move when one is illegal or ambiguous."""
    board = chess.Board()
    for token in moves.split():
        san = _MOVE_NUMBER.sub("", token)
        if san:
            board.push_san(san)
    return board


def material(board: chess.Board, color: chess.Color) -> int:
    """Sum of :data:`VALUES` over ``color``'s pieces, pawn units."""
    return sum(VALUES[p.piece_type] for p in board.piece_map().values() if p.color == color)


def epd_line(name: str, moves: str) -> str:
    """The file line of an opening: its position after ``moves`` and ``id``."""
    return play(moves).epd(id=name)


def read_file(path: Path) -> list[tuple[int, str, str]]:
    """(line number, first four fields, id) of each position line of an openings file."""
    out = []
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        ops = chess.Board().set_epd(line)
        out.append((lineno, " ".join(line.split()[:4]), str(ops.get("id", ""))))
    return out


def verify(path: Path) -> dict[str, object]:
    """Check the file at ``path`` against :data:`OPENINGS`; the JSON summary as a dict."""
    start = time.perf_counter()
    weights = classic_weights().values
    failures: list[str] = []
    lines = read_file(path)
    if len(lines) != len(OPENINGS):
        failures.append(f"{path}: {len(lines)} positions, the move table has {len(OPENINGS)}")
    seen_pos: dict[str, str] = {}
    seen_id: set[str] = set()
    max_cp = 0.0
    plies: list[int] = []
    for (lineno, fields, line_id), (name, moves) in zip(lines, OPENINGS):
        where = f"line {lineno} ({line_id or name})"
        try:
            board = play(moves)
        except ValueError as exc:
            failures.append(f"{where}: moves {moves!r}: {exc}")
            continue
        n = len(board.move_stack)
        plies.append(n)
        if not MIN_PLIES <= n <= MAX_PLIES:
            failures.append(f"{where}: {n} plies, not {MIN_PLIES} to {MAX_PLIES}")
        if not name:
            failures.append(f"{where}: empty name in the move table")
        if line_id != name:
            failures.append(f"{where}: id {line_id!r} but the move table names it {name!r}")
        if fields != board.epd():
            failures.append(f"{where}: the moves lead to {board.epd()!r}, the file has {fields!r}")
        white, black = material(board, chess.WHITE), material(board, chess.BLACK)
        if white != black:
            failures.append(f"{where}: material {white}-{black}")
        if board.is_game_over():
            failures.append(f"{where}: the game is over")
        if fields in seen_pos:
            failures.append(f"{where}: same position as {seen_pos[fields]!r}")
        seen_pos.setdefault(fields, line_id)
        if line_id in seen_id:
            failures.append(f"{where}: id used twice")
        seen_id.add(line_id)
        # the position as a match starts it: the file's fields with fresh move counters
        cp = search(from_fen(f"{fields} 0 1"), DEPTH, weights).score_cp
        max_cp = max(max_cp, abs(cp))
        if abs(cp) > MAX_ABS_CP:
            failures.append(f"{where}: {cp:+.1f} cp at depth {DEPTH}, beyond {MAX_ABS_CP}")
    return {"file": str(path), "openings": len(lines), "distinct": len(seen_pos),
            "max_abs_cp": round(max_cp, 2), "plies": [min(plies, default=0), max(plies, default=0)],
            "failures": failures, "all_ok": not failures, "seconds": round(time.perf_counter() - start, 1)}


def verify_large_suite(path: Path) -> int:
    """``--suite``: :func:`tuner.arena.openings.verify_suite` on every line of ``path``, one JSON line."""
    from tuner.arena.openings import SuiteConfig, position_key, verify_suite  # noqa: PLC0415

    start = time.perf_counter()
    quick = {position_key(play(moves)) for _, moves in OPENINGS}
    try:
        count, failures = verify_suite(path, SuiteConfig(), classic_weights().values, exclude=quick)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"verify_openings: {path}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"file": str(path), "openings": count, "failures": failures[:50], "all_ok": not failures,
                      "seconds": round(time.perf_counter() - start, 1)}))
    return 0 if not failures else 1


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epd", action="store_true", help="print the EPD line of each entry of OPENINGS instead")
    ap.add_argument("--suite", action="store_true",
                    help="FILE is a suite of 'tuner bench openings' (default settings: 6..12 plies, 60 cp at depth 4 "
                         "with classic, none of the quick set): re-check every line from its id instead")
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_OPENINGS, help=f"openings file (default: {DEFAULT_OPENINGS})")
    args = ap.parse_args(argv)
    if args.suite:
        return verify_large_suite(args.file)
    if args.epd:
        for name, moves in OPENINGS:
            print(epd_line(name, moves))
        return 0
    path = args.file
    try:
        summary = verify(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"verify_openings: {path}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return 0 if summary["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The rules of chess on bitboard arrays: bit helpers (:mod:`~search.core.bits`), attack tables
(:mod:`~search.core.attacks`), the board (:mod:`~search.core.board`), move generation
(:mod:`~search.core.movegen`), perft (:mod:`~search.core.perft`), the board check at the kernels'
boundary (:mod:`~search.core.validate`), FEN, PGN and python-chess conversion
(:mod:`~search.core.convert`, :mod:`~search.core.fen_batch`, :mod:`~search.core.replay`), the
quiet-position filter (:mod:`~search.core.quiet`) and the caps on untrusted input
(:mod:`~search.core.input_limits`). Imports nothing of the other rooms."""

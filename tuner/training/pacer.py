"""The sizes of kernel calls that last about 0.4 s (:class:`Pacer`), so that Ctrl-C stops a run
promptly with the same results as one call; used by the paced calls of :mod:`tuner.training.paced` and by
the executors' chunks (:mod:`tuner.training.executor`), which both import it from here."""

from __future__ import annotations

from collections.abc import Iterator

from search.tree.batch import CHUNK


class Pacer:
    """Sizes of kernel calls so that each lasts about ``target`` seconds (between half and
    twice that), which lets a run check for Ctrl-C (:func:`tuner.errors.check_interrupt`)
    between them.

    Sizes count *searches* (positions, times weight vectors for a move-match) and are
    multiples of :data:`search.tree.batch.CHUNK`: the batch kernels give each chunk of ``CHUNK``
    positions one search workspace, so cutting a batch at multiples of ``CHUNK`` leaves every
    result bit-identical to one call over the whole batch. The size doubles while calls are
    short and shrinks in proportion when one is too long, so it follows the depth, the machine
    and its load. (Sizing from the measured rate alone shrinks without end on a loaded machine:
    each parallel call has a fixed cost, which makes small calls look slow.)
    """

    def __init__(self, target: float = 0.4, first: int = 16 * CHUNK) -> None:
        self.target = target
        self.size = first

    def pieces(self, n: int) -> Iterator[tuple[int, int]]:
        """``(a, z)`` ranges covering ``0..n``, each ``a`` a multiple of ``CHUNK``, sized by the
        latest :meth:`record` (call it after each piece's kernel call)."""
        a = 0
        while a < n:
            z = min(n, a + self.size)
            yield a, z
            a = z

    def record(self, searches: int, seconds: float) -> None:
        """Adjust the size after a call of ``searches`` searches that took ``seconds``."""
        if 2 * searches < self.size:  # a short last piece says little
            return
        if seconds < self.target / 2:
            self.size *= 2
        elif seconds > 2 * self.target:
            self.size = max(CHUNK, int(searches * self.target / seconds) // CHUNK * CHUNK)


__all__ = ["Pacer"]

"""The engine's kernels, loaded in this process or compiled in a child one.

:func:`load_engine_kernels` runs what a ``go`` of ``tuner uci`` needs once, on a small search, so
that numba loads (or compiles) the kernels of a player. On a cold cache (the first run after an
install or an update) compiling them in the engine's own process holds its interpreter lock for
long stretches, so the quick search that answers the meantime's ``go`` gets it late (issue 58
item 12; ``docs/commands.md``, ``tuner uci``, has the timings). :class:`KernelChild` runs the same
steps in a child process instead (``python -m tuner.compile_apart FILE``, FILE a pickled player),
which compiles them on another core and fills numba's cache (the child inherits
``NUMBA_CACHE_DIR`` and a term plug-in's ``MOVETUNER_TERMS``); the engine then loads them from
the cache as on a warm start. The engine's ``quit`` ends the child, as it ended the compilation
in its own process before: the kernels compiled so far stay cached.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from tuner.arena.players import Searchable

#: seconds a child may compile before the engine stops waiting, kills it and compiles itself
CHILD_TIMEOUT = 900.0
_PR_SET_PDEATHSIG = 1  # prctl(2)


def load_engine_kernels(player: object, *, on_boundary: Callable[[], None] | None = None) -> None:
    """Load (or compile) the kernels a ``go`` of ``player`` (:data:`tuner.arena.players.Searchable`)
    runs: with ``on_boundary``, first those that convert a ``position`` (then it is called), then
    a depth-1 search of the start position with a fresh engine."""
    from search.core.convert import STARTING_FEN, from_fen, legal_moves, move_to_uci, push  # noqa: PLC0415
    from tuner.arena.players import new_engine  # noqa: PLC0415

    if on_boundary is not None:
        board = from_fen(STARTING_FEN)
        move_to_uci(int(legal_moves(board)[0]))
        push(board, int(legal_moves(board)[0]))
        on_boundary()
    engine = new_engine(cast("Searchable", player), 4)
    best = engine.think(from_fen(STARTING_FEN), [], max_depth=1)
    if best is not None:
        move_to_uci(best.pv[0])


class KernelChild:
    """The child process of :meth:`compile`, which :meth:`stop` ends (the engine's ``quit``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped = False

    def compile(self, player: object, *, timeout: float = CHILD_TIMEOUT) -> str | None:
        """Compile ``player``'s kernels (:func:`load_engine_kernels`) in a child process into
        numba's cache; block until it ends (without the interpreter lock). Returns ``None`` when
        it did, else one line saying why not (the caller then compiles in its own process)."""
        root = Path(__file__).resolve().parents[1]  # the folder holding this package: the child runs the same code
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
        fd, name = tempfile.mkstemp(prefix="movetuner-player-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(player, f)
            with self._lock:
                if self._stopped:
                    return "the engine is quitting"
                self._proc = subprocess.Popen([sys.executable, "-m", "tuner.compile_apart", name], env=env,
                                              cwd=str(root), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.PIPE)
            try:
                _, err = self._proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill(self._proc)  # this child only: a later warm-up may start another
                return f"the child compiling the kernels ran over {timeout:.0f} s and was stopped"
            if self._proc.returncode != 0:
                tail = err.decode("utf-8", "replace").strip().splitlines()
                return (f"the child compiling the kernels exited with status {self._proc.returncode}"
                        + (f": {tail[-1][:200]}" if tail else ""))
            return None
        except (OSError, pickle.PicklingError, AttributeError, TypeError) as exc:  # (a local object: AttributeError)
            return f"could not start a child to compile the kernels: {exc}"
        finally:
            Path(name).unlink(missing_ok=True)

    def stop(self) -> None:
        """End the child if it runs (it leaves the kernels it compiled so far in the cache), and
        start none after."""
        with self._lock:
            self._stopped = True
            proc = self._proc
        if proc is not None:
            _kill(proc)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End ``proc`` if it runs, and reap it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _die_with_parent() -> None:
    """Linux: have the kernel kill this process when its parent dies (an engine killed outright
    leaves no child compiling); elsewhere nothing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the call
        os._exit(1)


def main(argv: list[str]) -> int:
    """The child: load the pickled player of ``argv[0]`` and run :func:`load_engine_kernels`."""
    if len(argv) != 1:
        print("usage: python -m tuner.compile_apart PLAYER.pickle", file=sys.stderr)
        return 2
    _die_with_parent()  # (and no nice: below the engine's priority the child starves on a busy machine)
    with open(argv[0], "rb") as f:
        player = pickle.load(f)  # noqa: S301 - the engine's own file, written just before
    load_engine_kernels(player, on_boundary=lambda: None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

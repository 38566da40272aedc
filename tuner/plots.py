"""PNG plots of a training run: its metrics by iteration and its learnt piece-square tables.

matplotlib (Agg backend, no display needed) draws them; the figures are written to files and
never shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from search.catalog import FEATURE_INDEX, PIECE_NAMES, SQUARE_NAMES, STAGES

#: the panel every run has (the driver measures it each iteration, :mod:`tuner.driver`)
VALIDATION_PANEL = ("validation move-match (ties as fractions)",
                    [("match_validation", "this iteration"), ("best_validation", "best so far")])


def panels_of(method: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The method's own panels (:class:`tuner.methods.Method`), then the validation move-match."""
    from tuner.methods import get  # noqa: PLC0415

    return [*get(method).panels, VALIDATION_PANEL]


def _pyplot() -> Any:
    import matplotlib  # noqa: PLC0415 - heavy, and only this command needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def plot_metrics(records: list[dict[str, Any]], method: str, path: Path, title: str) -> Path:
    """Line plots of ``records`` (metrics.jsonl) against the iteration; returns ``path``."""
    plt = _pyplot()
    from tuner.methods import get  # noqa: PLC0415

    panels = panels_of(method)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    x = [r["iteration"] for r in records]
    for ax, (panel_title, series) in zip(axes[0], panels):
        for key, label in series:
            pts = [(xi, r[key]) for xi, r in zip(x, records) if r.get(key) is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_title(panel_title)
        ax.set_xlabel(get(method).unit)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def pst_grids(weights: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
    """Each (stage, piece)'s piece-square table as an 8x8 array, rank 8 in row 0, file a in column 0."""
    out = {}
    for stage in STAGES:
        for piece in PIECE_NAMES:
            values = np.array([weights[FEATURE_INDEX[f"{stage}.pst.{piece}.{sq}"]] for sq in SQUARE_NAMES])
            out[(stage, piece)] = values.reshape(8, 8)[::-1]
    return out


def plot_psts(weights: np.ndarray, path: Path, title: str) -> Path:
    """Heat maps of the 12 piece-square tables (centipawns, White's view); returns ``path``."""
    plt = _pyplot()
    grids = pst_grids(weights)
    fig, axes = plt.subplots(len(STAGES), len(PIECE_NAMES), figsize=(3.2 * len(PIECE_NAMES), 3.4 * len(STAGES)))
    for row, stage in enumerate(STAGES):
        for col, piece in enumerate(PIECE_NAMES):
            ax = axes[row, col]
            grid = grids[(stage, piece)]
            lim = max(1, int(np.abs(grid).max()))
            im = ax.imshow(grid, cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.set_title(f"{stage} {piece}")
            ax.set_xticks(range(8), list("abcdefgh"))
            ax.set_yticks(range(8), [str(r) for r in range(8, 0, -1)])
            for r in range(8):
                for f in range(8):
                    if grid[r, f]:
                        ax.text(f, r, str(int(grid[r, f])), ha="center", va="center", fontsize=6)
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

"""PNG plots of a training run: its metrics by iteration and its learnt piece-square tables.

matplotlib (Agg backend, no display needed) draws them; the figures are written to files and
never shown, each atomically (:func:`_save`: the PNG drawn in memory, then
:func:`search.params.weights.atomic_write_bytes`), so that a failed or interrupted plot leaves the old
file whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from search.params.catalog import FEATURE_INDEX, PIECE_NAMES, SQUARE_NAMES, STAGES

#: the panel every run has (the driver measures it each iteration, :mod:`tuner.training.driver`)
VALIDATION_PANEL = ("validation move-match (ties as fractions)",
                    [("match_validation", "this iteration"), ("best_validation", "the kept iteration's")])


def panels_of(method: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The method's own panels (:class:`tuner.methods.registry.Method`), then the validation move-match."""
    from tuner.methods.registry import get  # noqa: PLC0415

    return [*get(method).panels, VALIDATION_PANEL]


def _pyplot() -> Any:
    import matplotlib  # noqa: PLC0415 - heavy, and only this command needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def _save(fig: Any, path: Path) -> None:
    """Write ``fig`` as a PNG to ``path`` atomically and close it."""
    import io  # noqa: PLC0415

    from search.params.weights import atomic_write_bytes  # noqa: PLC0415

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=100)
    finally:
        _pyplot().close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def plot_metrics(records: list[dict[str, Any]], method: str, path: Path, title: str) -> Path:
    """Line plots of ``records`` (metrics.jsonl) against the iteration; returns ``path``. A value
    that is not a number (None, or a hand-edited string, list or object) is left out."""
    plt = _pyplot()
    from tuner.methods.registry import get  # noqa: PLC0415

    panels = panels_of(method)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    x = [r["iteration"] for r in records]
    for ax, (panel_title, series) in zip(axes[0], panels):
        for key, label in series:
            pts = [(xi, r[key]) for xi, r in zip(x, records) if _is_number(r.get(key))]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_title(panel_title)
        ax.set_xlabel(get(method).unit)
        ax.grid(alpha=0.3)
        if ax.get_lines():  # a panel with no number to show has no legend (matplotlib would warn)
            ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    return path


def pst_grids(weights: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
    """Each (stage, piece)'s piece-square table as an 8x8 array, rank 8 in row 0, file a in column 0."""
    out = {}
    for stage in STAGES:
        for piece in PIECE_NAMES:
            values = np.array([weights[FEATURE_INDEX[f"{stage}.pst.{piece}.{sq}"]] for sq in SQUARE_NAMES])
            out[(stage, piece)] = values.reshape(8, 8)[::-1]
    return out


#: the size of the numbers written in the squares of ``pst.png``, points (at 100 dpi, 1 pt is 1.4 px)
CELL_FONT_SIZE = 9


def pst_figure(weights: np.ndarray, title: str, start: np.ndarray | None = None) -> Any:
    """A matplotlib figure of the 12 piece-square tables (centipawns, White's view): heat maps
    of ``weights - start`` (the change a run made) when ``start`` (int32[N_FEATURES]) is given,
    else of ``weights``; each square carries its value, non-zero ones written out in
    :data:`CELL_FONT_SIZE` points. The colour scale is symmetric and shared by all tables, so
    that colours compare across pieces."""
    plt = _pyplot()
    shown = np.asarray(weights, dtype=np.int64)
    if start is not None:
        shown = shown - np.asarray(start, dtype=np.int64)
    grids = pst_grids(shown)
    lim = max(1, int(max(np.abs(g).max() for g in grids.values())))
    fig, axes = plt.subplots(len(STAGES), len(PIECE_NAMES), figsize=(4.4 * len(PIECE_NAMES), 4.8 * len(STAGES)),
                             layout="constrained")
    im = None
    for row, stage in enumerate(STAGES):
        for col, piece in enumerate(PIECE_NAMES):
            ax = axes[row, col]
            grid = grids[(stage, piece)]
            im = ax.imshow(grid, cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.set_title(f"{stage} {piece}", fontsize=12)
            ax.set_xticks(range(8), list("abcdefgh"))
            ax.set_yticks(range(8), [str(r) for r in range(8, 0, -1)])
            for r in range(8):
                for f in range(8):
                    if grid[r, f]:
                        strong = abs(grid[r, f]) > 0.6 * lim  # white digits on the darkest squares
                        ax.text(f, r, f"{int(grid[r, f]):+d}" if start is not None else str(int(grid[r, f])),
                                ha="center", va="center", fontsize=CELL_FONT_SIZE,
                                color="white" if strong else "black")
    what = "change from the start weights" if start is not None else "values"
    fig.suptitle(f"{title}\n{what}, centipawns, White's view (colour scale +-{lim} cp)", fontsize=14)
    if im is not None:
        fig.colorbar(im, ax=axes, fraction=0.015, pad=0.01)
    return fig


def plot_psts(weights: np.ndarray, path: Path, title: str, start: np.ndarray | None = None) -> Path:
    """Write :func:`pst_figure` to ``path`` (PNG); returns ``path``."""
    fig = pst_figure(weights, title, start)
    _save(fig, path)
    return path


def plot_compare(doc: dict[str, Any], path: Path, title: str) -> Path:
    """Horizontal bars of ``tuner bench compare``'s document (``compare.json``), one panel per
    measure: top-1 and top-3 move-match (%, with their 95 % intervals), Elo with its 95 % interval (an infinite rating is
    written, not drawn), and with an EPD suite its mean points with their 95 % interval.
    Entrants without a figure (an engine's move-match) get a ``-``. Returns ``path``."""
    plt = _pyplot()
    entrants = doc["entrants"]
    names = [e["name"] if len(e["name"]) <= 40 else e["name"][:37] + "..." for e in entrants]
    y = np.arange(len(entrants))[::-1]
    panels = ["move-match"]
    if doc.get("games") is not None and doc["pairs"]:
        panels.append("elo")
    if doc.get("epd") is not None:
        panels.append("epd")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 1.2 + 0.55 * len(entrants)),
                             squeeze=False, sharey=True)
    for ax, panel in zip(axes[0], panels):
        if panel == "move-match":
            for k, e in enumerate(entrants):
                mm = e.get("move_match")
                if mm is None:
                    ax.text(0, y[k], " -", va="center")
                    continue
                for dy, key, color in ((0.2, "top1", "tab:blue"), (-0.2, "top3", "tab:cyan")):
                    ci = mm.get(f"{key}_ci95")  # the 95% interval as an error bar
                    err = None if not ci else [[100 * (mm[key] - ci[0])], [100 * (ci[1] - mm[key])]]
                    ax.barh(y[k] + dy, 100 * mm[key], height=0.4, color=color, xerr=err, capsize=3,
                            label=("top-1" if key == "top1" else "top-3") if k == 0 else None)
            mm_doc = doc["move_match"]
            ax.set_title(f"move-match, {mm_doc['positions']} {doc['split']} positions, depth {mm_doc['depth']} (%)\n"
                         "bars: 95% intervals", fontsize="medium")
            ax.set_xlim(0, 100)
            if any(e.get("move_match") for e in entrants):
                ax.legend(loc="lower right")
        elif panel == "elo":
            for k, e in enumerate(entrants):
                elo = e.get("elo")
                if elo is None:
                    ax.text(0, y[k], " -", va="center")
                elif elo["elo"] is None:
                    ax.text(0, y[k], " +inf" if elo["infinite"] > 0 else " -inf", va="center")
                else:
                    ci = elo["ci95"]
                    err = None if ci is None else [[elo["elo"] - ci[0]], [ci[1] - elo["elo"]]]
                    ax.barh(y[k], elo["elo"], height=0.6, color="tab:orange" if elo["anchor"] else "tab:green",
                            xerr=err, capsize=4)
            ax.axvline(doc["anchor_elo"], color="black", linewidth=0.8)
            ax.set_title(f"Elo (anchor {doc['anchor'][:24]} = {doc['anchor_elo']:g}), 95% intervals")
        else:
            for k, e in enumerate(entrants):
                s = e.get("epd")
                if s is None:
                    ax.text(0, y[k], " -", va="center")
                    continue
                ci = s["mean_points_ci95"]
                err = None if ci is None else [[s["mean_points"] - ci[0]], [ci[1] - s["mean_points"]]]
                ax.barh(y[k], s["mean_points"], height=0.6, color="tab:purple", xerr=err, capsize=4)
            ax.set_title(f"EPD {Path(doc['epd']['file']).name[:24]}: mean points, 95% intervals")
            ax.set_xlim(0, 10)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, names)
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    return path

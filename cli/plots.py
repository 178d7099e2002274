"""`matchlog stats --plot`: the statistics as pictures, drawn with matplotlib (an optional extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matchlog.events import UsageError

from .output import short_spec

__all__ = ["plot_statistics", "rate_labels"]

SUFFIXES = (".png", ".svg")


def plot_statistics(result: Any, path: Path) -> None:
    """Win rates with their intervals, win rates by seat, dice faces against fair dice, and match
    lengths, one panel each (those with nothing to show are left out), saved to `path`.

    Raises:
        UsageError: not a .png or .svg file, or matplotlib is not installed.
    """
    if path.suffix.lower() not in SUFFIXES:
        raise UsageError(f"--plot draws a .png or an .svg file, not {path.name!r}", code="usage.plot")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(
            "--plot needs matplotlib: pip install 'matchlog[plot]' (or pip install matplotlib)", code="usage.plot"
        ) from None
    panels = [
        (_rates, result.rates, f"win rate by {result.by} (95% interval)"),
        (_rates, result.seats if result.by == "player" else (), "win rate by seat: who moves first"),
        (_dice, result.dice, "dice faces (fair dice: the dashed line)"),
        (_lengths, result.games, "match length"),
    ]
    panels = [(draw, data, title) for draw, data, title in panels if data]
    if not panels:
        raise UsageError("there is nothing to plot: no finished matches match", code="usage.plot")
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), squeeze=False)
    for axis, (draw, data, title) in zip(axes[:, 0], panels, strict=True):
        draw(axis, data)
        axis.set_title(title, loc="left", fontsize=11)
    figure.tight_layout()
    try:
        figure.savefig(path)
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}", code="usage.plot") from None
    finally:
        plt.close(figure)


def rate_labels(rates: Any) -> list[str]:
    """Each rate's label: the game and the player, with its strategy where that says more than the
    name (two strategies may share a name: `-p awk=cmd:...` in two series)."""
    labels = []
    for r in rates:
        strategy = short_spec(r.player) if r.player else ""
        labels.append(f"{r.game}: {r.subject}" + (f" ({strategy})" if strategy and strategy != r.subject else ""))
    return labels


def _rates(axis: Any, rates: Any) -> None:
    labels = rate_labels(rates)
    centres = [r.win_rate for r in rates]
    below = [max(0.0, r.win_rate - r.win_low) for r in rates]
    above = [max(0.0, r.win_high - r.win_rate) for r in rates]
    rows = range(len(rates))
    axis.errorbar(centres, rows, xerr=[below, above], fmt="o", capsize=3)
    axis.set_yticks(list(rows), labels)
    axis.invert_yaxis()
    axis.set_xlim(0, 1)
    axis.set_xlabel("share of finished matches won")


def _dice(axis: Any, dice: Any) -> None:
    groups = [d for d in dice if d.rolls]
    width = 0.8 / max(1, len(groups))
    for index, fairness in enumerate(groups):
        shares = [count / fairness.rolls for count in fairness.counts]
        label = f"{fairness.game}: {fairness.subject} (p = {fairness.p_value:.3f})"
        axis.bar([face + index * width for face in range(1, 7)], shares, width=width, label=label)
    axis.axhline(1 / 6, linestyle="--", color="black", linewidth=1)
    axis.set_xticks([face + 0.4 - width / 2 for face in range(1, 7)], [str(face) for face in range(1, 7)])
    axis.set_ylabel("share of rolls")
    axis.legend(fontsize=8)


def _lengths(axis: Any, games: Any) -> None:
    shown = [g for g in games if g.mean_turns is not None]
    axis.barh([g.game for g in shown], [g.mean_turns for g in shown], label="mean")
    axis.scatter([g.median_turns for g in shown], [g.game for g in shown], color="black", zorder=3, label="median")
    axis.set_xlabel("turns per finished match")
    axis.legend(fontsize=8)

"""Statistics across matches: SQL over the catalogue (`matches`), the `seats` projection and the
`figures` projection (`engines.figures`), never over JSON payloads, so each question stays fast on
millions of events.

The questions: win rates with 95% Wilson intervals by player or by seat (first-mover advantage),
match length in turns and seconds, rejection and removal rates, dice fairness (a chi-square test
per face count, per player and overall), and each game's own figures (Porrinha and Da Vinci Code
guess accuracy, backgammon gammons and pips, Fish points per game and per penguin).

Statistics are a view like any other: read whole (the log's owner), or as a spectator (-1), from
the figures every reader may know (`aggregates.shown_figures`): a figure derived from what a reader
may not see is its count of what it sees, or nothing. Every other input (the catalogue's status,
times and seqs, the seats' places) is public (`engines.views.CATALOGUE`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from matchlog.store import Store

from .aggregates import shown_figures
from .annotations import PlayerAnalysis, analysis_figures
from .projections import refresh

__all__ = [
    "QUESTIONS",
    "STATISTICS_FROM",
    "DiceFairness",
    "GameFigure",
    "GameStats",
    "Rate",
    "Statistics",
    "chi_square_p",
    "statistics",
    "wilson",
]


class Rate(msgspec.Struct, frozen=True):
    """Wins over finished matches for one player (name and strategy) or one seat of one game."""

    game: str
    subject: str  # the player's name, or "seat N"
    player: str  # the strategy (or "" for a seat)
    matches: int
    wins: int
    win_rate: float
    win_low: float  # 95% Wilson interval
    win_high: float
    mean_place: float
    mean_score: float | None  # None: the game keeps no scores (Porrinha, Da Vinci Code), only places
    removed: int


class GameStats(msgspec.Struct, frozen=True):
    """One game's matches: how many, how long, how often answers were rejected and players removed."""

    game: str
    matches: int
    finished: int
    running: int
    abandoned: int
    events: int
    mean_turns: float | None
    median_turns: float | None
    mean_seconds: float | None
    median_seconds: float | None
    answers: int
    rejected: int
    rejection_rate: float
    seats: int
    removed: int
    removal_rate: float


class DiceFairness(msgspec.Struct, frozen=True):
    """Die faces seen by one player (or "all"), and how likely counts this uneven are from fair dice."""

    game: str
    subject: str
    counts: tuple[int, ...]  # faces 1..6
    rolls: int
    chi_square: float
    p_value: float  # under fair dice; small means suspicious


class GameFigure(msgspec.Struct, frozen=True):
    """One of a game's own figures, for one player (or "all")."""

    game: str
    subject: str
    figure: str
    value: float
    count: int  # matches (or guesses) it is over


class Statistics(msgspec.Struct, frozen=True):
    """Everything `matchlog stats` shows: per game, win rates by player and by seat, dice fairness
    and each game's own figures."""

    by: str  # player | seat
    since: str | None
    projected: int  # matches whose figures had to be projected first
    games: tuple[GameStats, ...]
    rates: tuple[Rate, ...]
    seats: tuple[Rate, ...]
    dice: tuple[DiceFairness, ...]
    figures: tuple[GameFigure, ...]
    skipped: tuple[str, ...] = ()  # matches whose figures could not be projected, and why
    analysis: tuple[Any, ...] = ()  # each player's analysed decisions and luck (replay.annotations)
    as_seat: int | None = None  # None: the whole record; -1: what every reader may know


#: What each field of the statistics is derived from, which decides what a reader gets of it: a
#: column of the catalogue (public: `engines.views.CATALOGUE`), of the seats (how a match ended,
#: which every seat sees), a figure (as the reader gets it: `aggregates.shown_figures`), or the
#: question itself. A field not declared here fails `test_every_figure_and_column_a_reader_gets_is_declared`.
STATISTICS_FROM: dict[type[msgspec.Struct], dict[str, str]] = {
    GameStats: {
        "game": "catalogue game",
        "matches": "catalogue status",
        "finished": "catalogue status",
        "running": "catalogue status",
        "abandoned": "catalogue status",
        "events": "catalogue last_seq",
        "mean_turns": "figure turns",
        "median_turns": "figure turns",
        "mean_seconds": "catalogue created_us ended_us",
        "median_seconds": "catalogue created_us ended_us",
        "answers": "figure answers",
        "rejected": "figure rejected",
        "rejection_rate": "figure answers rejected",
        "seats": "catalogue players",
        "removed": "seats removed",
        "removal_rate": "seats removed",
    },
    Rate: {
        "game": "catalogue game",
        "subject": "catalogue players",
        "player": "catalogue strategies",
        "matches": "catalogue status",
        "wins": "seats winner",
        "win_rate": "seats winner",
        "win_low": "seats winner",
        "win_high": "seats winner",
        "mean_place": "seats place",
        "mean_score": "seats score",
        "removed": "seats removed",
    },
    DiceFairness: {
        "game": "catalogue game",
        "subject": "catalogue players",
        "counts": "figure die_1 die_2 die_3 die_4 die_5 die_6",
        "rolls": "figure die_1 die_2 die_3 die_4 die_5 die_6",
        "chi_square": "figure die_1 die_2 die_3 die_4 die_5 die_6",
        "p_value": "figure die_1 die_2 die_3 die_4 die_5 die_6",
    },
    GameFigure: {
        "game": "catalogue game",
        "subject": "catalogue players",
        "figure": "question",
        "value": "figure (each game's own: GAME_FIGURES)",
        "count": "figure (each game's own: GAME_FIGURES)",
    },
    Statistics: {
        "by": "question",
        "since": "question",
        "projected": "catalogue status",
        "games": "GameStats",
        "rates": "Rate",
        "seats": "Rate",
        "dice": "DiceFairness",
        "figures": "GameFigure",
        "skipped": "catalogue match_id",
        "analysis": "PlayerAnalysis",
        "as_seat": "question",
    },
    # The latest analysis of each match of a game without hidden information, whose every decision
    # every reader may see (`annotations.seen_annotations`): games with hidden information are left out.
    PlayerAnalysis: {
        "game": "catalogue game",
        "subject": "catalogue players",
        "player": "catalogue strategies",
        "analyser": "annotations author (public games)",
        "unit": "annotations note (public games)",
        "matches": "annotations match_id (public games)",
        "decisions": "annotations note (public games)",
        "unforced": "annotations note (public games)",
        "error_rate": "annotations note (public games)",
        "marks": "annotations note (public games)",
        "luck": "annotations note (public games)",
    },
}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (0.0, 0.0)
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return (max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator))


def chi_square_p(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with `df` degrees of freedom: the regularised upper incomplete
    gamma Q(df/2, x/2), by its series below a + 1 and its continued fraction above (Numerical Recipes)."""
    if x <= 0:
        return 1.0
    a, y = df / 2, x / 2
    log_front = -y + a * math.log(y) - math.lgamma(a)
    if y < a + 1:
        term = total = 1 / a
        n = a
        for _ in range(1000):
            n += 1
            term *= y / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1 - total * math.exp(log_front))
    tiny = 1e-300
    b = y + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return min(1.0, math.exp(log_front) * h)


def statistics(
    store: Store,
    game: str | None = None,
    *,
    by: str = "player",
    since: datetime | None = None,
    as_seat: int | None = None,
) -> Statistics:
    """Every question above for one game (or all), over matches started `since` (or all), read
    whole or (`as_seat` -1) as a spectator.

    Matches whose figures are missing or stale are projected first (see `projections`).

    Raises:
        ValueError: `by` is not "player" or "seat".
        UsageError: a seat's view (statistics are read whole or as a spectator).
    """
    if by not in ("player", "seat"):
        raise ValueError(f"by player or seat, not {by!r}")
    base, params = _matches(game, since, as_seat)
    skipped: list[str] = []
    projected = refresh(store, skipped=skipped) if store.writable else 0
    return Statistics(
        by=by,
        since=since.isoformat() if since else None,
        projected=projected,
        games=tuple(_games(store, base, params)),
        rates=tuple(_rates(store, base, params, by)),
        seats=tuple(_rates(store, base, params, "seat")),
        dice=tuple(_dice(store, base, params)),
        figures=tuple(_figures(store, base, params)),
        skipped=tuple(skipped),
        analysis=tuple(analysis_figures(store, base, params, by)),
        as_seat=as_seat,
    )


def _matches(game: str | None, since: datetime | None, as_seat: int | None = None) -> tuple[str, list[Any]]:
    """The CTEs of a question: `m`, the matches it is about, and `fig`, the figures the reader gets;
    and their parameters.

    Raises:
        UsageError: a seat's view.
    """
    figures, shown = shown_figures(as_seat)
    where = "WHERE (? IS NULL OR game = ?) AND (? IS NULL OR created_at >= ?)"
    return f"WITH m AS (SELECT * FROM matches {where}), fig AS ({figures})", [game, game, since, since, *shown]


#: Each question on its own (for the benchmark): (store, game, since) -> its answer.
QUESTIONS: dict[str, Callable[[Store, str | None, datetime | None], list[Any]]] = {
    "games: matches, length, rejections, removals": lambda store, game, since: _games(store, *_matches(game, since)),
    "win rates by player": lambda store, game, since: _rates(store, *_matches(game, since), "player"),
    "win rates by seat (first-mover advantage)": lambda store, game, since: _rates(
        store, *_matches(game, since), "seat"
    ),
    "dice fairness": lambda store, game, since: _dice(store, *_matches(game, since)),
    "each game's own figures": lambda store, game, since: _figures(store, *_matches(game, since)),
}


def _games(store: Store, base: str, params: list[Any]) -> list[GameStats]:
    rows = store.query(
        f"""{base},
        turns AS (SELECT f.match_id, f.value FROM fig f JOIN m USING (match_id)
                  WHERE f.seat IS NULL AND f.figure = 'turns' AND m.status = 'finished'),
        answered AS (SELECT m.game,
                            sum(f.value) FILTER (WHERE f.figure = 'answers') AS answers,
                            sum(f.value) FILTER (WHERE f.figure = 'rejected') AS rejected
                     FROM fig f JOIN m USING (match_id)
                     WHERE f.seat IS NOT NULL AND f.figure IN ('answers', 'rejected') GROUP BY m.game),
        took AS (SELECT m.game, avg(t.value) AS mean_turns, median(t.value) AS median_turns
                 FROM turns t JOIN m USING (match_id) GROUP BY m.game),
        lasted AS (SELECT game, avg(epoch(ended_at) - epoch(created_at)) AS mean_seconds,
                          median(epoch(ended_at) - epoch(created_at)) AS median_seconds
                   FROM m WHERE status = 'finished' GROUP BY game),
        seated AS (SELECT m.game, count(*) AS seats, count(*) FILTER (WHERE s.removed) AS removed
                   FROM seats s JOIN m USING (match_id) WHERE m.status <> 'running' GROUP BY m.game)
        SELECT m.game, count(*), count(*) FILTER (WHERE status = 'finished'),
               count(*) FILTER (WHERE status = 'running'), count(*) FILTER (WHERE status = 'abandoned'),
               sum(last_seq) + count(*), any_value(took.mean_turns), any_value(took.median_turns),
               any_value(lasted.mean_seconds), any_value(lasted.median_seconds),
               coalesce(any_value(answered.answers), 0), coalesce(any_value(answered.rejected), 0),
               coalesce(any_value(seated.seats), 0), coalesce(any_value(seated.removed), 0)
        FROM m LEFT JOIN took USING (game) LEFT JOIN lasted USING (game) LEFT JOIN answered USING (game)
               LEFT JOIN seated USING (game)
        GROUP BY m.game ORDER BY m.game
        """,
        params,
    )
    games = []
    for row in rows:
        name, matches, finished, running, abandoned, events = row[:6]
        mean_turns, median_turns, mean_seconds, median_seconds = (None if v is None else float(v) for v in row[6:10])
        answers, rejected, seats, removed = (int(v) for v in row[10:14])
        games.append(
            GameStats(
                game=name,
                matches=matches,
                finished=finished,
                running=running,
                abandoned=abandoned,
                events=int(events or 0),
                mean_turns=mean_turns,
                median_turns=median_turns,
                mean_seconds=mean_seconds,
                median_seconds=median_seconds,
                answers=answers,
                rejected=rejected,
                rejection_rate=rejected / (answers + rejected) if answers + rejected else 0.0,
                seats=seats,
                removed=removed,
                removal_rate=removed / seats if seats else 0.0,
            )
        )
    return games


def _rates(store: Store, base: str, params: list[Any], by: str) -> list[Rate]:
    subject, player = ("s.name", "s.player") if by == "player" else ("'seat ' || s.seat", "''")
    rows = store.query(
        f"""{base}
        SELECT m.game, {subject} AS subject, {player} AS player, count(*), count(*) FILTER (WHERE s.winner),
               avg(s.place), CASE WHEN count(s.score) > 0 THEN avg(coalesce(s.score, 0)) END,
               count(*) FILTER (WHERE s.removed)
        FROM seats s JOIN m USING (match_id)
        WHERE m.status = 'finished' AND m.game <> 'knockout' AND s.place IS NOT NULL
        GROUP BY ALL
        ORDER BY m.game, {"count(*) FILTER (WHERE s.winner) DESC, subject" if by == "player" else "min(s.seat)"}
        """,
        params,
    )
    rates = []
    for game, who, strategy, matches, wins, mean_place, mean_score, removed in rows:
        low, high = wilson(wins, matches)
        rates.append(
            Rate(
                game,
                who,
                strategy,
                matches,
                wins,
                wins / matches,
                low,
                high,
                float(mean_place),
                None if mean_score is None else float(mean_score),
                removed,
            )
        )
    return rates


def _dice(store: Store, base: str, params: list[Any]) -> list[DiceFairness]:
    rows = store.query(
        f"""{base},
        faces AS (SELECT m.game, s.name, f.figure, sum(f.value) AS n
                  FROM fig f JOIN m USING (match_id) JOIN seats s ON s.match_id = f.match_id AND s.seat = f.seat
                  WHERE starts_with(f.figure, 'die_') GROUP BY ALL)
        SELECT game, name, figure, n FROM faces
        UNION ALL
        SELECT game, NULL, figure, sum(n) FROM faces GROUP BY game, figure
        ORDER BY 1, 2 NULLS FIRST, 3
        """,
        params,
    )
    counts: dict[tuple[str, str], list[int]] = {}
    for game, name, figure, n in rows:
        faces = counts.setdefault((game, name if name is not None else "all"), [0] * 6)
        face = int(figure.removeprefix("die_"))
        if 1 <= face <= 6:
            faces[face - 1] += int(n)
    fairness = []
    for (game, subject), faces in counts.items():
        rolls = sum(faces)
        expected = rolls / 6
        chi2 = sum((c - expected) ** 2 / expected for c in faces) if rolls else 0.0
        fairness.append(DiceFairness(game, subject, tuple(faces), rolls, chi2, chi_square_p(chi2, 5) if rolls else 1.0))
    return fairness


#: Each game's own figures: (label, numerator, denominator): the value is sum(numerator) /
#: sum(denominator), or without a denominator the numerator's mean per match (per seat and match
#: for a seat's figure).
GAME_FIGURES: dict[str, tuple[tuple[str, str, str | None], ...]] = {
    "porrinha": (("guess accuracy", "correct_guesses", "guesses"),),
    "davinci": (("guess accuracy", "correct_guesses", "guesses"),),
    "backgammon": (
        ("gammon rate", "gammon", None),
        ("backgammon rate", "backgammon", None),
        ("pips left per game", "pips", None),
    ),
    "fish": (
        ("fish per game", "fish", None),
        ("fish per penguin", "fish", "penguins"),
    ),
}


def _figures(store: Store, base: str, params: list[Any]) -> list[GameFigure]:
    wanted = sorted({name for figures in GAME_FIGURES.values() for _, *names in figures for name in names if name})
    rows = store.query(
        f"""{base},
        f AS (SELECT f.match_id, f.seat, f.figure, f.value, m.game
              FROM fig f JOIN m USING (match_id)
              WHERE m.status = 'finished' AND f.figure IN ({", ".join("?" for _ in wanted)}))
        SELECT f.game, CASE WHEN grouping(s.name) = 1 OR s.name IS NULL THEN 'all' ELSE s.name END,
               f.figure, sum(f.value), count(*)
        FROM f LEFT JOIN seats s ON s.match_id = f.match_id AND s.seat = f.seat
        GROUP BY GROUPING SETS ((f.game, s.name, f.figure), (f.game, f.figure))
        """,
        [*params, *wanted],
    )
    # Per player, and for "all" (match-level figures, and every seat's summed): (total, rows summed).
    sums = {(game, subject, figure): (float(total), int(count)) for game, subject, figure, total, count in rows}
    found = []
    for game, subject in sorted({(g, s) for g, s, _ in sums}, key=lambda k: (k[0], k[1] != "all", k[1])):
        for label, numerator, denominator in GAME_FIGURES.get(game, ()):
            top = sums.get((game, subject, numerator))
            if top is None:
                continue
            if denominator is None:
                found.append(GameFigure(game, subject, label, top[0] / top[1], top[1]))
            elif (bottom := sums.get((game, subject, denominator))) is not None and bottom[0]:
                found.append(GameFigure(game, subject, label, top[0] / bottom[0], int(bottom[0])))
    return found

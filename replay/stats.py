"""Statistics across matches: SQL over the log's typed columns and the `seats` projection.

Each question is one query on real columns (game, type, seat, status), never JSON extraction, so
it stays fast on millions of events.
"""

from __future__ import annotations

import math

import msgspec

from matchlog.store import Store

__all__ = ["GameSummary", "PlayerSummary", "Summary", "summary", "wilson"]


class PlayerSummary(msgspec.Struct, frozen=True):
    """One player (seat name and strategy) over the finished matches it played."""

    game: str
    name: str
    player: str
    matches: int
    wins: int
    win_rate: float
    win_low: float  # 95% Wilson interval of the win rate
    win_high: float
    mean_place: float
    removed: int


class GameSummary(msgspec.Struct, frozen=True):
    """One game's matches and events."""

    game: str
    matches: int
    finished: int
    running: int
    abandoned: int
    events: int
    mean_events: float
    rejected: int
    removed: int


class Summary(msgspec.Struct, frozen=True):
    games: tuple[GameSummary, ...]
    players: tuple[PlayerSummary, ...]


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (0.0, 0.0)
    p = wins / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return (max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator))


def summary(store: Store, game: str | None = None) -> Summary:
    """Matches, events, rejections and removals per game; wins and places per player."""
    where = "WHERE game = ?" if game else ""
    params = [game] if game else []
    games = []
    for row in store.query(
        f"""
        WITH m AS (SELECT game, count(*) AS matches,
                          count(*) FILTER (WHERE status = 'finished') AS finished,
                          count(*) FILTER (WHERE status = 'running') AS running,
                          count(*) FILTER (WHERE status = 'abandoned') AS abandoned,
                          sum(last_seq + 1) AS events
                   FROM matches {where} GROUP BY game),
             e AS (SELECT game,
                          count(*) FILTER (WHERE type = 'match.answer_rejected') AS rejected,
                          count(*) FILTER (WHERE type = 'match.player_removed') AS removed
                   FROM events WHERE type IN ('match.answer_rejected', 'match.player_removed')
                   {"AND game = ?" if game else ""} GROUP BY game)
        SELECT m.game, matches, finished, running, abandoned, events, events / matches,
               coalesce(rejected, 0), coalesce(removed, 0)
        FROM m LEFT JOIN e USING (game) ORDER BY m.game
        """,
        params * 2,
    ):
        games.append(GameSummary(*row[:6], float(row[6]), *row[7:]))
    players = []
    for row in store.query(
        f"""
        SELECT m.game, s.name, s.player, count(*), count(*) FILTER (WHERE s.winner), avg(s.place),
               count(*) FILTER (WHERE s.removed)
        FROM seats s JOIN matches m USING (match_id)
        WHERE m.status = 'finished' {"AND m.game = ?" if game else ""}
        GROUP BY ALL ORDER BY m.game, count(*) FILTER (WHERE s.winner) DESC, s.name
        """,
        params,
    ):
        game_name, name, player, matches, wins, mean_place, removed = row
        low, high = wilson(wins, matches)
        players.append(
            PlayerSummary(game_name, name, player, matches, wins, wins / matches, low, high, float(mean_place), removed)
        )
    return Summary(tuple(games), tuple(players))

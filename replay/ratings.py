"""Ratings: who leads, and by how much, computed again from the log each time it is asked.

Two answers, both pure functions of the ended matches of the log in commit order (`results`):

- Weng-Lin ratings (the `openskill` library's Plackett-Luce model), updated match by match in
  the order the log committed their ends, for a leaderboard: μ, σ and the conservative μ - 3σ a
  leaderboard sorts by; a player is provisional while σ is above `PROVISIONAL_SIGMA`. Any number
  of seats, by finishing place, ties included.
- Bradley-Terry maximum likelihood over every result at once (the `choix` library), for fixed
  versions of programs, which do not drift: an Elo scale relative to an anchor player (Elo 0) and
  a 95% interval from the fit's Fisher information. A match of K seats counts as the K(K-1)/2
  results between its seats (a tie half a win each), each weighing `pair_weight(K)`: those results
  come from one finishing order and are not independent, so together they count for what a
  finishing order tells of each player under Plackett-Luce, not for K - 1 games each (which made
  the intervals of 4-seat games about a quarter too narrow). Every pair that met counts one tie
  more, a weak prior, so that a player that never lost still has a finite rating. Players that
  never met the anchor's group, directly or through others, are rated against an anchor of their
  own group.

A player is provisional while its σ is above `PROVISIONAL_SIGMA` (5, from the start's 25 / 3):
where Weng-Lin gets after about ten even games against established players (σ ≤ 2.5), as lichess
marks a Glicko-2 rating provisional until its deviation falls from 350 to 110, which takes about
ten such games. The threshold is set by games of evidence, not by the ratio 110 / 350: Weng-Lin's
σ falls more slowly than Glicko's deviation (a third of the start, 2.8, takes about 80 even
games), and results against a much weaker or stronger player say little, so a player that only
ever beat one much weaker keeps a large σ (about 6 after 24 such wins), as it should.

A table is a projection of the log up to its head, and the log below a head never changes:
`RatingCache` keeps tables by the head they were computed at and the question asked (the
service's, which tags its answers with them).

A player is who played: the name given and the strategy or program. One name played by two
strategies is two players ("name (strategy)"); an alias counts one name as another (`aliases`),
strategies and all. Only ended matches count (a running match's results are nobody's yet), and
abandoned ones do not.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec

from matchlog.events import UsageError

from .results import LogHead, Result, results

__all__ = [
    "PROVISIONAL_SIGMA",
    "Rating",
    "RatingCache",
    "RatingTable",
    "pair_weight",
    "rate",
    "rating_table",
    "ratings_frame",
]

#: A Weng-Lin rating is provisional while its σ is above this (the start is 25 / 3): about ten
#: even games against established players, as lichess asks (see the module's docstring).
PROVISIONAL_SIGMA = 5.0
#: Elo per unit of Bradley-Terry strength (natural log).
_ELO_PER_NAT = 400 / math.log(10)
_Z95 = 1.959963984540054


def pair_weight(seats: int) -> float:
    """What each of the `seats` (K) (K - 1) / 2 pairwise results of one K-seat match weighs in the
    Bradley-Terry fit: 4 (K - H_K) / (K (K - 1)), H_K the K-th harmonic number (1 for two seats,
    0.78 for three, 0.64 for four).

    A finishing order of K evenly matched players tells each of them (K - H_K) / K of a unit of
    Fisher information under Plackett-Luce (stage m of the order, m players left, includes the
    player with chance m / K and tells p (1 - p) = (1 / m)(1 - 1 / m)); its K - 1 results counted
    as independent games would tell (K - 1) / 4. The weight makes the two agree."""
    harmonic = sum(1 / m for m in range(1, seats + 1))
    return 4 * (seats - harmonic) / (seats * (seats - 1))


class Rating(msgspec.Struct, frozen=True, kw_only=True):
    """One player's line of the table: results, Weng-Lin rating, and Bradley-Terry Elo (None
    when it met nobody) with its 95% interval, relative to `anchor`."""

    game: str
    player: str
    names: tuple[str, ...]
    strategies: tuple[str, ...]
    matches: int
    wins: int
    draws: int
    losses: int
    mu: float
    sigma: float
    conservative: float
    provisional: bool
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    anchor: str | None


class RatingTable(msgspec.Struct, frozen=True, kw_only=True):
    """The ratings of every player (of one game, or of each game), best first by μ - 3σ.
    `head` is the last leaf of the log they were computed from; `matches` the matches counted."""

    game: str | None
    head: int
    matches: int
    skipped: int
    provisional_sigma: float
    ratings: tuple[Rating, ...]


def rating_table(
    store: Any,
    game: str | None = None,
    *,
    since: datetime | None = None,
    series: str | None = None,
    players: Sequence[str] = (),
    aliases: Mapping[str, str] | None = None,
    anchor: str | None = None,
    head: int | None = None,
) -> RatingTable:
    """The ratings the log behind `store` gives (of `game`, a `series`, matches ended `since`),
    the rows of `players` only when some are named, with `aliases` counting names as others and
    Bradley-Terry Elo relative to `anchor` (by default, whoever played most); read up to leaf
    `head`, by default the log's last.

    Raises:
        UsageError: an alias that names itself, or an anchor that played none of these matches.
        DecodeError: a stored event does not decode.
    """
    aliases = dict(aliases or {})
    for name, target in aliases.items():
        if not name or not target or name == target:
            raise UsageError(f"--alias takes OLD=NEW with two different names, not {name}={target}", code="usage.alias")
    head, found = results(store, game=game, series=series, since=since, head=head)
    ended = [r for r in found if r.outcome is not None and r.outcome.result != "abandoned"]
    return rate(ended, head=head, game=game, players=players, aliases=aliases, anchor=anchor)


def rate(
    ended: Sequence[Result],
    *,
    head: int,
    game: str | None = None,
    players: Sequence[str] = (),
    aliases: Mapping[str, str] | None = None,
    anchor: str | None = None,
) -> RatingTable:
    """The rating table of `ended` matches (in commit order), as `rating_table` describes.

    Raises:
        UsageError: an anchor that played none of these matches.
    """
    aliases = dict(aliases or {})
    label = _labeller(ended, aliases)
    rows: list[Rating] = []
    counted = skipped = 0
    by_game: dict[str, list[Result]] = defaultdict(list)
    for result in ended:
        by_game[result.started.game].append(result)
    anchored = False
    for name in sorted(by_game):
        table, used, left_out = _rate_game(name, by_game[name], label, anchor)
        anchored = anchored or anchor is None or any(r.player == anchor for r in table)
        counted += used
        skipped += left_out
        rows.extend(table)
    if anchor is not None and not anchored:
        raise UsageError(f"--anchor {anchor}: no such player in these matches", code="usage.anchor")
    if players:
        wanted = set(players)
        rows = [r for r in rows if r.player in wanted or wanted & set(r.names)]
    return RatingTable(
        game=game, head=head, matches=counted, skipped=skipped, provisional_sigma=PROVISIONAL_SIGMA, ratings=tuple(rows)
    )


def _labeller(ended: Sequence[Result], aliases: Mapping[str, str]) -> Any:
    """The function naming the player at a seat: its name (after aliases), with its strategy
    when the name was played by more than one strategy and no alias merged them."""
    strategies: dict[tuple[str, str], set[str]] = defaultdict(set)
    merged = set(aliases.values())
    for result in ended:
        for seat in result.started.seats:
            strategies[(result.started.game, aliases.get(seat.name, seat.name))].add(seat.player)

    def label(game: str, name: str, strategy: str) -> str:
        name = aliases.get(name, name)
        if name in merged or len(strategies[(game, name)]) == 1:
            return name
        return f"{name} ({strategy})"

    return label


def _rate_game(game: str, ended: Sequence[Result], label: Any, anchor: str | None) -> tuple[list[Rating], int, int]:
    """One game's rows, and how many matches it counted and left out."""
    from openskill.models import PlackettLuce  # loaded only when ratings are asked for

    model = PlackettLuce()
    skill: dict[str, Any] = {}
    record: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # matches, wins, draws, losses
    names: dict[str, set[str]] = defaultdict(set)
    strategies: dict[str, set[str]] = defaultdict(set)
    scored: dict[tuple[str, str], float] = defaultdict(float)  # (a, b): a's weighted points against b
    counted = skipped = 0
    for result in ended:
        assert result.outcome is not None
        seats = result.started.seats
        who = [label(game, seat.name, seat.player) for seat in seats]
        places = result.outcome.places
        if len(set(who)) != len(who) or len(places) != len(who):
            skipped += 1  # one player at two seats (an alias), or places not one per seat: no rating can say who won
            continue
        counted += 1
        for player, seat in zip(who, seats, strict=True):
            names[player].add(seat.name)
            strategies[player].add(seat.player)
            skill.setdefault(player, model.rating(name=player))
        teams = model.rate([[skill[p]] for p in who], ranks=[float(p) for p in places])
        for player, team in zip(who, teams, strict=True):
            skill[player] = team[0]
        best = min(places)
        top = [seat for seat, place in enumerate(places) if place == best]
        for seat, player in enumerate(who):
            line = record[player]
            line[0] += 1
            if seat in top:
                line[1 if len(top) == 1 else 2] += 1
            else:
                line[3] += 1
        weight = pair_weight(len(who))
        for a in range(len(who)):
            for b in range(a + 1, len(who)):
                points = 1.0 if places[a] < places[b] else 0.5 if places[a] == places[b] else 0.0
                scored[(who[a], who[b])] += weight * points
                scored[(who[b], who[a])] += weight * (1.0 - points)
    elo = _bradley_terry(sorted(skill), scored, {p: record[p][0] for p in skill}, anchor)
    rows = []
    for player, rating in skill.items():
        matches, wins, draws, losses = record[player]
        fitted = elo.get(player)
        rows.append(
            Rating(
                game=game,
                player=player,
                names=tuple(sorted(names[player])),
                strategies=tuple(sorted(strategies[player])),
                matches=matches,
                wins=wins,
                draws=draws,
                losses=losses,
                mu=round(rating.mu, 4),
                sigma=round(rating.sigma, 4),
                conservative=round(rating.mu - 3 * rating.sigma, 4),
                provisional=rating.sigma > PROVISIONAL_SIGMA,
                elo=None if fitted is None else round(fitted[0], 2),
                elo_low=None if fitted is None else round(fitted[1], 2),
                elo_high=None if fitted is None else round(fitted[2], 2),
                anchor=None if fitted is None else fitted[3],
            )
        )
    rows.sort(key=lambda r: (-r.conservative, r.player))
    return rows, counted, skipped


def _bradley_terry(
    players: Sequence[str], scored: Mapping[tuple[str, str], float], matches: Mapping[str, int], anchor: str | None
) -> dict[str, tuple[float, float, float, str]]:
    """Each player's (Elo, low, high, anchor) by Bradley-Terry maximum likelihood, group by group
    of players connected by their games; nothing for a player that met nobody."""
    import choix  # loaded only when ratings are asked for
    import numpy as np

    met: dict[str, set[str]] = defaultdict(set)
    for a, b in scored:
        met[a].add(b)
    fitted: dict[str, tuple[float, float, float, str]] = {}
    seen: set[str] = set()
    for start in players:
        if start in seen or not met[start]:
            continue
        group, frontier = [], [start]
        seen.add(start)
        while frontier:
            player = frontier.pop()
            group.append(player)
            for other in sorted(met[player] - seen):
                seen.add(other)
                frontier.append(other)
        group.sort()
        index = {p: i for i, p in enumerate(group)}
        # Weighted wins (a tie half a win each way); every pair that met adds one tie more (the prior).
        wins = np.zeros((len(group), len(group)))
        games: dict[tuple[int, int], float] = {}
        for (a, b), points in sorted(scored.items()):
            if a in index:
                wins[index[a], index[b]] = points + 0.5
                if index[a] < index[b]:
                    games[(index[a], index[b])] = points + scored[(b, a)] + 1.0
        strength = np.asarray(choix.ilsr_pairwise_dense(wins, alpha=0.0, max_iter=10_000, tol=1e-10))
        here = anchor if anchor in index else min(group, key=lambda p: (-matches.get(p, 0), p))
        # The covariance of the strengths relative to the anchor: the inverse of the Fisher
        # information with the anchor's row and column removed.
        information = np.zeros((len(group), len(group)))
        for (i, j), n in games.items():
            p = 1 / (1 + math.exp(strength[j] - strength[i]))
            w = n * p * (1 - p)
            information[i, i] += w
            information[j, j] += w
            information[i, j] -= w
            information[j, i] -= w
        keep = [i for i in range(len(group)) if i != index[here]]
        variance = np.zeros(len(group))
        if keep:
            covariance = np.linalg.inv(information[np.ix_(keep, keep)])
            variance[keep] = np.diag(covariance)
        for player, i in index.items():
            elo = (strength[i] - strength[index[here]]) * _ELO_PER_NAT
            half = _Z95 * math.sqrt(max(variance[i], 0.0)) * _ELO_PER_NAT
            fitted[player] = (float(elo), float(elo - half), float(elo + half), here)
    return fitted


class RatingCache:
    """Rating tables kept by the head of the log they were computed at and the question asked.

    The log below a head never changes (events are only appended), so a table computed at a head
    answers that question for as long as the head is the log's, and its tag (`tag`) says so to
    an HTTP cache. Keeps the `size` tables last asked for; safe to share between threads."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._tables: OrderedDict[tuple[Any, ...], RatingTable] = OrderedDict()
        self._lock = threading.Lock()
        self.computed = 0  # tables computed, not found kept

    @staticmethod
    def question(
        game: str | None = None,
        *,
        since: datetime | None = None,
        series: str | None = None,
        players: Sequence[str] = (),
        aliases: Mapping[str, str] | None = None,
        anchor: str | None = None,
    ) -> tuple[Any, ...]:
        """What a table answers, as a key: its game and filters, in one canonical form."""
        when = None if since is None else since.isoformat()
        return (game, when, series, tuple(players), tuple(sorted((aliases or {}).items())), anchor)

    def table(self, store: Any, head: LogHead, question: tuple[Any, ...]) -> RatingTable:
        """The table `question` has at `head` (which must be a head of `store`'s log), computed
        only if it is not kept.

        Raises:
            UsageError: as `rating_table`.
            DecodeError: as `rating_table`.
        """
        key = (head.leaf, head.hash, question)
        with self._lock:
            kept = self._tables.get(key)
            if kept is not None:
                self._tables.move_to_end(key)
                return kept
        game, since, series, players, aliases, anchor = question
        table = rating_table(
            store,
            game,
            since=None if since is None else datetime.fromisoformat(since),
            series=series,
            players=players,
            aliases=dict(aliases),
            anchor=anchor,
            head=head.leaf,
        )
        with self._lock:
            self.computed += 1
            self._tables[key] = table
            self._tables.move_to_end(key)
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)
        return table


def ratings_frame(table: RatingTable) -> Any:
    """A rating table as an Arrow table, one row per player, best first."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("game", pa.string()),
            ("player", pa.string()),
            ("names", pa.list_(pa.string())),
            ("strategies", pa.list_(pa.string())),
            *((column, pa.int64()) for column in ("matches", "wins", "draws", "losses")),
            *((column, pa.float64()) for column in ("mu", "sigma", "conservative")),
            ("provisional", pa.bool_()),
            *((column, pa.float64()) for column in ("elo", "elo_low", "elo_high")),
            ("anchor", pa.string()),
        ]
    )
    return pa.Table.from_pylist([msgspec.to_builtins(r) for r in table.ratings], schema=schema)

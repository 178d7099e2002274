"""A duel's report, computed again from the log: its pairs, the score, Elo, LOS and the verdict.

A pair counts once every game of it has ended by the rules (an abandoned game leaves it
incomplete, and a resumed duel plays the missing game again). Pairs are taken in the order the
log committed them (the end of their last game), and scored as sets (`replay.sprt`): the first
player's mean score over the pair's games, a game scoring what it won against each other seat
(1 a win, ½ a tie). Under a sequential test the verdict is the first pair at which the LLR crosses
a bound; pairs that ended after it (in flight when the test decided) are counted apart, so the
verdict and its statistics are the same however often the report is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.events import IllegalAction, Sprt, UnknownMatch, UsageError
from matchlog.store.prefixes import unique_prefix

from .pairs import DuelGame, PairSeed, chance_break, start_break
from .results import Result, results
from .sprt import Estimate, estimate, llr

__all__ = [
    "LUCK_NOTE",
    "DuelPair",
    "DuelReport",
    "OpenPair",
    "duel_report",
    "game_score",
    "held_to_the_rule",
    "report_of",
    "resolve_duel",
    "with_luck",
]

SPECTATOR = -1  # a reader who sees what every seat was shown (api.log.SPECTATOR)

#: What the report says of luck while no game of the duel has been analysed.
LUCK_NOTE = (
    "no game of this duel is analysed: `matchlog analyse MATCH ...` (GNU Backgammon for backgammon) "
    "gives each game's luck and the luck-adjusted result; duplicate pairs cancel the luck of the chance meanwhile"
)


class DuelPair(msgspec.Struct, frozen=True, kw_only=True):
    """One complete pair: its number, its games' matches (by place in the pair) and what the
    first player scored in each."""

    pair: int
    matches: tuple[str, ...]
    scores: tuple[float, ...]


class OpenPair(msgspec.Struct, frozen=True, kw_only=True):
    """A pair begun but not complete: the games it misses (abandoned, or never ended), and its
    chance: the commitment its games made and the seed one of them revealed (hex), if any."""

    pair: int
    missing: tuple[int, ...]
    commitment: str | None
    seed: str | None
    scores: dict[int, float] = {}  # what the first player scored in the games it has


class DuelReport(msgspec.Struct, frozen=True, kw_only=True):
    """A duel as its log says: who played, how, the pairs, the statistics and the verdict.

    `counts[i]` are the pairs in which the first player scored i / (len - 1) of the points (with
    two seats, the pentanomial counts: pairs scoring 0, ½, 1, 1½ and 2 points). `head` is the
    last leaf of the log the report read."""

    duel_id: str
    game: str
    players: tuple[str, str]
    strategies: tuple[str, str]
    seats: int
    duplicate: bool
    sprt: Sprt | None
    pairs_planned: int
    pairs: int
    games: int
    counts: tuple[int, ...]
    draw_ratio: float
    estimate: Estimate | None
    llr: float | None
    lower: float | None
    upper: float | None
    verdict: str
    decided_at: int | None
    after_decision: int
    incomplete: int
    head: int
    last_pair: int
    luck: str = LUCK_NOTE
    #: The first player's mean luck-adjusted result a game (+1 a win, -1 a loss, less its luck plus
    #: the other's), over `luck_games` games of complete pairs whose analysis a spectator may read.
    luck_adjusted: float | None = None
    luck_games: int = 0
    pair_list: tuple[DuelPair, ...] = ()
    open_pairs: tuple[OpenPair, ...] = ()
    #: The game's options, every game of the duel played under them (its first game fixes them).
    options: dict[str, Any] = msgspec.field(default_factory=dict)


def game_score(result: Result, seat: int) -> float:
    """What the player at `seat` scored in an ended match: the share of the other seats it placed
    above, a tie counting half."""
    assert result.outcome is not None
    places = result.outcome.places
    others = [place for other, place in enumerate(places) if other != seat]
    mine = places[seat]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def duel_report(store: Any, duel_id: str) -> DuelReport:
    """The report of duel `duel_id` (its id, or a unique prefix of it) from the log behind `store`.

    Raises:
        UnknownMatch: no duel of the log has that id or prefix, or more than one has that prefix.
        DecodeError: a stored event does not decode.
        IllegalAction: a game of the duel breaks the rule of its pairs (`held_to_the_rule`).
    """
    head, found = results(store, duel=resolve_duel(store, duel_id))
    if not found:
        raise UnknownMatch(f"no duel {duel_id} in this log")
    return with_luck(store, report_of(found, head))


def resolve_duel(store: Any, duel_id: str) -> str:
    """The full id of a duel given its id or a unique prefix of it, as a match's is taken.

    Raises:
        UnknownMatch: no duel, or more than one, has that prefix.
    """
    query = """SELECT DISTINCT payload ->> '$.duel.id' AS duel FROM events
        WHERE type = 'match.started' AND seq = 0 AND duel LIKE ? ORDER BY duel LIMIT 2"""
    return unique_prefix(duel_id, "duel", "this log", lambda like: store.query(query, [like]))


def with_luck(store: Any, report: DuelReport) -> DuelReport:
    """`report` with the luck-adjusted result of its first player, from the latest analysis of each
    game of its complete pairs, as a spectator may read it (`matchlog analyse`): a two-seat game's
    analysis only, where the analyser measures luck (backgammon's GNU Backgammon)."""
    if report.seats != 2 or not report.pair_list:
        return report
    from .annotations import match_analysis

    ids = [UUID(str(match)) for pair in report.pair_list for match in pair.matches]
    stored: dict[UUID, list[Any]] = {}
    for note in store.annotations(ids):
        stored.setdefault(note.match_id, []).append(note)
    adjusted, analysers = [], set()
    for pair in report.pair_list:
        for seat, match in enumerate(pair.matches):  # game g of a pair seats the first player at seat g
            match_id = UUID(str(match))
            if match_id not in stored:
                continue
            analysis = match_analysis(stored[match_id], store.match(match_id), SPECTATOR)
            mine = [s for s in analysis.summaries if s.seat == seat and s.luck_adjusted is not None]
            if mine:
                adjusted.append(mine[0].luck_adjusted)
                analysers.add(mine[0].analyser)
    if not adjusted:
        return report
    mean = sum(adjusted) / len(adjusted)
    said = (
        f"luck-adjusted result of {report.players[0]}: {mean:+.3f} a game over {len(adjusted)} analysed "
        f"game{'s' if len(adjusted) != 1 else ''} of {report.games} ({', '.join(sorted(analysers))})"
    )
    return msgspec.structs.replace(report, luck=said, luck_adjusted=mean, luck_games=len(adjusted))


def held_to_the_rule(found: Sequence[Result]) -> Result:
    """The duel's first game (the first whose start the log committed), once every game of `found`
    keeps the rule of a duel's pairs (`replay.pairs`), as the clerk and `audit` hold them to it.

    Raises:
        IllegalAction: the rule a game breaks (its code: usage.duel or usage.sprt for a tag no duel
            could have, duel.* for a game that is not its pair's), naming the game: no report is
            made of games that are not a duel's.
    """
    games = sorted(found, key=lambda r: (r.started_leaf, r.match_id))
    firsts: dict[int, DuelGame] = {}
    seeds: dict[int, PairSeed] = {}
    duel_first: DuelGame | None = None
    for result in games:
        started, duel = result.started, result.started.duel
        assert duel is not None
        try:
            duel.check(len(started.seats))
        except UsageError as error:
            raise IllegalAction(error.code, f"match {result.match_id}: {error.message}; `audit` names it") from None
        broken = start_break(result.match_id, started, duel_first, firsts.get(duel.pair))
        if broken is None:
            # A game that ended by the rules drew whatever chance its game has.
            drew = result.outcome is not None and result.outcome.result != "abandoned"
            duplicate = (duel_first.started if duel_first is not None else started).duel.duplicate  # type: ignore[union-attr]
            broken = chance_break(result.match_id, started, duplicate, result.commitment, drew, seeds.get(duel.pair))
        if broken is not None:
            raise IllegalAction(broken.rule, f"{broken.message}; `audit` names it")
        game = DuelGame(match_id=result.match_id, started=started)
        duel_first = duel_first or game
        firsts.setdefault(duel.pair, game)
        if result.commitment is not None:
            seeds.setdefault(duel.pair, PairSeed(match_id=result.match_id, commitment=result.commitment))
    assert duel_first is not None
    return next(r for r in games if r.match_id == duel_first.match_id)


def report_of(found: Sequence[Result], head: int) -> DuelReport:
    """The report of a duel's matches (as `results` gives them: ended ones in commit order).

    Raises:
        IllegalAction: a game breaks the rule of a duel's pairs (`held_to_the_rule`).
    """
    first = held_to_the_rule(found)
    tag = first.started.duel
    assert tag is not None
    games = tag.games
    # Game g of a pair seats the first player at seat g: the roster rotated g places.
    a = first.started.seats[tag.game]
    b = first.started.seats[(tag.game + 1) % games]
    slots: dict[int, dict[int, Result]] = {}
    order: list[int] = []  # pairs in the order they became complete
    for result in found:  # ended ones first, in commit order
        duel = result.started.duel
        if duel is None or result.outcome is None or result.outcome.result == "abandoned":
            continue
        games_of_pair = slots.setdefault(duel.pair, {})
        if duel.game in games_of_pair:
            continue  # a game played twice: the first to end counts
        games_of_pair[duel.game] = result
        if len(games_of_pair) == games:
            order.append(duel.pair)
    begun = {r.started.duel.pair for r in found if r.started.duel is not None}  # type: ignore[union-attr]
    grid = 2 * games * (games - 1)  # a set's score is a multiple of 1 / grid
    counts = [0] * (grid + 1)
    sprt = tag.sprt
    pairs: list[DuelPair] = []
    decided_at: int | None = None
    verdict_value: float | None = None
    draws = played = 0
    for number in order:
        if decided_at is not None:
            break
        by_game = slots[number]
        scores = tuple(game_score(by_game[g], g) for g in range(games))
        pairs.append(DuelPair(pair=number, matches=tuple(by_game[g].match_id for g in range(games)), scores=scores))
        counts[round(sum(scores) / games * grid)] += 1
        played += games
        draws += sum(1 for s in scores if s == 0.5)
        if sprt is not None:
            verdict_value = llr(counts, sprt.elo0, sprt.elo1, model=sprt.model, games_per_set=games)
            if sprt.verdict(verdict_value) is not None:
                decided_at = len(pairs)
    if sprt is not None and pairs and verdict_value is None:
        verdict_value = llr(counts, sprt.elo0, sprt.elo1, model=sprt.model, games_per_set=games)
    verdict = (sprt.verdict(verdict_value) if sprt is not None and verdict_value is not None else None) or (
        f"undecided after {len(pairs)} pair{'s' if len(pairs) != 1 else ''}"
    )
    return DuelReport(
        duel_id=tag.id,
        game=first.started.game,
        players=(a.name, b.name),
        strategies=(a.player, b.player),
        seats=games,
        duplicate=tag.duplicate,
        sprt=sprt,
        pairs_planned=tag.pairs,
        pairs=len(pairs),
        games=played,
        counts=tuple(counts),
        draw_ratio=draws / played if played else 0.0,
        estimate=estimate(counts, games_per_set=games) if pairs else None,
        llr=verdict_value,
        lower=None if sprt is None else sprt.lower,
        upper=None if sprt is None else sprt.upper,
        verdict=verdict,
        decided_at=decided_at,
        after_decision=len(order) - len(pairs),
        incomplete=len(begun) - len(order),
        head=head,
        last_pair=max(begun),
        pair_list=tuple(pairs),
        open_pairs=_open_pairs(found, slots, games),
        options=dict(first.started.options),
    )


def _open_pairs(found: Sequence[Result], slots: dict[int, dict[int, Result]], games: int) -> tuple[OpenPair, ...]:
    """The pairs begun but not complete, with what is known of their chance."""
    of_pair: dict[int, list[Result]] = {}
    for result in found:
        if result.started.duel is not None:
            of_pair.setdefault(result.started.duel.pair, []).append(result)
    opened = []
    for pair in sorted(of_pair):
        have = slots.get(pair, {})
        if len(have) == games:
            continue
        played = of_pair[pair]
        opened.append(
            OpenPair(
                pair=pair,
                missing=tuple(g for g in range(games) if g not in have),
                commitment=next((r.commitment for r in played if r.commitment), None),
                seed=next((r.seed for r in played if r.seed), None),
                scores={g: game_score(result, g) for g, result in have.items()},
            )
        )
    return tuple(opened)

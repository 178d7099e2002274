"""What a duel's pair is: the one rule its games are held to, and the audit that proves a duplicate
pair drew the same chance.

A duel's report and its verdict are computed from its games' tags (`events.Duel`), so the rule
below is read in three places, which therefore cannot disagree: the clerk before it writes a game
(`replay.clerk`, the one write path: its judge refuses, nothing is written), `audit` after
(`check_pair`: what was written around the clerk is named), and the report (`replay.duels`: a
duel whose games break it is an error with the rule's code, never a verdict).

- The tag itself is one a duel at that table could give (`events.Duel.check`, in every judge).
- The duel's first game (the first whose start the log committed) fixes the duel: the game, the
  number of seats and the options, its two players (the roster: its seats turned back by its place
  in its pair), its test, and whether it is duplicate. Every later game of the duel has the same
  (`duel.table_differs`, `duel.test_differs`), and seats the roster turned by its own place: the
  first player at seat g in game g (`duel.seats_not_rotated`).
- The pair's first game fixes the pair: every later game of the pair starts from the same position
  (`duel.table_differs`) and, in a duplicate duel, its first chance segment commits to the seed the
  pair's first game committed to (to none where that one committed to none), whatever its own tag
  says (`duel.commitment_differs`).
- `audit` then proves that wherever two games of a duplicate pair reached the same draw (the same
  chance decision, with the same possible outcomes, after the same draws before it) they drew the
  same outcome (`duel.chance_differs`). Once two games meet different chance decisions their
  streams of draws part, and nothing later is compared.

A finding names the duel, the pair, both games and the seq where they part.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from matchlog.engines import CHANCE
from matchlog.events import (
    ChanceCommitted,
    Event,
    MatchEnded,
    MatchlogError,
    MatchResumed,
    MatchStarted,
    Record,
    UsageError,
    decode,
    encode,
)

__all__ = [
    "DuelGame",
    "PairBreak",
    "PairChance",
    "PairSeed",
    "chance_break",
    "check_pair",
    "duel_games",
    "options_text",
    "start_break",
]


class DuelGame(msgspec.Struct, frozen=True, kw_only=True):
    """A game of a duel as the rule reads it: its match and its start."""

    match_id: str
    started: MatchStarted


class PairSeed(msgspec.Struct, frozen=True, kw_only=True):
    """A duplicate pair's chance: the commitment of the first game of the pair that made one."""

    match_id: str
    commitment: str


class PairBreak(msgspec.Struct, frozen=True, kw_only=True):
    """How a game breaks its duel's rule: the rule (a stable code), what is wrong, and the game it
    was compared with."""

    rule: str
    message: str
    first_game: str


def _roster(first: MatchStarted) -> list[tuple[str, str]]:
    """The duel's players (name and player) in roster order: game g of a pair seats roster player
    (i - g) mod K at seat i, so the first game's seats turned back by its place."""
    assert first.duel is not None
    seats, place = first.seats, first.duel.game
    return [(seats[(j + place) % len(seats)].name, seats[(j + place) % len(seats)].player) for j in range(len(seats))]


def _where(started: MatchStarted, match_id: str) -> str:
    duel = started.duel
    assert duel is not None
    return f"pair {duel.pair} of duel {duel.id}: game {duel.game} ({match_id})"


def options_text(options: Mapping[str, Any]) -> str:
    """A game's options as the command line gives them (KEY=VALUE, by key); "" for none."""
    return ", ".join(f"{key}={value}" for key, value in sorted(options.items()))


def start_break(
    match_id: str, started: MatchStarted, duel_first: DuelGame | None, pair_first: DuelGame | None
) -> PairBreak | None:
    """How the start of a duel's game breaks what the duel's first game (`duel_first`: None when it
    is that game) and its pair's first game (`pair_first`) fixed, or None."""
    duel = started.duel
    assert duel is not None
    where = _where(started, match_id)
    if duel_first is not None:
        first, tag = duel_first.started, duel_first.started.duel
        assert tag is not None
        if (started.game, len(started.seats)) != (first.game, len(first.seats)):
            return PairBreak(
                rule="duel.table_differs",
                message=f"{where} is {started.game} at {len(started.seats)} seats, not the duel's "
                f"{first.game} at {len(first.seats)} seats (its first game {duel_first.match_id})",
                first_game=duel_first.match_id,
            )
        if started.options != first.options:  # (the position may change from pair to pair)
            return PairBreak(
                rule="duel.table_differs",
                message=f"{where} is played under other options ({options_text(started.options) or 'none'}) than the "
                f"duel's ({options_text(first.options) or 'none'}, its first game {duel_first.match_id})",
                first_game=duel_first.match_id,
            )
        if (duel.sprt, duel.duplicate) != (tag.sprt, tag.duplicate):
            return PairBreak(
                rule="duel.test_differs",
                message=f"{where} runs {_test(duel.sprt, duel.duplicate)}, but the duel runs "
                f"{_test(tag.sprt, tag.duplicate)} (its first game {duel_first.match_id})",
                first_game=duel_first.match_id,
            )
        roster = _roster(first)
        expected = [roster[(i - duel.game) % len(roster)] for i in range(len(roster))]
        seated = [(seat.name, seat.player) for seat in started.seats]
        if seated != expected:
            return PairBreak(
                rule="duel.seats_not_rotated",
                message=f"{where} seats {_seating(seated)}, but game {duel.game} of the duel seats "
                f"{_seating(expected)}, the first player at seat {duel.game} (the duel's first game "
                f"{duel_first.match_id})",
                first_game=duel_first.match_id,
            )
    if pair_first is not None and (started.options, started.position) != (
        pair_first.started.options,
        pair_first.started.position,
    ):
        return PairBreak(
            rule="duel.table_differs",
            message=f"{where} starts under other options or from another position than the pair's first game "
            f"{pair_first.match_id}",
            first_game=pair_first.match_id,
        )
    return None


def chance_break(
    match_id: str, started: MatchStarted, duplicate: bool, mine: str | None, drew: bool, seed: PairSeed | None
) -> PairBreak | None:
    """How a game of a duel pair breaks the pair's chance, or None: in a duplicate duel (as the duel's
    first game says, whatever this game's own tag says), once a game of the pair committed to a seed
    (`seed`), every other game that draws chance (`drew`) first commits to that seed (`mine`: the
    commitment its first segment made, None for none)."""
    if not duplicate or seed is None or mine == seed.commitment or (mine is None and not drew):
        return None
    return PairBreak(
        rule="duel.commitment_differs",
        message=f"{_where(started, match_id)} committed to {'another seed' if mine else 'no seed'} than the "
        f"pair's game {seed.match_id} did: not one chance for the pair",
        first_game=seed.match_id,
    )


def _test(sprt: Any, duplicate: bool) -> str:
    chance = "duplicate chance" if duplicate else "fresh chance"
    if sprt is None:
        return f"a fixed number of pairs on {chance}"
    return f"SPRT({sprt.elo0:g}, {sprt.elo1:g}, α={sprt.alpha:g}, β={sprt.beta:g}, {sprt.model}) on {chance}"


def _seating(seated: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{name} ({player})" for name, player in seated)


class PairChance:
    """What a judge holds a new game of a duplicate pair to (`Judge.pair_chance`, set by the clerk):
    what it records right after its start (seq 1) is the commitment to the pair's seed, or its end."""

    __slots__ = ("duplicate", "match_id", "seed", "started")

    def __init__(self, match_id: str, started: MatchStarted, duplicate: bool, seed: PairSeed | None) -> None:
        self.match_id, self.started, self.duplicate, self.seed = match_id, started, duplicate, seed

    def judge(self, event: Event, find: Callable[..., None]) -> None:
        """Add to `find` how a game's event at seq 1 breaks the pair's chance."""
        mine = event.commitment if isinstance(event, ChanceCommitted) else None
        drew = not isinstance(event, MatchEnded)  # (going on without a commitment: its chance is its own)
        broken = chance_break(self.match_id, self.started, self.duplicate, mine, drew, self.seed)
        if broken is not None:
            find(broken.rule, broken.message, first_game=broken.first_game)


# -- the log's games of a duel -------------------------------------------------------------------

# A start is a duel's game when its tag says so (`->> '$.duel.id'`). Reading the JSON of every start
# of a large log costs a second a game (29M events, 106k starts); the tag's text as the log stores
# it (canonical JSON: the log holds no other, and `verify --deep` names an older log's) is found
# first by a plain search of the bytes, and only what holds it is read as JSON.
_DUEL_STARTS = """
    SELECT match_id, leaf, payload, version FROM events
    WHERE type = 'match.started' AND seq = 0 AND contains(payload, $1)
      AND payload ->> '$.duel.id' = $2 AND match_id::VARCHAR <> $3"""
_STARTS = f"""
    WITH duel AS ({_DUEL_STARTS})
    SELECT match_id::VARCHAR, payload ->> '$.duel.pair', leaf, payload, version FROM duel
    WHERE payload ->> '$.duel.pair' = $4 OR leaf = (SELECT min(leaf) FROM duel)"""
_COMMITMENTS = """
    SELECT match_id::VARCHAR, payload ->> '$.commitment', leaf FROM events
    WHERE seq = 1 AND type = 'match.chance_committed' AND match_id IN ({ids})"""


def duel_games(
    store: Any,
    duel_id: str,
    pair: int,
    *,
    besides: str = "",
    started_before: int | None = None,
    committed_before: int | None = None,
) -> tuple[DuelGame | None, DuelGame | None, PairSeed | None]:
    """What the log behind `store` holds of duel `duel_id` for a game of pair `pair` (other than
    match `besides`): the duel's first game and the pair's first game, by the order the log
    committed their starts (before leaf `started_before`, when given), and the pair's seed: the
    commitment of its game that committed first right after its start (before leaf
    `committed_before`, when given); each None where there is none.

    Raises:
        DecodeError: a start does not decode (see `matchlog verify`).
    """
    tagged = '"duel":{"id":' + msgspec.json.encode(duel_id).decode() + ","  # (Duel's first field)
    rows = store.query(_STARTS, [tagged, duel_id, besides, str(pair)])
    before = started_before if started_before is not None else float("inf")
    earlier = sorted((leaf, match_id, of_pair, payload, version) for match_id, of_pair, leaf, payload, version in rows)
    games = {}
    for leaf, match_id, of_pair, payload, version in earlier:
        started = decode(payload, tag="match.started", version=version)
        assert isinstance(started, MatchStarted)
        games[match_id] = (leaf, of_pair == str(pair), DuelGame(match_id=match_id, started=started))
    duel_first = next((game for leaf, _, game in games.values() if leaf < before), None)
    pair_first = next((game for leaf, ours, game in games.values() if ours and leaf < before), None)
    ours = [match_id for match_id, (_, of_pair, _) in games.items() if of_pair]
    seed = None
    if ours:
        placeholders = ", ".join("?" * len(ours))
        committed = sorted(
            (leaf, match_id, commitment)
            for match_id, commitment, leaf in store.query(_COMMITMENTS.format(ids=placeholders), ours)
            if committed_before is None or leaf < committed_before
        )
        if committed:
            seed = PairSeed(match_id=committed[0][1], commitment=committed[0][2])
    return duel_first, pair_first, seed


# -- audit ---------------------------------------------------------------------------------------


def _draws(records: Sequence[Record]) -> list[tuple[int, Any, tuple[bytes, ...]]]:
    """Each chance event of the match's first chance segment, with its seq and its situation
    (the outcomes chance could have recorded there), as far as the match folds."""
    from .fold import effective, engine_of

    engine = engine_of(records)
    history = effective(records)
    state = engine.start(history[0].event)  # type: ignore[arg-type]
    draws = []
    for record in history[1:]:
        if isinstance(record.event, MatchResumed):
            break  # a new segment, a new seed: no longer the pair's chance
        turn = engine.to_act(state)
        if turn is not None and turn.seat == CHANCE:
            draws.append((record.seq, record.event, tuple(encode(e) for e in engine.chance_outcomes(state))))
        try:
            state = engine.apply(state, record.event)
        except Exception:  # apply trusts its events: one the rules refuse ends the walk (audit names it)
            break
    return draws


def check_pair(store: Any, records: Sequence[Record], report: Any) -> None:
    """Add to `report` (a MatchAudit) how this game of a duel breaks what the duel's and its pair's
    first games fixed (`start_break`), the pair's chance (`chance_break`), and what it drew otherwise
    than the game of its duplicate pair that first committed; nothing for a match that is not a
    duel's game."""
    started = records[0].event if records else None
    if not isinstance(started, MatchStarted) or started.duel is None:
        return
    duel = started.duel
    from .judge import AuditFinding

    def find(seq: int | None, rule: str, message: str, **evidence: Any) -> None:
        report.findings.append(
            AuditFinding(match_id=report.match_id, seq=seq, rule=rule, message=message, evidence=evidence)
        )

    try:
        duel.check(len(started.seats))
    except UsageError:
        return  # the judge of its start names it (audit.bad_start)
    where = _where(started, report.match_id)
    mine = records[1].event.commitment if len(records) > 1 and isinstance(records[1].event, ChanceCommitted) else None
    leaves = dict(store.query("SELECT seq, leaf FROM events WHERE match_id = ? AND seq IN (0, 1)", [report.match_id]))
    try:
        # (the seed a commitment of this game is compared with came before it; a game without one
        # is held to any of the pair's)
        duel_first, pair_first, seed = duel_games(
            store,
            duel.id,
            duel.pair,
            besides=report.match_id,
            started_before=leaves.get(0),
            committed_before=leaves.get(1) if mine else None,
        )
    except MatchlogError as error:
        find(None, "duel.partner_unreadable", f"{where}: the duel's first games cannot be read: {error}")
        return
    broken = start_break(report.match_id, started, duel_first, pair_first)
    if broken is not None:
        find(0, broken.rule, broken.message, pair=duel.pair, first_game=broken.first_game)
    duplicate = (duel_first.started if duel_first is not None else started).duel.duplicate  # type: ignore[union-attr]
    try:
        own = _draws(records)
    except MatchlogError:
        return  # a game that does not fold: the per-match audit says why
    broken = chance_break(report.match_id, started, duplicate, mine, bool(own), seed)
    if broken is not None:
        find(
            1 if mine else None,
            broken.rule,
            broken.message,
            pair=duel.pair,
            first_game=broken.first_game,
            commitment=mine,
            first_commitment=seed.commitment if seed is not None else None,
        )
    if not duplicate or seed is None:
        return
    try:
        reference = store.read(seed.match_id)
        other = _draws(reference)
    except MatchlogError as error:
        find(
            None,
            "duel.partner_unreadable",
            f"{where}: the pair's game {seed.match_id} cannot be read: {error}",
        )
        return
    first = seed.match_id
    for (seq, event, situation), (their_seq, their_event, their_situation) in zip(own, other, strict=False):
        if type(event) is not type(their_event) or situation != their_situation:
            break  # different decisions of chance: the two streams part here
        if encode(event) != encode(their_event):
            find(
                seq,
                "duel.chance_differs",
                f"{where} drew {encode(event).decode()} at seq {seq} where the pair's game {first} drew "
                f"{encode(their_event).decode()} at seq {their_seq}: the pair did not share its luck",
                pair=duel.pair,
                first_game=first,
                first_seq=their_seq,
            )
            break

"""Twin matches: the machinery of the views property test, for every test that checks that what
a reader gets depends on nothing it may not know.

`played(game, seed)` records one random match of any game (Porrinha with a liar whose hands are
rejected and counted as 0, Da Vinci Code with players who place their jokers first).
`twins(records, seat, rng)` yields, for a reader (`seat`, None: a spectator), twin matches that
differ from `records` only in what that reader may not know then, each with the seq up to which
they may be compared: another seat's hand, a rejected hand for a hand of 0, one hidden tile for
another, a joker for a numbered tile; each also recorded at other times where that reader does not
see an event whole (`kit.retimed`: a hidden step that took longer or shorter).
`stored(store, records)` writes a prefix into a log as its referee would have (the same ids and
times), ended if it was still running, so that every aggregate (figures, statistics, frames,
catalogue rows) exists for it.

A test then builds what the reader gets from the match and from each twin and asserts they are the
same: `test_views.py` for every output of a seat, and for the aggregates of a log; the service's
tests for every endpoint, anonymous and per seat. A new output (a dataset, an annotation) adds its
own comparison over the same twins.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import GAMES
from matchlog.engines.davinci import JOKERS, colour
from matchlog.events import (
    AnswerRejected,
    Event,
    HandChosen,
    JokerPlaced,
    MatchEnded,
    Outcome,
    Record,
    Seat,
    TileDrawn,
    TileSorted,
    TilesShuffled,
    draft,
)
from matchlog.referee import MemoryRecorder, make_player, play_match, run_knockout
from matchlog.referee.davinci import RandomPlayer as DavinciRandom
from matchlog.referee.porrinha import RandomPlayer as PorrinhaRandom
from matchlog.replay import audit_records, fold, timeline
from matchlog.store import Store
from matchlog.testing.kit import retimed

__all__ = ["HIDDEN_GAMES", "Twin", "played", "stored", "twins"]

#: The games with something to hide, which have twins.
HIDDEN_GAMES = sorted(name for name, engine in GAMES.items() if engine.spec.hidden)


class Liar(PorrinhaRandom):
    """A Porrinha player whose hand is 99 (rejected, counted as 0) about a third of the time."""

    def hand(self, table: Any) -> int:
        return 99 if self.rng.random() < 0.35 else super().hand(table)


class JokerFirst(DavinciRandom):
    """A Da Vinci Code player that puts a joker first in its row, where a low tile would sort."""

    def place_joker(self, view: Any) -> int:
        return 0


def played(game: str, seed: int) -> list[Record]:
    """The records of one random match of `game`."""
    rng = random.Random(seed)
    if game == "knockout":
        seats = [Seat(f"p{i}", "random") for i in range(3)]
        with Store() as store:
            players = [make_player("fish", "random", random.Random(rng.random())) for _ in seats]
            result = run_knockout(
                "fish", seats, players, options={"rows": 3, "columns": 4}, store=store, seed=seed, timeout=None
            )
            return store.read(result.tournament_id)
    if game == "porrinha":
        players = [Liar(random.Random(seed)), *(PorrinhaRandom(random.Random(seed + i)) for i in (1, 2))]
        options: dict[str, Any] = {"chopsticks": 2, "policy": "lenient" if seed % 3 else "strict"}
    elif game == "davinci":
        count = 2 + seed % 2
        players = [JokerFirst(random.Random(seed + i)) for i in range(count)]
        options = {"jokers": seed % 4 != 3}
    else:
        count = GAMES[game].spec.min_players
        players = [make_player(game, "random", random.Random(seed + i)) for i in range(count)]
        options = {"rows": 3, "columns": 4} if game == "fish" else {}
    seats = tuple(Seat(f"p{i}", "random") for i in range(len(players)))
    recorder = MemoryRecorder()
    result = play_match(game, seats, players, options=options, recorder=recorder, seed=seed, timeout=None)
    return recorder.records(result.match_id)


def replaced(records: Sequence[Record], changes: dict[int, Event]) -> list[Record]:
    return [
        msgspec.structs.replace(r, event=changes[r.seq], actor=changes[r.seq].actor) if r.seq in changes else r
        for r in records
    ]


Twin = tuple[list[Record], int]  # the twin's records, and the first seq at which the seat could tell


def porrinha_twins(records: Sequence[Record], seat: int | None) -> Iterator[Twin]:
    """Another seat's hand changed before its round settles: another number, or a rejected hand
    (lenient: it counts as 0) for a hand of 0 and the other way round."""
    engine = GAMES["porrinha"]
    lenient = records[0].event.options.get("policy", "lenient") == "lenient"  # type: ignore[attr-defined]
    state = engine.start(records[0].event)  # type: ignore[arg-type]
    round_events: list[tuple[Record, Any]] = []
    for record in records[1:]:
        after = engine.apply(state, record.event)
        event = record.event
        if isinstance(event, HandChosen | AnswerRejected) and getattr(event, "decision", "hand") == "hand":
            round_events.append((record, state))
        if after.round > state.round or record is records[-1]:
            settled = record.seq if after.round > state.round else len(records)
            for hand, before in round_events:
                owner = hand.event.seat  # type: ignore[attr-defined]
                if owner == seat or owner in before.removed:
                    continue
                chopsticks = before.chopsticks[owner]
                others: list[Event] = []
                if isinstance(hand.event, HandChosen):
                    if chopsticks:
                        others.append(HandChosen(seat=owner, hand=(hand.event.hand + 1) % (chopsticks + 1)))
                    if lenient and hand.event.hand == 0:
                        message = f"hand 99 is not between 0 and the {chopsticks} chopsticks of seat {owner}"
                        others.append(AnswerRejected(seat=owner, decision="hand", answer="99",
                                                     code="porrinha.hand_out_of_range", message=message))  # fmt: skip
                elif lenient:
                    others.append(HandChosen(seat=owner, hand=0))
                for other in others:
                    yield replaced(records[:settled], {hand.seq: other}), settled
            round_events = []
        state = after


def davinci_public(state: Any) -> Any:
    """What every seat of a Da Vinci Code table knows: colours and places of every tile, numbers
    of tiles turned up, who waits to place a tile, the guesses and their results, whose turn."""
    rows = tuple(
        tuple((colour(t), state.revealed[o][i], t if state.revealed[o][i] else None) for i, t in enumerate(row))
        for o, row in enumerate(state.rows)
    )
    pending = tuple((owner, colour(tile)) for owner, tile in state.pending)
    return (rows, len(state.pile), pending, state.phase, state.turn, state.drawn, state.last, state.wrong,
            state.out, state.removed, state.ended, state.dealt)  # fmt: skip


def davinci_twins(records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
    """Two tiles of one colour swapped, both hidden from `seat` until it could tell (it draws one,
    one is turned up, or the seed is revealed), where every seat sees the same table throughout: a
    tile in another's row for one in the pile or another's row, a joker for a numbered tile (its
    owner's placing then the referee's)."""
    states = [step.after for step in timeline(records)]
    reveal = next((r.seq for r in records if r.event.tag == "match.chance_revealed"), len(records))

    def known_at(tile: int) -> int:
        """The first seq at which `seat` (None: nobody in particular) could tell this tile."""
        for seq, state in enumerate(states[:reveal]):
            for owner, row in enumerate(state.rows):
                if tile in row and (owner == seat or state.revealed[owner][row.index(tile)]):
                    return seq
            if any(owner == seat and t == tile for owner, t in state.pending):
                return seq
        return reveal

    shuffled = next((r.event.order for r in records if isinstance(r.event, TilesShuffled)), ())
    pairs = [(a, b) for a in shuffled for b in shuffled if a < b and colour(a) == colour(b)]
    rng.shuffle(pairs)
    pairs.sort(key=lambda pair: not ({*pair} & set(JOKERS)))  # jokers first: the case that matters
    found = 0
    for a, b in pairs[:40]:
        until = min(known_at(a), known_at(b))
        if until < 3:
            continue
        swap = {a: b, b: a}
        changes: dict[int, Event] = {}
        state = states[0]
        for record in records[1:until]:
            event = record.event
            if isinstance(event, TilesShuffled):
                changes[record.seq] = TilesShuffled(order=tuple(swap.get(t, t) for t in event.order))
            elif isinstance(event, TileDrawn) and event.tile in swap:
                changes[record.seq] = TileDrawn(seat=event.seat, tile=swap[event.tile])
            elif isinstance(event, JokerPlaced | TileSorted):
                tile = next(t for owner, t in state.pending if owner == event.seat)
                if tile in swap and (tile in JOKERS) != (swap[tile] in JOKERS):
                    kind = TileSorted if isinstance(event, JokerPlaced) else JokerPlaced
                    changes[record.seq] = kind(seat=event.seat, position=event.position)
            state = states[record.seq]
        if not changes:
            continue
        twin = replaced(records[:until], changes)
        try:
            twin_states = [step.after for step in timeline(twin)]
        except Exception:  # the swap makes a table the rules cannot fold: not a twin
            continue
        if [davinci_public(s) for s in twin_states] != [davinci_public(s) for s in states[:until]]:
            continue  # some seat would see a different table
        if audit_records(twin).findings:
            continue  # not a match the referee could have recorded
        found += 1
        yield twin, until
        if found == 3:
            return


def twins(records: Sequence[Record], seat: int | None, rng: random.Random) -> Iterator[Twin]:
    """Twins of `records` for a reader that is `seat` (None: a spectator), each with the first seq
    at which that reader could tell them apart, its hidden steps retimed (see the module
    docstring); none for a game that hides nothing."""
    game = records[0].event.game  # type: ignore[attr-defined]
    found: Iterator[Twin] = iter(())
    if game == "porrinha":
        found = porrinha_twins(records, seat)
    elif game == "davinci":
        found = davinci_twins(records, seat, rng)
    elif game == "dudo":  # the example plugin's, which its package ships for its own tests
        from dudo.twins import twins as dudo_twins

        found = dudo_twins(records, seat, rng)
    for twin, until in found:
        yield retimed(twin, seat, rng), until


def stored(store: Store, records: Sequence[Record], *, match_id: UUID | None = None) -> UUID:
    """Write `records` (a prefix of a match, or a twin) into `store` as their referee did, the same
    ids and times, under `match_id` (default: their own); one still running is then abandoned, a
    microsecond after its last event, so that it has figures, a result and an end like any other."""
    match_id = match_id or records[0].match_id
    drafts = [draft(r.event, event_id=r.event_id, at_us=r.at_us) for r in records]
    if not isinstance(records[-1].event, MatchEnded):
        removed = tuple(sorted(getattr(fold(records), "removed", ())))
        seats = len(records[0].event.seats)  # type: ignore[attr-defined]
        outcome = Outcome(places=(1,) * seats, winners=(), result="abandoned", removed=removed)
        drafts.append(draft(MatchEnded(outcome=outcome, reason="a twin"), at_us=records[-1].at_us + 1))
    store.append(match_id, drafts, 0)
    return match_id

"""A match's decisions as the seats that made them saw them: the rows of a training dataset, and
the steps of the replay environment.

A decision is a record that answers the decision the match awaited from a seat (a hand, a move, a
guess; a rejected answer too, which has no action index). Its row holds what that seat saw then
and nothing else: the state through `engines.views` (the engine's `view`, and its encoding as a
tensor), the legal actions computed from that view, the answer as the seat sees it, and its time
and the time it took as that seat sees them (`engines.views.Clock`: since the last time the seat
was given, so no row tells how long another seat's hidden step took). Its provenance, the event's
chain hash and Merkle leaf, is given only where the seat sees the event whole (its own answers
are): a hash over an event a seat cannot see whole could be searched for the hidden value where
it has few possibilities, so such a row carries none (`seen_whole` is the same rule a seat's proof
bundle follows). When the match has ended, each seat's last decision
is terminal and carries its reward, the outcome as the game's encoding values it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines.encodings import NO_ACTION, Encoding, encoding
from matchlog.engines.views import Clock, shown_event, shown_state, whole_to_everyone
from matchlog.events import ActionsUndone, AnswerRejected, Event, MatchEnded, Record

from .fold import engine_of, walk

__all__ = ["Decision", "decisions"]


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """One decision of a match as the seat that made it saw it (a dataset's step row).

    `view` is the state before it as the seat saw it, `observation` its encoding; `legal` the
    indices of the legal answers in the game's action space (of size `actions`); `action` the index
    of the answer given (NO_ACTION for a rejected one) and `event` the answer as recorded; `at_us`
    its time and `took_us` the time since the event before it, both as the seat sees them; `hash`
    and `leaf` the event's chain hash and leaf in the log's Merkle tree, where the seat sees the
    event whole (else None); `reward` the outcome's worth to the seat on its last decision of an
    ended match (`terminal`), else 0."""

    match_id: UUID
    game: str
    seq: int
    seat: int
    decision: str
    view: Any
    observation: list[float]
    legal: list[int]
    actions: int
    action: int
    event: Event
    rejected: bool = False
    undone: bool = False
    at_us: int
    took_us: int
    reward: float = 0.0
    terminal: bool = False
    hash: bytes | None = None
    leaf: int | None = None


def decisions(
    records: Sequence[Record], *, seat: int | None = None, leaves: Mapping[int, int] | None = None
) -> list[Decision]:
    """Every decision of the match whose records (from seq 0) are given, each as the seat that made
    it saw it; only `seat`'s with a seat. `leaves` maps seqs to their leaves in the log's tree.

    Raises:
        UsageError: the game has no encoding (a tournament's record).
        DecodeError: the records do not start with match.started.
    """
    engine = engine_of(records)
    code: Encoding = encoding(engine.spec.name)
    start = engine.start(records[0].event)  # type: ignore[arg-type]
    actions = code.actions(start)
    undone = {seq for r in records if isinstance(r.event, ActionsUndone) for seq in r.event.seqs}
    found: list[Decision] = []
    seats = range(len(records[0].event.seats)) if seat is None else (seat,)  # type: ignore[attr-defined]
    # The times each seat is given of the events (one clock for all where every seat sees all whole).
    open_game = whole_to_everyone(engine)
    clocks = {who: Clock() for who in ((seats[0],) if open_game else seats)}
    given = {who: clock.shown(records[0].event, records[0].event, records[0].at_us) for who, clock in clocks.items()}
    for record, before, _after, _ in walk(engine, records, start):
        event = record.event
        actor = event.actor
        previous_us = given
        given = {
            who: clock.shown(event, event if open_game else shown_event(engine, before, event, who), record.at_us)
            for who, clock in clocks.items()
        }
        if actor is None or isinstance(event, ActionsUndone) or (seat is not None and actor != seat):
            continue
        clock_of = seats[0] if open_game else actor
        view = shown_state(engine, before, actor)
        turn = engine.to_act(view)
        # Only an answer to the decision the match awaited from this seat (not an undo, not a ruling).
        if turn is None or turn.seat != actor:
            continue
        shown = shown_event(engine, before, event, actor)
        whole = shown == event
        rejected = isinstance(event, AnswerRejected)
        legal = {code.action_of(view, option) for option in engine.legal(view, actor)}
        legal.discard(NO_ACTION)
        found.append(
            Decision(
                match_id=record.match_id,
                game=engine.spec.name,
                seq=record.seq,
                seat=actor,
                decision=turn.decision,
                view=view,
                observation=code.observe(view, actor),
                legal=sorted(legal),
                actions=actions,
                action=NO_ACTION if rejected else code.action_of(view, shown),
                event=shown,
                rejected=rejected,
                undone=record.seq in undone,
                at_us=given[clock_of],
                took_us=given[clock_of] - previous_us[clock_of],
                hash=(record.hash or None) if whole else None,
                leaf=leaves.get(record.seq) if whole and leaves is not None else None,
            )
        )
    # The outcome the referee recorded (an abandoned match's too), once the match has ended.
    outcome = next((r.event.outcome for r in reversed(records) if isinstance(r.event, MatchEnded)), None)
    if outcome is None:
        return found
    # Each seat's last decision ends its trajectory with what the outcome is worth to it.
    last: dict[int, int] = {}
    for index, row in enumerate(found):
        last[row.seat] = index
    for who, index in last.items():
        found[index] = msgspec.structs.replace(found[index], terminal=True, reward=code.reward(outcome, who))
    return found

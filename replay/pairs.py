"""Duplicate play is audited: the games of a duel pair drew the same chance.

In a duplicate duel (`matchlog duel`) every game of a pair draws its chance from one committed
seed, with the seats rotated, so each player meets the luck the other met. The per-match audit
proves each game's draws are its own seed's; this check, run after it on every game of a
duplicate pair but the pair's first, proves the pair shared one seed and one luck:

- the game committed to the same seed as the pair's first game (`duel.commitment_differs`);
- wherever the two games reached the same draw (the same chance decision, with the same
  possible outcomes, after the same draws before it) they drew the same outcome
  (`duel.chance_differs`). Once two games meet different chance decisions their streams of
  draws part, and nothing later is compared.

A finding names the duel, the pair, both games and the seq of each draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matchlog.engines import CHANCE
from matchlog.events import ChanceCommitted, MatchlogError, MatchResumed, MatchStarted, Record, encode

from .fold import effective, engine_of

__all__ = ["check_pair"]


def _first_commitment(records: Sequence[Record]) -> str | None:
    return next((r.event.commitment for r in records if isinstance(r.event, ChanceCommitted)), None)


def _draws(records: Sequence[Record]) -> list[tuple[int, Any, tuple[bytes, ...]]]:
    """Each chance event of the match's first chance segment, with its seq and its situation
    (the outcomes chance could have recorded there), as far as the match folds."""
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
    """Add to `report` (a MatchAudit) what this game of a duplicate duel pair drew otherwise than
    the pair's first game; nothing for a match that is not such a game."""
    started = records[0].event if records else None
    if not isinstance(started, MatchStarted) or started.duel is None or not started.duel.duplicate:
        return
    duel = started.duel
    rows = store.query(
        "SELECT match_id::VARCHAR, payload ->> '$.duel.game' FROM events WHERE type = 'match.started' AND seq = 0"
        " AND payload ->> '$.duel.id' = ? AND payload ->> '$.duel.pair' = ? ORDER BY 2, 1",
        [duel.id, str(duel.pair)],
    )
    if not rows or rows[0][0] == report.match_id:
        return  # the pair's first game: its partners are compared with it
    first = rows[0][0]
    from .audit import AuditFinding

    def find(seq: int | None, rule: str, message: str, **evidence: Any) -> None:
        report.findings.append(
            AuditFinding(match_id=report.match_id, seq=seq, rule=rule, message=message, evidence=evidence)
        )

    where = f"pair {duel.pair} of duel {duel.id}: game {duel.game} ({report.match_id})"
    try:
        reference = store.read(first)
    except MatchlogError as error:
        find(None, "duel.partner_unreadable", f"{where}: the pair's first game {first} cannot be read: {error}")
        return
    mine, theirs = _first_commitment(records), _first_commitment(reference)
    if mine != theirs:
        find(
            next((r.seq for r in records if isinstance(r.event, ChanceCommitted)), None),
            "duel.commitment_differs",
            f"{where} committed to another seed than the pair's first game {first}: not one chance for the pair",
            pair=duel.pair,
            first_game=first,
            commitment=mine,
            first_commitment=theirs,
        )
    try:
        own, other = _draws(records), _draws(reference)
    except MatchlogError:
        return  # a game that does not fold: the per-match audit says why
    for (seq, event, situation), (their_seq, their_event, their_situation) in zip(own, other, strict=False):
        if type(event) is not type(their_event) or situation != their_situation:
            break  # different decisions of chance: the two streams part here
        if encode(event) != encode(their_event):
            find(
                seq,
                "duel.chance_differs",
                f"{where} drew {encode(event).decode()} at seq {seq} where the pair's first game {first} drew "
                f"{encode(their_event).decode()} at seq {their_seq}: the pair did not share its luck",
                pair=duel.pair,
                first_game=first,
                first_seq=their_seq,
            )
            break

"""What readers who may not see a whole match get of its catalogue row and its audit reports:
what the audit found stays public (which rule, at which seq), what it holds as evidence is shown
only as far as the reader's view goes. The admin and the match's referee get them whole.

Hashes too: a hash covers hidden values, so a reader who could recompute one could test guesses of
them. Our own event ids are random, which makes that hopeless, but a referee elsewhere chooses its
events' ids, and may choose ones easy to guess. So in a game with hidden information, a reader who
may not see the whole record gets no hash of a match (its head's, or any event's) until it has
finished, when everything it hid has been revealed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from matchlog.engines import get as get_engine
from matchlog.replay.audit import AuditFinding, Dispute, MatchAudit
from matchlog.store import MatchInfo

from .auth import Access

__all__ = ["audit_for", "catalogue_for", "dispute_for", "shows_hashes"]


def _findings(findings: list[AuditFinding]) -> list[AuditFinding]:
    """Findings without their message and evidence (which may quote hidden values)."""
    return [
        AuditFinding(match_id=f.match_id, seq=f.seq, rule=f.rule, message=f"{f.rule} at seq {f.seq}", evidence={})
        for f in findings
    ]


def shows_hashes(info: MatchInfo, access: Access) -> bool:
    """Whether `access` may see the hashes of a match (see the module docstring)."""
    return access.sees_all_of(info.match_id) or info.status == "finished" or not get_engine(info.game).spec.hidden


def catalogue_for(info: MatchInfo, access: Access) -> MatchInfo:
    """A match's catalogue row as `access` may see it: without its head hash until it may."""
    return info if shows_hashes(info, access) else msgspec.structs.replace(info, head_hash=b"")


def _alternative(option: Any) -> str:
    """A legal answer as a seat may see it: the answer itself, without what it would have done
    (a guess described with its result would tell the seat the tile it guessed at)."""
    return msgspec.json.encode(option).decode()


def audit_for(log: Any, info: Any, access: Access) -> MatchAudit:
    """The audit of one match as `access` may see it."""
    report = next(iter(log.audit([info.match_id])))
    if access.sees_all_of(info.match_id):
        return report
    return MatchAudit(
        match_id=report.match_id,
        game=report.game,
        events=report.events,
        findings=_findings(report.findings),
        notes=list(report.notes),
        checked=dict(report.checked),
    )


def dispute_for(log: Any, info: Any, seq: int, access: Access) -> Dispute:
    """The dispute report about one event as `access` may see it: the states and the event as its
    view shows them, the legal alternatives only to the seat that had them, and the hashes only of
    what it sees whole (a hash over a hidden value would let it test guesses of that value).

    Raises:
        UsageError: the seq is not in the match.
    """
    whole = log.dispute(info.match_id, seq)
    if access.sees_all_of(info.match_id):
        return whole
    view = access.view(info.match_id, None)
    seen = log.lines(info.match_id, start=seq, stop=seq, as_seat=view)[0]
    full = log.lines(info.match_id, start=seq, stop=seq)[0]
    visible = seen.event == full.event
    before = log.state(info.match_id, seq - 1, as_seat=view).text if seq > 0 else ""
    own = view is not None and view == whole.seat
    hashes = shows_hashes(info, access)
    alternatives: list[str] = []
    if own and seq > 0:
        state = log.state(info.match_id, seq - 1).state
        alternatives = [_alternative(option) for option in get_engine(info.game).legal(state, view)]
    return Dispute(
        match_id=whole.match_id,
        game=whole.game,
        seq=whole.seq,
        event=msgspec.to_builtins(seen.event),
        said=seen.text,
        seat=whole.seat,
        seat_name=whole.seat_name,
        decision=whole.decision if own or visible else None,
        ruling=whole.ruling,
        rule=whole.rule,
        rule_says=whole.rule_says if visible else None,
        before=before,
        before_as_seat=before,
        alternatives=alternatives[: len(whole.alternatives)],
        alternatives_total=whole.alternatives_total if own else 0,
        findings=_findings(whole.findings),
        hash=whole.hash if visible and hashes else "",
        previous_hash=whole.previous_hash if hashes else None,
        head_seq=whole.head_seq,
        head_hash=whole.head_hash if hashes else "",
        chain_verified=whole.chain_verified,
    )

"""Audit reports for readers who may not see a whole match: what the audit found stays public
(which rule, at which seq), what it holds as evidence is shown only as far as the reader's view
goes. The admin and the match's referee get the reports whole."""

from __future__ import annotations

from typing import Any

import msgspec

from matchlog.replay.audit import AuditFinding, Dispute, MatchAudit

from .auth import Access

__all__ = ["audit_for", "dispute_for"]


def _findings(findings: list[AuditFinding]) -> list[AuditFinding]:
    """Findings without their message and evidence (which may quote hidden values)."""
    return [
        AuditFinding(match_id=f.match_id, seq=f.seq, rule=f.rule, message=f"{f.rule} at seq {f.seq}", evidence={})
        for f in findings
    ]


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
    ended = info.status != "running"
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
        alternatives=whole.alternatives if own else [],
        alternatives_total=whole.alternatives_total if own else 0,
        findings=_findings(whole.findings),
        hash=whole.hash if visible else "",
        previous_hash=None,
        head_seq=whole.head_seq,
        head_hash=whole.head_hash if ended else "",
        chain_verified=whole.chain_verified,
    )

"""What readers who may not see a whole match get of its catalogue row (their audit reports,
states and events go through `replay.views`, as the CLI's `--as-seat` do). The admin and the
match's referee get it whole.

Hashes: a hash covers hidden values, so a reader who could recompute one could test guesses of
them. Our own event ids are random, which makes that hopeless, but a referee elsewhere chooses its
events' ids, and may choose ones easy to guess. So in a game with hidden information, a reader who
may not see the whole record gets no hash of a match (its head's, or any event's) until it has
finished, when everything it hid has been revealed.
"""

from __future__ import annotations

import msgspec

from matchlog.engines import get as get_engine
from matchlog.replay.audit import AuditFinding
from matchlog.store import MatchInfo

from .auth import Access

__all__ = ["catalogue_for", "shows_hashes"]


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

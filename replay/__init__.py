"""Everything read back from the log: fold, time travel, undo, fork, per-seat views and timelines."""

from .audit import AuditFinding, Dispute, MatchAudit, audit, audit_records, dispute
from .branch import fork, undo, undoable
from .fold import Step, Visitor, effective, engine_of, fold, timeline, undone_seqs
from .stats import GameSummary, PlayerSummary, Summary, summary, wilson
from .travel import SNAPSHOT_EVERY, MatchState, load, state_at
from .views import SeatLine, export_seat_jsonl, seat_lines

__all__ = [
    "SNAPSHOT_EVERY",
    "AuditFinding",
    "Dispute",
    "GameSummary",
    "MatchAudit",
    "MatchState",
    "PlayerSummary",
    "SeatLine",
    "Step",
    "Summary",
    "Visitor",
    "audit",
    "audit_records",
    "dispute",
    "effective",
    "engine_of",
    "export_seat_jsonl",
    "fold",
    "fork",
    "load",
    "seat_lines",
    "state_at",
    "summary",
    "timeline",
    "undo",
    "undoable",
    "undone_seqs",
    "wilson",
]

"""Everything read back from the log: fold, time travel, undo, fork, per-seat views and timelines."""

from .audit import AuditFinding, Dispute, MatchAudit, audit, audit_records, dispute, dispute_records
from .branch import abandon, fork, undo, undoable
from .deep import verify_deep
from .fold import Step, Visitor, effective, engine_of, fold, fold_all, timeline, undone_seqs
from .imports import check_match, import_jsonl
from .judge import Judge
from .projections import figures_of, refresh
from .stats import DiceFairness, GameFigure, GameStats, Rate, Statistics, chi_square_p, statistics, wilson
from .travel import SNAPSHOT_EVERY, MatchState, load, state_at
from .views import (
    SeatLine,
    SeatState,
    check_seat,
    export_seat_jsonl,
    seat_audit,
    seat_audit_report,
    seat_dispute,
    seat_dispute_report,
    seat_lines,
    seat_state,
    seat_state_at,
)

__all__ = [
    "SNAPSHOT_EVERY",
    "AuditFinding",
    "DiceFairness",
    "Dispute",
    "GameFigure",
    "GameStats",
    "Judge",
    "MatchAudit",
    "MatchState",
    "Rate",
    "SeatLine",
    "SeatState",
    "Statistics",
    "Step",
    "Visitor",
    "abandon",
    "audit",
    "audit_records",
    "check_match",
    "check_seat",
    "chi_square_p",
    "dispute",
    "dispute_records",
    "effective",
    "engine_of",
    "export_seat_jsonl",
    "figures_of",
    "fold",
    "fold_all",
    "fork",
    "import_jsonl",
    "load",
    "refresh",
    "seat_audit",
    "seat_audit_report",
    "seat_dispute",
    "seat_dispute_report",
    "seat_lines",
    "seat_state",
    "seat_state_at",
    "state_at",
    "statistics",
    "timeline",
    "undo",
    "undoable",
    "undone_seqs",
    "verify_deep",
    "wilson",
]

"""Everything read back from the log: fold, time travel, undo, fork, per-seat views and timelines."""

from .audit import AuditFinding, Dispute, MatchAudit, audit, audit_records, dispute
from .branch import abandon, fork, undo, undoable
from .fold import Step, Visitor, effective, engine_of, fold, fold_all, timeline, undone_seqs
from .projections import figures_of, refresh
from .stats import DiceFairness, GameFigure, GameStats, Rate, Statistics, chi_square_p, statistics, wilson
from .travel import SNAPSHOT_EVERY, MatchState, load, state_at
from .views import SeatLine, export_seat_jsonl, seat_lines

__all__ = [
    "SNAPSHOT_EVERY",
    "AuditFinding",
    "DiceFairness",
    "Dispute",
    "GameFigure",
    "GameStats",
    "MatchAudit",
    "MatchState",
    "Rate",
    "SeatLine",
    "Statistics",
    "Step",
    "Visitor",
    "abandon",
    "audit",
    "audit_records",
    "chi_square_p",
    "dispute",
    "effective",
    "engine_of",
    "export_seat_jsonl",
    "figures_of",
    "fold",
    "fold_all",
    "fork",
    "load",
    "refresh",
    "seat_lines",
    "state_at",
    "statistics",
    "timeline",
    "undo",
    "undoable",
    "undone_seqs",
    "wilson",
]

"""Annotations read back: as each reader may see them, each player's summary, and a person's comment.

Annotations are a view like everything else. Whoever holds the whole record sees every annotation
whole (its number, id, hashes and leaf). Any other reader (a seat, a spectator) sees:

- an annotation that belongs to no seat (a comment or ruling for everyone);
- an annotation that belongs to seat k, only where it may see seat k's view: it is seat k, or the
  game hides nothing (backgammon, Fish: every seat's view is the whole board);
- an analysis (a decision's judgement, a roll's luck) only once the match has ended: during play it
  would be advice;
- in a game with hidden information, nothing that would let it test guesses: no hash, id, number or
  leaf (the chain covers the other seats' annotations, and an event's hash covers hidden values).

A player's summary (`summaries`) adds up the analyses a reader sees: decisions judged and how many
were forced, the marks, the error rate (mean loss per unforced decision, in the analysis's unit),
accuracy, luck, and the luck-adjusted result (GNU Backgammon's: the result, less the seat's luck,
plus its opponent's). Accuracy is lichess's: each unforced decision scores
103.1668 * exp(-0.04354 * drop) - 3.1669 (0 to 100) for a drop of `drop` points of winning chance in
percent, and the player's accuracy is their mean (lichess also weights by volatility; a plain mean
is what this reports); Fish, whose analyser gives no chance, scores each decision by the share of
the best choice's fish the choice made keeps.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.engines import get as get_engine
from matchlog.events import (
    COMMENT_MARKS,
    AnyNote,
    Comment,
    Decision,
    Forbidden,
    Luck,
    Note,
    ProofError,
    UsageError,
    control_character,
)
from matchlog.store import MatchInfo
from matchlog.store.annotations import NewAnnotation, StoredAnnotation

__all__ = [
    "MAX_COMMENT",
    "Annotation",
    "GraphPoint",
    "Judged",
    "MatchAnalysis",
    "PlayerAnalysis",
    "PlayerSummary",
    "accuracy",
    "analysis_figures",
    "comment",
    "graph",
    "latest_analysis",
    "match_analysis",
    "prove_annotation",
    "seat_author",
    "seen_annotations",
    "summaries",
]

#: The longest comment a log keeps.
MAX_COMMENT = 10_000
#: How a seat that annotates through its token is named as the author.
_SEAT_AUTHOR = re.compile(r"seat \d+")


def seat_author(seat: int) -> str:
    """The author a seat's own comments are written as."""
    return f"seat {seat}"


#: `as_seat` for a spectator.
_SPECTATOR = -1
#: Analyses (the rest are people's words).
_ANALYSES = (Decision, Luck)


class Judged(msgspec.Struct, frozen=True):
    """A note to write about one event of a match: its seq, the seat whose view it belongs to
    (None: everyone's), the note (what an analyser hands the log)."""

    seq: int
    seat: int | None
    note: AnyNote  # type: ignore[valid-type]


class Annotation(msgspec.Struct, frozen=True, kw_only=True):
    """One annotation as one reader sees it: the event it speaks of (match and seq), when and by
    whom it was written, the seat whose view it belongs to (None: everyone's), its note, and for
    the whole record its place in the chain (number, id, the event's hash, its own hash and leaf)."""

    match_id: UUID
    seq: int
    at_us: int
    author: str
    seat: int | None
    note: AnyNote  # type: ignore[valid-type]
    number: int | None = None
    annotation_id: str | None = None
    event_hash: bytes | None = None
    hash: bytes | None = None
    leaf: int | None = None


def _whole(stored: StoredAnnotation) -> Annotation:
    return Annotation(
        match_id=stored.match_id,
        seq=stored.seq,
        at_us=stored.at_us,
        author=stored.author,
        seat=stored.seat,
        note=stored.note,
        number=stored.number,
        annotation_id=stored.annotation_id,
        event_hash=stored.event_hash,
        hash=stored.hash,
        leaf=stored.leaf,
    )


def seen_annotations(
    stored: Sequence[StoredAnnotation], info: MatchInfo, as_seat: int | None, *, ended: bool | None = None
) -> list[Annotation]:
    """The annotations of one match (`info`'s) as `as_seat` sees them (None: the whole record; -1: a
    spectator). `ended` overrides whether the match counts as ended (default: its status).

    Raises:
        DecodeError: a stored note is not one (see `matchlog verify`).
    """
    if as_seat is None:
        return [_whole(a) for a in stored]
    seat = None if as_seat == _SPECTATOR else as_seat
    hidden = get_engine(info.game).spec.hidden
    over = info.status != "running" if ended is None else ended
    shown = []
    for annotation in stored:
        if annotation.seat is not None and annotation.seat != seat and hidden:
            continue  # another seat's, in a game where its view is its own
        note = annotation.note
        if isinstance(note, _ANALYSES) and not over:
            continue  # advice while the match is played
        whole = _whole(annotation)
        if hidden:
            whole = msgspec.structs.replace(
                whole, number=None, annotation_id=None, event_hash=None, hash=None, leaf=None
            )
        shown.append(whole)
    return shown


def latest_analysis(annotations: Sequence[Annotation], analyser: str | None = None) -> list[Annotation]:
    """The analyses of the latest analysis run (of `analyser`, the author's name, when given): an
    analysis run again appends, so only its newest author's rows, one per seq and kind, count."""
    analyses = [a for a in annotations if isinstance(a.note, _ANALYSES)]
    if analyser is not None:
        analyses = [a for a in analyses if a.note.analyser == analyser]  # type: ignore[union-attr]
    if not analyses:
        return []
    author = max(analyses, key=lambda a: (a.at_us, a.number or 0)).author
    latest: dict[tuple[int, str], Annotation] = {}
    for annotation in analyses:
        if annotation.author == author:
            latest[(annotation.seq, type(annotation.note).__name__)] = annotation
    return sorted(latest.values(), key=lambda a: (a.seq, isinstance(a.note, Decision)))


def accuracy(before: float, after: float, unit: str) -> float:
    """One decision's accuracy, 0 to 100: lichess's from the drop in winning chance (`before` and
    `after` chances, 0 to 1), or for fish the share of the best choice's fish kept."""
    if unit == "fish":
        if before <= 0:
            return 100.0
        return max(0.0, min(100.0, 100.0 * after / before))
    drop = max(0.0, 100.0 * (before - after))
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * drop) - 3.1669))


class PlayerSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One seat's analysis, added up: what `matchlog annotations` and the viewer show per player."""

    seat: int
    name: str
    analyser: str
    unit: str
    decisions: int
    unforced: int
    marks: dict[str, int]
    loss: float
    error_rate: float | None
    accuracy: float | None
    luck: float | None = None
    rolls: int = 0
    result: float | None = None
    luck_adjusted: float | None = None


def summaries(
    annotations: Sequence[Annotation], info: MatchInfo, result: Sequence[float] | None = None
) -> list[PlayerSummary]:
    """Each seat's summary of the latest analysis among `annotations` (as its reader sees them);
    `result`, each seat's result (+1 won, -1 lost, of a two-seat game), adds the luck-adjusted one."""
    analyses = latest_analysis(annotations)
    if not analyses:
        return []
    found = []
    for seat, name in enumerate(info.players):
        decided = [a.note for a in analyses if isinstance(a.note, Decision) and a.note.seat == seat]
        rolled = [a.note for a in analyses if isinstance(a.note, Luck) and a.note.seat == seat]
        if not decided and not rolled:
            continue
        first = decided[0] if decided else rolled[0]
        unit = first.unit
        unforced = [d for d in decided if not d.forced]
        loss = sum(d.loss for d in unforced)
        marks: dict[str, int] = {}
        for d in decided:
            if d.mark is not None:
                marks[d.mark] = marks.get(d.mark, 0) + 1
        scored = []
        for d in unforced:
            if d.unit == "fish":
                scored.append(accuracy(d.before, d.after, "fish"))
            elif d.chance is not None and d.best_chance is not None:
                scored.append(accuracy(d.best_chance, d.chance, d.unit))
        luck = sum(r.luck for r in rolled) if rolled else None
        found.append(
            PlayerSummary(
                seat=seat,
                name=name,
                analyser=f"{first.analyser} {first.version}",
                unit=unit,
                decisions=len(decided),
                unforced=len(unforced),
                marks=marks,
                loss=loss,
                error_rate=loss / len(unforced) if unforced else None,
                accuracy=sum(scored) / len(scored) if scored else None,
                luck=luck,
                rolls=len(rolled),
            )
        )
    if result is not None and len(info.players) == 2 and all(s.luck is not None for s in found) and len(found) == 2:
        lucks = {s.seat: s.luck or 0.0 for s in found}
        found = [
            msgspec.structs.replace(
                s, result=result[s.seat], luck_adjusted=result[s.seat] - lucks[s.seat] + lucks[1 - s.seat]
            )
            for s in found
        ]
    return found


class GraphPoint(msgspec.Struct, frozen=True, array_like=True):
    """One point of the evaluation graph: the seq, the deciding seat, its value after the decision
    (0 to 1: a chance, or for fish a share of the match's best), and its mark."""

    seq: int
    seat: int
    value: float
    mark: str | None = None


def graph(annotations: Sequence[Annotation]) -> list[GraphPoint]:
    """The evaluation graph of the latest analysis: each decision's value after it, as a chance
    where the analyser gives one (backgammon: seat 0's chance of winning, so one line), else its
    share of the most any decision of the match made sure of."""
    decided = [a for a in latest_analysis(annotations) if isinstance(a.note, Decision)]
    if not decided:
        return []
    top = max((a.note.before for a in decided), default=1.0) or 1.0  # type: ignore[union-attr]
    points = []
    for annotation in decided:
        note: Decision = annotation.note  # type: ignore[assignment]
        if note.chance is not None:
            value = note.chance if note.unit != "equity" or note.seat == 0 else 1.0 - note.chance
        else:
            value = max(0.0, note.after) / top
        points.append(GraphPoint(annotation.seq, note.seat, value, note.mark))
    return points


def comment(
    info: MatchInfo,
    seq: int,
    text: str,
    *,
    author: str,
    mark: str | None = None,
    ruling: bool = False,
    seat: int | None = None,
    last_seq: int | None = None,
) -> NewAnnotation:
    """A person's comment (or, with `ruling`, an arbiter's ruling) on event `seq` of a match, in the
    view of `seat` (None: everyone's).

    Raises:
        UsageError: no such seq or seat, an empty, overlong or control-character text, or a mark
            that is not one of !!, !, !?, ?!, ?, ??.
        Forbidden: a ruling by a seat (`auth.ruling`): a ruling is the arbiter's.
    """
    last = info.last_seq if last_seq is None else last_seq
    if not 0 <= seq <= last:
        raise UsageError(f"seq {seq} is not in match {info.match_id} (seqs 0 to {last})", code="usage.seq")
    if seat is not None and not 0 <= seat < len(info.players):
        raise UsageError(f"seat {seat}: the match has seats 0 to {len(info.players) - 1}", code="usage.seat")
    if not text.strip() or len(text) > MAX_COMMENT:
        raise UsageError(f"a comment is 1 to {MAX_COMMENT} characters of text", code="usage.comment")
    found = control_character(text.replace("\n", " ").replace("\t", " "))
    if found is not None:
        raise UsageError(f"a comment holds a control character ({found})", code="usage.comment")
    if mark is not None and mark not in COMMENT_MARKS:
        raise UsageError(f"a mark is one of {' '.join(COMMENT_MARKS)}, not {mark!r}", code="usage.mark")
    if ruling and _SEAT_AUTHOR.fullmatch(author):
        raise Forbidden(f"a ruling is the arbiter's word; {author} may comment on its own answers", code="auth.ruling")
    note: Note = Comment(text=text, mark=mark, ruling=ruling)
    return NewAnnotation(match_id=info.match_id, seq=seq, author=author, note=note, seat=seat)


class MatchAnalysis(msgspec.Struct, frozen=True, kw_only=True):
    """A match's annotations as one reader sees them, with what the viewer draws of them: each
    player's summary and the evaluation graph of the latest analysis."""

    match_id: UUID
    analyser: str | None
    summaries: list[PlayerSummary]
    graph: list[GraphPoint]
    annotations: list[Annotation]


def match_analysis(stored: Sequence[StoredAnnotation], info: MatchInfo, as_seat: int | None) -> MatchAnalysis:
    """A match's annotations, summaries and graph as `as_seat` sees them (None: the whole record).

    Raises:
        DecodeError: a stored note is not one (see `matchlog verify`).
    """
    seen = seen_annotations(stored, info, as_seat)
    latest = latest_analysis(seen)
    result = None
    outcome = info.outcome
    if outcome is not None and info.status == "finished" and len(info.players) == 2 and len(outcome.winners) == 1:
        result = [1.0 if seat in outcome.winners else -1.0 for seat in range(2)]
    return MatchAnalysis(
        match_id=info.match_id,
        analyser=latest[0].author if latest else None,
        summaries=summaries(seen, info, result),
        graph=graph(seen),
        annotations=seen,
    )


def prove_annotation(
    store: Any, match: UUID | str, number: int, *, as_seat: int | None = None, signer: Any = None
) -> dict[str, Any]:
    """A proof bundle (docs/proofs.md) of annotation `number` of a match and the event it speaks of:
    both whole, with their inclusion proofs in a signed checkpoint that covers the annotation.

    Raises:
        UnknownMatch: no such match.
        UsageError: no such annotation or seat.
        Forbidden: `as_seat` may not have the annotation (or its hash: a game with hidden information).
        ProofError: no checkpoint covers it and this log cannot sign one.
    """
    from .proofs import _covering, prove

    info = store.match(match)
    found = [a for a in store.annotations([info.match_id]) if a.number == number]
    if not found:
        raise UsageError(f"match {info.match_id} has no annotation {number}", code="usage.annotation")
    annotation = found[0]
    if as_seat is not None:
        if as_seat != _SPECTATOR and not 0 <= as_seat < len(info.players):
            raise UsageError(f"seat {as_seat}: the match has seats 0 to {len(info.players) - 1}", code="usage.seat")
        seen = seen_annotations(found, info, as_seat)
        if not seen or seen[0].hash is None:
            raise Forbidden(
                f"seat {as_seat} may not have annotation {number} of match {info.match_id} whole (its hash included)",
                code="auth.view",
            )
    _covering(store, annotation.leaf + 1, signer)  # the checkpoint the bundle takes covers the annotation
    bundle = prove(store, info.match_id, seq=annotation.seq, as_seat=as_seat, signer=signer)
    size = int(bundle["checkpoint"].split("\n")[1])
    if size <= annotation.leaf:
        raise ProofError(
            "no signed checkpoint covers the annotation yet: `matchlog checkpoint`", code="proof.no_checkpoint"
        )
    nodes: list[str] = bundle["nodes"]
    index = {digest: position for position, digest in enumerate(nodes)}
    proof = []
    for digest in store.tree().inclusion(annotation.leaf, size):
        text = digest.hex()
        if text not in index:
            index[text] = len(nodes)
            nodes.append(text)
        proof.append(index[text])
    before = [a for a in store.annotations([info.match_id]) if a.number == number - 1]
    bundle["annotation_previous"] = before[0].hash.hex() if before else None
    bundle["annotations"] = [
        {
            "number": annotation.number,
            "leaf": annotation.leaf,
            "hash": annotation.hash.hex(),
            "proof": proof,
            "row": {
                "annotation_id": annotation.annotation_id,
                "at_us": annotation.at_us,
                "seq": annotation.seq,
                "event_hash": annotation.event_hash.hex(),
                "author": annotation.author,
                "seat": annotation.seat,
                "type": annotation.type,
                "payload": annotation.payload,
            },
        }
    ]
    return bundle


class PlayerAnalysis(msgspec.Struct, frozen=True, kw_only=True):
    """One player's (or seat's) analysed decisions across matches of a game, by one analyser: the
    matches, decisions (unforced), the error rate (mean loss per unforced decision, in `unit`),
    each mark's count, and luck per match (backgammon)."""

    game: str
    subject: str
    player: str
    analyser: str
    unit: str
    matches: int
    decisions: int
    unforced: int
    error_rate: float | None
    marks: dict[str, int]
    luck: float | None = None


#: The latest run of each analyser over each ended match (a run's rows share one time), of games
#: whose analyses every reader may see (a game with hidden information keeps each seat's its own;
#: during play an analysis would be advice).
_ANALYSIS_ROWS = """
SELECT a.match_id, m.game, a.author, a.seat, a.type,
       (a.payload ->> '$.unit') AS unit, (a.payload ->> '$.loss')::DOUBLE AS loss,
       (a.payload ->> '$.forced')::BOOLEAN AS forced, (a.payload ->> '$.mark') AS mark,
       (a.payload ->> '$.luck')::DOUBLE AS luck, s.name, s.player
FROM annotations a JOIN m USING (match_id) JOIN seats s ON s.match_id = a.match_id AND s.seat = a.seat
WHERE a.type IN ('analysis.decision', 'analysis.luck') AND list_contains(?, m.game) AND m.status <> 'running'
QUALIFY a.recorded_at = max(a.recorded_at) OVER (PARTITION BY a.match_id, a.author)
"""


def analysis_figures(store: Any, base: str, params: list[Any], by: str) -> list[PlayerAnalysis]:
    """Each player's (`by` player) or seat's analysis across the matches of the CTE `base`, of games
    without hidden information (statistics' `analysis`)."""
    from matchlog.engines import GAMES

    if not getattr(store, "has_annotations", False):
        return []
    public = sorted(name for name, engine in GAMES.items() if not engine.spec.hidden)
    rows = store.query(f"{base} {_ANALYSIS_ROWS}", [*params, public])
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for match_id, game, author, seat, kind, unit, loss, forced, mark, luck, name, player in rows:
        subject, strategy = (name, player) if by == "player" else (f"seat {seat}", "")
        group = groups.setdefault(
            (game, subject, strategy, author),
            {"matches": set(), "decisions": 0, "unforced": 0, "loss": 0.0, "marks": {}, "luck": 0.0, "unit": None},
        )
        group["matches"].add(match_id)
        if kind == "analysis.luck":
            group["luck"] += luck or 0.0
            continue
        group["unit"] = unit
        group["decisions"] += 1
        if not forced:
            group["unforced"] += 1
            group["loss"] += loss or 0.0
        if mark:
            group["marks"][mark] = group["marks"].get(mark, 0) + 1
    found = []
    for (game, subject, strategy, author), group in sorted(groups.items()):
        matches = len(group["matches"])
        found.append(
            PlayerAnalysis(
                game=game,
                subject=subject,
                player=strategy,
                analyser=author,
                unit=group["unit"] or "equity",
                matches=matches,
                decisions=group["decisions"],
                unforced=group["unforced"],
                error_rate=group["loss"] / group["unforced"] if group["unforced"] else None,
                marks=group["marks"],
                luck=group["luck"] / matches if game == "backgammon" and matches else None,
            )
        )
    return found

"""Annotations are a view: no analysis a seat gets depends on what it may not know.

The twin-match property of tests/test_views.py, for annotations: random matches of the games with
hidden information are analysed by their analysers, and every seat (and a spectator) is shown the
annotations as it may see them (with each player's summary and the graph) of the match as played
and of its twins, which differ only in what that seat may not know then (another seat's hand, one
hidden tile for another, a joker for a numbered tile). The twins' outputs must be the same: an
analysis of another seat's decision is never shown, and a seat's own is judged from its own view.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchlog.analysis import make_analyser
from matchlog.events import Comment, Decision, Record, encode_note
from matchlog.replay.annotations import graph, seen_annotations, summaries
from matchlog.store import MatchInfo
from matchlog.store.annotations import StoredAnnotation

from .twins import davinci_twins, played, porrinha_twins

HIDDEN = ("porrinha", "davinci")


def annotated(records: Sequence[Record], game: str) -> tuple[list[StoredAnnotation], MatchInfo]:
    """The match's annotations as the log would hold them: its analyser's notes, and a comment for
    everyone on its last event."""
    notes = [(j.seq, j.seat, j.note) for j in make_analyser(game).analyse(records)]
    notes.append((records[-1].seq, None, Comment(text="a comment for everyone", mark="!?")))
    stored = [
        StoredAnnotation(
            match_id=records[0].match_id,
            number=number,
            annotation_id=f"id-{number}",
            at_us=records[seq].at_us,
            seq=seq,
            event_hash=records[seq].hash,  # a hash over hidden values: never shown to a seat
            author="analyser 1" if seat is not None else "admin",
            seat=seat,
            type=note.__struct_config__.tag,
            payload=encode_note(note).decode(),
            hash=bytes(32),
            leaf=number,
        )
        for number, (seq, seat, note) in enumerate(notes)
    ]
    info = MatchInfo.started(records[0].match_id, records[0].event, records[0].at_us)  # type: ignore[arg-type]
    return stored, info


def shown_to(records: Sequence[Record], game: str, seat: int | None) -> Any:
    """Everything about the annotations a seat (None: a spectator) is given, as plain data."""
    stored, info = annotated(records, game)
    view = -1 if seat is None else seat
    seen = seen_annotations(stored, info, view, ended=True)  # as once the match has ended
    return msgspec.to_builtins((seen, summaries(seen, info), graph(seen)))


@pytest.mark.parametrize("game", HIDDEN)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_no_annotation_a_seat_gets_depends_on_what_it_may_not_know(game: str, seed: int):
    records = played(game, seed)
    players = len(records[0].event.seats)  # type: ignore[attr-defined]
    rng = random.Random(seed)
    compared = analysed = 0
    for seat in [None, *range(players)]:
        twins = porrinha_twins(records, seat) if game == "porrinha" else davinci_twins(records, seat, rng)
        for twin, until in twins:
            mine = shown_to(records[:until], game, seat)
            assert shown_to(twin, game, seat) == mine, f"seat {seat} before seq {until}"
            compared += 1
            analysed += sum(1 for a in mine[0] if a["note"]["type"] == "analysis.decision")
    assert compared > 0, "no twin was found: the property was not tested"
    assert analysed > 0 or game == "davinci", "a seat's own analysis was among what was compared"


@pytest.mark.parametrize("game", HIDDEN)
def test_a_seat_gets_its_own_analysis_and_no_other_seats(game: str):
    records = played(game, 3)
    stored, info = annotated(records, game)
    owners = {a.seat for a in stored if a.type == "analysis.decision"}
    assert len(owners) >= 2
    for seat in owners:
        seen = seen_annotations(stored, info, seat, ended=True)
        assert {a.seat for a in seen} == {seat, None}
        assert all(a.hash is None and a.event_hash is None and a.number is None and a.leaf is None for a in seen)
        assert [s.seat for s in summaries(seen, info)] == [seat]
    spectator = seen_annotations(stored, info, -1, ended=True)
    assert [a.note for a in spectator] == [Comment(text="a comment for everyone", mark="!?")]
    # During play nobody but the whole record gets an analysis: it would be advice.
    for seat in owners:
        assert not any(isinstance(a.note, Decision) for a in seen_annotations(stored, info, seat, ended=False))
    assert len(seen_annotations(stored, info, None)) == len(stored)


def _without_times(value: Any) -> Any:
    """`value` without the times annotations were written at (the clock's, not the match's)."""
    if isinstance(value, dict):
        return {name: _without_times(item) for name, item in value.items() if name != "at_us"}
    if isinstance(value, list):
        return [_without_times(item) for item in value]
    return value


def logged_and_shown(records: Sequence[Record], seat: int | None) -> Any:
    """What a reader (`seat`, None: a spectator) gets of a match's annotations through the Log
    interface, once the match is written into a log of its own as its referee did (ended if it was
    running), analysed by `matchlog analyse`'s own run, and commented for everyone: the match's
    analysis (annotations, summaries, graph), the annotations frame and the statistics' analysis."""
    from matchlog.analysis.run import analyse_matches
    from matchlog.file import FileLog

    from .twins import stored

    view = -1 if seat is None else seat
    with FileLog(":memory:", mode="create") as log:
        match_id = stored(log.store, records)
        analyse_matches(log, [log.info(match_id)])
        log.annotate(match_id, 0, "a comment for everyone", mark="!?")
        analysis = msgspec.to_builtins(log.analysis(match_id, as_seat=view))
        frame = log.annotations(as_seat=view).drop_columns(["at_us"]).to_pylist()
        statistics = msgspec.to_builtins(log.stats(by="player", as_seat=-1).analysis)
    return _without_times(analysis), frame, statistics


@pytest.mark.parametrize("game", HIDDEN)
@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_no_annotation_a_reader_gets_through_the_log_depends_on_what_it_may_not_know(game: str, seed: int):
    """The twins written into logs, analysed and read back through the Log interface (as the CLI
    and the service do): every reader's analysis, frame and statistics are the same."""
    from .twins import twins

    records = played(game, seed)
    rng = random.Random(seed)
    compared = analysed = 0
    for seat in [None, *range(len(records[0].event.seats))]:  # type: ignore[attr-defined]
        for twin, until in list(twins(records, seat, rng))[:2]:
            mine = logged_and_shown(records[:until], seat)
            assert logged_and_shown(twin, seat) == mine, (seat, until)
            compared += 1
            analysed += sum(1 for a in mine[0]["annotations"] if a["note"]["type"].startswith("analysis."))
    assert compared > 0, "no twin was found: the property was not tested"
    assert analysed > 0 or game == "davinci", "a seat's own analysis was among what was compared"

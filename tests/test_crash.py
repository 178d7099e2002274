"""Nothing acknowledged is lost: a writer killed at any moment, and a catalogue rolled forward."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import pytest

from matchlog.events import HandChosen, MatchEnded, MatchStarted, Outcome, Seat, uuid7
from matchlog.store import Store

WRITER = """
import sys
from matchlog.events import HandChosen, MatchEnded, MatchStarted, Outcome, Seat, uuid7
from matchlog.store import Store

store = Store(sys.argv[1])
started = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "random"), Seat("b", "random")))
number = 0
while True:
    match_id = uuid7()
    store.append(match_id, [started], 0)
    for seq in range(1, 1 + number % 7):
        store.append(match_id, [HandChosen(seat=seq % 2, hand=1)], seq)
        print("ack", match_id, seq, flush=True)
    if number % 2:
        store.append(match_id, [MatchEnded(outcome=Outcome(places=(1, 2), winners=(0,)))], 1 + number % 7)
        print("ended", match_id, 1 + number % 7, flush=True)
    number += 1
"""


@pytest.mark.parametrize("after", [0.3, 0.6, 1.0])
def test_a_writer_killed_at_any_moment_loses_nothing_it_acknowledged(tmp_path: Path, after: float):
    path = tmp_path / "log.duckdb"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    acknowledged: dict[UUID, int] = {}
    ended: set[UUID] = set()

    def note(line: str) -> None:
        if not line.endswith("\n"):
            return  # the kill cut this acknowledgement short: it was never made
        kind, match_id, seq = line.split()
        acknowledged[UUID(match_id)] = max(acknowledged.get(UUID(match_id), 0), int(seq))
        if kind == "ended":
            ended.add(UUID(match_id))

    try:
        # Wait for acknowledgements in four matches (however long a busy machine takes to write
        # them), then let it run a while and kill it mid-flight.
        for line in writer.stdout:
            note(line)
            if len(acknowledged) > 3:
                break
        assert len(acknowledged) > 3, f"the writer ended after {len(acknowledged)} acknowledged matches"
        time.sleep(after)
        os.kill(writer.pid, signal.SIGKILL)
        for line in writer.stdout:
            note(line)
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    with Store(path) as store:
        assert store.verify() == []
        for match_id, seq in acknowledged.items():
            info = store.match(match_id)
            assert info.last_seq >= seq  # every acknowledged event is there
            assert len(store.read(match_id)) == info.last_seq + 1
        for match_id in ended:
            assert store.match(match_id).status == "finished"
        # The catalogue tables agree with the events after the roll-forward.
        lagging = store.query(
            "SELECT count(*) FROM matches m JOIN (SELECT match_id, max(seq) AS s FROM events GROUP BY 1) e"
            " USING (match_id) WHERE e.s <> m.last_seq"
        )
        assert lagging == [(0,)]


def test_a_lagging_catalogue_is_not_a_finding_and_is_rolled_forward(tmp_path: Path):
    path = tmp_path / "log.duckdb"
    started = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "random"), Seat("b", "random")))
    with Store(path) as store:
        match_id = uuid7()
        store.append(match_id, [started, HandChosen(seat=0, hand=1)], 0)
        head_at_1 = store.match(match_id).head_hash
        store.append(
            match_id, [HandChosen(seat=1, hand=0), MatchEnded(outcome=Outcome(places=(2, 1), winners=(1,)))], 2
        )
        # Make the catalogue look as a writer killed before its last flush would leave it.
        store.query(
            "UPDATE matches SET last_seq = 1, head_hash = ?, status = 'running', result = NULL WHERE match_id = ?",
            [head_at_1, match_id],
        )
        store.query("UPDATE seats SET place = NULL, winner = NULL WHERE match_id = ?", [match_id])
    with Store(path, read_only=True) as reader:
        assert reader.verify() == []
        assert reader.match(match_id).last_seq == 1
    with Store(path) as store:
        info = store.match(match_id)
        assert (info.last_seq, info.status, info.outcome.winners) == (3, "finished", (1,))
        assert store.query("SELECT seat, place FROM seats WHERE match_id = ? ORDER BY seat", [match_id]) == [
            (0, 2),
            (1, 1),
        ]
    with Store(path, read_only=True) as reader:
        assert reader.match(match_id).last_seq == 3


def test_a_catalogue_ahead_of_its_events_is_a_finding(tmp_path: Path):
    path = tmp_path / "log.duckdb"
    started = MatchStarted(game="porrinha", options={}, seats=(Seat("a", "random"), Seat("b", "random")))
    with Store(path) as store:
        match_id = uuid7()
        store.append(match_id, [started, HandChosen(seat=0, hand=1), HandChosen(seat=1, hand=1)], 0)
        store.query("UPDATE matches SET head_hash = sha256('forged')::BLOB WHERE match_id = ?", [match_id])
        assert [(f.code, f.seq) for f in store.verify()] == [("chain.head_mismatch", 2)]

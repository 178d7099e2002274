"""The service under load, for a few seconds and until enough was done: referees appending to their
matches (batches of 1 to 10 events, some sent twice), a tournament's writer posting bulk batches,
readers asking for lists, states and events, and follow streams watching matches as they are played,
all at once against one real server. Afterwards every acknowledged event is in the log exactly as
sent, every follower saw every event of its match once and in order, the chains verify, the audit
finds nothing, and no request failed with a 5xx."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import msgspec
import pytest

from matchlog.events import Event, encode, uuid7, uuid7_text
from matchlog.referee import MemoryRecorder, make_player, play_match, seats_from_specs

from .conftest import PATIENCE, Served, serve_copy

#: How long the load lasts at least, and how much it must have done before it stops (or `PATIENCE`
#: seconds have passed: a busy machine does the same work, only slower); how many of each client.
SECONDS = 4.0
EVENTS = 500
REQUESTS = 300
REFEREES = 8
READERS = 4
FOLLOWERS = 4


@pytest.fixture(scope="module", params=[1, 2], ids=["one process", "two fronts"])
def loaded(
    filled_log: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Served]:
    server = serve_copy(filled_log, tmp_path_factory.mktemp("loaded"), "--fronts", str(request.param))
    yield server
    server.stop()


def _templates(count: int) -> list[list[Event]]:
    """The events of real Porrinha matches of 3 random players, match.started first."""
    seats = seats_from_specs("porrinha", ["random"] * 3)
    made = []
    for n in range(count):
        players = [make_player("porrinha", s.player, random.Random(n * 7 + i)) for i, s in enumerate(seats)]
        recorder = MemoryRecorder()
        play_match("porrinha", seats, players, recorder=recorder, timeout=None)
        made.append([d.event for d in recorder.drafts])
    return made


class Load:
    """What the clients did and saw."""

    def __init__(self) -> None:
        self.statuses: Counter[int] = Counter()
        self.acknowledged: dict[str, dict[int, tuple[str, bytes]]] = {}  # match -> seq -> (event id, event)
        self.playing: list[str] = []  # matches being played now, for readers and followers
        self.followed: list[tuple[str, list[int], bool]] = []  # match, seqs seen, whether it saw the end
        self.failures: list[str] = []
        self.over = asyncio.Event()  # set when the load has done enough, or ran out of time
        self.seconds = 0.0

    @property
    def going(self) -> bool:
        return not self.over.is_set()

    def events(self) -> int:
        return sum(len(seqs) for seqs in self.acknowledged.values())

    def requests(self) -> int:
        return sum(self.statuses.values())

    def enough(self) -> bool:
        """More than `EVENTS` acknowledged and `REQUESTS` answered, and a follower saw a match end."""
        return self.events() > EVENTS and self.requests() > REQUESTS and any(ended for *_, ended in self.followed)

    def saw(self, answer: httpx.Response, *expected: int) -> None:
        self.statuses[answer.status_code] += 1
        if answer.status_code not in expected:
            self.failures.append(
                f"{answer.request.method} {answer.request.url.path}: {answer.status_code} {answer.text[:200]}"
            )


async def _referee(client: httpx.AsyncClient, load: Load, templates: list[list[Event]], rng: random.Random):
    seats = [{"name": f"s{i}", "player": "random"} for i in range(3)]
    while load.going:
        created = await client.post("/api/matches", json={"game": "porrinha", "seats": seats})
        load.saw(created, 201)
        match_id = created.json()["match_id"]
        load.acknowledged[match_id] = {}
        load.playing.append(match_id)
        template = rng.choice(templates)
        seq = 1
        while seq < len(template) and load.going:
            batch = template[seq : seq + rng.randint(1, 10)]
            items = [{"event": msgspec.to_builtins(e), "event_id": str(uuid7())} for e in batch]
            body = {"expected_seq": seq, "events": items}
            for attempt in range(1 + (rng.random() < 0.1)):  # one batch in ten is sent twice
                answer = await client.post(f"/api/matches/{match_id}/events", json=body)
                load.saw(answer, 200)
                if answer.status_code != 200:
                    return
                assert answer.json()["written"] == (0 if attempt else len(batch))
            for offset, item in enumerate(items):
                load.acknowledged[match_id][seq + offset] = (item["event_id"], encode(batch[offset]))
            seq += len(batch)
        load.playing.remove(match_id)


async def _tournament_writer(client: httpx.AsyncClient, load: Load, templates: list[list[Event]]):
    """Whole matches in bulk, as `matchlog tournament` sends them through a server."""
    rng = random.Random(99)
    while load.going:
        batches = []
        for _ in range(3):
            match_id, template = str(uuid7()), rng.choice(templates)
            encoded = [(uuid7_text(), 1_700_000_000_000_000 + i, encode(e)) for i, e in enumerate(template)]
            batches.append({
                "match_id": match_id,
                "expected_seq": 0,
                "events": [{"event_id": e, "at_us": at, "payload": p.decode()} for e, at, p in encoded],
            })  # fmt: skip
        answer = await client.post("/api/batches", json=batches)
        load.saw(answer, 200)
        if answer.status_code == 200:
            for batch in batches:
                events = enumerate(batch["events"])
                load.acknowledged[batch["match_id"]] = {
                    seq: (e["event_id"], e["payload"].encode()) for seq, e in events
                }


async def _reader(client: httpx.AsyncClient, load: Load, rng: random.Random):
    while load.going:
        choice = rng.random()
        if choice < 0.2 or not load.playing:
            load.saw(await client.get("/api/matches", params={"limit": 20}), 200)
        else:
            match_id = rng.choice(load.playing)
            path = "state" if choice < 0.6 else "events"
            load.saw(await client.get(f"/api/matches/{match_id}/{path}"), 200)


async def _follow(client: httpx.AsyncClient, load: Load, match_id: str, seen: list[int]) -> bool:
    """Follow a match, noting each seq it is sent in `seen`; True once it saw the match end."""
    async with client.stream("GET", f"/api/matches/{match_id}/follow") as stream:
        load.saw(stream, 200)
        async for line in stream.aiter_lines():
            if line.startswith("id: "):
                seen.append(int(line[4:]))
            elif line.startswith("event: end"):
                return True
    return False


async def _follower(url: str, load: Load, rng: random.Random):
    async with httpx.AsyncClient(base_url=url, timeout=PATIENCE) as client:
        while load.going:
            if not load.playing:
                await asyncio.sleep(0.01)
                continue
            match_id = rng.choice(load.playing)
            seen: list[int] = []
            ended = False
            # Until the match ends, or the load does (then what it saw so far is checked too).
            following = asyncio.ensure_future(_follow(client, load, match_id, seen))
            over = asyncio.ensure_future(load.over.wait())
            await asyncio.wait([following, over], return_when=asyncio.FIRST_COMPLETED)
            over.cancel()
            if following.done():
                ended = following.result()
            else:
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await following
            load.followed.append((match_id, seen, ended))


async def _watch(load: Load) -> None:
    """End the load once it has lasted `SECONDS` and done enough, or after `PATIENCE` seconds."""
    began = time.monotonic()
    while not (time.monotonic() - began >= SECONDS and load.enough()) and time.monotonic() - began < PATIENCE:
        await asyncio.sleep(0.05)
    load.seconds = time.monotonic() - began
    load.over.set()


def test_many_clients_at_once_lose_nothing_and_break_nothing(loaded: Served, report: Callable[[str], None]):
    templates = _templates(12)
    load = Load()

    async def run() -> None:
        admin = httpx.AsyncClient(base_url=loaded.url, headers=loaded.headers(), timeout=PATIENCE)
        public = httpx.AsyncClient(base_url=loaded.url, timeout=PATIENCE)
        async with admin, public:
            await asyncio.gather(
                _watch(load),
                *(_referee(admin, load, templates, random.Random(n)) for n in range(REFEREES)),
                _tournament_writer(admin, load, templates),
                *(_reader(public, load, random.Random(100 + n)) for n in range(READERS)),
                *(_follower(loaded.url, load, random.Random(200 + n)) for n in range(FOLLOWERS)),
            )

    # A loop of its own in a thread of its own: the session's Chromium (Playwright's sync API)
    # keeps one running in this thread once a test has opened it.
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, run()).result()
    assert not load.failures, "\n".join(load.failures[:10])
    assert not [status for status in load.statuses if status >= 500]
    events = load.events()
    assert events > EVENTS and load.requests() > REQUESTS, (events, load.statuses)
    report(f"service load test: {events:,} events acknowledged, {load.requests():,} requests, "
           f"{len(load.followed)} follow streams in {load.seconds:.1f} s")  # fmt: skip
    with httpx.Client(base_url=loaded.url, headers=loaded.headers(), timeout=PATIENCE) as client:
        # Every acknowledged event is in the log, as it was sent, at its seq.
        for match_id, acknowledged in load.acknowledged.items():
            lines = client.get(f"/api/matches/{match_id}/events").json()
            stored = {line["seq"]: (line["event_id"], line["event"]) for line in lines}
            for seq, (event_id, event) in acknowledged.items():
                assert stored[seq] == (event_id, msgspec.json.decode(event)), (match_id, seq)
        # Every follower saw each event of its match once, in order, from the first.
        for match_id, seen, ended in load.followed:
            assert seen == list(range(len(seen))), (match_id, seen)
            if ended:
                assert len(seen) == client.get(f"/api/matches/{match_id}").json()["last_seq"] + 1
        assert any(ended for *_, ended in load.followed), "no follower saw a match to its end"
        verified = client.get("/api/verify").json()
        assert verified["ok"] and verified["findings"] == [], verified
        audits = client.get("/api/audit").json()
        assert [a for a in audits if a["findings"]] == []

"""Nothing leaks through the service: anonymous callers and each seat's token never get another
seat's hidden values, from any endpoint (the catalogue, events, states, audits and dispute reports,
follow streams, exports, verify, statistics, and the errors each of those answers), while a match
runs and after it ends.

Two ways of looking, one per game:

- Porrinha, by search. A referee written as a plain HTTP client records matches whose hidden
  values are canaries no other value can be mistaken for: 20,000 chopsticks each, so a hand is a
  distinct five-digit number, rejected hands answer distinct seven-digit ones, and every guess
  is far from all of them. For every point of the
  match the test collects the values hidden then from the full record (hands of the round in
  play, rejected answers), and searches every body each restricted reader gets about that point
  for each of them.
- Da Vinci Code, by twins. A tile is a number from 0 to 25, which any body holds in many places,
  so instead the test records twin matches that differ only in two tiles of one colour that a
  reader may not know, and every body that reader gets of one twin must be the other's: nothing
  it is shown depends on what it may not know.
"""

from __future__ import annotations

import io
import random
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from matchlog.engines import get as get_engine
from matchlog.engines.davinci import JOKERS, colour
from matchlog.events import (
    AnswerRejected,
    ChanceRevealed,
    Event,
    GuessMade,
    HandChosen,
    HandReset,
    IllegalAction,
    Record,
    Seat,
    TileDrawn,
    TileGuessed,
    TilesShuffled,
    decode,
    draft,
    uuid7,
)
from matchlog.referee import MemoryRecorder, make_player, play_match
from matchlog.replay import audit_records, timeline
from matchlog.store import Store
from matchlog.testing.kit import retimed

from .conftest import Served

PORRINHA = get_engine("porrinha")
#: Chopsticks each Porrinha seat starts with: a hand is a five-digit canary (a dispute report lists
#: the legal hands and guesses, so the table stays small enough to list them quickly).
CHOPSTICKS = 20_000
DAVINCI = get_engine("davinci")


# -- what a restricted reader gets -------------------------------------------------------------


def _sse(client: httpx.Client, url: str, last_seq: int, ended: bool, **params: Any) -> str:
    """A follow stream's text, read until it has sent `last_seq` (a running match's never ends)."""
    text = []
    with client.stream("GET", url, params=params) as stream:
        for line in stream.iter_lines():
            text.append(line)
            if ended and line.startswith("event: end"):
                break
            if not ended and line.startswith(f"id: {last_seq}"):
                break
    return "\n".join(text)


class Reader:
    """A client that may not see the whole record: anonymous (`seat` None) or a seat's token."""

    def __init__(self, client: httpx.Client, token: str | None, seat: int | None) -> None:
        self.client = client
        self.seat = seat
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.spectator_too = True  # a seat also asks for a spectator's view

    def get(self, path: str, **params: Any) -> str:
        answer = self.client.get(path, params=params, headers=self.headers)
        assert answer.status_code < 500, answer.text
        return f"{answer.status_code} {answer.text}"

    def post(self, path: str, body: Any) -> str:
        answer = self.client.post(path, content=msgspec.json.encode(body), headers=self.headers)
        assert answer.status_code < 500, answer.text
        return f"{answer.status_code} {answer.text}"

    def views(self) -> list[int | None]:
        """The views this reader may ask for: its default (its own seat's, or a spectator's) and,
        for a seat, a spectator's."""
        return [None, -1] if self.seat is not None and self.spectator_too else [None]

    def at(self, match_id: str, seq: int) -> dict[str, str]:
        """Every body about one point of a match: its state, its events up to there, its dispute report."""
        bodies = {f"dispute {seq}": self.get(f"/api/matches/{match_id}/audit", seq=seq)}
        for view in self.views():
            shown = {} if view is None else {"as_seat": view}
            bodies[f"state {seq} as {view}"] = self.get(f"/api/matches/{match_id}/state", seq=seq, **shown)
            bodies[f"events to {seq} as {view}"] = self.get(f"/api/matches/{match_id}/events", stop=seq, **shown)
        return bodies

    def points(self, match_id: str, seqs: Sequence[int]) -> list[dict[str, str]]:
        """`at` each of `seqs`, a few at a time (the server answers several requests at once)."""
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda seq: self.at(match_id, seq), seqs))

    def whole(self, match_id: str, game: str, *, log: bool = True) -> dict[str, str]:
        """Every body about a match as it stands, and the errors a restricted reader is answered with
        (with `log`, also the answers about the whole log: every audit, statistics, verify)."""
        info = self.client.get(f"/api/matches/{match_id}").json()
        ended = info["status"] != "running"
        other = 1 if self.seat == 0 else 0
        bodies = {
            "info": self.get(f"/api/matches/{match_id}"),
            "list": self.get("/api/matches", game=game, limit=10_000),
            "audit": self.get(f"/api/matches/{match_id}/audit"),
            "verify": self.get("/api/verify", match=match_id),
            "verify some": self.post("/api/verify", {"matches": [match_id]}),
            # What it is refused, and what it asks for wrongly.
            "error: another's view": self.get(f"/api/matches/{match_id}/events", as_seat=other),
            "error: another's state": self.get(f"/api/matches/{match_id}/state", as_seat=other),
            "error: no such seq": self.get(f"/api/matches/{match_id}/state", seq=10**6),
            "error: no such dispute": self.get(f"/api/matches/{match_id}/audit", seq=10**6),
            "error: tokens": self.get(f"/api/matches/{match_id}/tokens"),
            "error: whole export": self.get("/api/export", match=match_id),
            "error: export all": self.get("/api/export"),
            "error: sql": self.post("/api/sql", {"query": "SELECT payload FROM events"}),
            "error: append": self.post(f"/api/matches/{match_id}/events", {"expected_seq": 0, "events": []}),
            "error: undo": self.post(f"/api/matches/{match_id}/undo", {}),
            "error: follow another": self.get(f"/api/matches/{match_id}/follow", as_seat=other),
        }
        if log:
            bodies["audit all"] = self.get("/api/audit")
            bodies["verify all"] = self.get("/api/verify")
            bodies["stats"] = self.get("/api/stats", game=game)
            bodies["stats by seat"] = self.get("/api/stats", game=game, by="seat")
            bodies["health"] = self.get("/api/health")
        for view in self.views():
            shown = {} if view is None else {"as_seat": view}
            bodies[f"events as {view}"] = self.get(f"/api/matches/{match_id}/events", **shown)
            bodies[f"state as {view}"] = self.get(f"/api/matches/{match_id}/state", **shown)
            url = f"/api/matches/{match_id}/follow"
            headers = self.client.headers.copy()
            headers.update(self.headers)
            with httpx.Client(base_url=self.client.base_url, headers=headers, timeout=30) as streaming:
                bodies[f"follow as {view}"] = _sse(streaming, url, info["last_seq"], ended, **shown)
            if view is not None:
                bodies[f"export as {view}"] = self.get("/api/export", match=match_id, as_seat=view)
        return bodies


def readers(client: httpx.Client, served: Served, match_id: str) -> Iterator[Reader]:
    """Anonymous, then each seat's token."""
    tokens = client.get(f"/api/matches/{match_id}/tokens", headers=served.headers()).json()
    yield Reader(client, None, None)
    for seat, token in enumerate(tokens["seats"]):
        yield Reader(client, token, seat)


# -- Porrinha: canaries --------------------------------------------------------------------------


class PorrinhaReferee:
    """A referee elsewhere, recording through the service: every hand a distinct six-digit number,
    every rejected hand a distinct seven-digit answer, every guess far from both."""

    def __init__(self, client: httpx.Client, served: Served, seats: int, seed: int) -> None:
        self.client = client
        self.rng = random.Random(seed)
        body = {
            "game": "porrinha",
            "options": {"chopsticks": CHOPSTICKS},
            "seats": [{"name": f"p{i}", "player": "remote"} for i in range(seats)],
        }
        created = client.post("/api/matches", json=body, headers=served.headers()).json()
        self.match_id = created["match_id"]
        self.headers = {"Authorization": f"Bearer {created['tokens']['referee']}"}
        self.used: set[int] = set()
        self.sync()

    def sync(self) -> None:
        """The match as the log holds it: every event, and the state after each."""
        lines = self.client.get(f"/api/matches/{self.match_id}/events", headers=self.headers).json()
        self.events = [decode(msgspec.json.encode(line["event"])) for line in lines]
        self.history = [PORRINHA.start(self.events[0])]
        for event in self.events[1:]:
            self.history.append(PORRINHA.apply(self.history[-1], event))

    @property
    def state(self) -> Any:
        return self.history[-1]

    def _fresh(self, low: int, high: int) -> int:
        while True:
            value = self.rng.randrange(low, high)
            if value not in self.used:
                self.used.add(value)
                return value

    def send(self, events: Sequence[Event]) -> None:
        body = {"expected_seq": len(self.events), "events": [{"event": msgspec.to_builtins(e)} for e in events]}
        answer = self.client.post(
            f"/api/matches/{self.match_id}/events", content=msgspec.json.encode(body), headers=self.headers
        )
        assert answer.status_code == 200, answer.text
        for event in events:
            self.events.append(event)
            self.history.append(PORRINHA.apply(self.state, event))

    def hand(self, seat: int, *, rejected: bool = False) -> None:
        if not rejected:
            self.send([HandChosen(seat=seat, hand=self._fresh(CHOPSTICKS // 2, CHOPSTICKS))])
            return
        answer = self._fresh(2_000_000, 10_000_000)
        with pytest.raises(IllegalAction) as refused:
            PORRINHA.check(self.state, seat, PORRINHA.parse(self.state, seat, answer))
        error = refused.value
        rejection = AnswerRejected(
            seat=seat, decision="hand", answer=repr(answer), code=error.code, message=error.message
        )
        after = PORRINHA.apply(self.state, rejection)
        ruling = [HandReset(seat=seat)] if after.hands[seat] is None else []  # lenient: it counts as 0
        self.send([rejection, *ruling])

    def guess(self, seat: int) -> None:
        total, taken = self.state.chopstick_count, set(self.state.guesses)
        while True:
            guess = self.rng.randrange(0, total + 1)
            if guess not in taken and all(abs(guess - value) > 10 for value in self.used):
                break
        self.send([GuessMade(seat=seat, guess=guess)])

    def round(self, *, rejected: int | None = None, hands: int | None = None) -> None:
        """A round: each seat's hand (seat `rejected`'s refused), then every guess; or only the
        first `hands` hands, leaving the round in play."""
        order = self.state.order()
        for seat in order if hands is None else order[:hands]:
            self.hand(seat, rejected=seat == rejected)
        if hands is None:
            for seat in self.state.order():
                self.guess(seat)

    def hidden(self, seq: int, reader: int | None) -> set[str]:
        """The canaries `reader` may not know after `seq`: others' hands of the round in play then,
        and every rejected hand of another seat so far (no view ever shows its answer)."""
        state = self.history[seq]
        found = {str(hand) for seat, hand in enumerate(state.hands) if hand in self.used and seat != reader}
        for event in self.events[: seq + 1]:
            if isinstance(event, AnswerRejected) and event.decision == "hand" and event.seat != reader:
                found.add(event.answer)
        return found


#: Ids and hashes: their hex digits may spell any number, so the search skips them.
_HEX = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}")


def _search(bodies: dict[str, str], canaries: set[str]) -> list[str]:
    """Where a canary stands as a number of its own in a body."""
    found = []
    for label, body in bodies.items():
        text = _HEX.sub("#", body)
        for canary in canaries:
            if re.search(rf"(?<!\d){canary}(?!\d)", text):
                found.append(f"{label} holds {canary}: {body[:300]}")
    return found


def test_no_restricted_reader_gets_a_hidden_porrinha_value_from_any_endpoint(served: Served):
    with httpx.Client(base_url=served.url, timeout=30) as client:
        referee = PorrinhaReferee(client, served, seats=3, seed=19)
        referee.round()
        referee.round(rejected=1)
        referee.round(rejected=2)
        referee.round(hands=2)  # running: two hands of the fourth round are closed, one is not
        match_id = referee.match_id
        assert referee.hidden(len(referee.history) - 1, None), "the match hides nothing: nothing was tested"
        leaks: list[str] = []
        searched = 0
        for phase in ("running", "abandoned"):
            if phase == "abandoned":
                ended = client.post(f"/api/matches/{match_id}/abandon", json={"reason": "x"}, headers=served.headers())
                assert ended.status_code == 200, ended.text
                referee.sync()
            last = len(referee.history) - 1
            for reader in readers(client, served, match_id):
                seqs = range(last + 1) if phase == "running" else (last - 1, last)
                for seq, bodies in zip(seqs, reader.points(match_id, seqs), strict=True):
                    canaries = referee.hidden(seq, reader.seat)
                    leaks += _search(bodies, canaries)
                    searched += len(canaries)
                leaks += _search(reader.whole(match_id, "porrinha"), referee.hidden(last, reader.seat))
        assert not leaks, "\n".join(leaks[:10])
        assert searched > 100


# -- Da Vinci Code: twins ------------------------------------------------------------------------


def _davinci(seed: int) -> list[Record]:
    """The records of a Da Vinci Code match between two seed AIs (no jokers: see `_twin`)."""
    rng = random.Random(seed)
    seats = (Seat("north", "seed-ai"), Seat("south", "seed-ai"))
    players = [make_player("davinci", "seed-ai", random.Random(rng.random())) for _ in seats]
    recorder = MemoryRecorder()
    result = play_match(
        "davinci", seats, players, options={"jokers": False}, recorder=recorder, seed=seed, timeout=None
    )
    return recorder.records(result.match_id)


def _public(state: Any) -> Any:
    """What every seat of a Da Vinci Code table knows: colours and places of every tile, numbers
    of tiles turned up, the pile's size, the guesses and their results, whose turn it is."""
    rows = tuple(
        tuple((colour(t), state.revealed[o][i], t if state.revealed[o][i] else None) for i, t in enumerate(row))
        for o, row in enumerate(state.rows)
    )
    pending = tuple((owner, colour(tile)) for owner, tile in state.pending)
    rest = (state.phase, state.turn, state.drawn, state.last, state.wrong, state.out, state.removed, state.ended)
    return rows, len(state.pile), pending, rest


def _twins(
    records: Sequence[Record], reader: int | None, rng: random.Random
) -> list[tuple[list[Record], list[Record]]]:
    """Prefixes of `records` and their twins: two numbered tiles of one colour swapped, both
    unknown to `reader` until the prefix ends (in another's row or the pile, never turned up),
    where every seat sees the same table in both, and every event `reader` does not see whole
    recorded at another time (`kit.retimed`: a hidden step that took longer or shorter). Two of
    them: the longest prefix found, and one where a swapped tile lies in another seat's row while
    `reader` guesses at that row. (A joker for a numbered tile is the views' own property test's:
    a joker's placing tells it today.)"""
    states = [step.after for step in timeline(records)]
    reveal = next((r.seq for r in records if isinstance(r.event, ChanceRevealed)), len(records))

    def known_at(tile: int) -> int:
        for seq, state in enumerate(states[:reveal]):
            for owner, row in enumerate(state.rows):
                if tile in row and (owner == reader or state.revealed[owner][row.index(tile)]):
                    return seq
        return reveal

    def in_a_row_guessed_at(tile: int, until: int) -> bool:
        guessed = {
            r.event.target for r in records[:until] if isinstance(r.event, TileGuessed) and r.event.seat == reader
        }
        return any(tile in states[seq].rows[owner] for seq in range(until) for owner in guessed)

    order = next(r.event.order for r in records if isinstance(r.event, TilesShuffled))
    pairs = [(a, b) for a in order for b in order if a < b and colour(a) == colour(b) and b not in JOKERS]
    rng.shuffle(pairs)
    pairs.sort(key=lambda pair: -min(known_at(pair[0]), known_at(pair[1])))
    found: dict[str, tuple[list[Record], list[Record]]] = {}
    for a, b in pairs:
        until = min(known_at(a), known_at(b))
        kind = "in a row guessed at" if reader is not None and in_a_row_guessed_at(a, until) else "longest"
        if kind in found or until < 8:
            continue
        swap = {a: b, b: a}
        twin = []
        for record in records[:until]:
            event = record.event
            if isinstance(event, TilesShuffled):
                event = TilesShuffled(order=tuple(swap.get(t, t) for t in event.order))
            elif isinstance(event, TileDrawn) and event.tile in swap:
                event = TileDrawn(seat=event.seat, tile=swap[event.tile])
            twin.append(msgspec.structs.replace(record, event=event))
        try:
            twin_states = [step.after for step in timeline(twin)]
        except Exception:  # the swap makes a table the rules cannot fold: not a twin
            continue
        public = [_public(state) for state in states[:until]]
        if [_public(state) for state in twin_states] == public and not audit_records(twin).findings:
            found[kind] = (list(records[:until]), retimed(twin, reader, rng))
        if len(found) == (1 if reader is None else 2):
            return list(found.values())
    raise AssertionError(f"no twins for seat {reader}: {sorted(found)}")


def _imported(client: httpx.Client, served: Served, records: Sequence[Record]) -> str:
    """The events of `records` as a new match of the served log (through POST /api/import)."""
    match_id = uuid7()
    with Store() as store:
        store.append(match_id, [draft(r.event, event_id=r.event_id, at_us=r.at_us) for r in records], 0)
        out = io.BytesIO()
        store.export_jsonl(out)
    headers = {**served.headers(), "content-type": "application/x-ndjson"}
    answer = client.post("/api/import", content=out.getvalue(), headers=headers)
    assert answer.status_code == 200, answer.text
    return str(match_id)


#: What differs between two matches whatever they hold: their ids, and (for a finished match
#: against a running one) how far each goes.
_OWN = ("last_seq", "head_seq", "head_hash", "hash", "previous_hash", "status", "ended", "notes")


def _same(bodies: dict[str, str], match_ids: Sequence[str], *, drop: Sequence[str] = ()) -> dict[str, Any]:
    """The bodies with each of the matches' ids written as M (and the keys `drop` left out)."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k not in drop}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    same = {}
    for label, body in bodies.items():
        text = body
        for match_id in match_ids:
            text = text.replace(match_id, "M")
        status, _, text = text.partition(" ")
        try:
            same[label] = (status, plain(msgspec.json.decode(text)))
        except msgspec.DecodeError:  # a follow stream's text
            same[label] = (status, text)
    return same


def test_nothing_a_restricted_reader_gets_depends_on_a_davinci_tile_it_may_not_know(served: Served):
    records = _davinci(seed=23)
    rng = random.Random(23)
    with httpx.Client(base_url=served.url, timeout=30) as client:
        finished = _imported(client, served, records)
        compared = 0
        for reader in (None, 0, 1):
            twins = _twins(records, reader, rng)
            for prefix, twin in twins if reader != 1 else twins[1:]:  # seat 1: the one seat 0 does not have
                first, second = _imported(client, served, prefix), _imported(client, served, twin)
                pick = {m: _reader(client, served, m, reader) for m in (first, second, finished)}
                for chosen in pick.values():
                    chosen.spectator_too = False  # the anonymous reader's view, tested as such
                # Every body about every point, and about each running twin as a whole, is the same...
                seqs = range(len(prefix))
                points = [pick[m].points(m, seqs) for m in (first, second)]
                for one, other in zip(*points, strict=True):
                    at = [_same(one, [first]), _same(other, [second])]
                    assert at[0] == at[1], _differences(*at)
                    compared += 1
                bodies = [pick[m].whole(m, "davinci", log=False) for m in (first, second)]
                whole = [_same(b, [first, second]) for b in bodies]
                assert whole[0] == whole[1], _differences(*whole)
                # ...and so are the bodies about those points of the whole match, now finished.
                for seq in (len(prefix) // 2, len(prefix) - 1):
                    at = [_same(pick[m].at(m, seq), [m], drop=_OWN) for m in (finished, second)]
                    assert at[0] == at[1], _differences(*at)
        # Hashes: the admin's and the referee's only, finished or not: a winner's tiles stay hidden.
        head = {m: client.get(f"/api/matches/{m}").json()["head_hash"] for m in (finished, first)}
        assert not head[finished] and not head[first]
        assert all(client.get(f"/api/matches/{m}", headers=served.headers()).json()["head_hash"] for m in head)
    assert compared > 30


def _reader(client: httpx.Client, served: Served, match_id: str, seat: int | None) -> Reader:
    return next(r for r in readers(client, served, match_id) if r.seat == seat)


def _differences(one: dict[str, Any], other: dict[str, Any]) -> str:
    return "\n".join(
        f"{label}:\n  {one[label]}\n  {other.get(label)}" for label in one if one[label] != other.get(label)
    )[:3000]


# -- aggregates: twin logs served side by side ---------------------------------------------------


def _aggregates(server: Served, token: str | None, match_id: str | None, seat: int | None) -> dict[str, Any]:
    """Everything aggregate the service serves one reader (`token` None: anonymous; else seat
    `seat`'s token of `match_id`), the CLI's list and show through it included."""
    from typer.testing import CliRunner

    from matchlog.cli import app

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    got: dict[str, Any] = {}
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:

        def answer(path: str, **params: Any) -> Any:
            response = client.get(path, params=params)
            assert response.status_code == 200, (path, response.text[:300])
            if response.headers["content-type"].startswith("application/vnd.apache.arrow"):
                import pyarrow as pa

                return pa.ipc.open_stream(response.content).read_all().to_pylist()
            return response.text

        got["health"] = answer("/api/health")
        got["list"] = answer("/api/matches", limit=10_000)
        got["stats"] = answer("/api/stats")
        got["stats by seat"] = answer("/api/stats", by="seat", as_seat=-1)
        got["results"] = answer("/api/frames/results")
        got["seats"] = answer("/api/frames/seats", as_seat=-1)
        got["audit all"] = answer("/api/audit")
        got["verify"] = answer("/api/verify")
        got["export"] = answer("/api/export", as_seat=-1)
        got["ratings"] = answer("/api/ratings")  # from ended matches' results only
        env = {"MATCHLOG_TOKEN": token} if token else {}
        listed = CliRunner().invoke(app, ["list", "--json", "--limit", "10000", "--server", server.url], env=env)
        got["cli list"] = (listed.exit_code, listed.stdout)
        if match_id is not None:
            got["info"] = answer(f"/api/matches/{match_id}")
            got["export own"] = answer("/api/export", match=match_id, as_seat=seat)
            args = ["show", match_id, "--as-seat", str(seat), "--json", "--server", server.url]
            shown = CliRunner().invoke(app, args, env=env)
            got["cli show"] = (shown.exit_code, shown.stdout)
            args = ["export", match_id, "--format", "html", "--as-seat", str(seat), "--server", server.url]
            page = CliRunner().invoke(app, args, env=env)
            got["cli html"] = (page.exit_code, page.stdout)
    return got


def test_nothing_aggregate_the_service_serves_depends_on_what_a_reader_may_not_know(tmp_path: Path):
    """Issue 22, item 5. Two logs, one holding matches as played and the other their twins
    (`twins.py`: the same but for what one reader may not know), are served side by side: the
    statistics, frames, ratings, catalogue rows (the API's and the CLI's `list` and `show --json`, and
    the one a seat's HTML export holds), audits, verification, exports and health each reader gets
    (anonymous, and each twin's own seat with its token) are the same from both."""
    from .conftest import start_server
    from .twins import played, stored, twins

    logs = [tmp_path / "played.duckdb", tmp_path / "twins.duckdb"]
    pairs: list[tuple[str, int | None]] = []
    with Store(logs[0]) as played_log, Store(logs[1]) as twin_log:
        for game, seed in (("porrinha", 3), ("porrinha", 8), ("davinci", 4), ("davinci", 9)):
            records = played(game, seed)
            rng = random.Random(seed)
            for seat in [None, *range(len(records[0].event.seats))]:  # type: ignore[attr-defined]
                found = list(twins(records, seat, rng))
                for twin, until in found[:1] + found[-1:] if len(found) > 1 else found:
                    match_id = uuid7()
                    stored(played_log, records[:until], match_id=match_id)
                    stored(twin_log, twin, match_id=match_id)
                    pairs.append((str(match_id), seat))
    assert {seat for _, seat in pairs} >= {None, 0, 1}, pairs
    servers = [start_server(db) for db in logs]
    try:
        readers: list[tuple[str | None, int | None]] = [(None, None), *((m, s) for m, s in pairs if s is not None)]
        for match_id, seat in readers:
            got = []
            for server in servers:
                token = None
                if match_id is not None:
                    tokens = httpx.get(f"{server.url}/api/matches/{match_id}/tokens", headers=server.headers())
                    token = tokens.json()["seats"][seat]
                got.append(_aggregates(server, token, match_id, seat))
            assert got[0] == got[1], _differences(*got)
    finally:
        for server in servers:
            server.stop()

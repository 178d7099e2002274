"""Reads of a match are tagged by its head and the reader's view, answered 304 while they hold,
kept by a proxy only where that is safe, and never wait for a write (issue 25, item 1)."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import httpx
import msgspec
import pytest
from litestar.exceptions import LitestarDeprecationWarning
from litestar.testing import TestClient

from matchlog.events import GuessMade, HandChosen
from matchlog.file import FileLog

from .conftest import PATIENCE, Served

#: Every read of one match, as a path under /api/matches/{id} (or the export of that match).
READS = ["events", "state", "frames", "audit", "export"]


def _url(served: Served, match_id: str, read: str, **params: object) -> httpx.URL:
    """The URL of a read; an export without `as_seat` is the whole record (the admin's)."""
    if read == "export":
        return httpx.URL(f"{served.url}/api/export", params={"match": match_id, **params})
    return httpx.URL(f"{served.url}/api/matches/{match_id}/{read}", params=params)


def _matches(served: Served, game: str) -> list[dict]:
    return httpx.get(f"{served.url}/api/matches", params={"game": game}).json()


def _start(client: httpx.Client, served: Served) -> tuple[str, str, list[str]]:
    """A new Porrinha match of two seats: its id, its referee's token, its seats' tokens."""
    seats = [{"name": "a", "player": "p"}, {"name": "b", "player": "p"}]
    created = client.post("/api/matches", json={"game": "porrinha", "seats": seats}, headers=served.headers()).json()
    return created["match_id"], created["tokens"]["referee"], created["tokens"]["seats"]


def _append(client: httpx.Client, served: Served, match_id: str, referee: str, at: int, event: object) -> None:
    batch = {"expected_seq": at, "events": [{"event": msgspec.to_builtins(event)}]}
    answer = client.post(f"/api/matches/{match_id}/events", json=batch, headers=served.headers(referee))
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("read", READS)
def test_a_read_of_a_match_is_tagged_and_answered_304_while_its_head_holds(served: Served, read: str) -> None:
    match_id = _matches(served, "davinci")[0]["match_id"]
    for headers in ({}, served.headers()):
        url = _url(served, match_id, read, **({"as_seat": -1} if read == "export" and not headers else {}))
        first = httpx.get(url, headers=headers)
        tag = first.headers["etag"]
        assert first.status_code == 200 and first.content and tag.startswith('"')
        again = httpx.get(url, headers={**headers, "If-None-Match": tag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
        listed = httpx.get(url, headers={**headers, "If-None-Match": f'"other", W/{tag}'})
        assert listed.status_code == 304
        # Another view of the same match at the same head is another answer, with its own tag.
        other = httpx.get(_url(served, match_id, read, as_seat=0), headers={**served.headers(), "If-None-Match": tag})
        assert other.status_code == 200 and other.headers["etag"] != tag


def test_every_event_appended_moves_every_tag_and_a_stale_tag_gets_the_new_answer(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        match_id, referee, _ = _start(client, served)
        tags = {
            read: httpx.get(_url(served, match_id, read), headers=served.headers()).headers["etag"] for read in READS
        }
        _append(client, served, match_id, referee, 1, HandChosen(seat=0, hand=1))
        for read in READS:
            moved = httpx.get(_url(served, match_id, read), headers={**served.headers(), "If-None-Match": tags[read]})
            assert moved.status_code == 200 and moved.headers["etag"] != tags[read], read
        state = httpx.get(_url(served, match_id, "state")).json()
        assert state["last_seq"] == 1 and state["seq"] == 1
        events = httpx.get(_url(served, match_id, "events")).json()
        assert [line["seq"] for line in events] == [0, 1]


def test_a_spectator_may_have_an_answer_kept_by_any_cache_and_a_token_holder_only_by_its_own(
    served: Served,
) -> None:
    """A seat's view (or the whole record) is `private`: no shared cache holds it; a spectator's is
    `public`. Answers that may change are asked about again each time (`no-cache`), and the events
    up to a seq already stored are `immutable`: nothing appended later changes them."""
    with httpx.Client(base_url=served.url) as client:
        match_id, referee, seats = _start(client, served)
        _append(client, served, match_id, referee, 1, HandChosen(seat=0, hand=1))
        for read in READS:
            anonymous = httpx.get(_url(served, match_id, read, as_seat=-1))
            assert anonymous.headers["cache-control"] == "public, no-cache", read
            assert anonymous.headers["vary"] == "Authorization"
            for token in (seats[0], referee, served.admin):
                held = httpx.get(_url(served, match_id, read, as_seat=-1), headers=served.headers(token))
                assert held.headers["cache-control"] == "private, no-cache", read
        pinned = httpx.get(_url(served, match_id, "events", stop=1))
        assert pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
        tag = pinned.headers["etag"]
        assert httpx.get(_url(served, match_id, "events", stop=1), headers=served.headers(seats[1])).headers[
            "cache-control"
        ] == ("private, max-age=31536000, immutable")
        # Later events leave the pinned answer (and its tag) as they were, and the unpinned one moves.
        _append(client, served, match_id, referee, 2, HandChosen(seat=1, hand=0))
        again = httpx.get(_url(served, match_id, "events", stop=1), headers={"If-None-Match": tag})
        assert again.status_code == 304
        # A stop beyond the head is not pinned: the events after it are still to come.
        beyond = httpx.get(_url(served, match_id, "events", stop=50))
        assert beyond.headers["cache-control"] == "public, no-cache"
        _append(client, served, match_id, referee, 3, GuessMade(seat=0, guess=1))
        assert httpx.get(_url(served, match_id, "events", stop=50), headers={"If-None-Match": beyond.headers["etag"]})


def test_one_view_of_a_match_never_has_the_tag_of_another(served: Served) -> None:
    """Each view of each match of every game (the whole record, each seat, a spectator) has its
    own tag for every read: a cache keyed by the tag can never hand one reader another's view."""
    for game in ("porrinha", "backgammon", "davinci", "fish"):
        for info in _matches(served, game):
            match_id = info["match_id"]
            views: list[int | None] = [None, -1, *range(len(info["players"]))]
            for read in READS:
                tags = []
                for view in views:
                    params = {} if view is None else {"as_seat": view}
                    answer = httpx.get(_url(served, match_id, read, **params), headers=served.headers())
                    assert answer.status_code == 200, answer.text
                    tags.append(answer.headers["etag"])
                assert len(set(tags)) == len(views), (game, read)


def test_the_tag_says_nothing_of_the_head_hash(served: Served) -> None:
    """The tag is a keyed hash: a reader who may not see the head hash of a match that hides
    values cannot find it, or test guesses against it, in a tag."""
    info = _matches(served, "davinci")[0]
    whole = httpx.get(f"{served.url}/api/matches/{info['match_id']}", headers=served.headers()).json()
    tag = httpx.get(_url(served, info["match_id"], "state")).headers["etag"]
    assert whole["head_hash"] and whole["head_hash"][:16] not in tag


def test_a_slow_read_never_holds_a_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read held mid-fold (on an event, not a timer) while a referee appends: the append is
    answered, and durable, before the read is let go."""
    from matchlog.service.app import create_app

    entered, release = threading.Event(), threading.Event()
    slow_state = FileLog.state

    def held(self: FileLog, *args: object, **kwargs: object) -> object:
        entered.set()
        assert release.wait(PATIENCE)
        return slow_state(self, *args, **kwargs)

    log = FileLog(tmp_path / "held.duckdb", mode="create")
    admin = "t" * 43
    try:
        with warnings.catch_warnings():
            # Litestar deprecates, for its 3.0, ways the service's handlers are declared that 2.x
            # serves as ever (`matchlog serve` runs them); this test needs the app in its process.
            warnings.simplefilter("ignore", LitestarDeprecationWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            app = create_app(log, admin)
        with TestClient(app, timeout=PATIENCE) as client:
            bearer = {"Authorization": f"Bearer {admin}"}
            seats = [{"name": "a", "player": "p"}, {"name": "b", "player": "p"}]
            created = client.post("/api/matches", json={"game": "porrinha", "seats": seats}, headers=bearer).json()
            match_id = created["match_id"]
            monkeypatch.setattr(FileLog, "state", held)
            answers: list[httpx.Response] = []
            reader = threading.Thread(target=lambda: answers.append(client.get(f"/api/matches/{match_id}/state")))
            reader.start()
            assert entered.wait(PATIENCE)
            batch = {"expected_seq": 1, "events": [{"event": msgspec.to_builtins(HandChosen(seat=0, hand=1))}]}
            appended = client.post(f"/api/matches/{match_id}/events", json=batch, headers=bearer)
            assert appended.status_code == 200 and appended.json()["last_seq"] == 1
            assert log.store.read(match_id)[-1].seq == 1 and not answers  # durable, and the read still held
            release.set()
            reader.join(PATIENCE)
            assert answers[0].status_code == 200
    finally:
        release.set()
        log.close()


def test_an_audit_which_may_read_other_matches_is_tagged_by_the_whole_log(served: Served) -> None:
    """A knockout's audit checks its games and a duel's checks the pair's other game: an event
    committed to any match moves an audit's tag, while a state's stays."""
    finished = _matches(served, "porrinha")[0]["match_id"]
    audit = httpx.get(_url(served, finished, "audit"), headers=served.headers())
    state = httpx.get(_url(served, finished, "state"), headers=served.headers())
    with httpx.Client(base_url=served.url) as client:
        other, referee, _ = _start(client, served)
        _append(client, served, other, referee, 1, HandChosen(seat=0, hand=1))
    again = {"If-None-Match": audit.headers["etag"], **served.headers()}
    assert httpx.get(_url(served, finished, "audit"), headers=again).status_code == 200
    kept = {"If-None-Match": state.headers["etag"], **served.headers()}
    assert httpx.get(_url(served, finished, "state"), headers=kept).status_code == 304


def test_a_shared_cache_serves_a_finished_match_from_304s_and_a_running_match_never_stale(
    served: Served, tmp_path: Path
) -> None:
    """A real RFC 9111 shared cache (hishel's, as a proxy or CDN would be) in front of the service:
    after the first read of a finished match it answers from what it holds, asking again with the
    tag and getting 304s (or not asking at all, for the events up to a stored seq); it never keeps
    a seat's view; and a running match it serves is never stale, each event moving the tag."""
    from hishel import CacheOptions, SqliteStorage
    from hishel.httpx import CacheTransport

    storage = SqliteStorage(database_path=tmp_path / "proxy.db", default_ttl=3600)
    proxy = CacheTransport(httpx.HTTPTransport(), storage=storage, rfc=CacheOptions(shared=True))
    with httpx.Client(base_url=served.url, transport=proxy, timeout=PATIENCE) as through:
        finished = next(m for m in _matches(served, "porrinha") if m["status"] == "finished")["match_id"]
        for read in READS:
            url = _url(served, finished, read, as_seat=-1)
            first = through.get(url)
            assert first.status_code == 200 and first.extensions["caching"]["stored"], read
            for _ in range(3):
                again = through.get(url)
                status = again.extensions["caching"]
                assert again.status_code == 200 and again.content == first.content, read
                assert status["from_cache"] and status["revalidated"], read  # asked with the tag: a 304
        pinned = _url(served, finished, "events", stop=3)
        through.get(pinned)
        kept = through.get(pinned).extensions["caching"]
        assert kept["from_cache"] and not kept["revalidated"], "immutable: served without asking"
        # A seat's view is private: a shared cache never holds it.
        tokens = httpx.get(f"{served.url}/api/matches/{finished}/tokens", headers=served.headers()).json()
        for _ in range(2):
            own = through.get(_url(served, finished, "state", as_seat=0), headers=served.headers(tokens["seats"][0]))
            assert own.status_code == 200 and not own.extensions["caching"]["from_cache"]
        # A running match: every read through the cache has the event appended just before it.
        with httpx.Client(base_url=served.url) as client:
            match_id, referee, _ = _start(client, served)
            for seq, event in enumerate([HandChosen(seat=0, hand=1), HandChosen(seat=1, hand=0)], start=1):
                before = through.get(_url(served, match_id, "events", as_seat=-1))
                _append(client, served, match_id, referee, seq, event)
                after = through.get(_url(served, match_id, "events", as_seat=-1))
                assert [line["seq"] for line in after.json()] == [line["seq"] for line in before.json()] + [seq]
                state = through.get(_url(served, match_id, "state", as_seat=-1)).json()
                assert state["last_seq"] == seq

"""Schemathesis against the service's own OpenAPI document, on a real server of its own: the
document is valid and describes every error answer, and no request generated from it (valid or
not, anonymous or with the admin token, about real matches or made-up ones) gets a 500."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from .conftest import Served, serve_copy

#: Examples per operation, per caller and per mode (valid and invalid requests): anonymous and the
#: admin's; each of the other callers (a seat, a referee, a token no one was given).
EXAMPLES = 6
OTHER_EXAMPLES = 3


@pytest.fixture(scope="module")
def fuzzed(filled_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server of its own: generated requests may write anything the admin may."""
    server = serve_copy(filled_log, tmp_path_factory.mktemp("fuzzed"))
    yield server
    server.stop()


def _created(server: Served, game: str, seats: int) -> str:
    """A match started through the service (its chance drawn by the service), to append to."""
    body = {"game": game, "seats": [{"name": f"s{i}", "player": "remote"} for i in range(seats)]}
    answer = httpx.post(f"{server.url}/api/matches", json=body, headers=server.headers())
    assert answer.status_code == 201, answer.text
    return answer.json()["match_id"]


def test_the_openapi_document_is_valid_and_describes_every_error_answer(served: Served):
    schema = schemathesis.openapi.from_url(f"{served.url}/api/openapi.json")
    schema.validate()  # against the OpenAPI 3.1 meta-schema
    document = schema.raw_schema
    error = document["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"code", "message", "status"}
    operations = [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()]
    assert len({op["operationId"] for _, _, op in operations}) == len(operations)
    for path, method, op in operations:
        assert op["summary"] and op["description"], (method, path)
        for status in ("400", "401"):
            content = op["responses"][status]["content"]["application/json"]["schema"]
            assert content == {"$ref": "#/components/schemas/Error"}, (method, path, status)
    assert document["components"]["securitySchemes"]["token"]["scheme"] == "bearer"
    appends = document["paths"]["/api/matches/{match_id}/events"]["post"]["responses"]
    assert {"403", "404", "409", "422"} <= set(appends)


def _strategies(operation: Any, mode: GenerationMode, ids: list[str]) -> st.SearchStrategy[Any]:
    """Cases about made-up matches, and about real ones (whole ids and prefixes) where the path names one."""
    made_up = operation.as_strategy(generation_mode=mode)
    if "{match_id}" not in operation.path:
        return made_up
    real = [operation.as_strategy(generation_mode=mode, path_parameters={"match_id": m}) for m in ids]
    return st.one_of(made_up, *real)


def _call(case: Any, headers: dict[str, str], session: requests.Session) -> tuple[int, bytes]:
    """The status a generated request gets, and the start of its body if it is an error (a follow
    stream is closed as soon as it has answered: a running match's stream never ends)."""
    sent = case.as_transport_kwargs(base_url=case.operation.base_url, headers=headers)
    with session.request(**sent, timeout=30, stream=True) as response:
        body = response.raw.read(500) if response.status_code >= 400 else b""
        return response.status_code, body


#: Tokens no caller was given: any text, near misses of a match's token, and what broke before.
_FORGED = st.one_of(
    st.text(max_size=80),
    st.from_regex(r"m\.[0-9a-f]{32}\.(r|[0-9]{1,6})\.[A-Za-z0-9_-]{0,30}", fullmatch=True),
    st.builds(lambda hex_id, tail: f"m.{hex_id}.r.{tail}", st.from_regex(r"[0-9a-f]{32}", fullmatch=True), st.text()),
    st.sampled_from(["m.0123.r.forged", "\u00e9", "Bearer", "m." + "0" * 5_000, "\x00", " "]),
)


def _with_token(case: Any, token: str, in_header: bool) -> dict[str, str]:
    """`token` on `case`: in the Authorization header where HTTP lets a header carry it (visible
    characters of Latin-1, spaces and tabs between them: uvicorn refuses the rest before the service
    sees the request), else as the `token` query parameter."""
    value = f"Bearer {token}"
    if in_header and all(c in "\t " or 0x21 <= ord(c) <= 0x7E or 0x80 <= ord(c) <= 0xFF for c in value):
        return {"Authorization": value.strip()}
    case.query = {**(case.query or {}), "token": token}
    return {}


def test_no_generated_request_gets_a_500(fuzzed: Served):
    """Every operation, valid and invalid requests (headers such as Last-Event-ID too), from every
    kind of caller: anonymous, the admin, a seat, a referee, and a token no one was given."""
    running = {game: _created(fuzzed, game, seats) for game, seats in (("backgammon", 2), ("davinci", 3))}
    listed = httpx.get(f"{fuzzed.url}/api/matches").json()
    ids = [*running.values(), listed[0]["match_id"], listed[-1]["match_id"][:8]]
    tokens = httpx.get(f"{fuzzed.url}/api/matches/{running['davinci']}/tokens", headers=fuzzed.headers()).json()
    callers: dict[str, dict[str, str] | None] = {
        "anonymous": {},
        "admin": fuzzed.headers(),
        "seat": fuzzed.headers(tokens["seats"][1]),
        "referee": fuzzed.headers(tokens["referee"]),
        "forged": None,  # a token drawn for each request
    }
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/api/openapi.json")
    failures: list[str] = []
    with requests.Session() as session:
        for result in schema.get_all_operations():
            operation = result.ok()
            for who, headers in callers.items():
                for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

                    @settings(
                        max_examples=EXAMPLES if who in ("anonymous", "admin") else OTHER_EXAMPLES,
                        deadline=None,
                        database=None,
                        phases=[Phase.generate],
                        suppress_health_check=list(HealthCheck),
                    )
                    @given(case=_strategies(operation, mode, ids), token=_FORGED, in_header=st.booleans())
                    def check(case: Any, token: str, in_header: bool) -> None:
                        sent = headers if headers is not None else _with_token(case, token, in_header)  # noqa: B023
                        status, body = _call(case, sent, session)
                        if status >= 500:
                            failures.append(f"{who} {case.as_curl_command(sent)} -> {status} {body!r}")  # noqa: B023
                        if headers is None and token.strip():  # noqa: B023
                            # Refused for its token, or a path no route has (the router answers first).
                            routed = status not in (404, 405) or not body.startswith(b'{"code":"http.')
                            assert status == 401 or not routed, (case.as_curl_command(sent), status, body)

                    try:
                        check()
                    except Unsatisfiable:  # an operation with nothing to get wrong (no parameters, no body)
                        assert mode is GenerationMode.NEGATIVE, operation.label
    assert not failures, "\n".join(failures[:10])


def test_no_generated_event_sent_at_the_head_of_a_live_match_gets_a_500(fuzzed: Served):
    """Events of any game, well-formed or not, at the seq each live match waits for: the service
    judges every one as the audit would (422 with the rule, 400, ...), and never fails."""
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/api/openapi.json")
    operation = schema["/api/matches/{match_id}/events"]["POST"]
    failures: list[str] = []
    with requests.Session() as session:
        for game, seats in (("porrinha", 3), ("backgammon", 2), ("davinci", 2), ("fish", 2)):
            match_id = _created(fuzzed, game, seats)
            url = f"{fuzzed.url}/api/matches/{match_id}"

            @settings(
                max_examples=40,
                deadline=None,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(path_parameters={"match_id": match_id}))
            def check(case: Any) -> None:
                head = session.get(url, headers=fuzzed.headers()).json()["last_seq"]  # noqa: B023
                body = msgspec.json.decode(msgspec.json.encode(case.body))
                body["expected_seq"] = head + 1
                answer = session.post(f"{url}/events", json=body, headers=fuzzed.headers(), timeout=30)  # noqa: B023
                if answer.status_code >= 500:
                    failures.append(f"{game}: {body} -> {answer.text[:300]}")  # noqa: B023

            check()
    assert not failures, "\n".join(failures[:10])


def test_every_route_refuses_a_token_this_log_did_not_give(served: Served):
    document = httpx.get(f"{served.url}/api/openapi.json").json()
    match_id = httpx.get(f"{served.url}/api/matches", params={"limit": 1}).json()[0]["match_id"]
    forged = {"Authorization": "Bearer m.0123.r.forged"}
    with httpx.Client(base_url=served.url, headers=forged, timeout=30) as client:
        for path, item in document["paths"].items():
            for method in item:
                url = path.replace("{match_id}", match_id)
                url = re.sub(r"\{[a-z_]+\}", "0", url)  # any other parameter (an annotation's number)
                answer = client.request(method.upper(), url, json={} if method == "post" else None)
                assert answer.status_code == 401 and answer.json()["code"] == "auth.token", (method, path, answer.text)


# -- what the attack sent, each a 4xx with a code ----------------------------------------------


def _coded(answer: httpx.Response) -> tuple[int, str]:
    """The status and code of an error answer (a 500 or a body without a code fails)."""
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:300])
    return answer.status_code, answer.json()["code"]


def test_every_request_the_attack_sent_is_a_4xx_with_a_code(served: Served):
    """Issue 22, item 6: each of these was a 500 or an internal error."""
    with httpx.Client(base_url=served.url, timeout=60) as client:
        match_id = client.get("/api/matches", params={"game": "davinci", "limit": 1}).json()[0]["match_id"]
        # A token of non-ASCII text, on any route, anonymous or beside the admin's header.
        for path in ("/api/matches", f"/api/matches/{match_id}", "/api/stats", "/api/health"):
            forged = client.get(path, params={"token": f"m.{match_id.replace('-', '')}.r.\u00e9"})
            assert _coded(forged) == (401, "auth.token"), path
        long = client.get("/api/matches", params={"token": "m." + "0" * 10_000})
        assert _coded(long) == (401, "auth.token")
        # A Last-Event-ID that is not a plain number, or one of 5,000 digits.
        for last in (b"\xb2", b"1" * 5000, b"-3", b"1e3"):
            answer = client.get(f"/api/matches/{match_id}/follow", headers={"Last-Event-ID": last})
            assert _coded(answer) == (400, "usage.last_event_id"), last
        # A table of 40,000 seats.
        seats = [{"name": f"s{i}", "player": "remote"} for i in range(40_000)]
        big = client.post("/api/matches", json={"game": "porrinha", "seats": seats}, headers=served.headers())
        assert _coded(big) == (400, "usage.players")
        # Anonymous (or a reader's) writes with a malformed body: refused for who they are, not for the body.
        seat = client.get(f"/api/matches/{match_id}/tokens", headers=served.headers()).json()["seats"][0]
        writes = [
            ("/api/matches", {"x": 1}),
            ("/api/batches", [{"x": 1}]),
            ("/api/figures", "nonsense"),
            ("/api/sql", {"query": 5}),
            (f"/api/matches/{match_id}/events", {"expected_seq": -1}),
            (f"/api/matches/{match_id}/undo", {"reason": 7}),
            (f"/api/matches/{match_id}/fork", {}),
        ]
        for path, body in writes:
            for headers in ({}, {"Authorization": f"Bearer {seat}"}):
                status, code = _coded(client.post(path, json=body, headers=headers))
                assert status == 403 and code.startswith("auth."), (path, headers, code)
        bad_token = client.post("/api/matches", json={"x": 1}, headers={"Authorization": "Bearer forged"})
        assert _coded(bad_token) == (401, "auth.token")
        # A 404 tells no reader where the log is kept.
        missing = client.get("/api/matches/0190aaaa-0000-7000-8000-000000000000")
        assert _coded(missing) == (404, "store.unknown_match")
        assert str(served.db.parent) not in missing.text and served.db.name not in missing.text


def test_a_token_the_cli_cannot_send_is_a_clear_error(served: Served, monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from matchlog.cli import app

    monkeypatch.setenv("MATCHLOG_TOKEN", "t\u00f6ken")
    result = CliRunner().invoke(app, ["list", "--server", served.url])
    assert result.exit_code == 2, result.output
    assert "error[usage.token]" in result.stderr and "Traceback" not in result.output + result.stderr

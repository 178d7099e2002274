"""Schemathesis against the service's own OpenAPI document, on a real server of its own: the
document is valid and describes every error answer, and no request generated from it (valid or
not, anonymous or with the admin token, about real matches or made-up ones) gets a 500."""

from __future__ import annotations

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

#: Examples per operation, per caller and per mode (valid and invalid requests).
EXAMPLES = 6


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
    """The status a generated request gets, and the start of its body if it is a 500 (a follow
    stream is closed as soon as it has answered: a running match's stream never ends)."""
    sent = case.as_transport_kwargs(base_url=case.operation.base_url, headers=headers)
    with session.request(**sent, timeout=30, stream=True) as response:
        body = response.raw.read(500) if response.status_code >= 500 else b""
        return response.status_code, body


def test_no_generated_request_gets_a_500(fuzzed: Served):
    running = {game: _created(fuzzed, game, seats) for game, seats in (("backgammon", 2), ("davinci", 3))}
    listed = httpx.get(f"{fuzzed.url}/api/matches").json()
    ids = [*running.values(), listed[0]["match_id"], listed[-1]["match_id"][:8]]
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/api/openapi.json")
    failures: list[str] = []
    with requests.Session() as session:
        for result in schema.get_all_operations():
            operation = result.ok()
            for who, headers in (("anonymous", {}), ("admin", fuzzed.headers())):
                for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

                    @settings(
                        max_examples=EXAMPLES,
                        deadline=None,
                        database=None,
                        phases=[Phase.generate],
                        suppress_health_check=list(HealthCheck),
                    )
                    @given(case=_strategies(operation, mode, ids))
                    def check(case: Any) -> None:
                        status, body = _call(case, headers, session)  # noqa: B023
                        if status >= 500:
                            failures.append(f"{who} {case.as_curl_command()} -> {status} {body!r}")  # noqa: B023

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
                answer = client.request(method.upper(), url, json={} if method == "post" else None)
                assert answer.status_code == 401 and answer.json()["code"] == "auth.token", (method, path, answer.text)

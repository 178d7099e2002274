"""`matchlog audit --all --ray`: the re-judging of a large log spread over a Ray cluster.

This process reads the log (a file, a server or an archive, through the `Log` interface): for each
batch of matches it verifies the hash chains itself and sends the batch's events, as one Arrow
table, to a task; the task decodes them and judges every match by the rules
(`replay.audit_records`); the reports come back and are given out in match id order, each with its
chain findings first, exactly as `Log.audit` gives them. A knockout's record is audited here, since
checking it reads the other matches of the log. A task lost with its node is sent again.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from matchlog.events import DecodeError, Record, RemoteError, decode, uuid_from_int
from matchlog.replay.audit import AuditFinding, MatchAudit, audit_records

from .connect import connected, require_ray

if TYPE_CHECKING:
    from matchlog import Log

__all__ = ["audit_on_ray"]

ray = require_ray()

#: Matches a task judges at once, and batches in flight per CPU of the cluster.
_BATCH = 200
_BATCHES_PER_CPU = 2
#: How many times a batch lost with its node is sent again.
_RESENDS = 3


@ray.remote(max_retries=_RESENDS)
def _judge(frame: Any) -> list[MatchAudit]:
    """Audit every match of an events frame (Ray retries it elsewhere when its node dies)."""
    return [report if isinstance(report, MatchAudit) else audit_records(report) for report in _matches_of(frame)]


def _matches_of(frame: Any) -> Iterator[list[Record] | MatchAudit]:
    """Each match's records from an events frame (`Log.events_frame`: rows in match and seq order);
    a match with an event that does not decode comes as a report saying so (as `replay.audit` does)."""
    columns = frame
    at_us = columns.column("recorded_at").cast("int64").to_pylist()
    current: list[Record] = []
    broken: MatchAudit | None = None
    last = None
    rows = zip(
        *(columns.column(name).to_pylist() for name in ("match_id", "seq", "event_id", "actor", "type", "version")),
        at_us,
        columns.column("payload").to_pylist(),
        columns.column("hash").to_pylist(),
        strict=True,
    )
    for match_text, seq, event_id, actor, tag, version, at, payload, digest in rows:
        if match_text != last:
            if last is not None:
                yield broken or current
            last, current, broken = match_text, [], None
        if broken is not None:
            continue
        match_id = _uuid(match_text)
        try:
            event = decode(payload, tag=tag, version=version)
        except DecodeError as error:
            message = f"match {match_id} seq {seq}: {error.message}"
            broken = MatchAudit(match_id=str(match_id), game="?", events=0)
            broken.findings.append(AuditFinding(match_id=str(match_id), seq=None, rule=error.code, message=message))
            continue
        current.append(
            Record(
                match_id=match_id,
                seq=seq,
                event_id=_uuid(event_id),
                at_us=at,
                actor=actor,
                version=version,
                event=event,
                hash=bytes.fromhex(digest),
            )
        )
    if last is not None:
        yield broken or current


def audit_on_ray(
    log: Log, matches: Sequence[UUID | str] | None = None, *, address: str, batch: int = _BATCH
) -> Iterator[MatchAudit]:
    """Audit matches (all by default) with the judging done by tasks on the Ray cluster at
    `address`: one report each, in match id order, the chain's findings first.

    Raises:
        UsageError, RemoteError: ray is missing or the cluster cannot be reached (`connected`).
        UnknownMatch: a match asked for is not in the log.
    """
    with connected(address):
        if matches is None:
            infos = sorted(log.matches(), key=lambda info: info.match_id)
        else:
            infos = sorted((log.info(m) for m in matches), key=lambda info: info.match_id)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        chunks = collections.deque(infos[start : start + batch] for start in range(0, len(infos), batch))
        in_flight: collections.deque[tuple[list[Any], dict[str, list[AuditFinding]], Any]] = collections.deque()
        try:
            while chunks or in_flight:
                while chunks and len(in_flight) < cpus * _BATCHES_PER_CPU:
                    in_flight.append(_send(log, chunks.popleft()))
                yield from _received(log, *in_flight.popleft())
        finally:
            for _, _, task in in_flight:
                if task is not None:
                    ray.cancel(task, force=True)


def _send(log: Log, chunk: list[Any]) -> tuple[list[Any], dict[str, list[AuditFinding]], Any]:
    """Verify a chunk's chains here and send its matches (all but knockouts) to be judged."""
    ids = [info.match_id for info in chunk]
    chain: dict[str, list[AuditFinding]] = {}
    for finding in log.verify(ids).findings:
        chain.setdefault(str(finding.match_id), []).append(
            AuditFinding(match_id=str(finding.match_id), seq=finding.seq, rule=finding.code, message=finding.message)
        )
    judged = [info.match_id for info in chunk if info.game != "knockout"]
    task = _judge.remote(log.events_frame(matches=judged)) if judged else None
    return chunk, chain, task


def _received(log: Log, chunk: list[Any], chain: dict[str, list[AuditFinding]], task: Any) -> Iterator[MatchAudit]:
    """A chunk's reports in match id order: the task's, and the knockouts audited here."""
    try:
        judged = ray.get(task) if task is not None else []
    except ray.exceptions.RayError as error:
        text = str(error).strip().splitlines()
        raise RemoteError(
            f"a batch of {len(chunk)} matches could not be judged on the cluster: {text[0] if text else error}",
            code="cluster.lost",
        ) from None
    reports = {report.match_id: report for report in judged}
    knockouts = [info.match_id for info in chunk if info.game == "knockout"]
    reports.update((report.match_id, report) for report in (log.audit(knockouts) if knockouts else ()))
    for info in chunk:
        key = str(info.match_id)
        found = chain.pop(key, [])
        report = reports.get(key)
        if report is None:  # no rows at all: what the chain found is all there is to say
            yield MatchAudit(match_id=key, game=info.game, events=0, findings=found)
            continue
        if info.game != "knockout":  # (a knockout's report from the log has its chain findings already)
            report.findings[:0] = found
        yield report


def _uuid(text: str) -> UUID:
    return uuid_from_int(int(text.replace("-", ""), 16))

"""Checking the log: `verify` (the hash chains) and `audit` (the rules)."""

from __future__ import annotations

from typing import Annotated

import typer

from matchlog.events import UsageError

from .base import (
    DEFAULT_DB,
    Archive,
    Db,
    Json,
    Server,
    app,
    open_log,
    reports_errors,
)
from .output import (
    console,
    emit_json,
    finding_dict,
    print_audit,
    print_dispute,
)


@app.command("verify")
@reports_errors
def verify(
    match: Annotated[str | None, typer.Argument(help="One match (default: every match in the log).")] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
) -> None:
    """Check the hash chain of every event, and each match's head in the catalogue (with --archive: every
    archived chain, re-hashed, and each match's head row)."""
    with open_log(db, server, archive=archive) as log:
        result = log.verify(match)
    findings, count, matches = result.findings, result.events, result.matches
    if json:
        emit_json(
            {
                "ok": not findings,
                "matches": matches,
                "events": count,
                "findings": [finding_dict(f) for f in findings],
            }
        )
    elif findings:
        for finding in findings:
            where = f" seq {finding.seq}" if finding.seq is not None else ""
            console.out(f"FAIL match {finding.match_id}{where} [{finding.code}] {finding.message}")
    else:
        console.out(f"ok: {matches} match{'es' if matches != 1 else ''}, {count} events, every hash chain verifies")
    if findings:
        raise typer.Exit(1)


@app.command("audit")
@reports_errors
def audit_command(
    match: Annotated[str | None, typer.Argument(help="One match (an id or a unique prefix).")] = None,
    all_matches: Annotated[bool, typer.Option("--all", help="Every match in the log.")] = False,
    seq: Annotated[
        int | None, typer.Option(min=0, help="The dispute report for this event of MATCH: the evidence about it.")
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Judge on the Ray cluster at ADDRESS (host:port, auto, local): this process reads the log "
            "and verifies the chains, the cluster's nodes re-judge the matches; needs matchlog[ray].",
        ),
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
) -> None:
    """Re-judge recorded matches by the rules, from the log alone; exit status 1 on any finding.

    Checks the hash chain, every accepted answer (legal, in turn), every rejection and removal (really
    against that rule), every undo, the outcome, and every die, shuffle and board: possible, and drawn
    from the seed the referee committed to before play and revealed at the end.
    With --seq N: the state before event N (as the referee and as the acting seat saw it), the answer,
    the ruling and its rule, the legal alternatives, and the hashes that prove the record unchanged.
    With --ray, the re-judging is spread over a Ray cluster's nodes (the same reports, in the same order).
    Example: matchlog audit --all      matchlog audit 01a1fd1f-6d40 --seq 17      matchlog audit --all --ray auto
    """
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.arguments")
    if seq is not None and match is None:
        raise UsageError("--seq needs a MATCH", code="usage.arguments")
    if seq is not None and ray is not None:
        raise UsageError("--seq reports on one event here; --ray is for auditing many matches", code="usage.arguments")
    with open_log(db, server, archive=archive) as log:
        if seq is not None:
            report = log.dispute(match, seq)  # type: ignore[arg-type]
            findings = report.findings
            if json:
                emit_json(report)
            else:
                print_dispute(report)
        else:
            chosen = None if match is None else [match]
            if ray is not None:
                from matchlog.cluster import require_ray

                require_ray()
                from matchlog.cluster import audit_on_ray

                reports = list(audit_on_ray(log, chosen, address=ray))
            else:
                reports = list(log.audit(chosen))
            findings = [f for r in reports for f in r.findings]
            if json:
                emit_json({"ok": not findings, "matches": reports})
            else:
                print_audit(reports)
    if findings:
        raise typer.Exit(1)

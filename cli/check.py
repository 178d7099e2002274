"""Checking the log: `verify` (the hash chains) and `audit` (the rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from matchlog.events import MatchlogError, UsageError

from .base import (
    DEFAULT_DB,
    MAX_SEQ,
    Archive,
    AsSeat,
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
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also derive the catalogue, seats, figures and a sample of snapshots again from the events, "
            "and name every row that disagrees.",
        ),
    ] = False,
    against: Annotated[
        list[Path] | None,
        typer.Option(help="Checkpoints or receipts held elsewhere: the log must still be what they signed."),
    ] = None,
    key: Annotated[
        str | None, typer.Option(help="The public key they are signed with (default: the log's own), or a file.")
    ] = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    archive: Archive = None,
    json: Json = False,
) -> None:
    """Check the hash chain of every event, and each match's head in the catalogue (with --archive:
    every archived chain, re-hashed, and each match's head row).

    With --deep, also everything derived from the events: each row of matches, seats and figures is
    derived again and compared, and a sample of cached snapshots folded again (a bad one is dropped).
    With --against, also what needs no trust in the file: its Merkle tree, recomputed from its
    events, must extend every checkpoint given, and every receipt's match must still hold the events
    it signed at the leaves it signed; a match cut short, deleted, edited (every later hash
    recomputed) or moved is named with its seq.
    Example: matchlog verify --deep --against monday.checkpoint --against seat2.receipt
    """
    from .proofs import key_text, read_note_file  # (imported here: `matchlog --help` lists verify first)

    notes = [read_note_file(path) for path in against or []]
    with open_log(db, server, archive=archive) as log:
        result = log.verify(match, deep=deep)
        problems = log.verify_against(notes, key=key_text(key) if key else None) if notes else []
    findings, count, matches = result.findings, result.events, result.matches
    if json:
        emit_json(
            {
                "ok": not findings and not problems,
                "matches": matches,
                "events": count,
                "findings": [finding_dict(f) for f in findings],
                **({"against": [vars(p) for p in problems]} if notes else {}),
            }
        )
    elif findings or problems:
        for finding in findings:
            where = f" seq {finding.seq}" if finding.seq is not None else ""
            console.out(f"FAIL match {finding.match_id}{where} [{finding.code}] {finding.message}")
        for problem in problems:
            console.out(str(problem))
    else:
        derived = "; every derived row agrees with them" if deep else ""
        held = f"; the log is what the {len(notes)} checkpoint(s) and receipt(s) given signed" if notes else ""
        plural = "es" if matches != 1 else ""
        console.out(f"ok: {matches} match{plural}, {count} events, every hash chain verifies{derived}{held}")
    if findings or problems:
        raise typer.Exit(1)


@app.command("audit")
@reports_errors
def audit_command(
    match: Annotated[str | None, typer.Argument(help="One match (an id or a unique prefix).")] = None,
    all_matches: Annotated[bool, typer.Option("--all", help="Every match in the log.")] = False,
    seq: Annotated[
        int | None,
        typer.Option(min=0, max=MAX_SEQ, help="The dispute report for this event of MATCH: the evidence about it."),
    ] = None,
    as_seat: AsSeat = None,
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
    With --as-seat K: the report as seat K may see it (nothing of what it could not see then).
    With --ray, the re-judging is spread over a Ray cluster's nodes (the same reports, in the same order).
    Example: matchlog audit --all      matchlog audit 01a1fd1f-6d40 --seq 17
    """
    if (match is None) == (not all_matches):
        raise UsageError("give one MATCH or --all", code="usage.arguments")
    if seq is not None and match is None:
        raise UsageError("--seq needs a MATCH", code="usage.arguments")
    if as_seat is not None and match is None:
        raise UsageError("--as-seat needs a MATCH", code="usage.arguments")
    if ray is not None and (seq is not None or as_seat is not None):
        raise UsageError(
            "--ray is for auditing many matches whole: not with --seq or --as-seat", code="usage.arguments"
        )
    with open_log(db, server, archive=archive) as log:
        if seq is not None:
            report = log.dispute(match, seq, as_seat=as_seat)  # type: ignore[arg-type]
            findings = report.findings
            bundle, why_not = _bundle(log, match, seq, as_seat)  # type: ignore[arg-type]
            if json:
                emit_json(
                    {**msgspec.to_builtins(report), "proof": bundle, **({"proof_error": why_not} if why_not else {})}
                )
            else:
                print_dispute(report)
                console.out(_proof_line(match, seq, bundle, why_not))  # type: ignore[arg-type]
        else:
            chosen = None if match is None else [match]
            if ray is not None:
                from matchlog.cluster import require_ray

                require_ray()
                from matchlog.cluster import audit_on_ray

                reports = list(audit_on_ray(log, chosen, address=ray))
            else:
                reports = list(log.audit(chosen, as_seat=as_seat))
            findings = [f for r in reports for f in r.findings]
            if json:
                emit_json({"ok": not findings, "matches": reports})
            else:
                print_audit(reports)
    if findings:
        raise typer.Exit(1)


def _bundle(log: Any, match: str, seq: int, as_seat: int | None) -> tuple[dict[str, Any] | None, str | None]:
    """The proof bundle of the disputed event (as `as_seat` may have it), or why there is none."""
    try:
        return log.prove(match, seq=seq, as_seat=as_seat), None
    except MatchlogError as error:
        return None, f"error[{error.code}]: {error.message}"


def _proof_line(match: str, seq: int, bundle: dict[str, Any] | None, why_not: str | None) -> str:
    if bundle is None:
        return f"proof: none for this reader ({why_not})"
    entry = bundle["entries"][0]
    size = bundle["checkpoint"].split("\n")[1]
    return (
        f"proof: seq {seq} is leaf {entry['leaf']} of the log's tree of {size} entries, signed; "
        f"`matchlog prove {match} --seq {seq} -o FILE` writes the bundle for `matchlog check`"
    )

"""Proofs a third party can check: `key`, `checkpoint`, `receipt`, `prove` and `check` (and
`verify --against`, in check.py). docs/proofs.md has the formats."""

from __future__ import annotations

import json as jsonlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from matchlog.events import UsageError

from .base import DEFAULT_DB, MAX_SEQ, AsSeat, Db, Json, Match, Server, app, open_log, read_file, reports_errors
from .output import console, emit_json

Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write it to this file (default: stdout).")]


def write_out(text: str, output: Path | None, what: str) -> None:
    """Print `text`, or write it whole to `output` (never a half-written file) and say so."""
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    partial = output.with_name(output.name + ".partial")
    partial.write_text(text)
    partial.replace(output)
    console.out(f"{what} written to {output}")


def read_note_file(path: Path) -> str:
    """A checkpoint or receipt from a file.

    Raises:
        UsageError: the file cannot be read, is bigger than any note, or is not UTF-8.
    """
    from matchlog.proofs.verifier import MAX_NOTE_CHARS

    try:
        return read_file(path, MAX_NOTE_CHARS).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"cannot read {path}: {error}", code="usage.file") from None


def key_text(value: str) -> str:
    """A verifier key given as itself or as a file that holds it.

    Raises:
        UsageError: a file that cannot be read.
    """
    from matchlog.proofs.verifier import MAX_KEY_CHARS, names_a_file

    path = Path(value)
    if names_a_file(value):
        try:
            return read_file(path, MAX_KEY_CHARS).decode("utf-8").strip()
        except UnicodeDecodeError as error:
            raise UsageError(f"cannot read {path}: {error}", code="usage.file") from None
    if "+" not in value:
        raise UsageError(
            f"--key {value[:60]!r} is neither a public key (NAME+KEYID+BASE64) nor a file", code="usage.key"
        )
    return value.strip()


@app.command("key")
@reports_errors
def key(
    db: Db = DEFAULT_DB,
    server: Server = None,
    origin: Annotated[
        str | None,
        typer.Option(help="The key's name (and every checkpoint's origin) when it is made, e.g. example.org/games."),
    ] = None,
    json: Json = False,
) -> None:
    """Print the log's public key, what checks every checkpoint, receipt and bundle it signs.

    The key is made on first use and kept beside the log in DB.key, readable by its owner only.
    Publish the line this prints: `matchlog check BUNDLE --key KEY` needs nothing else.
    """
    with open_log(db, server) as log:
        if origin is not None:
            signer = getattr(log, "signer", None)
            if signer is None:
                raise UsageError("--origin names a key made here, not through a server", code="usage.origin")
            signer(name=origin)
        public = log.key()
    if json:
        name, _, rest = public.partition("+")
        emit_json({"key": public, "name": name, "key_id": rest.partition("+")[0]})
    else:
        console.out(public)


@app.command("checkpoint")
@reports_errors
def checkpoint(
    db: Db = DEFAULT_DB,
    server: Server = None,
    output: Output = None,
    latest: Annotated[bool, typer.Option("--latest", help="The latest kept, instead of signing one now.")] = False,
) -> None:
    """Sign the log's tree size and root now (a C2SP tlog-checkpoint, kept in the log) and print it.

    Publish it anywhere (a file, a web page, a chat): whoever holds it can later show that the log
    only grew since, or catch it rewritten (`matchlog verify --against`, `matchlog check`).
    Example: matchlog checkpoint -o today.checkpoint
    """
    with open_log(db, server) as log:
        note = log.checkpoint(new=not latest)
    write_out(note, output, "the checkpoint")


@app.command("receipt")
@reports_errors
def receipt(match: Match, db: Db = DEFAULT_DB, server: Server = None, output: Output = None) -> None:
    """Print the signed receipt of an ended match: its last seq and chain head, the tree they are in
    with their inclusion proof, and every event's leaf and hash. Every seat gets one when the match
    ends; keep it, and any later rewrite of the match is found against it.
    """
    with open_log(db, server) as log:
        note = log.receipt(match)
    write_out(note, output, "the receipt")


@app.command("prove")
@reports_errors
def prove(
    match: Match,
    seq: Annotated[
        int | None, typer.Option(min=0, max=MAX_SEQ, help="Prove this one event instead of the whole match.")
    ] = None,
    annotation: Annotated[
        int | None,
        typer.Option(min=0, max=MAX_SEQ, help="Prove this annotation of the match, with the event it speaks of."),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(help="A checkpoint or receipt you hold: the bundle also proves the log only grew since."),
    ] = None,
    as_seat: AsSeat = None,
    db: Db = DEFAULT_DB,
    server: Server = None,
    output: Output = None,
) -> None:
    """Write a proof bundle: the match's events (or the one event), their inclusion proofs in the
    latest signed checkpoint, and with --against the consistency proof from what you hold.

    Anyone checks it with the log's public key alone: `matchlog check BUNDLE --key KEY`, or
    `python verifier.py BUNDLE --key KEY` with proofs/verifier.py. With --as-seat, events that seat
    may not see are sealed (their hash, not their content); a seat proves a match in play one event
    at a time.
    Example: matchlog prove 01a1fcca-6e4c --seq 17 --against my.receipt -o seq17.proof
    """
    held = read_note_file(against) if against is not None else None
    if annotation is not None and (seq is not None or held is not None):
        raise UsageError(
            "--annotation proves one annotation and its event: not with --seq or --against", code="usage.prove"
        )
    with open_log(db, server) as log:
        if annotation is not None:
            bundle = log.prove_annotation(match, annotation, as_seat=as_seat)
        else:
            bundle = log.prove(match, seq=seq, against=held, as_seat=as_seat)
    text = jsonlib.dumps(bundle, separators=(",", ":")) + "\n"  # `python -m json.tool` shows it laid out
    write_out(text, output, f"the proof of {len(bundle['entries'])} event(s)")


@app.command("check")
@reports_errors
def check(
    bundle: Annotated[Path, typer.Argument(help="The bundle, as `matchlog prove` writes it.")],
    key: Annotated[str, typer.Option("--key", help="The log's public key (as `matchlog key` prints it), or a file.")],
    json: Json = False,
) -> None:
    """Check a proof bundle without the log: the log's signature, every event's hash and inclusion in
    the signed tree, and, against what you held, that the log only grew and kept every event it
    signed. Names what fails (the match and seq where it can); exit status 1 then.
    """
    from matchlog.proofs.verifier import (
        MAX_BUNDLE_BYTES,
        NoteError,
        check_bundle,
        load_bundle,
        parse_verifier_key,
        summary,
    )

    text = read_file(bundle, MAX_BUNDLE_BYTES)  # a bundle that is not there is said before anything else
    try:
        verifier = parse_verifier_key(key_text(key))
    except NoteError as error:
        raise UsageError(f"--key: {error}", code="usage.key") from None
    try:
        document: Any = load_bundle(text)
    except NoteError as error:  # read as the stand-alone verifier reads it: within bounds, no key twice
        raise UsageError(f"{bundle}: {error}", code=error.code) from None
    result = check_bundle(document, verifier)
    if json:
        emit_json(
            {
                "ok": result.ok,
                "match_id": result.match_id,
                "seqs": result.seqs,
                "size": result.size,
                "problems": [vars(p) for p in result.problems],
            }
        )
    elif result.ok:
        console.out(summary(result, verifier))
    else:
        for problem in result.problems:
            console.out(str(problem))
    if not result.ok:
        raise typer.Exit(1)

"""Annotations on the service: a match's annotations and analysis as the caller's token allows,
comments and rulings on its timeline, an analyser's notes, the export, and proofs of one.

    GET  /api/matches/{id}/annotations                 the analysis: annotations, summaries, graph (a view)
    POST /api/matches/{id}/annotations                 a comment or ruling (the admin; a seat on its own moves)
    POST /api/matches/{id}/analysis                    an analyser's notes on a match (the admin)
    GET  /api/matches/{id}/annotations/{number}/proof  a proof bundle of one annotation (a view)
    GET  /api/analysed?author=NAME                     the matches an analyser annotated (the admin)
    GET  /api/annotations/export                       every annotation as JSON Lines (the admin)

Annotations are a view like everything else (replay/annotations.py): a seat's token gets its own
analysis and what every reader may see, never another seat's in a game with hidden information.
A seat writes only about an event that is its own answer, into its own view, as "seat K".
"""

from __future__ import annotations

import io
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import Response, get, post
from litestar.params import Parameter

from matchlog.events import Forbidden, UsageError
from matchlog.replay.annotations import Annotation, Judged, MatchAnalysis, seat_author

from .auth import Access
from .core import Service, route

__all__ = ["ROUTES"]


#: The most comments a seat's token writes on one match (the admin's are not counted).
SEAT_COMMENTS = 100


class CommentRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A comment on event `seq`: its text, an optional glyph, whether it is a ruling, and the seat
    whose view it belongs to (None: everyone's; a seat's token writes into its own)."""

    seq: Annotated[int, msgspec.Meta(ge=0)]
    text: Annotated[str, msgspec.Meta(max_length=10_000)]
    mark: str | None = None
    ruling: bool = False
    seat: Annotated[int, msgspec.Meta(ge=0, le=32_767)] | None = None


class AnalysisRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An analyser's notes on one match, written all or none as `author`; `hashes` (seq -> hex) are
    the events' hashes as the analyser read them."""

    author: Annotated[str, msgspec.Meta(max_length=200)]
    notes: Annotated[list[Judged], msgspec.Meta(max_length=100_000)]
    hashes: dict[str, str] = {}


class Written(msgspec.Struct, frozen=True):
    """How many notes were written."""

    written: int


def _resolve(service: Service, match_id: str) -> UUID:
    return service.log.info(match_id).match_id


@route(get, "/api/matches/{match_id:str}/annotations", sync_to_thread=True, errors=(403, 404))
def match_annotations(
    match_id: str,
    service: Service,
    access: Access,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> MatchAnalysis:
    """A match's annotations as the caller may see them (`as_seat` as for `events`), each player's
    summary of its latest analysis, and its evaluation graph."""
    resolved = _resolve(service, match_id)
    return service.log.analysis(resolved, as_seat=access.view(resolved, as_seat))


@route(
    post,
    "/api/matches/{match_id:str}/annotations",
    sync_to_thread=True,
    status_code=201,
    errors=(404,),
    seat="annotating a match",
)
def annotate_match(match_id: str, data: CommentRequest, service: Service, access: Access) -> Annotation:
    """Put a comment (or an arbiter's ruling) on one event: the admin on any, in any view; a seat's
    token on its own answers, in its own view (the route's guard lets no one else in)."""
    resolved = _resolve(service, match_id)
    seat = data.seat
    author = "admin"
    if not access.is_admin:
        own = access.seat
        assert own is not None  # (the guard let in only this match's seats)
        records = service.log.read(resolved, start=data.seq, stop=data.seq)
        if not records:
            raise UsageError(f"seq {data.seq} is not in match {resolved}", code="usage.seq")
        if records[0].actor != own:
            said = f"seat {own} may annotate its own answers, and seq {data.seq} is not one"
            raise Forbidden(said, code="auth.write")
        if seat is not None and seat != own:
            raise Forbidden(f"seat {own} writes into its own view, not seat {seat}'s", code="auth.write")
        seat, author = own, seat_author(own)
        written = sum(1 for a in service.log.store.annotations([resolved]) if a.author == author)
        if written >= SEAT_COMMENTS:  # each is a leaf of the log's tree: a token may not grow it without end
            said = f"{author} has written {written} comments on match {resolved}, the most a seat may"
            raise Forbidden(said, code="auth.quota")
    written = service.log.annotate(
        resolved, data.seq, data.text, mark=data.mark, ruling=data.ruling, seat=seat, author=author
    )
    if access.is_admin:
        return written
    # The seat gets what it wrote as its view shows it (no hash where the game hides anything).
    mine = service.log.annotations_of(resolved, as_seat=seat)
    return next(a for a in reversed(mine) if a.at_us == written.at_us and a.seq == written.seq)


@route(
    post,
    "/api/matches/{match_id:str}/analysis",
    sync_to_thread=True,
    status_code=201,
    errors=(404,),
    admin="writing an analysis",
)
def put_analysis(match_id: str, data: AnalysisRequest, service: Service) -> Written:
    """Write an analyser's notes on a match, all or none (the admin's token)."""
    try:
        hashes = {int(seq): bytes.fromhex(digest) for seq, digest in data.hashes.items()}
    except ValueError:
        raise UsageError("hashes map seqs to hex hashes", code="usage.analysis") from None
    resolved = _resolve(service, match_id)
    return Written(service.log.put_annotations(resolved, data.author, data.notes, hashes=hashes))


@route(get, "/api/matches/{match_id:str}/annotations/{number:int}/proof", sync_to_thread=True, errors=(403, 404))
def prove_annotation(
    match_id: str,
    number: int,
    service: Service,
    access: Access,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> dict[str, Any]:
    """A proof bundle of one annotation and the event it speaks of, as the caller may have it."""
    resolved = _resolve(service, match_id)
    return service.log.prove_annotation(resolved, number, as_seat=access.view(resolved, as_seat))


@route(get, "/api/analysed", sync_to_thread=True, admin="the analysed matches")
def analysed(author: Annotated[str, Parameter(max_length=200)], service: Service) -> list[UUID]:
    """The matches an analyser (its name and version) has annotated: where `analyse --all` resumes."""
    return sorted(service.log.analysed(author))


@route(
    get,
    "/api/annotations/export",
    sync_to_thread=True,
    media_type="application/x-ndjson",
    admin="exporting annotations",
)
def export_annotations(service: Service, match: list[str] | None = None) -> Response[bytes]:
    """Every annotation (of each `match` given) as JSON Lines, each with its chain (the admin's)."""
    out = io.BytesIO()
    service.log.export_annotations(out, [_resolve(service, m) for m in match] if match else None)
    return Response(out.getvalue(), media_type="application/x-ndjson")


ROUTES = [match_annotations, annotate_match, put_analysis, prove_annotation, analysed, export_annotations]

"""The annotations of a log through the `Log` interface: the part of it that reads and writes the
stream beside the record (`store.annotations`), for a file opened here and for a server alike.

    annotations_of(match, as_seat)      a match's annotations as a reader sees them
    analysis(match, as_seat)            ... with each player's summary and the evaluation graph
    annotate(match, seq, text, ...)     a person's comment or an arbiter's ruling
    put_annotations(match, author, ...) an analyser's judgement of a match, all or none
    analysed(author)                    the matches an author has annotated (where to resume)
    annotations(...)                    every annotation as a frame (Arrow), one row each
    export_annotations(out, ...)        every annotation as JSON Lines, with its chain

A file holds everything and gives any view; a server decides from the caller's token (the admin
writes anything; a seat comments on its own moves, in its own view).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any
from uuid import UUID

import msgspec

from matchlog.events import StoreError, UsageError

if TYPE_CHECKING:
    from matchlog.replay.annotations import Annotation, Judged, MatchAnalysis

__all__ = ["Annotating", "FileAnnotating", "ServerAnnotating", "annotation_rows", "refused"]

#: The author a file's owner writes as (whoever holds the file holds everything: the admin).
OWNER = "admin"
_JSON = {"Content-Type": "application/json"}


class Annotating(abc.ABC):
    """What a `Log` answers about annotations (see the module docstring)."""

    @abc.abstractmethod
    def annotations_of(self, match: UUID | str, *, as_seat: int | None = None) -> list[Annotation]:
        """A match's annotations, in the order written, as `as_seat` sees them.

        Raises:
            UnknownMatch: no such match.
            UsageError: a seat the match does not have.
            Forbidden: (a server) the token may not have that view.
        """

    @abc.abstractmethod
    def analysis(self, match: UUID | str, *, as_seat: int | None = None) -> MatchAnalysis:
        """A match's annotations as `as_seat` sees them, each player's summary of the latest
        analysis and its evaluation graph.

        Raises:
            UnknownMatch, UsageError, Forbidden: as `annotations_of`.
        """

    @abc.abstractmethod
    def annotate(
        self,
        match: UUID | str,
        seq: int,
        text: str,
        *,
        mark: str | None = None,
        ruling: bool = False,
        seat: int | None = None,
    ) -> Annotation:
        """Put a comment (a ruling, with `ruling`) on event `seq` of a match, in the view of `seat`
        (None: everyone's); returns it as written.

        Raises:
            UnknownMatch: no such match.
            UsageError: no such seq or seat, or a text or mark that cannot be kept.
            Forbidden: (a server) the token may not annotate that event.
            StoreError: the log is read-only.
        """

    @abc.abstractmethod
    def put_annotations(
        self, match: UUID | str, author: str, notes: Sequence[Judged], *, hashes: dict[int, bytes] | None = None
    ) -> int:
        """Write an analyser's notes on a match, all or none, as `author` (its name and version);
        `hashes` (seq -> the event's hash as the analyser read it) guards against a changed event.
        Returns how many were written.

        Raises:
            UnknownMatch: no such match or seq.
            Forbidden: (a server) not the admin token.
            StoreError: the log is read-only, or an event is not the one analysed (`annotation.stale`).
        """

    @abc.abstractmethod
    def analysed(self, author: str) -> set[UUID]:
        """The matches `author` has annotated."""

    @abc.abstractmethod
    def prove_annotation(self, match: UUID | str, number: int, *, as_seat: int | None = None) -> dict[str, Any]:
        """A proof bundle of annotation `number` of a match and the event it speaks of, for
        `matchlog check` (docs/proofs.md).

        Raises:
            UnknownMatch, UsageError: no such match, annotation or seat.
            Forbidden: the view may not have it whole.
            ProofError: no checkpoint covers it and none may be made.
        """

    @abc.abstractmethod
    def export_annotations(self, out: IO[bytes], matches: Sequence[UUID | str] | None = None) -> int:
        """Write annotations (of `matches`, default all) as JSON Lines with their chain; returns how many.

        Raises:
            Forbidden: (a server) not the admin token.
        """

    def annotations(
        self, *, game: str | None = None, matches: Sequence[UUID | str] | None = None, as_seat: int | None = None
    ) -> Any:
        """Every annotation (of one game, or some matches) as an Arrow table, one row each, as
        `as_seat` sees them: the envelope and the note's fields as columns (`.to_pandas()`;
        polars.from_arrow).

        Raises:
            UsageError: no such game.
        """
        chosen = (
            [info.match_id for info in self.matches(game=game)]  # type: ignore[attr-defined]
            if matches is None
            else list(matches)
        )
        rows: list[Annotation] = []
        for match in chosen:
            rows += self.annotations_of(match, as_seat=as_seat)
        return annotation_rows(rows)


def annotation_rows(annotations: Sequence[Annotation]) -> Any:
    """Annotations as an Arrow table: the envelope, then every field any of their notes has."""
    import pyarrow as pa

    columns: dict[str, list[Any]] = {
        name: []
        for name in ("match_id", "seq", "at_us", "author", "seat", "type", "number", "event_hash", "hash", "leaf")
    }
    fields: dict[str, list[Any]] = {}
    for index, annotation in enumerate(annotations):
        columns["match_id"].append(str(annotation.match_id))
        columns["seq"].append(annotation.seq)
        columns["at_us"].append(annotation.at_us)
        columns["author"].append(annotation.author)
        columns["seat"].append(annotation.seat)
        columns["type"].append(annotation.note.__struct_config__.tag)  # type: ignore[attr-defined]
        columns["number"].append(annotation.number)
        columns["event_hash"].append(annotation.event_hash.hex() if annotation.event_hash else None)
        columns["hash"].append(annotation.hash.hex() if annotation.hash else None)
        columns["leaf"].append(annotation.leaf)
        note = msgspec.to_builtins(annotation.note)
        for name, value in note.items():
            if name == "type":
                continue
            kept = fields.setdefault(f"note_{name}" if name in columns else name, [None] * index)
            kept.append(msgspec.json.encode(value).decode() if isinstance(value, list | tuple | dict) else value)
        for kept in fields.values():
            if len(kept) < index + 1:
                kept.append(None)
    return pa.table({**columns, **fields})


class FileAnnotating(Annotating):
    """The annotations of a log file opened here (`FileLog`'s)."""

    store: Any

    def _info_and_seat(self, match: UUID | str, as_seat: int | None) -> Any:
        from .file import seat_for

        info = self.store.match(match)
        seat_for(as_seat, len(info.players))
        return info

    def annotations_of(self, match: UUID | str, *, as_seat: int | None = None) -> list[Annotation]:
        from matchlog.replay.annotations import seen_annotations

        info = self._info_and_seat(match, as_seat)
        return seen_annotations(self.store.annotations([info.match_id]), info, as_seat)

    def analysis(self, match: UUID | str, *, as_seat: int | None = None) -> MatchAnalysis:
        from matchlog.replay.annotations import match_analysis

        info = self._info_and_seat(match, as_seat)
        return match_analysis(self.store.annotations([info.match_id]), info, as_seat)

    def annotate(
        self,
        match: UUID | str,
        seq: int,
        text: str,
        *,
        mark: str | None = None,
        ruling: bool = False,
        seat: int | None = None,
        author: str = OWNER,
    ) -> Annotation:
        from matchlog.replay.annotations import comment, seen_annotations

        info = self.store.match(match)
        written = self.store.annotate([comment(info, seq, text, author=author, mark=mark, ruling=ruling, seat=seat)])
        return seen_annotations(written, info, None)[0]

    def put_annotations(
        self, match: UUID | str, author: str, notes: Sequence[Judged], *, hashes: dict[int, bytes] | None = None
    ) -> int:
        from matchlog.store.annotations import NewAnnotation, check_author

        check_author(author)  # even with no notes: a request naming such an author is refused
        info = self.store.match(match)
        given = hashes or {}
        batch = []
        for judged in notes:
            if judged.seat is not None and not 0 <= judged.seat < len(info.players):
                raise UsageError(
                    f"seat {judged.seat}: the match has seats 0 to {len(info.players) - 1}", code="usage.seat"
                )
            batch.append(
                NewAnnotation(
                    match_id=info.match_id,
                    seq=judged.seq,
                    author=author,
                    note=judged.note,
                    seat=judged.seat,
                    event_hash=given.get(judged.seq),
                )
            )
        return len(self.store.annotate(batch))

    def analysed(self, author: str) -> set[UUID]:
        return self.store.annotated(author)

    def prove_annotation(self, match: UUID | str, number: int, *, as_seat: int | None = None) -> dict[str, Any]:
        from matchlog.replay.annotations import prove_annotation

        return prove_annotation(self.store, match, number, as_seat=as_seat, signer=self.signer())  # type: ignore[attr-defined]

    def export_annotations(self, out: IO[bytes], matches: Sequence[UUID | str] | None = None) -> int:
        ids = None if matches is None else [self.store.resolve(m) for m in matches]
        return self.store.export_annotations(out, ids)


class ServerAnnotating(Annotating):
    """The annotations of a log served by `matchlog serve` (`ServerLog`'s), through its API."""

    # (`_request` and `_id` are ServerLog's own.)
    _request: Any
    _id: Any

    def annotations_of(self, match: UUID | str, *, as_seat: int | None = None) -> list[Annotation]:
        return self.analysis(match, as_seat=as_seat).annotations

    def analysis(self, match: UUID | str, *, as_seat: int | None = None) -> MatchAnalysis:
        from matchlog.replay.annotations import MatchAnalysis

        params = {} if as_seat is None else {"as_seat": as_seat}
        return self._request("GET", f"/api/matches/{self._id(match)}/annotations", params=params, decode=MatchAnalysis)

    def annotate(
        self,
        match: UUID | str,
        seq: int,
        text: str,
        *,
        mark: str | None = None,
        ruling: bool = False,
        seat: int | None = None,
    ) -> Annotation:
        from matchlog.replay.annotations import Annotation

        body = msgspec.json.encode({"seq": seq, "text": text, "mark": mark, "ruling": ruling, "seat": seat})
        return self._request(
            "POST", f"/api/matches/{self._id(match)}/annotations", content=body, headers=_JSON, decode=Annotation
        )

    def put_annotations(
        self, match: UUID | str, author: str, notes: Sequence[Judged], *, hashes: dict[int, bytes] | None = None
    ) -> int:
        body = msgspec.json.encode(
            {"author": author, "notes": list(notes), "hashes": {str(k): v.hex() for k, v in (hashes or {}).items()}}
        )
        got = self._request(
            "POST", f"/api/matches/{self._id(match)}/analysis", content=body, headers=_JSON, decode=dict[str, int]
        )
        return got["written"]

    def analysed(self, author: str) -> set[UUID]:
        return set(self._request("GET", "/api/analysed", params={"author": author}, decode=list[UUID]))

    def prove_annotation(self, match: UUID | str, number: int, *, as_seat: int | None = None) -> dict[str, Any]:
        params = {} if as_seat is None else {"as_seat": as_seat}
        path = f"/api/matches/{self._id(match)}/annotations/{number}/proof"
        return self._request("GET", path, params=params, decode=dict[str, Any])

    def export_annotations(self, out: IO[bytes], matches: Sequence[UUID | str] | None = None) -> int:
        params = [] if matches is None else [("match", self._id(m)) for m in matches]
        response = self._request("GET", "/api/annotations/export", params=params)
        out.write(response.content)
        return response.content.count(b"\n")


def refused(where: str) -> StoreError:
    """The error of a log that takes no annotations (an archive)."""
    return StoreError(
        f"{where} is an archive: it is read-only (it grows by matchlog archive)", code="archive.read_only"
    )

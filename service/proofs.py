"""The service's proofs: the log's public key, its signed checkpoints (the latest, one on demand for
the admin, and one every interval), receipts of ended matches, and proof bundles as the caller's
token allows (replay/proofs.py says what a seat's bundle may hold while a match is in play).

Key, checkpoints and receipts are public: they hold hashes only, and a receipt is given once its
match has ended. A bundle is the caller's view: the admin and a match's referee get every event
whole, a seat or a spectator gets what it sees whole and the rest sealed. Checking the whole log
against held checkpoints reads every event, so it is the admin's.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import MediaType, get, post

from matchlog.events import MatchlogError, ProofError, UnknownMatch
from matchlog.file import FileLog
from matchlog.proofs.verifier import Problem

from .auth import Access
from .core import Service, route

__all__ = ["ROUTES", "receipt_if_ended", "sign_every"]

_logger = logging.getLogger("matchlog.service")
#: The largest checkpoint or receipt a request may hold (a receipt lists every event of its match).
NOTE_BYTES = 4 << 20


class ProofRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A bundle of the match, or of its event `seq`, against a checkpoint or receipt held (`against`),
    as `as_seat` sees it (by default the fullest view the token allows)."""

    seq: Annotated[int, msgspec.Meta(ge=0)] | None = None
    against: Annotated[str, msgspec.Meta(max_length=NOTE_BYTES)] | None = None
    as_seat: Annotated[int, msgspec.Meta(ge=-1, le=32_767)] | None = None


class AgainstRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Checkpoints and receipts to check the log against, and the key they are signed with (default:
    the log's own)."""

    notes: Annotated[list[Annotated[str, msgspec.Meta(max_length=NOTE_BYTES)]], msgspec.Meta(max_length=10_000)]
    key: str | None = None


@route(get, "/api/key", media_type=MediaType.TEXT, sync_to_thread=True)
def log_key(service: Service, access: Access) -> str:
    """The log's verifier key (C2SP signed-note format): what checks every checkpoint, receipt and bundle."""
    return service.log.key() + "\n"


@route(get, "/api/checkpoint", media_type=MediaType.TEXT, sync_to_thread=True, errors=(409,))
def latest_checkpoint(service: Service, access: Access) -> str:
    """The latest checkpoint the log signed (C2SP tlog-checkpoint), signed now if it has none yet."""
    log = service.log
    try:
        return log.checkpoint(new=False)
    except ProofError as error:
        if error.code != "proof.no_checkpoint":
            raise
        return log.checkpoint()


@route(
    post,
    "/api/checkpoint",
    media_type=MediaType.TEXT,
    status_code=200,
    sync_to_thread=True,
    errors=(409,),
    admin="signing a checkpoint",
)
def sign_checkpoint(service: Service) -> str:
    """Sign the tree as it stands now (the admin's; the latest if it has not grown)."""
    return service.log.checkpoint()


@route(get, "/api/matches/{match_id:str}/receipt", media_type=MediaType.TEXT, sync_to_thread=True, errors=(404, 409))
def match_receipt(match_id: str, service: Service, access: Access) -> str:
    """The signed receipt of an ended match (409 while it is in play)."""
    return service.log.receipt(match_id)


@route(post, "/api/matches/{match_id:str}/proof", status_code=200, sync_to_thread=True, errors=(403, 404, 409))
def match_proof(match_id: str, data: ProofRequest, service: Service, access: Access) -> dict[str, Any]:
    """A proof bundle of the match or of one event, for `matchlog check`, as the caller may see it
    (against a receipt of a match the log no longer has: a bundle that says so, with no events)."""
    log = service.log
    try:
        info = log.info(match_id)
    except UnknownMatch:
        if data.against is None:
            raise
        return log.prove(match_id, against=data.against)
    view = access.view(info.match_id, data.as_seat)
    return log.prove(info.match_id, seq=data.seq, against=data.against, as_seat=view)


@route(
    post,
    "/api/verify/against",
    status_code=200,
    sync_to_thread=True,
    admin="checking the whole log against checkpoints",
)
def verify_against(data: AgainstRequest, service: Service) -> list[Problem]:
    """Check the whole log against checkpoints and receipts held elsewhere (the admin's: it reads
    every event)."""
    return service.log.verify_against(data.notes, key=data.key)


ROUTES = [log_key, latest_checkpoint, sign_checkpoint, match_receipt, match_proof, verify_against]


def receipt_if_ended(log: FileLog, match_id: UUID, ended: bool) -> str | None:
    """The receipt an append that ended a match answers with (None if it did not, or if it cannot be
    made now: the events are stored either way, and `GET .../receipt` gives it later)."""
    if not ended:
        return None
    try:
        return log.receipt(match_id)
    except MatchlogError as error:
        _logger.warning("no receipt for match %s: %s", match_id, error)
        return None


async def sign_every(log: FileLog, seconds: float) -> None:
    """Sign a checkpoint now and then every `seconds` (only when the tree has grown), until cancelled."""
    while True:
        try:
            await asyncio.to_thread(log.checkpoint)
        except Exception:  # the next interval tries again
            _logger.exception("signing a checkpoint failed")
        await asyncio.sleep(seconds)

"""Who may see and do what: the admin token, each match's referee token, its seat tokens, and
everyone else.

- The admin token (made on the first start, kept beside the log in a file only its owner can
  read) may do anything and see any view.
- A match's referee token (given when a referee creates the match through the service) may
  append to that match, draw its chance, undo and abandon it, and see it whole.
- A seat token sees that match exactly as its seat may (what `--as-seat K` shows), and writes nothing.
- Without a token (or for matches its token is not about) a reader sees what a spectator sees,
  and writes nothing.

Match tokens are not stored: each is its match, its role and an HMAC of both under a key derived
from the admin token, so the service checks them without a table and none reveals another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from uuid import UUID

import msgspec

from matchlog.events import Forbidden
from matchlog.locate import well_formed_token

__all__ = ["Access", "Keys", "MatchTokens"]

#: `as_seat` for a spectator.
_SPECTATOR = -1


class MatchTokens(msgspec.Struct, frozen=True):
    """The tokens of one match: its referee's, and one per seat (by seat number)."""

    match_id: UUID
    referee: str
    seats: list[str]


class Access(msgspec.Struct, frozen=True):
    """What one caller is: `admin`, the `referee` of a match, `seat` k of a match, or `public`."""

    role: str
    match_id: UUID | None = None
    seat: int | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def sees_all_of(self, match_id: UUID) -> bool:
        """Whether this caller may see the whole record of `match_id`."""
        return self.role == "admin" or (self.role == "referee" and self.match_id == match_id)

    def view(self, match_id: UUID, asked: int | None) -> int | None:
        """The view (`as_seat`) this caller gets of `match_id` when it asks for `asked` (None: the
        fullest it may have).

        Raises:
            Forbidden: it asked for a view it may not have.
        """
        if self.sees_all_of(match_id):
            return asked
        own = self.seat if self.role == "seat" and self.match_id == match_id else None
        if asked is None:
            return own if own is not None else _SPECTATOR
        if asked in (_SPECTATOR, own):
            return asked
        raise Forbidden(f"this token may not see seat {asked}'s view of match {match_id}", code="auth.view")

    def across_matches(self, asked: int | None) -> int | None:
        """The view this caller gets of an aggregate across matches (statistics, frames) when it asks
        for `asked`: the admin what it asks (None: whole); everyone else a spectator's (-1), since
        every match but its own it may read only as one.

        Raises:
            Forbidden: it asked for a view it may not have.
        """
        if self.is_admin:
            return asked
        if asked is None or asked == _SPECTATOR:
            return _SPECTATOR
        raise Forbidden("across matches this token reads what a spectator may (as_seat -1)", code="auth.view")

    def require_admin(self, what: str) -> None:
        """Raises Forbidden unless this caller is the admin."""
        if self.role != "admin":
            raise Forbidden(f"{what} needs the admin token", code="auth.admin")

    def require_writer(self, match_id: UUID, what: str) -> None:
        """Raises Forbidden unless this caller may write to `match_id` (the admin or its referee)."""
        if not self.sees_all_of(match_id):
            raise Forbidden(f"{what} needs the admin token or match {match_id}'s referee token", code="auth.write")


class Keys:
    """The admin token and the key that signs match tokens."""

    def __init__(self, admin: str) -> None:
        self._admin = admin.encode()
        self._key = hashlib.sha256(b"matchlog match tokens\0" + self._admin).digest()

    def _sign(self, match_id: UUID, role: str) -> str:
        mac = hmac.new(self._key, f"{match_id}:{role}".encode(), hashlib.sha256).digest()[:18]
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def _token(self, match_id: UUID, role: str) -> str:
        return f"m.{match_id.hex}.{role}.{self._sign(match_id, role)}"

    def tokens(self, match_id: UUID, seats: int) -> MatchTokens:
        """Every token of a match of `seats` seats."""
        return MatchTokens(match_id, self._token(match_id, "r"), [self._token(match_id, str(s)) for s in range(seats)])

    def access(self, token: str | None) -> Access:
        """Who a token says the caller is.

        Raises:
            Forbidden: a token was given and it is not one of this log's (`auth.token`, status 401).
        """
        if not token:
            return Access("public")
        if not well_formed_token(token):
            raise Forbidden("that token is not one this log gave out", code="auth.token")
        if hmac.compare_digest(token.encode(), self._admin):
            return Access("admin")
        parts = token.split(".")
        if len(parts) == 4 and parts[0] == "m":
            _, hex_id, role, signature = parts
            try:
                match_id = UUID(hex=hex_id)
            except ValueError:
                match_id = None
            well_formed = match_id is not None and (role == "r" or (role.isdigit() and len(role) <= 5))
            if well_formed and hmac.compare_digest(signature, self._sign(match_id, role)):  # type: ignore[arg-type]
                return Access("referee", match_id) if role == "r" else Access("seat", match_id, int(role))
        raise Forbidden("that token is not one this log gave out", code="auth.token")

"""The log's signing key and what it signs: C2SP signed notes, checkpoints (tlog-checkpoint) and
receipts, written so that existing tooling (Go's golang.org/x/mod/sumdb/note, the transparency-dev
and sigstore clients) reads the keys and checkpoints as its own.

The key lives in a file beside the log (`DB.key`), created on first use, readable by its owner only,
in Go's signer-key format: `PRIVATE+KEY+<name>+<hex key id>+<base64(0x01 || Ed25519 seed)>`. Its
public half, the verifier key `<name>+<hex key id>+<base64(0x01 || public key)>`, is what a player
needs to check anything the log signed. The name is also the origin line of every checkpoint.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .verifier import MAX_KEY_CHARS, RECEIPT_KIND, NoteError, VerifierKey, key_id

__all__ = ["Signer", "checkpoint_text", "default_name", "key_path", "load_signer", "receipt_text"]

_PRIVATE = "PRIVATE+KEY+"


class Signer:
    """An Ed25519 key with its signed-note name: signs note texts."""

    def __init__(self, name: str, seed: bytes) -> None:
        if not name or "+" in name or any(c.isspace() for c in name):
            raise NoteError("key.format", f"a key name has no spaces and no '+': {name!r}")
        self.name = name
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        public = self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.verifier = VerifierKey(name, key_id(name, public), public)

    @classmethod
    def generate(cls, name: str) -> Signer:
        return cls(name, secrets.token_bytes(32))

    @classmethod
    def parse(cls, text: str) -> Signer:
        """Read a signer key (Go's note format).

        Raises:
            NoteError: it is not one, or its key ID does not match it.
        """
        if len(text) > MAX_KEY_CHARS:
            raise NoteError("key.format", f"a signer key is at most {MAX_KEY_CHARS} characters")
        text = text.strip()
        parts = text[len(_PRIVATE) :].split("+", 2)  # the base64 key may hold '+' itself
        if not text.startswith(_PRIVATE) or len(parts) != 3 or len(parts[1]) != 8:
            raise NoteError("key.format", "a signer key reads PRIVATE+KEY+NAME+KEYID+BASE64")
        name, hex_id, encoded = parts
        try:
            raw = base64.b64decode(encoded, validate=True)
            claimed = int(hex_id, 16)
        except (ValueError, binascii.Error):
            raise NoteError("key.format", "the signer key's id is not hex or its key is not base64") from None
        if len(raw) != 33 or raw[0] != 0x01:
            raise NoteError("key.format", "only Ed25519 signer keys (type 0x01, a 32-byte seed) are supported")
        signer = cls(name, raw[1:])
        if signer.verifier.id != claimed:
            raise NoteError("key.format", "the signer key's id does not match its name and key")
        return signer

    def private_text(self) -> str:
        encoded = base64.b64encode(b"\x01" + self._key.private_bytes_raw()).decode()
        return f"{_PRIVATE}{self.name}+{self.verifier.id:08x}+{encoded}"

    def sign(self, text: str) -> str:
        """The signed note of `text` (which ends with a newline and has no control characters)."""
        if not text.endswith("\n") or any(ord(c) < 0x20 and c != "\n" for c in text):
            raise NoteError("note.format", "a note's text ends with a newline and has no other control characters")
        signature = self.verifier.id.to_bytes(4, "big") + self._key.sign(text.encode())
        return f"{text}\n\u2014 {self.name} {base64.b64encode(signature).decode()}\n"


def key_path(db: str | Path) -> Path:
    """The file that holds a log's signing key."""
    return Path(f"{db}.key")


def default_name(db: str | Path) -> str:
    """A name for a new log's key: the log file's name and a random tag, so two logs never share one."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", Path(db).stem)[:40] or "log"
    return f"matchlog/{stem}-{secrets.token_hex(4)}"


def load_signer(db: str | Path, *, create: bool, name: str | None = None) -> Signer | None:
    """The signing key of the log at `db`: read from its key file, or (with `create`) made on first
    use in a file only its owner can read; None when there is none and none may be made.

    Raises:
        NoteError: the key file is not a signer key, or `name` differs from the existing key's.
    """
    path = key_path(db)
    try:
        with path.open() as file:  # no further than a key could be
            signer = Signer.parse(file.read(MAX_KEY_CHARS + 1))
    except FileNotFoundError:
        if not create:
            return None
        signer = Signer.generate(name or default_name(db))
        # Written whole to a private file first, then linked into place: the link is atomic and
        # fails if another process won the race, so no reader ever sees a half-written key.
        draft = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as out:
                out.write(signer.private_text() + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.link(draft, path)
        except FileExistsError:  # another process made it first: use that one
            return load_signer(db, create=False, name=name)
        finally:
            draft.unlink(missing_ok=True)
        return signer
    except PermissionError:
        return None
    if name is not None and name != signer.name:
        raise NoteError("key.name", f"the log's key is already named {signer.name!r}")
    return signer


def checkpoint_text(origin: str, size: int, root: bytes) -> str:
    """The note text of a checkpoint (C2SP tlog-checkpoint): origin, size, base64 root."""
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"


def receipt_text(
    origin: str,
    match_id: str,
    events: list[tuple[int, int, bytes]],
    size: int,
    root: bytes,
    proof: list[bytes],
) -> str:
    """The note text of a receipt: the match, its head and leaf, the tree and the head's inclusion
    proof in it, and every event of the match (seq, leaf, chain hash). docs/proofs.md has the format."""
    b64 = base64.b64encode
    last_seq, leaf, head = events[-1]
    lines = [
        origin,
        RECEIPT_KIND,
        f"match {match_id} {last_seq}",
        f"head {b64(head).decode()}",
        f"tree {size} {b64(root).decode()}",
        f"leaf {leaf}",
        " ".join(["proof", *(b64(p).decode() for p in proof)]),
        *(f"event {seq} {at} {b64(digest).decode()}" for seq, at, digest in events),
    ]
    return "\n".join(lines) + "\n"

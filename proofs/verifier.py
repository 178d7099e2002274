"""Check matchlog's proofs without matchlog: the one module a player, an organiser or a course's staff
needs to settle a dispute without trusting the log's owner.

    python -m matchlog.proofs.verifier BUNDLE --key KEY      # with matchlog installed
    python verifier.py BUNDLE --key KEY                      # this file alone, beside the bundle

It needs Python 3.11 or later and the `cryptography` package (42 or later, for Ed25519 signatures;
the standard library has none), nothing else: no DuckDB, no other part of matchlog. Without
`cryptography` it prints one line saying so (`error[verifier.needs]`) and exits 2. Read it top to
bottom; docs/proofs.md describes the same formats.

It reads a bundle strictly: exactly the format's fields, each of its one type, within bounds (size,
depth, numbers below 2**63), no key twice; every value it takes is bound by a signature, a chain hash
or the tree, and anything else is refused (`bundle.format`), so a bundle that checks proves exactly
what `Checked.statement` says, and one changed anywhere fails or proves the same.

What it checks (each failure is a `Problem` with a stable code, and the match and seq where it has
them):

- the log's signature on the bundle's checkpoint (a C2SP signed note, tlog-checkpoint format);
- every whole event's chain hash, recomputed from its row and the hash before it (store/chain.py
  defines the chain; `chain_hash` below is the same definition, kept here so this file stands alone);
- every event's inclusion in the checkpoint's Merkle tree (RFC 9162, SHA-256: the leaf of an event
  is its chain hash; leaf hash = H(0x00 || leaf), node hash = H(0x01 || left || right));
- with what the disputant held before (an older checkpoint, or the receipt their seat got when the
  match ended), that the log only grew since (a consistency proof), and, for a receipt of the same
  match, that no event it signed was cut, changed or moved;
- every annotation the bundle proves (an analysis, a comment or a ruling beside the match: leaves of
  the same tree, `annotation_hash` their chain): its hash from its row and the annotation before it,
  its inclusion in the tree, and that it names the hash of the event the bundle proves at its seq.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BUNDLE_FORMAT",
    "EMPTY_ROOT",
    "GENESIS",
    "MAX_BUNDLE_BYTES",
    "MAX_BUNDLE_DEPTH",
    "MAX_INDEX",
    "MAX_KEY_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_PROOF",
    "NEEDS",
    "RECEIPT_KIND",
    "Annotated",
    "Checked",
    "Checkpoint",
    "Entry",
    "NoteError",
    "Problem",
    "Receipt",
    "VerifierKey",
    "annotation_hash",
    "chain_hash",
    "check_bundle",
    "compare_receipt",
    "key_id",
    "leaf_hash",
    "load_bundle",
    "main",
    "names_a_file",
    "node_hash",
    "open_note",
    "parse_note",
    "parse_verifier_key",
    "read_note",
    "summary",
    "verify_consistency",
    "verify_inclusion",
]

#: The "previous hash" of a match's seq 0.
GENESIS = bytes(32)
#: The root of a tree with no leaves (RFC 9162: the hash of the empty string).
EMPTY_ROOT = hashlib.sha256(b"").digest()
#: The second line of a receipt's note text (never a number, so no checkpoint parser takes it).
RECEIPT_KIND = "matchlog receipt"
#: The `bundle` field of every proof bundle this module reads.
BUNDLE_FORMAT = "matchlog proof bundle 2"
#: What this file needs: Python and one package, for Ed25519 signatures (the standard library has none).
NEEDS = "Python 3.11 or later and the `cryptography` package, 42 or later (pip install 'cryptography>=42')"
#: The signature type byte of Ed25519 in signed notes.
_ED25519 = 0x01

# Bounds on what this module reads, so that any input is refused in time linear in its size: no
# number of the log reaches 2**63 (a tree, a leaf, a seq), a proof of a tree that size has at most 63
# hashes, and no note or bundle matchlog writes comes near these sizes.
#: The largest tree size, leaf, seq or time (in microseconds) a note or a bundle may name.
MAX_INDEX = (1 << 63) - 1
#: The most hashes an inclusion proof holds (63 for a tree of 2**63 leaves) or a consistency proof (2 x 63).
MAX_PROOF = 64
#: The longest note (a receipt of a match of a million events is 70 MB less than this).
MAX_NOTE_CHARS = 128 << 20
#: The largest bundle read (in bytes of its JSON) and how deep its JSON may nest (it needs 4).
MAX_BUNDLE_BYTES = 256 << 20
MAX_BUNDLE_DEPTH = 8
#: The longest verifier key (a name and 45 base64 characters).
MAX_KEY_CHARS = 1024
#: Any control character but a newline (a note holds none).
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")
_DASH = "\u2014 "


# -- hashes -------------------------------------------------------------------------------------


def leaf_hash(leaf: bytes) -> bytes:
    """RFC 9162's hash of a leaf: SHA-256(0x00 || leaf). matchlog's leaves are events' chain hashes."""
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 9162's hash of an interior node: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def chain_hash(
    prev: bytes,
    match_id: str,
    seq: int,
    event_id: str,
    at_us: int,
    actor: int | None,
    game: str,
    type: str,
    version: int,
    seat: int | None,
    payload: str,
) -> bytes:
    """An event's chain hash: SHA-256 of the previous hash (hex) and every column of its row, one
    per line, the canonical JSON payload last (the same definition as store/chain.py)."""
    line = (
        f"{prev.hex()}\n{match_id}\n{seq}\n{event_id}\n{at_us}\n{'' if actor is None else actor}\n"
        f"{game}\n{type}\n{version}\n{'' if seat is None else seat}\n{payload}"
    )
    return hashlib.sha256(line.encode()).digest()


def annotation_hash(
    prev: bytes,
    match_id: str,
    number: int,
    annotation_id: str,
    at_us: int,
    seq: int,
    event_hash: bytes,
    author: str,
    seat: int | None,
    type: str,
    payload: str,
) -> bytes:
    """An annotation's hash: SHA-256 of a line that starts with the word `annotation` (so no event's
    hash, whose line starts with a hash, can pass for one), then the previous annotation's hash of
    the match (hex), every column of its row, the note's canonical JSON last (store/annotations.py)."""
    line = (
        f"annotation\n{prev.hex()}\n{match_id}\n{number}\n{annotation_id}\n{at_us}\n{seq}\n{event_hash.hex()}\n"
        f"{author}\n{'' if seat is None else seat}\n{type}\n{payload}"
    )
    return hashlib.sha256(line.encode()).digest()


# -- proofs (RFC 9162, sections 2.1.3.2 and 2.1.4.2) ----------------------------------------------


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], root: bytes) -> bool:
    """Whether `proof` shows the leaf hash `leaf` at `index` in the tree of `size` leaves and `root`."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(size1: int, size2: int, root1: bytes, root2: bytes, proof: list[bytes]) -> bool:
    """Whether `proof` shows the tree of `size2` leaves and `root2` extends the one of `size1` and `root1`."""
    if size1 < 0 or size2 < size1:
        return False
    if size1 == size2:
        return not proof and root1 == root2
    if size1 == 0:  # every tree extends the empty one
        return not proof and root1 == EMPTY_ROOT
    if not proof:
        return False
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == root1 and sr == root2 and sn == 0


# -- signed notes (C2SP signed-note, Ed25519) -----------------------------------------------------


class NoteError(ValueError):
    """A key, note, checkpoint or receipt that cannot be read, or a signature that does not verify."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class VerifierKey:
    """A log's public key as signed notes name it: `<name>+<hex key id>+<base64(0x01 || key)>`."""

    name: str
    id: int
    public: bytes

    def __str__(self) -> str:
        encoded = base64.b64encode(bytes([_ED25519]) + self.public).decode()
        return f"{self.name}+{self.id:08x}+{encoded}"


def key_id(name: str, public: bytes) -> int:
    """The signed-note key ID: the first four bytes of SHA-256(name || 0x0A || 0x01 || public key)."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([_ED25519]) + public).digest()
    return int.from_bytes(digest[:4], "big")


def _valid_name(name: str) -> bool:
    return bool(name) and "+" not in name and not any(c.isspace() for c in name)


def parse_verifier_key(text: str) -> VerifierKey:
    """Read a verifier key.

    Raises:
        NoteError: it is not an Ed25519 verifier key whose key ID matches its name and key.
    """
    if len(text) > MAX_KEY_CHARS:
        raise NoteError("key.format", f"a verifier key is at most {MAX_KEY_CHARS} characters, not {len(text):,}")
    parts = text.strip().split("+", 2)  # the base64 key may hold '+' itself
    if len(parts) != 3 or not _valid_name(parts[0]) or len(parts[1]) != 8:
        raise NoteError("key.format", "a verifier key reads NAME+KEYID+BASE64 (as `matchlog key` prints it)")
    name, hex_id, encoded = parts
    try:
        claimed = int(hex_id, 16)
        raw = base64.b64decode(encoded, validate=True)
    except (ValueError, binascii.Error):
        raise NoteError("key.format", "the key ID is not hex or the key is not base64") from None
    if len(raw) != 33 or raw[0] != _ED25519:
        raise NoteError("key.format", "only Ed25519 verifier keys (type 0x01, 32 bytes) are supported")
    if key_id(name, raw[1:]) != claimed:
        raise NoteError("key.format", "the key ID does not match the key's name and public key")
    return VerifierKey(name, claimed, raw[1:])


def _ed25519_verify(public: bytes, signature: bytes, message: bytes) -> bool:
    # Imported here so that the hashing and proof checks above work even without `cryptography`.
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:
        raise NoteError("verifier.needs", f"checking a signature needs {NEEDS}") from None

    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def open_note(note: str, key: VerifierKey) -> str:
    """The text of a signed note, once `key`'s signature on it has verified.

    Raises:
        NoteError: the note is malformed (`note.format`), or not signed by `key`, or its signature
            does not verify (`note.signature`).
    """
    if len(note) > MAX_NOTE_CHARS:
        raise NoteError("note.format", f"a note of {len(note):,} characters is longer than any matchlog signs")
    if _CONTROL.search(note):
        raise NoteError("note.format", "a signed note holds no control characters but newlines")
    split = note.rfind("\n\n")
    if split < 0 or not note.endswith("\n"):
        raise NoteError("note.format", "a signed note is text, a blank line, then signature lines")
    text, signatures = note[: split + 1], note[split + 2 :]
    verified = False
    for line in signatures.splitlines():
        if not line.startswith(_DASH) or line.count(" ") != 2:
            raise NoteError("note.format", f"not a signature line: {line[:60]!r}")
        name, encoded = line[len(_DASH) :].split(" ")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            raise NoteError("note.format", "a signature is not base64") from None
        if not _valid_name(name) or len(raw) < 5:
            raise NoteError("note.format", f"a malformed signature line for {name!r}")
        if name != key.name or int.from_bytes(raw[:4], "big") != key.id:
            continue  # another key's signature (a witness's, say): not ours to judge
        if not _ed25519_verify(key.public, raw[4:], text.encode()):
            raise NoteError("note.signature", f"the signature of {key.name} does not verify: the note was changed")
        verified = True
    if not verified:
        raise NoteError("note.signature", f"the note is not signed by the key {key.name}+{key.id:08x}")
    return text


# -- checkpoints and receipts ---------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    """A signed tree head (C2SP tlog-checkpoint): the log's origin, its tree's size and root."""

    origin: str
    size: int
    root: bytes


@dataclass(frozen=True)
class Receipt:
    """What the log signed when a match ended: the match's last seq and chain head, its leaf, the tree
    it is in (with the inclusion proof) and every event of the match (seq, leaf, chain hash)."""

    origin: str
    match_id: str
    last_seq: int
    head: bytes
    leaf: int
    size: int
    root: bytes
    proof: list[bytes]
    events: list[tuple[int, int, bytes]] = field(default_factory=list)

    @property
    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.origin, self.size, self.root)


def _b64(text: str, what: str) -> bytes:
    if len(text) != 44:  # the base64 of 32 bytes, padded
        raise NoteError("note.format", f"{what} is not the base64 of a 32-byte hash")
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise NoteError("note.format", f"{what} is not base64") from None
    if len(raw) != 32:
        raise NoteError("note.format", f"{what} is not a 32-byte hash")
    return raw


def _number(text: str, what: str) -> int:
    # Bounded before int() reads it: a number of the log is below 2**63 (at most 19 digits).
    if not 0 < len(text) <= 19 or not text.isascii() or not text.isdigit() or (text.startswith("0") and text != "0"):
        raise NoteError("note.format", f"{what} is not a decimal number below 2**63: {text[:30]!r}")
    value = int(text)
    if value > MAX_INDEX:
        raise NoteError("note.format", f"{what} is not a decimal number below 2**63: {text[:30]!r}")
    return value


def _words(line: str, first: str, count: int) -> list[str]:
    """The `count` words after `first` on a receipt's line.

    Raises:
        NoteError: the line is not `first` and that many words, one space apart.
    """
    words = line.split(" ")
    if words[0] != first or len(words) != count + 1 or not all(words[1:]):
        raise NoteError("note.format", f"a receipt's line here reads `{first}` and {count} word(s): {line[:60]!r}")
    return words[1:]


def parse_note(text: str) -> Checkpoint | Receipt:
    """What a verified note's text says: a checkpoint, or a matchlog receipt; nothing else is taken
    (no extension line, no line twice, nothing out of its place).

    Raises:
        NoteError: the text is neither (`note.format`).
    """
    if len(text) > MAX_NOTE_CHARS:
        raise NoteError("note.format", f"a note of {len(text):,} characters is longer than any matchlog signs")
    lines = text.split("\n")[:-1]
    if len(lines) < 3 or not all(lines) or not text.endswith("\n"):
        raise NoteError("note.format", "a checkpoint has an origin, a size and a root, each on a line")
    if lines[1] != RECEIPT_KIND:
        if len(lines) != 3:
            raise NoteError("note.format", "a checkpoint of matchlog has an origin, a size and a root, and no more")
        return Checkpoint(lines[0], _number(lines[1], "the tree size"), _b64(lines[2], "the root"))
    if len(lines) < 8:
        raise NoteError("note.format", "a receipt names its match, head, tree, leaf, proof and events")
    match_id, last = _words(lines[2], "match", 2)
    (head,) = _words(lines[3], "head", 1)
    size, root = _words(lines[4], "tree", 2)
    (leaf,) = _words(lines[5], "leaf", 1)
    proof_words = lines[6].split(" ")
    if proof_words[0] != "proof" or len(proof_words) > MAX_PROOF + 1:
        raise NoteError("note.format", f"a receipt's proof line holds at most {MAX_PROOF} hashes")
    proof = [_b64(p, "a proof hash") for p in proof_words[1:]]
    last_seq = _number(last, "the last seq")
    if len(lines) - 7 != last_seq + 1:
        raise NoteError("note.format", "a receipt lists every event of its match, seq 0 to its last, in order")
    events: list[tuple[int, int, bytes]] = []
    for number, line in enumerate(lines[7:]):
        seq, event_leaf, digest = _words(line, "event", 3)
        if _number(seq, "an event's seq") != number:
            raise NoteError("note.format", "a receipt lists every event of its match, seq 0 to its last, in order")
        events.append((number, _number(event_leaf, "an event's leaf"), _b64(digest, "a hash")))
    receipt = Receipt(
        origin=lines[0],
        match_id=match_id,
        last_seq=last_seq,
        head=_b64(head, "the head"),
        leaf=_number(leaf, "the leaf"),
        size=_number(size, "the tree size"),
        root=_b64(root, "the root"),
        proof=proof,
        events=events,
    )
    if events[-1][1:] != (receipt.leaf, receipt.head):
        raise NoteError("note.format", "the receipt's last event is not its head")
    return receipt


def read_note(note: str, key: VerifierKey) -> Checkpoint | Receipt:
    """A checkpoint or receipt signed by `key`, with its origin checked against the key's name.

    Raises:
        NoteError: malformed, not signed by `key`, or of another log.
    """
    said = parse_note(open_note(note, key))
    if said.origin != key.name:
        raise NoteError("note.origin", f"the note is of the log {said.origin!r}, not {key.name!r}")
    return said


# -- what can be wrong --------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One thing that failed: a stable code, what it means, and the match and seq where known."""

    code: str
    message: str
    match_id: str | None = None
    seq: int | None = None

    def __str__(self) -> str:
        where = f"match {self.match_id} " if self.match_id else ""
        where += f"seq {self.seq} " if self.seq is not None else ""
        return f"FAIL {where}[{self.code}] {self.message}"


def compare_receipt(
    receipt: Receipt, events: dict[int, tuple[int, bytes]] | None, last_seq: int | None
) -> list[Problem]:
    """What the log now shows of a match (`events`: seq -> (leaf, chain hash), None when the log has no
    such match; `last_seq` its last seq) against what the receipt signed: the first seq cut, changed
    or moved. Shared by `check` (events from a bundle) and `verify --against` (from the log file)."""
    match = receipt.match_id
    if events is None:
        return [
            Problem(
                "match.deleted", f"the receipt signed seqs 0 to {receipt.last_seq}; the log has no such match", match, 0
            )
        ]
    problems: list[Problem] = []
    for seq, leaf, digest in receipt.events:
        now = events.get(seq)
        if now is None:
            if last_seq is not None and seq > last_seq:
                message = f"the log ends the match at seq {last_seq}; the receipt signed it to seq {receipt.last_seq}"
                problems.append(Problem("match.cut", message, match, seq))
                break
            continue  # not in this bundle (a one-event bundle holds one)
        if now[1] != digest:
            message = (
                f"the event's hash is {now[1].hex()[:16]}…; the receipt signed {digest.hex()[:16]}…: "
                "it was changed (every later hash was recomputed to hide it)"
            )
            problems.append(Problem("event.changed", message, match, seq))
            break
        if now[0] != leaf:
            message = f"the event is leaf {now[0]} of the tree; the receipt signed leaf {leaf}: the log was reordered"
            problems.append(Problem("event.moved", message, match, seq))
            break
    return problems


# -- a bundle -----------------------------------------------------------------------------------

#: The fields of a bundle, of an entry and of an entry's row: exactly these, each of its one type.
#: Every value either is bound (by the checkpoint's or the held note's signature, by an event's
#: chain hash, by the tree) or is refused: a bundle carries nothing the checker takes on trust.
_BUNDLE_FIELDS = ("bundle", "checkpoint", "match_id", "previous", "entries", "nodes", "against", "consistency")
_ENTRY_FIELDS = ("seq", "leaf", "hash", "proof")
_ROW_FIELDS = ("event_id", "at_us", "actor", "game", "type", "version", "seat", "payload")
#: A bundle of an annotation has these too: the annotations proven and the hash before the first.
_ANNOTATED_FIELDS = ("annotation_previous", "annotations")
_ANNOTATION_FIELDS = ("number", "leaf", "hash", "proof", "row")
_ANNOTATION_ROW_FIELDS = ("annotation_id", "at_us", "seq", "event_hash", "author", "seat", "type", "payload")
_HASH = re.compile(r"[0-9a-f]{64}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: A JSON string, or a bracket or brace outside strings: what the depth scan of a bundle steps through.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_INT64 = (-(1 << 63), MAX_INDEX)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise ValueError(f"the key {name!r} is given twice in one object")
        found[name] = value
    return found


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > 19:  # before int() reads it: nothing in a bundle reaches 2**63
        raise ValueError(f"the number {text[:30]}... is longer than any in a bundle")
    return int(text)


def _no_number(text: str) -> Any:
    raise ValueError(f"{text[:30]} is not an integer: a bundle holds no other number")


def load_bundle(text: str | bytes) -> Any:
    """A bundle's JSON, read within bounds: at most MAX_BUNDLE_BYTES, nested at most MAX_BUNDLE_DEPTH
    deep (checked by one linear scan before parsing), no key twice in an object, no number but an
    integer. What it says is checked by `check_bundle`.

    Raises:
        NoteError: too big or too deep (`bundle.bounds`), or not such JSON (`bundle.json`).
    """
    if len(text) > MAX_BUNDLE_BYTES:
        raise NoteError("bundle.bounds", f"a bundle of {len(text):,} bytes is bigger than {MAX_BUNDLE_BYTES:,}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NoteError("bundle.json", f"byte {error.start}: the bundle is not UTF-8 text") from None
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        bracket = text[token.start()]
        if bracket in "[{":
            depth += 1
            if depth > MAX_BUNDLE_DEPTH:
                message = f"character {token.start()}: the JSON nests deeper than a bundle's {MAX_BUNDLE_DEPTH} levels"
                raise NoteError("bundle.bounds", message)
        elif bracket in "]}":
            depth -= 1
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_int=_integer,
            parse_float=_no_number,
            parse_constant=_no_number,
        )
    except ValueError as error:  # JSONDecodeError too
        raise NoteError("bundle.json", f"the bundle is not JSON as `matchlog prove` writes it: {error}") from None


@dataclass(frozen=True)
class Entry:
    """One event of a bundle: its seq, leaf, chain hash, the indexes of its inclusion proof into the
    bundle's nodes, and its row when whole (the columns the chain hash covers, in their order)."""

    seq: int
    leaf: int
    hash: bytes
    proof: tuple[int, ...]
    row: tuple[str, int, int | None, str, str, int, int | None, str] | None


def _format(where: str, message: str) -> NoteError:
    return NoteError("bundle.format", f"{where}: {message}")


def _object(value: Any, where: str, fields: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """`value` as an object of exactly `fields` (and any of `optional`).

    Raises:
        NoteError: it is not (`bundle.format`), naming the first field missing or unknown.
    """
    if type(value) is not dict:
        raise _format(where, f"is not an object, but {type(value).__name__}")
    for name in value:
        if name not in fields and name not in optional:
            raise _format(where, f"has a field no bundle has: {name[:40]!r}")
    for name in fields:
        if name not in value:
            raise _format(where, f"has no field {name!r}")
    return value


def _int(value: Any, where: str, low: int = 0, high: int = MAX_INDEX) -> int:
    if type(value) is not int or not low <= value <= high:  # bool is an int to Python, not to a bundle
        raise _format(where, f"is not an integer from {low} to {high}: {str(value)[:30]!r}")
    return value


def _maybe_int(value: Any, where: str) -> int | None:
    return None if value is None else _int(value, where, *_INT64)


def _str(value: Any, where: str) -> str:
    # No control characters: the chain hash joins a row's columns with newlines, so a column holding
    # one could be read as two, and two rows would have one hash.
    if type(value) is not str or _ANY_CONTROL.search(value):
        raise _format(where, "is not text without control characters")
    return value


def _hash(value: Any, where: str) -> bytes:
    if type(value) is not str or not _HASH.fullmatch(value):
        raise _format(where, "is not a hash (64 lower-case hex digits)")
    return bytes.fromhex(value)


def _list(value: Any, where: str, most: int) -> list[Any]:
    if type(value) is not list or len(value) > most:
        raise _format(where, f"is not a list of at most {most:,}")
    return value


_ANY_CONTROL = re.compile(r"[\x00-\x1f]")


def _row(value: Any, where: str) -> tuple[str, int, int | None, str, str, int, int | None, str]:
    row = _object(value, where, _ROW_FIELDS)
    event_id = _str(row["event_id"], f"{where}.event_id")
    if not _UUID.fullmatch(event_id):
        raise _format(f"{where}.event_id", "is not an event id (a UUID, lower-case)")
    return (
        event_id,
        _int(row["at_us"], f"{where}.at_us", *_INT64),
        _maybe_int(row["actor"], f"{where}.actor"),
        _str(row["game"], f"{where}.game"),
        _str(row["type"], f"{where}.type"),
        _int(row["version"], f"{where}.version"),
        _maybe_int(row["seat"], f"{where}.seat"),
        _str(row["payload"], f"{where}.payload"),
    )


def _entry(value: Any, where: str, nodes: int) -> Entry:
    entry = _object(value, where, _ENTRY_FIELDS, ("row",))
    proof = _list(entry["proof"], f"{where}.proof", MAX_PROOF)
    for number, index in enumerate(proof):
        _int(index, f"{where}.proof[{number}]", 0, nodes - 1)
    return Entry(
        seq=_int(entry["seq"], f"{where}.seq"),
        leaf=_int(entry["leaf"], f"{where}.leaf"),
        hash=_hash(entry["hash"], f"{where}.hash"),
        proof=tuple(proof),
        row=_row(entry["row"], f"{where}.row") if "row" in entry else None,
    )


@dataclass(frozen=True)
class Annotated:
    """One annotation of a bundle: its number in its match, leaf, hash, the indexes of its inclusion
    proof into the bundle's nodes, and its row (the columns its hash covers, in their order)."""

    number: int
    leaf: int
    hash: bytes
    proof: tuple[int, ...]
    row: tuple[str, int, int, bytes, str, int | None, str, str]

    @property
    def seq(self) -> int:
        return self.row[2]


def _annotation(value: Any, where: str, nodes: int) -> Annotated:
    entry = _object(value, where, _ANNOTATION_FIELDS)
    proof = _list(entry["proof"], f"{where}.proof", MAX_PROOF)
    for number, index in enumerate(proof):
        _int(index, f"{where}.proof[{number}]", 0, nodes - 1)
    row = _object(entry["row"], f"{where}.row", _ANNOTATION_ROW_FIELDS)
    annotation_id = _str(row["annotation_id"], f"{where}.row.annotation_id")
    if not _UUID.fullmatch(annotation_id):
        raise _format(f"{where}.row.annotation_id", "is not an annotation id (a UUID, lower-case)")
    return Annotated(
        number=_int(entry["number"], f"{where}.number"),
        leaf=_int(entry["leaf"], f"{where}.leaf"),
        hash=_hash(entry["hash"], f"{where}.hash"),
        proof=tuple(proof),
        row=(
            annotation_id,
            _int(row["at_us"], f"{where}.row.at_us", *_INT64),
            _int(row["seq"], f"{where}.row.seq"),
            _hash(row["event_hash"], f"{where}.row.event_hash"),
            _str(row["author"], f"{where}.row.author"),
            _maybe_int(row["seat"], f"{where}.row.seat"),
            _str(row["type"], f"{where}.row.type"),
            _str(row["payload"], f"{where}.row.payload"),
        ),
    )


@dataclass
class Checked:
    """What `check_bundle` found: the problems (none: it holds), and what was proven."""

    problems: list[Problem]
    match_id: str | None = None
    seqs: list[int] = field(default_factory=list)
    whole: int = 0
    size: int = 0
    against: Checkpoint | Receipt | None = None
    #: The annotations the bundle proves, by number.
    annotations: list[int] = field(default_factory=list)
    #: Everything the bundle says, once checked: the checkpoint, the match, each entry (seq, leaf,
    #: hash, row), what it is held against and each annotation (number, leaf, hash, row). Two bundles
    #: that check with one statement prove the same.
    statement: tuple[Any, ...] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def check_bundle(bundle: Any, key: VerifierKey) -> Checked:
    """Check a proof bundle (the JSON `matchlog prove` writes, as `load_bundle` reads it) with the
    log's public key alone. A bundle that is not exactly of the format is one problem, `bundle.format`."""
    try:
        return _check(bundle, key)
    except NoteError as error:
        return Checked([Problem(error.code, str(error))])


def _check(bundle: Any, key: VerifierKey) -> Checked:
    if type(bundle) is dict and bundle.get("bundle") != BUNDLE_FORMAT and isinstance(bundle.get("bundle"), str):
        raise NoteError(
            "bundle.format",
            f"the bundle is of the format {bundle['bundle'][:40]!r}; this verifier reads {BUNDLE_FORMAT!r} "
            "(ask the log for the proof again)",
        )
    fields = _object(bundle, "the bundle", _BUNDLE_FIELDS, _ANNOTATED_FIELDS)
    match = _str(fields["match_id"], "match_id")
    if not _UUID.fullmatch(match):
        raise _format("match_id", "is not a match id (a UUID, lower-case)")
    nodes = [_hash(node, f"nodes[{n}]") for n, node in enumerate(_list(fields["nodes"], "nodes", MAX_INDEX))]
    if len(set(nodes)) != len(nodes):
        raise _format("nodes", "holds a hash twice (each proof hash is given once)")
    entries = [
        _entry(entry, f"entries[{n}]", len(nodes))
        for n, entry in enumerate(_list(fields["entries"], "entries", MAX_INDEX))
    ]
    previous = None if fields["previous"] is None else _hash(fields["previous"], "previous")
    annotated = "annotations" in fields or "annotation_previous" in fields
    if annotated:
        _object(fields, "the bundle", _BUNDLE_FIELDS + _ANNOTATED_FIELDS)  # both, or neither
    annotations = [
        _annotation(entry, f"annotations[{n}]", len(nodes))
        for n, entry in enumerate(_list(fields.get("annotations", []), "annotations", MAX_INDEX))
    ]
    annotation_previous = fields.get("annotation_previous")
    if annotation_previous is not None:
        annotation_previous = _hash(annotation_previous, "annotation_previous")
    if type(fields["checkpoint"]) is not str:
        raise _format("checkpoint", "is not a signed note")
    against = fields["against"]
    if against is not None and type(against) is not str:
        raise _format("against", "is not a signed note, nor null")
    consistency = fields["consistency"]
    if consistency is not None:
        consistency = [
            _hash(h, f"consistency[{n}]") for n, h in enumerate(_list(consistency, "consistency", 2 * MAX_PROOF))
        ]
    result = Checked([], match)
    problems = result.problems

    # 1. The checkpoint: signed by the log, and of this log; and what the disputant held, signed too.
    try:
        head = read_note(fields["checkpoint"], key)
    except NoteError as error:
        if error.code == "verifier.needs":
            raise
        problems.append(Problem(f"checkpoint.{error.code.split('.')[-1]}", f"the bundle's checkpoint: {error}"))
        return result
    if not isinstance(head, Checkpoint):
        raise _format("checkpoint", "is a receipt, not a checkpoint")
    result.size = head.size
    held = None
    if against is not None:
        try:
            held = read_note(against, key)
        except NoteError as error:
            problems.append(
                Problem(f"against.{error.code.split('.')[-1]}", f"the checkpoint or receipt you hold: {error}")
            )
            return result
        result.against = held

    # 2. Its shape: what it says is bound, or it is refused. The entries are one event, or the match
    #    from seq 0 in order, their leaves in the same order; at least one is whole (its chain hash
    #    binds the match id); `previous` is the hash before a first event that is whole and not seq 0
    #    (its chain hash binds it), and null otherwise; each proof hash is used; the consistency proof
    #    is there exactly when one can be.
    missing = isinstance(held, Receipt) and held.match_id == match and not entries
    if not entries and not missing:
        raise _format(
            "entries", "is empty: a bundle proves at least one event (or, against a receipt, that its match is gone)"
        )
    if entries and not any(entry.row is not None for entry in entries):
        raise _format("entries", "are all sealed: at least one whole event binds the bundle to its match")
    if len(entries) > 1 and entries[0].seq != 0:
        raise _format("entries", "are one event, or the match from seq 0")
    for number, entry in enumerate(entries[1:], start=1):
        if entry.seq != entries[number - 1].seq + 1:
            raise _format(
                f"entries[{number}].seq",
                f"is {entry.seq}, not {entries[number - 1].seq + 1}: the events are consecutive",
            )
    # A match's events enter the tree in seq order: each entry's leaf is after the one before it. A
    # sealed entry's hash binds nothing of its seq, so this is what keeps two of them from trading
    # their leaves, hashes and proofs (the chain binds only the one right before a whole entry).
    for number, entry in enumerate(entries[1:], start=1):
        if entry.leaf <= entries[number - 1].leaf:
            raise _format(
                f"entries[{number}].leaf",
                f"is {entry.leaf}, not after {entries[number - 1].leaf}: a match's events enter the tree in seq order",
            )
    # An annotation bundle proves annotations, consecutive, each of an event the bundle proves whole
    # (its hash binds that event's hash), none at an event's leaf; `annotation_previous` is the hash
    # before the first, null before number 0 (the first's hash binds it either way).
    if annotated:
        if not annotations:
            raise _format("annotations", "is empty: a bundle of annotations proves at least one")
        for number, annotation in enumerate(annotations[1:], start=1):
            if annotation.number != annotations[number - 1].number + 1:
                raise _format(f"annotations[{number}].number", "is not the one after the annotation before it")
        whole = {entry.seq for entry in entries if entry.row is not None}
        for number, annotation in enumerate(annotations):
            if annotation.seq not in whole:
                raise _format(f"annotations[{number}].row.seq", "names no event the bundle proves whole")
        leaves = {entry.leaf for entry in entries} | {annotation.leaf for annotation in annotations}
        if len(leaves) != len(entries) + len(annotations):
            raise _format("annotations", "name a leaf twice")
        if (annotation_previous is None) != (annotations[0].number == 0):
            raise _format("annotation_previous", "is the hash before the first annotation: null before number 0")
    first = entries[0] if entries else None
    if first is not None and first.seq > 0:
        if first.row is None or previous is None:
            raise _format("previous", "an event after seq 0 is proven whole, with the hash before it")
    elif previous is not None:
        raise _format("previous", "is the hash before the first event, which is seq 0 (or absent): it must be null")
    used = {index for entry in [*entries, *annotations] for index in entry.proof}
    if len(used) != len(nodes):
        unused = next(n for n in range(len(nodes)) if n not in used)
        raise _format(f"nodes[{unused}]", "is in no proof: a bundle carries nothing it does not use")
    old = held.checkpoint if isinstance(held, Receipt) else held
    if (consistency is None) != (old is None or old.size > head.size):
        raise _format("consistency", "is the proof from what you hold to the checkpoint: given exactly when it can be")

    # 3. Every event: its hash from its row (whole) or as given (sealed), chained, and in the tree.
    found: dict[int, tuple[int, bytes]] = {}
    chained = previous if previous is not None else GENESIS
    for entry in entries:
        if entry.row is not None:
            result.whole += 1
            if chain_hash(chained, match, entry.seq, *entry.row) != entry.hash:
                message = "the event's row and the hash before it do not give its hash: the row was changed"
                problems.append(Problem("event.hash", message, match, entry.seq))
        proof = [nodes[index] for index in entry.proof]
        if not verify_inclusion(entry.leaf, head.size, leaf_hash(entry.hash), proof, head.root):
            message = (
                f"the event is not leaf {entry.leaf} of the signed tree of {head.size} (its inclusion proof fails)"
            )
            problems.append(Problem("event.not_in_tree", message, match, entry.seq))
        found[entry.seq] = (entry.leaf, entry.hash)
        result.seqs.append(entry.seq)
        chained = entry.hash

    # 3b. Every annotation: its hash from its row and the one before it, about the event proven at
    #     its seq, and in the tree.
    chained = annotation_previous if annotation_previous is not None else GENESIS
    for annotation in annotations:
        number, seq = annotation.number, annotation.seq
        if annotation_hash(chained, match, number, *annotation.row) != annotation.hash:
            message = f"annotation {number}'s row and the hash before it do not give its hash: the row was changed"
            problems.append(Problem("annotation.hash", message, match, seq))
        if found[seq][1] != annotation.row[3]:
            message = f"annotation {number} names an event hash the bundle does not prove at seq {seq}"
            problems.append(Problem("annotation.event", message, match, seq))
        proof = [nodes[index] for index in annotation.proof]
        if not verify_inclusion(annotation.leaf, head.size, leaf_hash(annotation.hash), proof, head.root):
            message = (
                f"annotation {number} is not leaf {annotation.leaf} of the signed tree of {head.size} "
                "(its inclusion proof fails)"
            )
            problems.append(Problem("annotation.not_in_tree", message, match, seq))
        result.annotations.append(number)
        chained = annotation.hash

    # 4. What the disputant held before: the log grew from it, and (a receipt) kept its events.
    if held is not None and old is not None:
        if old.size > head.size:
            message = (
                f"the log's checkpoint is of {head.size} entries; the one you hold signed {old.size}: "
                "entries were removed, or the log went another way since (ask for a newer bundle)"
            )
            problems.append(Problem("log.shrunk", message))
        elif not verify_consistency(old.size, head.size, old.root, head.root, consistency or []):
            message = (
                f"the log's first {old.size} entries are not the ones it signed for you: "
                "it was rewritten since, or it signed another history (a fork; the consistency proof fails)"
            )
            problems.append(Problem("log.rewritten", message))
        if isinstance(held, Receipt):
            if not verify_inclusion(held.leaf, held.size, leaf_hash(held.head), held.proof, held.root):
                problems.append(Problem("receipt.proof", "the receipt's own inclusion proof fails", held.match_id))
            if held.match_id == match:
                # The whole match (more than one event) ends where its entries end; one event says
                # nothing of where the match ends.
                last = entries[-1].seq if len(entries) > 1 else None
                problems.extend(compare_receipt(held, None if missing else found, last))
    result.statement = (
        (head.origin, head.size, head.root),
        match,
        tuple((entry.seq, entry.leaf, entry.hash, entry.row) for entry in entries),
        None if held is None else repr(held),
        tuple((a.number, a.leaf, a.hash, a.row) for a in annotations),
    )
    return result


# -- the command ----------------------------------------------------------------------------------


def _has_cryptography() -> bool:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: F401
    except ImportError:
        return False
    return True


def names_a_file(value: str) -> bool:
    """Whether `value` (a key, or a file that holds one) names a file that is there."""
    try:
        return len(value) <= 4096 and Path(value).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL in it
        return False


def _file_text(path: str, most: int) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read(most)


def main(argv: list[str] | None = None) -> int:
    """`verifier.py BUNDLE --key KEY`: 0 when the bundle holds, 1 when something fails, 2 on bad input."""
    parser = argparse.ArgumentParser(description="Check a matchlog proof bundle with the log's public key alone.")
    parser.add_argument("bundle", type=Path, help="the bundle (JSON), as `matchlog prove` writes it")
    parser.add_argument("--key", required=True, help="the log's verifier key, or a file holding it")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if not _has_cryptography():
        print(f"error[verifier.needs]: this verifier needs {NEEDS}", file=sys.stderr)
        return 2
    try:
        text = _file_text(args.key, MAX_KEY_CHARS + 1) if names_a_file(args.key) else args.key
        key = parse_verifier_key(text)
        if args.bundle.stat().st_size > MAX_BUNDLE_BYTES:
            raise NoteError("bundle.bounds", f"{args.bundle} is bigger than {MAX_BUNDLE_BYTES:,} bytes: not a bundle")
        bundle = load_bundle(args.bundle.read_bytes())
    except (OSError, ValueError) as error:
        code = error.code if isinstance(error, NoteError) else "bundle.unreadable"
        said = str(error)
        print(f"error[{code}]: {said[:300]}{'...' if len(said) > 300 else ''}", file=sys.stderr)
        return 2
    result = check_bundle(bundle, key)
    if args.json:
        print(
            json.dumps(
                {
                    "ok": result.ok,
                    "match_id": result.match_id,
                    "seqs": result.seqs,
                    "problems": [
                        {"code": p.code, "message": p.message, "match_id": p.match_id, "seq": p.seq}
                        for p in result.problems
                    ],
                }
            )
        )
    elif result.ok:
        print(summary(result, key))
    else:
        for problem in result.problems:
            print(problem)
    return 0 if result.ok else 1


def summary(result: Checked, key: VerifierKey) -> str:
    """One line on what a bundle that holds proves."""
    seqs = result.seqs
    span = f"seq {seqs[0]}" if len(seqs) == 1 else f"seqs {seqs[0]} to {seqs[-1]}" if seqs else "no events"
    said = (
        f"ok: match {result.match_id}, {span} ({result.whole} whole, {len(seqs) - result.whole} sealed), "
        f"are in the tree of {result.size} entries signed by {key.name}"
    )
    if result.annotations:
        numbers = result.annotations
        which = f"annotation {numbers[0]}" if len(numbers) == 1 else f"annotations {numbers[0]} to {numbers[-1]}"
        said += f"; {which} of the match, with it"
    if result.against is not None:
        kind = "receipt" if isinstance(result.against, Receipt) else "checkpoint"
        said += f"; the log only grew since the {kind} you hold ({result.against.size} entries)"
    return said


if __name__ == "__main__":
    sys.exit(main())

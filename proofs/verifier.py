"""Check matchlog's proofs without matchlog: the one module a player, an organiser or a course's staff
needs to settle a dispute without trusting the log's owner.

    python -m matchlog.proofs.verifier BUNDLE --key KEY      # with matchlog installed
    python verifier.py BUNDLE --key KEY                      # this file alone, beside the bundle

It uses the standard library and the `cryptography` package (for Ed25519), nothing else: no DuckDB,
no other part of matchlog. Read it top to bottom; docs/proofs.md describes the same formats.

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
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BUNDLE_FORMAT",
    "EMPTY_ROOT",
    "GENESIS",
    "RECEIPT_KIND",
    "Checkpoint",
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
    "main",
    "node_hash",
    "open_note",
    "parse_note",
    "parse_verifier_key",
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
BUNDLE_FORMAT = "matchlog proof bundle 1"
#: The signature type byte of Ed25519 in signed notes.
_ED25519 = 0x01
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
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

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
    if any(ord(c) < 0x20 and c != "\n" for c in note):
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
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise NoteError("note.format", f"{what} is not base64") from None
    if len(raw) != 32:
        raise NoteError("note.format", f"{what} is not a 32-byte hash")
    return raw


def _number(text: str, what: str) -> int:
    if not text.isdigit() or (text.startswith("0") and text != "0"):
        raise NoteError("note.format", f"{what} is not a decimal number: {text[:30]!r}")
    return int(text)


def parse_note(text: str) -> Checkpoint | Receipt:
    """What a verified note's text says: a checkpoint, or a matchlog receipt.

    Raises:
        NoteError: the text is neither (`note.format`).
    """
    lines = text.split("\n")[:-1]
    if len(lines) < 3 or not all(lines):
        raise NoteError("note.format", "a checkpoint has an origin, a size and a root, each on a line")
    if lines[1] != RECEIPT_KIND:
        return Checkpoint(lines[0], _number(lines[1], "the tree size"), _b64(lines[2], "the root"))
    fields: dict[str, list[str]] = {}
    events: list[tuple[int, int, bytes]] = []
    for line in lines[2:]:
        word, _, rest = line.partition(" ")
        if word == "event":
            seq, leaf, digest = [*rest.split(" "), "", "", ""][:3]
            events.append((_number(seq, "an event's seq"), _number(leaf, "an event's leaf"), _b64(digest, "a hash")))
        else:
            fields[word] = rest.split(" ") if rest else []
    try:
        (match_id, last), (head,), (size, root), (leaf,) = (
            fields["match"],
            fields["head"],
            fields["tree"],
            fields["leaf"],
        )
        proof = [_b64(p, "a proof hash") for p in fields["proof"]]
    except (KeyError, ValueError):
        raise NoteError("note.format", "a receipt names its match, head, tree, leaf and proof") from None
    last_seq = _number(last, "the last seq")
    if [seq for seq, _, _ in events] != list(range(last_seq + 1)):
        raise NoteError("note.format", "a receipt lists every event of its match, seq 0 to its last, in order")
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


def _hex(text: Any, what: str) -> bytes:
    try:
        raw = bytes.fromhex(text)
    except (TypeError, ValueError):
        raise NoteError("bundle.format", f"{what} is not hex") from None
    if len(raw) != 32:
        raise NoteError("bundle.format", f"{what} is not a 32-byte hash")
    return raw


@dataclass
class Checked:
    """What `check_bundle` found: the problems (none: it holds), and what was proven."""

    problems: list[Problem]
    match_id: str | None = None
    seqs: list[int] = field(default_factory=list)
    whole: int = 0
    size: int = 0
    against: Checkpoint | Receipt | None = None
    annotations: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_bundle(bundle: Any, key: VerifierKey) -> Checked:
    """Check a proof bundle (the JSON `matchlog prove` writes) with the log's public key alone."""
    try:
        return _check(bundle, key)
    except NoteError as error:
        return Checked([Problem(error.code, str(error))])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return Checked([Problem("bundle.format", f"the bundle is malformed: {type(error).__name__} {error}")])


def _check(bundle: Any, key: VerifierKey) -> Checked:
    if not isinstance(bundle, dict) or bundle.get("bundle") != BUNDLE_FORMAT:
        raise NoteError("bundle.format", f"not a proof bundle (its `bundle` field is not {BUNDLE_FORMAT!r})")
    match = str(bundle["match_id"])
    result = Checked([], match)
    problems = result.problems

    # 1. The checkpoint: signed by the log, and of this log.
    try:
        head = read_note(bundle["checkpoint"], key)
    except NoteError as error:
        problems.append(Problem(f"checkpoint.{error.code.split('.')[-1]}", f"the bundle's checkpoint: {error}"))
        return result
    if not isinstance(head, Checkpoint):
        raise NoteError("bundle.format", "the bundle's checkpoint is a receipt")
    result.size = head.size
    nodes = [_hex(n, "a proof node") for n in bundle.get("nodes", [])]

    # 2. Every event: its hash from its row (whole) or as given (sealed), chained, and in the tree.
    previous = _hex(bundle["previous"], "the previous hash") if bundle.get("previous") else GENESIS
    found: dict[int, tuple[int, bytes]] = {}
    expected_seq = None
    for entry in bundle["entries"]:
        seq, leaf = int(entry["seq"]), int(entry["leaf"])
        digest = _hex(entry["hash"], f"seq {seq}'s hash")
        if expected_seq is not None and seq != expected_seq:
            problems.append(Problem("bundle.gap", f"the events jump from seq {expected_seq - 1} to {seq}", match, seq))
        if expected_seq is None and seq == 0 and bundle.get("previous"):
            problems.append(Problem("bundle.format", "seq 0 has no previous hash", match, 0))
        row = entry.get("row")
        if row is not None:
            result.whole += 1
            computed = chain_hash(
                previous,
                match,
                seq,
                str(row["event_id"]),
                int(row["at_us"]),
                row["actor"],
                str(row["game"]),
                str(row["type"]),
                int(row["version"]),
                row["seat"],
                str(row["payload"]),
            )
            if computed != digest:
                message = "the event's row and the hash before it do not give its hash: the row was changed"
                problems.append(Problem("event.hash", message, match, seq))
        proof = [nodes[i] for i in entry["proof"]]
        if not verify_inclusion(leaf, head.size, leaf_hash(digest), proof, head.root):
            message = f"the event is not leaf {leaf} of the signed tree of {head.size} (its inclusion proof fails)"
            problems.append(Problem("event.not_in_tree", message, match, seq))
        found[seq] = (leaf, digest)
        result.seqs.append(seq)
        previous, expected_seq = digest, seq + 1
    if bundle.get("annotations"):
        _check_annotations(bundle, head, nodes, found, result)

    # 3. What the disputant held before: the log grew from it, and (a receipt) kept its events.
    if bundle.get("against"):
        try:
            held = read_note(bundle["against"], key)
        except NoteError as error:
            problems.append(
                Problem(f"against.{error.code.split('.')[-1]}", f"the checkpoint or receipt you hold: {error}")
            )
            return result
        result.against = held
        old = held.checkpoint if isinstance(held, Receipt) else held
        consistency = bundle.get("consistency")
        if old.size > head.size:
            message = (
                f"the log's checkpoint is of {head.size} entries; the one you hold signed {old.size}: "
                "entries were removed (or ask for a newer bundle)"
            )
            problems.append(Problem("log.shrunk", message))
        elif consistency is None or not verify_consistency(
            old.size, head.size, old.root, head.root, [_hex(h, "a consistency node") for h in consistency]
        ):
            message = (
                f"the log's first {old.size} entries are not the ones it signed for you: "
                "it was rewritten since (the consistency proof fails)"
            )
            problems.append(Problem("log.rewritten", message))
        if isinstance(held, Receipt):
            if not verify_inclusion(held.leaf, held.size, leaf_hash(held.head), held.proof, held.root):
                problems.append(Problem("receipt.proof", "the receipt's own inclusion proof fails", held.match_id))
            if held.match_id == match:
                present = None if bundle.get("missing") else found
                last = bundle.get("last_seq")
                problems.extend(compare_receipt(held, present, None if last is None else int(last)))
    return result


def _check_annotations(
    bundle: dict[str, Any], head: Checkpoint, nodes: list[bytes], events: dict[int, tuple[int, bytes]], result: Checked
) -> None:
    """Each annotation of the bundle: its hash from its row, chained, in the tree, and about the event
    the bundle proves at its seq."""
    match, problems = result.match_id, result.problems
    previous = (
        _hex(bundle["annotation_previous"], "the previous annotation's hash")
        if bundle.get("annotation_previous")
        else GENESIS
    )
    expected = None
    for entry in bundle["annotations"]:
        number, leaf = int(entry["number"]), int(entry["leaf"])
        digest = _hex(entry["hash"], f"annotation {number}'s hash")
        row = entry["row"]
        seq = int(row["seq"])
        if expected is not None and number != expected:
            problems.append(Problem("bundle.gap", f"the annotations jump from {expected - 1} to {number}", match, seq))
        event_hash = _hex(row["event_hash"], f"annotation {number}'s event hash")
        computed = annotation_hash(
            previous,
            str(match),
            number,
            str(row["annotation_id"]),
            int(row["at_us"]),
            seq,
            event_hash,
            str(row["author"]),
            row["seat"],
            str(row["type"]),
            str(row["payload"]),
        )
        if computed != digest:
            message = f"annotation {number}'s row and the hash before it do not give its hash: the row was changed"
            problems.append(Problem("annotation.hash", message, match, seq))
        event = events.get(seq)
        if event is None or event[1] != event_hash:
            message = f"annotation {number} names an event hash the bundle does not prove at seq {seq}"
            problems.append(Problem("annotation.event", message, match, seq))
        proof = [nodes[i] for i in entry["proof"]]
        if not verify_inclusion(leaf, head.size, leaf_hash(digest), proof, head.root):
            message = f"annotation {number} is not leaf {leaf} of the signed tree of {head.size} (its proof fails)"
            problems.append(Problem("annotation.not_in_tree", message, match, seq))
        result.annotations.append(number)
        previous, expected = digest, number + 1


# -- the command ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """`verifier.py BUNDLE --key KEY`: 0 when the bundle holds, 1 when something fails, 2 on bad input."""
    parser = argparse.ArgumentParser(description="Check a matchlog proof bundle with the log's public key alone.")
    parser.add_argument("bundle", type=Path, help="the bundle (JSON), as `matchlog prove` writes it")
    parser.add_argument("--key", required=True, help="the log's verifier key, or a file holding it")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        text = Path(args.key).read_text() if Path(args.key).is_file() else args.key
        key = parse_verifier_key(text)
        bundle = json.loads(args.bundle.read_text())
    except (OSError, ValueError) as error:
        code = error.code if isinstance(error, NoteError) else "bundle.unreadable"
        print(f"error[{code}]: {error}", file=sys.stderr)
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

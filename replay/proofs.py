"""Proofs about recorded matches for someone who does not trust the log's owner: signed checkpoints of
the log's Merkle tree, a receipt when a match ends, a bundle that proves a match or one of its
events, and checking a log file against the checkpoints and receipts held elsewhere.

The formats are in docs/proofs.md; a bundle is checked with `matchlog.proofs.verifier` alone.

What a reader who may not see the whole record (a seat, a spectator) gets, so that no proof tells
it a hidden value:

- Events it sees whole (its view of the event is the event) are whole in its bundle; every other
  event is sealed: its seq, leaf and chain hash, and nothing of its content, id or time. A chain
  hash covers the event's id, 62 bits of which are random and never shown to a reader the event is
  hidden from, so a sealed hash cannot be tested against guesses of what it hides (a Porrinha hand
  of 0 to 3); the same holds for the tree's nodes that every inclusion proof carries.
- While a match is in play such a reader may prove only single events it saw whole (`seq`); a
  whole match, with its sealed events, is proven once the match has ended. Receipts, which list
  every event's hash, are given only for ended matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from matchlog.events import Forbidden, ProofError, UnknownMatch, UsageError
from matchlog.proofs.notes import Signer, checkpoint_text, receipt_text
from matchlog.proofs.tree import Frontier
from matchlog.proofs.verifier import (
    BUNDLE_FORMAT,
    Checkpoint,
    NoteError,
    Problem,
    Receipt,
    VerifierKey,
    compare_receipt,
    open_note,
    parse_note,
    read_note,
    verify_consistency,
)
from matchlog.store import Store

from .views import seen_whole

__all__ = ["checkpoint", "held_note", "prove", "receipt", "verify_against"]

_SPECTATOR = -1


def checkpoint(store: Store, signer: Signer) -> str:
    """Sign the log's tree as it stands (kept in the log); the latest checkpoint if nothing changed.

    Raises:
        StoreError: the log is read-only.
    """
    return _sign(store, signer)[2]


def _sign(store: Store, signer: Signer) -> tuple[int, bytes, str, int]:
    """Sign the tree as it stands, if it extends the latest checkpoint the log signed.

    Raises:
        ProofError: it does not (`proof.inconsistent`): the file was changed since; a log never signs
            two trees that contradict each other (C2SP tlog-checkpoint).
    """

    def sign(size: int, root: bytes) -> str:
        kept = store.checkpoints(limit=1)
        if kept:
            old, old_root = kept[0][0], kept[0][1]
            extends = old <= size and verify_consistency(
                old, size, old_root, root, store.tree().consistency(old, size) if old < size else []
            )
            if not extends:
                raise ProofError(
                    f"the log's tree no longer extends the checkpoint it signed last (of {old} entries): the "
                    "file was changed since, and the log will not sign a tree that contradicts it "
                    "(`matchlog verify --against` that checkpoint says where)",
                    code="proof.inconsistent",
                )
        return signer.sign(checkpoint_text(signer.name, size, root))

    return store.checkpoint(sign, reuse=lambda note: _signed_by(note, signer))


def _signed_by(note: str, signer: Signer | None) -> bool:
    """Whether `note` is signed by `signer`'s key (a log whose key was replaced signs anew)."""
    if signer is None:
        return True
    try:
        open_note(note, signer.verifier)
    except NoteError:
        return False
    return True


def _covering(store: Store, size: int, signer: Signer | None) -> tuple[int, bytes, str]:
    """A checkpoint of at least `size` leaves: the latest one kept if it is big enough (and signed by
    the log's key), else a new one.

    Raises:
        ProofError: none is big enough and this log cannot sign one (`proof.no_checkpoint`), or the
            tree no longer extends the latest one (`proof.inconsistent`: the file was changed).
    """
    kept = store.checkpoints(limit=1)
    now = store.tree_head()[0]
    if kept and size <= kept[0][0] <= now and _signed_by(kept[0][2], signer):
        return kept[0][:3]
    if signer is None or not store.writable:
        raise ProofError(
            "the log has no signed checkpoint of its tree that covers this yet: `matchlog checkpoint` "
            "(by the log's owner, or the service at its next interval) makes one",
            code="proof.no_checkpoint",
        )
    return _sign(store, signer)[:3]


def held_note(text: str) -> Checkpoint | Receipt:
    """What a checkpoint or receipt someone holds says (not yet checked: the checker does that).

    Raises:
        ProofError: it is neither (`proof.note`).
    """
    split = text.rfind("\n\n")
    try:
        if split < 0:
            raise NoteError("note.format", "a signed note is text, a blank line, then signature lines")
        return parse_note(text[: split + 1])
    except NoteError as error:
        raise ProofError(f"not a checkpoint or receipt of matchlog: {error}", code="proof.note") from None


def receipt(store: Store, match: UUID | str, signer: Signer) -> str:
    """The signed receipt of an ended match: its last seq and head, the tree it is in with the head's
    inclusion proof, and every event's leaf and chain hash (docs/proofs.md).

    Raises:
        UnknownMatch: no such match.
        ProofError: the match is still in play (`proof.running`), or the log cannot sign.
    """
    info = store.match(match)
    if info.status == "running":
        raise ProofError(
            f"match {info.match_id} is still in play: its receipt is given when it ends", code="proof.running"
        )
    leaves = store.tree().leaves_of(info.match_id)
    events = []
    for seq, *_, digest in store.rows(info.match_id):
        if seq not in leaves:
            raise ProofError(f"match {info.match_id} seq {seq} has no leaf in the tree: run `matchlog verify`")
        events.append((seq, leaves[seq], digest))
    head_leaf = events[-1][1]
    size, root, _ = _covering(store, head_leaf + 1, signer)
    proof = store.tree().inclusion(head_leaf, size)
    return signer.sign(receipt_text(signer.name, str(info.match_id), events, size, root, proof))


def prove(
    store: Store,
    match: UUID | str,
    *,
    seq: int | None = None,
    against: str | None = None,
    as_seat: int | None = None,
    signer: Signer | None = None,
) -> dict[str, Any]:
    """A proof bundle (docs/proofs.md) of a match, or of its event `seq`: the events (whole, or sealed
    for what `as_seat` may not see), their inclusion proofs in a signed checkpoint, and with `against`
    (a checkpoint or receipt the disputant holds) the consistency proof from it.

    Raises:
        UnknownMatch: no such match (and `against` is not a receipt of it).
        UsageError: no such seq or seat.
        Forbidden: `as_seat` may not see event `seq` whole (`auth.view`).
        ProofError: a whole match in play asked for by a seat (`proof.running`), no checkpoint, or
            `against` is not a checkpoint or receipt (`proof.note`).
    """
    held = held_note(against) if against is not None else None
    try:
        info = store.match(match)
    except UnknownMatch:
        if not isinstance(held, Receipt) or not held.match_id.startswith(str(match).strip().lower()):
            raise
        return _absent(store, held, against, signer)  # type: ignore[arg-type]
    rows = store.rows(info.match_id)
    by_seq = {row[0]: row for row in rows}
    last = rows[-1][0]
    if seq is not None and not 0 <= seq <= last:
        raise UsageError(f"seq {seq} is not in match {info.match_id} (seqs 0 to {last})", code="usage.seq")
    whole = set(range(last + 1))
    if as_seat is not None:
        if as_seat != _SPECTATOR and not 0 <= as_seat < len(info.players):
            raise UsageError(f"seat {as_seat}: the match has seats 0 to {len(info.players) - 1}", code="usage.seat")
        whole = seen_whole(store.read(info.match_id), None if as_seat == _SPECTATOR else as_seat)
        if seq is not None and seq not in whole:
            raise Forbidden(
                f"seat {as_seat} did not see match {info.match_id} seq {seq} whole: its proof would show what "
                "the seat may not see",
                code="auth.view",
            )
        if seq is None and info.status == "running":
            raise ProofError(
                f"match {info.match_id} is in play: a seat proves the events it saw (give a seq); the whole "
                "match is proven once it has ended",
                code="proof.running",
            )
    chosen = [by_seq[seq]] if seq is not None else rows
    tree = store.tree()
    leaves = tree.leaves_of(info.match_id)
    missing = [row[0] for row in chosen if row[0] not in leaves]
    if missing:
        raise ProofError(f"match {info.match_id} seq {missing[0]} has no leaf in the tree: run `matchlog verify`")
    needed = max(leaves[row[0]] for row in chosen) + 1
    if held is not None:
        needed = max(needed, min(held.size, tree.size()))
    size, _, note = _covering(store, needed, signer)

    nodes: list[str] = []
    index: dict[bytes, int] = {}

    def numbered(digest: bytes) -> int:
        if digest not in index:
            index[digest] = len(nodes)
            nodes.append(digest.hex())
        return index[digest]

    entries = []
    for row in chosen:
        number, event_id, at_us, actor, game, type_, version, event_seat, payload, digest = row
        entry: dict[str, Any] = {
            "seq": number,
            "leaf": leaves[number],
            "hash": digest.hex(),
            "proof": [numbered(p) for p in tree.inclusion(leaves[number], size)],
        }
        if number in whole:
            entry["row"] = {
                "event_id": event_id,
                "at_us": at_us,
                "actor": actor,
                "game": game,
                "type": type_,
                "version": version,
                "seat": event_seat,
                "payload": payload,
            }
        entries.append(entry)
    first = chosen[0][0]
    # Only what the checker can bind goes in (docs/proofs.md): not the match's last seq or state, not
    # the view it was made for. The hash before a first event other than seq 0 is bound by that
    # event's chain hash (it is whole: one event is proven only to a reader who saw it whole).
    return {
        "bundle": BUNDLE_FORMAT,
        "checkpoint": note,
        "match_id": str(info.match_id),
        "previous": by_seq[first - 1][9].hex() if first else None,
        "entries": entries,
        "nodes": nodes,
        "against": against,
        "consistency": _consistency(tree, held, size),
    }


def _consistency(tree: Any, held: Checkpoint | Receipt | None, size: int) -> list[str] | None:
    if held is None or held.size > size:
        return None  # the checker says the log shrank
    return [p.hex() for p in tree.consistency(held.size, size)]


def _absent(store: Store, held: Receipt, against: str, signer: Signer | None) -> dict[str, Any]:
    """The bundle a log gives for a match it no longer has, against the receipt of it: no entries."""
    tree = store.tree()
    current = tree.size()
    size, _, note = _covering(store, min(held.size, current) if current else 0, signer)
    return {
        "bundle": BUNDLE_FORMAT,
        "checkpoint": note,
        "match_id": held.match_id,
        "previous": None,
        "entries": [],
        "nodes": [],
        "against": against,
        "consistency": _consistency(tree, held, size),
    }


def verify_against(store: Store, notes: Sequence[str], key: VerifierKey) -> list[Problem]:
    """Check the log file against checkpoints and receipts held elsewhere (signed by `key`): its tree,
    recomputed from its events, must extend each checkpoint's, and each receipt's match must hold the
    events it signed, at the leaves it signed. The file's own kept tree is checked on the way.

    Each finding names what the evidence allows: leaves gone from the tree at the event a receipt
    signed there (never at the event after the gap), a match the catalogue still names at its first
    seq gone, and a fork (the key signed a tree the log's own branch contradicts) as a fork, apart
    from a rewrite (the file is no longer what was signed) and a removal (the log is smaller)."""
    problems: list[Problem] = []
    held: list[Checkpoint | Receipt] = []
    for number, note in enumerate(notes, start=1):
        try:
            held.append(read_note(note, key))
        except NoteError as error:
            problems.append(Problem(f"against.{error.code.split('.')[-1]}", f"checkpoint or receipt {number}: {error}"))
    receipts = [note for note in held if isinstance(note, Receipt)]
    # What a receipt signed at each leaf: which event it was, and its hash.
    signed_at = {leaf: (r.match_id, seq, digest) for r in receipts for seq, leaf, digest in r.events}
    own = _own_checkpoints(store, key)
    tree = _recompute(store, {h.size for h in held} | {c.size for c in own}, set(signed_at))
    problems.extend(tree.problems)
    for first, last, before, after in tree.gaps:
        gone = signed_at.get(first)
        where = f"after match {before[0]} seq {before[1]}" if before else "at the start"
        where += f", before match {after[0]} seq {after[1]}" if after else ""
        count = last - first + 1
        message = f"leaves {first} to {last} of the tree are gone ({count} event{'s' if count > 1 else ''}, {where})"
        if gone is not None:
            message += f"; a receipt signed match {gone[0]} seq {gone[1]} at leaf {first}"
        problems.append(Problem("tree.leaf_gap", message, *(gone[:2] if gone else (None, None))))
    # The log's own branch: the checkpoints it keeps that its events still give.
    branch = [c for c in own if tree.roots.get(c.size) == c.root]
    size = tree.size
    for signed in sorted({h.size for h in held}):
        kinds = [type(h).__name__.lower() for h in held if h.size == signed]
        given = " and ".join(f"{kinds.count(k)} {k}{'s' if kinds.count(k) > 1 else ''}" for k in dict.fromkeys(kinds))
        if signed > size:
            diverged = next(
                (leaf for leaf, (_, _, digest) in sorted(signed_at.items()) if tree.hashes.get(leaf, digest) != digest),
                None,
            )
            if diverged is None:
                message = (
                    f"the log has {size} entries; it signed {signed} (in the {given} given): entries were removed "
                    "since, or this log went another way before it had that many (a fork): a checkpoint alone "
                    "cannot tell which"
                )
                problems.append(Problem("log.shrunk", message))
            else:
                match_id, seq, _ = signed_at[diverged]
                problems.append(_diverged(branch, diverged, f"{signed} (in the {given} given)", match_id, seq))
        elif any(h.root != tree.roots[signed] for h in held if h.size == signed):
            mine = [c.size for c in branch if c.size >= signed]
            if mine:
                message = (
                    f"the log signed a tree of {mine[0]} entries (kept in it, and its events give it) that does not "
                    f"extend the tree of {signed} it signed (in the {given} given): one key signed two histories, "
                    "a fork"
                )
                problems.append(Problem("log.forked", message))
            else:
                message = (
                    f"the log's first {signed} entries are not the ones it signed (in the {given} given): it was "
                    "rewritten since (its tree, recomputed from its events, has another root)"
                )
                problems.append(Problem("log.rewritten", message))
    for note in receipts:
        problems.extend(compare_receipt(note, *_match_now(store, note.match_id)))
    problems.extend(_catalogued(store, {note.match_id for note in receipts}))
    return problems


def _diverged(branch: list[Checkpoint], leaf: int, signed: str, match_id: str, seq: int) -> Problem:
    """The finding for a log smaller than a tree it signed whose leaf `leaf` holds another event than
    the log: a fork when the log's own branch, signed, already covers that leaf; else a rewrite."""
    mine = [c.size for c in branch if c.size > leaf]
    if mine:
        message = (
            f"the log signed a tree of {mine[0]} entries (kept in it) whose leaf {leaf} is not the one the tree of "
            f"{signed} holds (match {match_id} seq {seq} there): one key signed two histories, a fork"
        )
        return Problem("log.forked", message)
    message = (
        f"the log's leaf {leaf} is not what the tree of {signed} holds there (match {match_id} seq {seq}): "
        "the log was rewritten since, not only cut short"
    )
    return Problem("log.rewritten", message)


def _own_checkpoints(store: Store, key: VerifierKey) -> list[Checkpoint]:
    """The checkpoints the log keeps that `key` signed, as their notes say (smallest first)."""
    own = []
    for size, root, note, _ in store.checkpoints():
        try:
            signed = read_note(note, key)
        except NoteError:
            continue
        if isinstance(signed, Checkpoint) and (signed.size, signed.root) == (size, root):
            own.append(signed)
    return sorted(own, key=lambda c: c.size)


def _catalogued(store: Store, receipted: set[str]) -> list[Problem]:
    """Matches the catalogue still names whose events are gone (the first seq gone), but those a
    receipt already names."""
    problems = []
    for match_id, last, seqs in store.tree().short_matches():
        if match_id in receipted:
            continue
        if not seqs:
            message = f"the catalogue names the match, seqs 0 to {last}; none of its events is in the log"
            problems.append(Problem("match.deleted", message, match_id, 0))
            continue
        first = next((seq for number, seq in enumerate(seqs) if seq != number), len(seqs))
        message = f"the catalogue says the match runs to seq {last}; the log holds it to seq {first - 1}"
        if first < seqs[-1]:
            message = f"the catalogue says the match runs to seq {last}; its seq {first} is gone"
        problems.append(Problem("match.cut", message, match_id, first))
    return problems


def _match_now(store: Store, match_id: str) -> tuple[dict[int, tuple[int, bytes]] | None, int | None]:
    """What the log file now holds of a match: seq -> (leaf, chain hash), and its last seq."""
    try:
        resolved = UUID(match_id)
        rows = store.rows(resolved)
    except ValueError:
        return None, None
    if not rows:
        return None, None
    leaves = store.tree().leaves_of(resolved)
    return {row[0]: (leaves.get(row[0], -1), row[9]) for row in rows}, rows[-1][0]


@dataclass
class _Recomputed:
    """The file's tree recomputed from its events: its size, its roots at the sizes asked for, the
    chain hashes at the leaves asked for, the gaps in its leaf numbers (first and last leaf gone, and
    the events either side), and what disagrees with the kept tree."""

    size: int = 0
    roots: dict[int, bytes] = field(default_factory=dict)
    hashes: dict[int, bytes] = field(default_factory=dict)
    gaps: list[tuple[int, int, tuple[str, int] | None, tuple[str, int] | None]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _recompute(store: Store, sizes: set[int], leaves_wanted: set[int]) -> _Recomputed:
    """The file's tree, recomputed from the events in leaf order (see `_Recomputed`)."""
    found = _Recomputed()
    frontier = Frontier()
    found.roots[0] = frontier.root()
    wanted = sorted(s for s in sizes if s > 0)
    kept = store.tree_nodes()
    expected = 0
    previous: tuple[str, int] | None = None
    for leaves, match_ids, seqs, hashes in store.tree_leaves():
        chunk: list[bytes] = []
        for leaf, match_id, seq, digest in zip(leaves, match_ids, seqs, hashes, strict=True):
            if leaf != expected:
                found.gaps.append((expected, leaf - 1, previous, (match_id, seq)))
                expected = leaf
            if leaf in leaves_wanted:
                found.hashes[leaf] = digest
            chunk.append(digest)
            expected += 1
            previous = (match_id, seq)
            if wanted and frontier.size + len(chunk) == wanted[0]:
                _extend(frontier, chunk, kept, found.problems)
                chunk = []
                found.roots[wanted.pop(0)] = frontier.root()
        _extend(frontier, chunk, kept, found.problems)
    found.size = frontier.size
    found.roots[frontier.size] = frontier.root()
    return found


def _extend(
    frontier: Frontier, chunk: list[bytes], kept: dict[tuple[int, int], bytes], problems: list[Problem]
) -> None:
    """Grow the recomputed tree; a kept subtree that differs is a finding (the first few)."""
    for level, idx, digest in frontier.extend(chunk):
        if kept.get((level, idx)) != digest and sum(p.code == "tree.node" for p in problems) < 3:
            first = idx << level
            message = f"the kept hash of leaves {first} to {first + (1 << level) - 1} is not the hash of those leaves"
            problems.append(Problem("tree.node", message))

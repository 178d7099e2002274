"""The log's Merkle tree (RFC 9162, SHA-256) as it grows: the frontier the writer keeps, and the
inclusion and consistency proofs, given a way to read the hash of any run of leaves.

The tree's leaves are the log's events in the order the log committed them; a leaf is an event's
chain hash (store/chain.py), which already covers its match id, seq and every column of its row,
so the leaf needs nothing beside it (and a 33-byte input is one SHA-256 block, which keeps the
tree's cost on bulk appends low). Appending needs only the frontier: the roots of the perfect
subtrees along the tree's right edge, one per bit set in its size. Nothing is ever rehashed.

The store keeps the complete subtrees of 2^8, 2^16, 2^24 ... leaves (one row per 256 leaves in all),
so any subtree's hash costs at most a few hundred hashes of what is stored (`STRIDE`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from .verifier import EMPTY_ROOT, node_hash

__all__ = [
    "STRIDE",
    "Frontier",
    "Subtree",
    "consistency_proof",
    "inclusion_proof",
    "largest_power_of_two_below",
    "root_of",
    "subtree_root",
]

#: The store keeps the hash of every complete subtree whose height is a multiple of STRIDE.
STRIDE = 8

#: `subtree(start, end)`: the hash of the tree over leaves start .. end - 1.
Subtree = Callable[[int, int], bytes]


def largest_power_of_two_below(n: int) -> int:
    """The largest power of two smaller than `n` (n > 1): where RFC 9162 splits a tree of n leaves."""
    return 1 << ((n - 1).bit_length() - 1)


class Frontier:
    """The right edge of a tree: the hash of each perfect subtree, largest first, one per bit of `size`."""

    __slots__ = ("hashes", "size")

    def __init__(self, size: int = 0, hashes: Iterable[bytes] = ()) -> None:
        self.size = size
        self.hashes = list(hashes)
        if len(self.hashes) != size.bit_count():
            raise ValueError(f"a tree of {size} leaves has {size.bit_count()} subtrees on its edge")

    @classmethod
    def of(cls, size: int, subtree: Subtree) -> Frontier:
        """The frontier of the tree of `size` leaves, from the hashes of its subtrees."""
        hashes, start = [], 0
        for bit in reversed(range(size.bit_length())):
            if size >> bit & 1:
                hashes.append(subtree(start, start + (1 << bit)))
                start += 1 << bit
        return cls(size, hashes)

    def copy(self) -> Frontier:
        return Frontier(self.size, self.hashes)

    def extend(self, leaves: Iterable[bytes]) -> list[tuple[int, int, bytes]]:
        """Append leaves (their chain hashes); returns the complete subtrees to keep: (level, index, hash),
        each of 2^level leaves from leaf index * 2^level, for every level that is a multiple of STRIDE.

        The new leaves are hashed a level at a time (one list comprehension a level, which is what keeps
        a bulk append's tree cheap), joined at each level with the edge's subtree of that height."""
        sha256 = hashlib.sha256
        level_nodes = [sha256(b"\x00" + leaf).digest() for leaf in leaves]
        kept: list[tuple[int, int, bytes]] = []
        edge = self.hashes
        carried: list[bytes] = []  # what is left over at each level: the new edge, smallest first
        position, level = self.size, 0  # the index, at this level, of level_nodes[0]
        self.size += len(level_nodes)
        while level_nodes:
            if position & 1:  # the edge's subtree of this height comes just before: join it
                level_nodes.insert(0, edge.pop())
                position -= 1
            if len(level_nodes) & 1:
                carried.append(level_nodes[-1])
            level_nodes = [
                sha256(b"\x01" + level_nodes[i] + level_nodes[i + 1]).digest()
                for i in range(0, len(level_nodes) - 1, 2)
            ]
            level, position = level + 1, position >> 1
            if level % STRIDE == 0:
                kept.extend((level, position + i, digest) for i, digest in enumerate(level_nodes))
        edge.extend(reversed(carried))
        return kept

    def root(self) -> bytes:
        """The tree's root: the edge's subtrees folded from the right (RFC 9162's shape)."""
        if not self.hashes:
            return EMPTY_ROOT
        root = self.hashes[-1]
        for digest in reversed(self.hashes[:-1]):
            root = node_hash(digest, root)
        return root


def subtree_root(start: int, end: int, leaf: Callable[[int], bytes], kept: Callable[[int, int], bytes | None]) -> bytes:
    """The hash of leaves start .. end - 1 from the leaf hashes (`leaf(i)`) and the kept complete
    subtrees (`kept(level, index)`, None when not kept), splitting as RFC 9162 does."""
    size = end - start
    if size == 1:
        return leaf(start)
    if size & (size - 1) == 0 and start % size == 0:
        level = size.bit_length() - 1
        if level % STRIDE == 0:
            found = kept(level, start >> level)
            if found is not None:
                return found
    k = largest_power_of_two_below(size)
    return node_hash(subtree_root(start, start + k, leaf, kept), subtree_root(start + k, end, leaf, kept))


def root_of(size: int, subtree: Subtree) -> bytes:
    """The root of the tree of `size` leaves."""
    return subtree(0, size) if size else EMPTY_ROOT


def inclusion_proof(index: int, size: int, subtree: Subtree) -> list[bytes]:
    """RFC 9162's inclusion proof (PATH) of leaf `index` in the tree of `size` leaves, leaf side first."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = largest_power_of_two_below(end - start)
        if index < start + k:
            path.append(subtree(start + k, end))
            end = start + k
        else:
            path.append(subtree(start, start + k))
            start += k
    return path[::-1]


def consistency_proof(old: int, new: int, subtree: Subtree) -> list[bytes]:
    """RFC 9162's consistency proof (PROOF) that the tree of `new` leaves extends the one of `old`."""
    if not 0 <= old <= new:
        raise ValueError(f"no consistency proof from {old} leaves to {new}")
    if old in (0, new):
        return []
    path: list[bytes] = []
    start, end, m, whole = 0, new, old, True
    while True:
        n = end - start
        if m == n:
            if not whole:
                path.append(subtree(start, end))
            break
        k = largest_power_of_two_below(n)
        if m <= k:
            path.append(subtree(start + k, end))
            end = start + k
        else:
            path.append(subtree(start, start + k))
            start, m, whole = start + k, m - k, False
    return path[::-1]

"""The proofs package on its own: the Merkle tree against RFC 6962/9162's published vectors and a
recursive definition, the proofs against the verifier, and signed notes against Go's
golang.org/x/mod/sumdb/note test vector (what existing tooling reads)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchlog.proofs.notes import Signer, checkpoint_text, receipt_text
from matchlog.proofs.tree import (
    STRIDE,
    Frontier,
    consistency_proof,
    inclusion_proof,
    largest_power_of_two_below,
    subtree_root,
)
from matchlog.proofs.verifier import (
    EMPTY_ROOT,
    Checkpoint,
    NoteError,
    Receipt,
    chain_hash,
    leaf_hash,
    node_hash,
    open_note,
    parse_note,
    parse_verifier_key,
    verify_consistency,
    verify_inclusion,
)
from matchlog.store import chain_hash as store_chain_hash

# Certificate Transparency's reference leaves and the root of each tree of the first n of them
# (the vectors CT's own implementations test against).
CT_LEAVES = [
    bytes.fromhex(h)
    for h in ("", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f")
]
CT_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
CT_INCLUSION = [  # (leaf index, tree size, proof)
    (0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
CT_CONSISTENCY = [  # (old size, new size, proof)
    (1, 1, []),
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip

# Go's golang.org/x/mod/sumdb/note test key and the note it signs (note_test.go, TestSign).
GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
GO_SIGNATURE = "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="
GO_NOTE = f"{GO_TEXT}\n\u2014 PeterNeumann {GO_SIGNATURE}\n"


def mth(leaves: list[bytes], start: int, end: int) -> bytes:
    """RFC 9162's MTH, straight from its recursive definition."""
    if end - start == 1:
        return leaf_hash(leaves[start])
    k = largest_power_of_two_below(end - start)
    return node_hash(mth(leaves, start, start + k), mth(leaves, start + k, end))


def test_the_tree_gives_ct_s_published_roots_and_proofs():
    frontier = Frontier()
    assert frontier.root().hex() == CT_ROOTS[0] == EMPTY_ROOT.hex()
    for n, leaf in enumerate(CT_LEAVES, start=1):
        frontier.extend([leaf])
        assert frontier.root().hex() == CT_ROOTS[n], n

    def subtree(start: int, end: int) -> bytes:
        return mth(CT_LEAVES, start, end)

    for index, size, proof in CT_INCLUSION:
        assert [p.hex() for p in inclusion_proof(index, size, subtree)] == proof
        assert verify_inclusion(index, size, leaf_hash(CT_LEAVES[index]), [bytes.fromhex(p) for p in proof],
                                bytes.fromhex(CT_ROOTS[size]))  # fmt: skip
    for old, new, proof in CT_CONSISTENCY:
        assert [p.hex() for p in consistency_proof(old, new, subtree)] == proof
        roots = bytes.fromhex(CT_ROOTS[old]), bytes.fromhex(CT_ROOTS[new])
        assert verify_consistency(old, new, *roots, [bytes.fromhex(p) for p in proof])


@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=12),
    st.randoms(use_true_random=False),
)
def test_the_frontier_grown_in_any_chunks_is_the_recursive_tree_and_every_proof_checks(chunks, rng):
    leaves = [bytes([i % 256, i // 256]) for i in range(sum(chunks))]
    frontier, kept, done = Frontier(), [], 0
    for chunk in chunks:
        kept += frontier.extend(leaves[done : done + chunk])
        done += chunk
        assert frontier.root() == (mth(leaves, 0, done) if done else EMPTY_ROOT)
        assert Frontier.of(done, lambda a, b: mth(leaves, a, b)).hashes == frontier.hashes
    # The kept subtrees are exactly the complete ones of 2^8, 2^16 ... leaves, and hash their leaves.
    assert [(level, index) for level, index, _ in kept] == [(STRIDE, i) for i in range(done >> STRIDE)]
    assert all(digest == mth(leaves, i << level, (i + 1) << level) for level, i, digest in kept)
    if not done:
        return
    cache: dict[tuple[int, int], bytes] = {}

    def subtree(start: int, end: int) -> bytes:
        if (start, end) not in cache:
            cache[start, end] = mth(leaves, start, end)
        return cache[start, end]

    # Reading a subtree from kept nodes and leaves gives the same hash.
    kept_at = {(level, i): digest for level, i, digest in kept}
    a = rng.randrange(done)
    b = rng.randrange(a + 1, done + 1)
    assert subtree_root(a, b, lambda i: leaf_hash(leaves[i]), lambda level, i: kept_at.get((level, i))) == subtree(a, b)
    root = subtree(0, done)
    for index in rng.sample(range(done), min(done, 5)):
        proof = inclusion_proof(index, done, subtree)
        assert verify_inclusion(index, done, leaf_hash(leaves[index]), proof, root)
        assert not verify_inclusion(index, done, leaf_hash(b"not it"), proof, root)
        if proof:
            broken = [*proof[:-1], bytes(32)]
            assert not verify_inclusion(index, done, leaf_hash(leaves[index]), broken, root)
    for old in rng.sample(range(done + 1), min(done + 1, 5)):
        proof = consistency_proof(old, done, subtree)
        old_root = subtree(0, old) if old else EMPTY_ROOT
        assert verify_consistency(old, done, old_root, root, proof)
        if 0 < old < done:
            assert not verify_consistency(old, done, leaf_hash(b"another past"), root, proof)


def test_signed_notes_are_byte_for_byte_go_s():
    signer = Signer.parse(GO_SIGNER)
    assert str(signer.verifier) == GO_VERIFIER
    assert signer.private_text() == GO_SIGNER
    assert signer.sign(GO_TEXT) == GO_NOTE
    key = parse_verifier_key(GO_VERIFIER)
    assert open_note(GO_NOTE, key) == GO_TEXT
    # A changed text, a changed signature, another key's only signature: each refused.
    with pytest.raises(NoteError) as changed:
        open_note(GO_NOTE.replace("answer", "answers"), key)
    assert changed.value.code == "note.signature"
    with pytest.raises(NoteError):
        open_note(GO_NOTE.replace("x08go", "x08gp"), key)
    other = Signer.generate("PeterNeumann")
    with pytest.raises(NoteError) as unknown:
        open_note(other.sign(GO_TEXT), key)
    assert unknown.value.code == "note.signature"
    # Another key's signature beside ours is ignored, as the spec says.
    cosigned = GO_NOTE + other.sign(GO_TEXT).rsplit("\n\n", 1)[1]
    assert open_note(cosigned, key) == GO_TEXT


@pytest.mark.parametrize(
    "mangled",
    [
        GO_VERIFIER.replace("c74f20a3", "c74f20a4"),  # a key id that is not the key's
        GO_VERIFIER.replace("+ARpc", "+AhRpc"),  # not type 0x01
        GO_VERIFIER[:-4],  # a short key
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  # a space in the name
        "",
    ],
)
def test_a_mangled_verifier_key_is_refused(mangled):
    with pytest.raises(NoteError) as refused:
        parse_verifier_key(mangled)
    assert refused.value.code == "key.format"


def test_checkpoints_and_receipts_read_back_as_written():
    signer = Signer.generate("example.org/games")
    note = signer.sign(checkpoint_text(signer.name, 20852163, bytes(range(32))))
    assert parse_note(open_note(note, signer.verifier)) == Checkpoint("example.org/games", 20852163, bytes(range(32)))
    assert note.split("\n")[2] == base64.b64encode(bytes(range(32))).decode()  # tlog-checkpoint's third line
    events = [(0, 5, bytes([1]) * 32), (1, 9, bytes([2]) * 32)]
    text = receipt_text(signer.name, "01a1fcca-6e4c-7000-8000-000000000000", events, 12, bytes(32), [bytes([3]) * 32])
    said = parse_note(open_note(signer.sign(text), signer.verifier))
    assert isinstance(said, Receipt)
    assert (said.match_id, said.last_seq, said.leaf, said.head, said.size) == (
        "01a1fcca-6e4c-7000-8000-000000000000",
        1,
        9,
        bytes([2]) * 32,
        12,
    )
    assert said.events == events
    # A receipt is never read as a checkpoint (its second line is not a size).
    assert text.split("\n")[1] == "matchlog receipt"


@given(
    prev=st.binary(min_size=32, max_size=32),
    seq=st.integers(0, 2**40),
    actor=st.none() | st.integers(0, 5),
    seat=st.none() | st.integers(0, 5),
    payload=st.text(),
)
def test_the_verifier_s_chain_hash_is_the_store_s(prev, seq, actor, seat, payload):
    match, event = "01a1fcca-6e4c-7000-8000-000000000000", "01a1fcca-6e4c-7001-8000-000000000001"
    args = (prev, match, seq, event, 1_700_000_000_000_000, actor, "porrinha", "porrinha.guess_made", 1, seat)
    assert chain_hash(*args, payload) == store_chain_hash(*args, payload)


def test_a_key_made_by_racing_processes_is_never_read_half_written(tmp_path):
    """The service and a CLI command may both make a new log's key at once: the loser must read the
    winner's whole key, never the empty file the winner has created but not yet written."""
    from concurrent.futures import ThreadPoolExecutor

    from matchlog.proofs.notes import load_signer

    for attempt in range(40):
        db = tmp_path / f"race{attempt}.duckdb"
        with ThreadPoolExecutor(8) as pool:
            keys = list(pool.map(lambda _, db=db: load_signer(db, create=True).private_text(), range(8)))
        assert len(set(keys)) == 1

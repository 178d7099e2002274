"""Proofs a third party can check: the log's Merkle tree (RFC 9162), its signed checkpoints and
receipts (C2SP signed notes, Ed25519), and the verifier that checks them.

`verifier.py` stands alone (the standard library and `cryptography`): a player copies it and checks a
bundle with the log's public key, without matchlog. `tree.py` grows the tree and makes proofs;
`notes.py` holds the log's key and signs. Nothing here imports the rest of matchlog, and importing
this package imports none of its modules (`import matchlog.proofs.verifier` loads only that one).
"""

__all__: list[str] = []

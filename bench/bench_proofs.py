"""The cost of the Merkle tree, and what a proof costs: recording with the tree against the same writer
with its tree steps replaced by nothing (side by side, alternating, in one run), and the size and
check time of the bundle of a 100-event match in big logs.

    python bench/bench_proofs.py                                      # the recording figures only
    python bench/bench_proofs.py --logs /tmp/matchlog-1m.duckdb /tmp/matchlog-10m.duckdb
    python bench/bench_proofs.py --events 200000 --rounds 3 --live-seconds 2   # quicker

A log given with --logs must have its tree (made by this matchlog, e.g. bench/make_log.py); the
benchmark signs a checkpoint in it. For the first log it also times the one-off build of the tree
of a log made before proofs (schema version 1), on a copy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import bulk, live, sample_matches

import matchlog.store.writer as writer_module
from matchlog.proofs.notes import Signer, checkpoint_text, load_signer
from matchlog.proofs.tree import Frontier
from matchlog.proofs.verifier import check_bundle
from matchlog.replay.proofs import prove, verify_against
from matchlog.store import Store


@contextlib.contextmanager
def without_tree() -> Iterator[None]:
    """The writer as it was before the tree: its tree steps (hashing, keeping subtrees) do nothing. The
    leaf numbers still ride in each event's row: a BIGINT that counts up, the one part left in."""
    insert, extend = writer_module.insert_tree, Frontier.extend
    writer_module.insert_tree = lambda con, kept: None  # type: ignore[assignment]
    Frontier.extend = lambda self, leaves: []  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        writer_module.insert_tree, Frontier.extend = insert, extend  # type: ignore[method-assign]


@contextlib.contextmanager
def timing_tree(spent: list[float]) -> Iterator[None]:
    """The writer as it is, with the time its tree steps take added up in `spent[0]`."""
    insert, extend = writer_module.insert_tree, Frontier.extend

    def timed_insert(con: Any, kept: Any) -> None:
        began = time.perf_counter()
        insert(con, kept)
        spent[0] += time.perf_counter() - began

    def timed_extend(self: Frontier, leaves: Any) -> Any:
        began = time.perf_counter()
        kept = extend(self, leaves)
        spent[0] += time.perf_counter() - began
        return kept

    writer_module.insert_tree = timed_insert  # type: ignore[assignment]
    Frontier.extend = timed_extend  # type: ignore[method-assign]
    try:
        yield
    finally:
        writer_module.insert_tree, Frontier.extend = insert, extend  # type: ignore[method-assign]


def recording(events: int, rounds: int, live_seconds: float) -> None:
    """Bulk and live recording with and without the tree, alternating which goes first."""
    templates = sample_matches(200, seed=1)
    mean = statistics.mean(len(t) for t in templates)
    print(f"sample: 200 Porrinha matches of 5 random players, {mean:.0f} events each on average")
    rates: dict[str, list[float]] = {"tree": [], "none": []}
    live_rates: dict[str, list[float]] = {"tree": [], "none": []}
    shares: dict[str, list[float]] = {"bulk": [], "live": []}  # of a run's time, in the tree's steps
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(rounds):
            for kind in ("tree", "none") if n % 2 == 0 else ("none", "tree"):
                spent = [0.0]
                context = without_tree if kind == "none" else partial(timing_tree, spent)
                with context(), Store(Path(scratch) / f"bulk-{kind}-{n}.duckdb") as store:
                    rate, _ = bulk(store, templates, events, batch_events=50_000)
                rates[kind].append(rate)
                if kind == "tree":
                    shares["bulk"].append(spent[0] / (events / rate))
                spent[0] = 0.0
                with context(), Store(Path(scratch) / f"live-{kind}-{n}.duckdb") as store:
                    began = time.perf_counter()
                    live_rates[kind].append(live(store, templates, 64, live_seconds)[0])
                    if kind == "tree":
                        shares["live"].append(spent[0] / (time.perf_counter() - began))
            print(
                f"round {n + 1}: bulk {rates['none'][-1]:,.0f} / {rates['tree'][-1]:,.0f} events/s, "
                f"live {live_rates['none'][-1]:,.0f} / {live_rates['tree'][-1]:,.0f} events/s (without / with)",
                flush=True,
            )
    for name, measured, share in (
        ("bulk recording", rates, shares["bulk"]),
        ("live recording, 64 matches", live_rates, shares["live"]),
    ):
        without, with_tree = statistics.median(measured["none"]), statistics.median(measured["tree"])
        ratios = [a / b for a, b in zip(measured["none"], measured["tree"], strict=True)]
        print(
            f"{name:<28} without the tree {without:>9,.0f} events/s, with it {with_tree:>9,.0f} events/s: "
            f"the tree costs {statistics.median(ratios) - 1:+.1%} (median of {rounds} paired rounds; "
            f"{min(ratios) - 1:+.1%} to {max(ratios) - 1:+.1%}); its steps take "
            f"{statistics.median(share):.1%} of the run ({min(share):.1%} to {max(share):.1%})"
        )


def proofs(path: Path, signer: Signer, samples: int) -> None:
    """Bundles of 100-event matches (and of one event) in the log at `path`, against a checkpoint of
    the log at half its size: their size and the time to make and to check them."""
    with Store(path) as store:
        size = store.tree_head()[0]
        half = size // 2
        old = signer.sign(checkpoint_text(signer.name, half, store.tree().subtree(0, half)))
        store.checkpoint(lambda n, r: signer.sign(checkpoint_text(signer.name, n, r)))
        lengths = store.query("SELECT match_id, last_seq + 1 FROM matches WHERE created_at IS NOT NULL")
        rng = random.Random(1)
        closest = sorted(lengths, key=lambda row: (abs(row[1] - 100), rng.random()))[:samples]
        print(
            f"{path}: {store.count():,} events, tree of {size:,}; {len(closest)} matches of "
            f"{min(r[1] for r in closest)}-{max(r[1] for r in closest)} events"
        )
        for scope in ("match", "event"):
            made, checked, sizes, proof_sizes = [], [], [], []
            for match_id, length in closest:
                seq = rng.randrange(length) if scope == "event" else None
                began = time.perf_counter()
                bundle = prove(store, match_id, seq=seq, against=old, signer=signer)
                made.append(time.perf_counter() - began)
                text = json.dumps(bundle)
                began = time.perf_counter()
                result = check_bundle(json.loads(text), signer.verifier)
                checked.append(time.perf_counter() - began)
                assert result.ok, result.problems
                sizes.append(len(text))
                proof_sizes.append(len(json.dumps([bundle["nodes"], bundle["consistency"]])))
            what = "a whole match" if scope == "match" else "one event"
            kb, proof_kb = statistics.median(sizes) / 1024, statistics.median(proof_sizes) / 1024
            print(
                f"  {what:<13} bundle {kb:>6.1f} KB (proofs {proof_kb:.1f} KB), "
                f"prove {statistics.median(made) * 1000:.1f} ms, check {statistics.median(checked) * 1000:.2f} ms "
                f"(medians of {len(closest)})"
            )
        began = time.perf_counter()
        problems = verify_against(store, [old], signer.verifier)
        seconds = time.perf_counter() - began
        assert problems == [], problems
        print(f"  verify --against a checkpoint (the whole tree recomputed from the events): {seconds:.1f} s")


def upgrade(path: Path) -> None:
    """The one-off build of the tree of a log made before proofs: a copy of `path` without its tree."""
    with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
        copy = Path(scratch) / "v1.duckdb"
        shutil.copy(path, copy)
        with duckdb.connect(str(copy)) as con:
            events = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
            con.execute("ALTER TABLE events DROP COLUMN leaf; DROP TABLE tree_nodes; DROP TABLE checkpoints")
            con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        began = time.perf_counter()
        Store(copy).close()
        seconds = time.perf_counter() - began
        print(f"building the tree of a version 1 log of {events:,} events on first open: {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=500_000, help="events per bulk measurement")
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds (with and without the tree)")
    parser.add_argument("--live-seconds", type=float, default=4.0, help="seconds per live measurement")
    parser.add_argument("--logs", type=Path, nargs="*", default=[], help="big logs to prove matches from")
    parser.add_argument("--samples", type=int, default=20, help="matches proven in each log")
    args = parser.parse_args()
    recording(args.events, args.rounds, args.live_seconds)
    for n, path in enumerate(args.logs):
        with Store(path, read_only=True) as store:
            if not store.has_tree:
                print(f"{path} was made before proofs: make it again with bench/make_log.py")
                continue
        if n == 0:
            upgrade(path)
        proofs(path, load_signer(path, create=True), args.samples)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

"""Past one machine: tournaments on Ray against worker processes, archiving into Delta Lake, and
statistics over the archive against the same on the DuckDB file.

    python bench/make_log.py /tmp/log10m.duckdb --events 10000000   # once
    python bench/bench_scale.py /tmp/log10m.duckdb                    # archives it to /tmp/log10m.archive
    python bench/bench_scale.py /tmp/log10m.duckdb --scale 0.2        # smaller tournaments

1. Tournaments: each game's tournament with `--jobs 2` and on Ray started on this machine
   (`ray.init()` with the same 2 CPUs; its start-up, once, is printed apart), alternated, best of
   two each. From the Ray runs: the workers' CPU per game, games per task, Ray's own cost of a task
   (400 tasks that do nothing) and the writer's CPU per event (this process only records). From
   those, the projection to N nodes of C cores: N * C / (CPU per game + task cost / games a
   task), capped by what the one writer records: 1 / (its CPU per event * events per game).
2. Archiving the log into a fresh Delta table: events/s; then again (nothing new: the check only).
3. Every `matchlog stats` question on the archive next to the same on the DuckDB file (median of 5
   after a warm-up), the archive's opening (the catalogue built from its head rows), loading one
   match, and `verify` of every chain.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics as stat
import tempfile
import time
from pathlib import Path
from typing import Any

from matchlog.lake.read import ArchiveStore
from matchlog.lake.seal import archive_log
from matchlog.referee.tournament import run_tournament
from matchlog.replay import statistics
from matchlog.replay.stats import QUESTIONS
from matchlog.store import Store

TOURNAMENTS = [
    ("porrinha", ["random", "reasoner", "random"], 3, 2_000),
    ("backgammon", ["random", "heuristic"], 2, 500),
    ("fish", ["random", "maximin:1", "random"], 3, 500),
]
NODES = (1, 4, 16, 64)
CORES_A_NODE = 8


def timed(work: Any, runs: int = 5) -> float:
    work()  # warm-up
    seconds = []
    for _ in range(runs):
        began = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - began)
    return stat.median(seconds) * 1000


def cpu() -> float:
    """This process's CPU seconds (its threads too), not its children's."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def tournaments(scale: float, scratch: Path) -> None:
    import logging

    import ray

    from matchlog.cluster import ray_pool

    cpus = os.cpu_count() or 2
    print(f"1. tournaments: --jobs {cpus} against Ray on this machine ({cpus} CPUs), best of two runs each\n")
    began = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    print(f"Ray started here in {time.perf_counter() - began:.1f} s (once; not counted below)")
    try:
        with Store(scratch / "warm.duckdb") as store:  # the workers' first imports, not counted either
            run_tournament("porrinha", ["random", "random"], games=4 * cpus, store=store, seed=1, pool=ray_pool("auto"))
        overhead = _task_overhead(ray)
        print(f"Ray's own cost of a task (submit, schedule, run nothing, return): {overhead * 1000:.2f} ms")
        print(
            f"\n{'game':11} {'games':>6} {'--jobs':>13} {'Ray':>13} {'Ray/jobs':>9} {'CPU/game':>9} {'games/task':>11}"
            f" {'writer/event':>13}"
        )
        projections = []
        for game, specs, seats, count in TOURNAMENTS:
            games = max(20, int(count * scale))
            runs: list[tuple[Any, Any, Any, float]] = []
            for attempt in range(2):  # alternated: the machine's other work falls on both alike
                with Store(scratch / f"{game}-jobs-{attempt}.duckdb") as store:
                    jobs = run_tournament(game, specs, games=games, store=store, seats=seats, seed=2, jobs=cpus)
                with Store(scratch / f"{game}-ray-{attempt}.duckdb") as store:
                    figures: list[Any] = []
                    writer_began = cpu()
                    pool = ray_pool("auto", figures=figures.append)
                    on_ray = run_tournament(game, specs, games=games, store=store, seats=seats, seed=2, pool=pool)
                    writer = cpu() - writer_began
                if jobs.findings or on_ray.findings or jobs.failures or on_ray.failures:
                    raise SystemExit(f"{game}: a tournament did not record cleanly")
                runs.append((jobs, on_ray, figures[0], writer))
            best_jobs = max((run[0] for run in runs), key=lambda result: result.rate)
            _, on_ray, tasks, writer = max(runs, key=lambda run: run[1].rate)
            play = tasks.cpu_seconds / max(tasks.matches, 1)
            per_task = tasks.matches / max(tasks.tasks, 1)
            per_event = writer / max(on_ray.events, 1)
            ratio = on_ray.rate / best_jobs.rate
            print(
                f"{game:11} {games:>6,} {best_jobs.rate:>7.1f} gm/s {on_ray.rate:>7.1f} gm/s {ratio:>8.2f}x"
                f" {play * 1000:>6.2f} ms {per_task:>11.1f} {per_event * 1e6:>10.1f} us"
            )
            projections.append((game, play + overhead / per_task, on_ray.events / on_ray.finished, per_event))
        print(
            f"\nprojected games/s on N nodes of {CORES_A_NODE} cores: N * {CORES_A_NODE} / (CPU per game + Ray's cost "
            "of a task / games a task),\ncapped by the one writer at 1 / (its CPU per event * events per game)"
        )
        print(f"{'game':11} " + " ".join(f"{n:>9} nodes" for n in NODES) + f" {'writer cap':>15}")
        for game, seconds, events_a_game, per_event in projections:
            cap = 1 / (per_event * events_a_game)
            row = [min(n * CORES_A_NODE / seconds, cap) for n in NODES]
            print(f"{game:11} " + " ".join(f"{value:>9,.0f} gm/s" for value in row) + f" {cap:>10,.0f} gm/s")
    finally:
        ray.shutdown()


def _task_overhead(ray: Any, tasks: int = 400) -> float:
    """Seconds Ray takes per task that does nothing (submitted together, results fetched)."""

    @ray.remote
    def nothing() -> None:
        return None

    ray.get([nothing.remote() for _ in range(20)])  # warm
    began = time.perf_counter()
    ray.get([nothing.remote() for _ in range(tasks)])
    return (time.perf_counter() - began) / tasks * (os.cpu_count() or 2)  # per task, per CPU


def archiving(log_path: Path, archive: Path) -> None:
    import matchlog

    print(f"\n2. archiving {log_path} into {archive}")
    shutil.rmtree(archive, ignore_errors=True)
    with matchlog.open(log_path) as log:
        done = archive_log(log, str(archive))
        print(
            f"archived {done.matches:,} matches, {done.events:,} events in {done.seconds:.1f} s: "
            f"{done.rate:,.0f} events/s, {done.commits} commits"
        )
        again = archive_log(log, str(archive))
        print(f"again (nothing new): {again.seconds:.2f} s, {again.already:,} matches found archived")
    size = sum(path.stat().st_size for path in archive.rglob("*") if path.is_file())
    print(f"the table: {size / 2**20:,.0f} MiB on disk (the DuckDB file: {log_path.stat().st_size / 2**20:,.0f} MiB)")


def questions(log_path: Path, archive: Path) -> None:
    print(f"\n3. statistics on the archive against the DuckDB file ({log_path.name})")
    began = time.perf_counter()
    sealed = ArchiveStore(str(archive))
    print(f"opening the archive (catalogue, seats and figures from its head rows): {time.perf_counter() - began:.2f} s")
    with Store(log_path, read_only=True) as store:
        events, matches = store.query("SELECT sum(last_seq + 1), count(*) FROM matches")[0]
        print(f"{events:,} events in {matches:,} matches\n")
        print(f"{'question':48} {'DuckDB file':>12} {'archive':>12} {'ratio':>7}")
        for name, question in QUESTIONS.items():
            on_file = timed(lambda q=question: q(store, None, None))
            on_archive = timed(lambda q=question: q(sealed, None, None))
            print(f"{name:48} {on_file:9.1f} ms {on_archive:9.1f} ms {on_archive / on_file:6.1f}x")
        on_file = timed(lambda: statistics(store))
        on_archive = timed(lambda: statistics(sealed))
        print(f"{'the whole of matchlog stats':48} {on_file:9.1f} ms {on_archive:9.1f} ms {on_archive / on_file:6.1f}x")
        picked = [row[0] for row in store.query("SELECT match_id FROM matches USING SAMPLE 50 ROWS (reservoir, 7)")]
        on_file = stat.median(_load(store, m) for m in picked)
        on_archive = stat.median(_load(sealed, m) for m in picked)
        name = "load one match (median of 50)"
        print(f"{name:48} {on_file:9.1f} ms {on_archive:9.1f} ms {on_archive / on_file:6.1f}x")
        began = time.perf_counter()
        assert store.verify() == []
        on_file = time.perf_counter() - began
        began = time.perf_counter()
        assert sealed.verify() == []
        on_archive = time.perf_counter() - began
        print(f"{'verify every chain':48} {on_file:10.1f} s {on_archive:10.1f} s {on_archive / on_file:6.1f}x")
    sealed.close()


def _load(store: Any, match_id: Any) -> float:
    began = time.perf_counter()
    store.read(match_id)
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="the big log (bench/make_log.py)")
    parser.add_argument("--archive", type=Path, help="where to archive it (default: beside it, .archive)")
    parser.add_argument("--scale", type=float, default=1.0, help="tournament sizes, as a fraction")
    parser.add_argument("--keep", action="store_true", help="keep the archive afterwards")
    args = parser.parse_args()
    archive = args.archive or args.log.with_suffix(".archive")
    with tempfile.TemporaryDirectory() as scratch:
        tournaments(args.scale, Path(scratch))
    archiving(args.log, archive)
    questions(args.log, archive)
    if not args.keep:
        shutil.rmtree(archive, ignore_errors=True)


if __name__ == "__main__":
    main()

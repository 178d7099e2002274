"""Benchmark of the service: appends through HTTP next to the same appends straight into the store,
and reads of a match's state.

    python bench/bench_service.py                 # 5 s per figure
    python bench/bench_service.py --seconds 2     # quicker
    python bench/bench_service.py --fronts 1 2    # one process, then two fronts and the log's owner

How it measures. The server is `matchlog serve` in a process of its own, on a fresh log on
127.0.0.1. The clients run in another process (so the server's figures do not pay for the clients'
CPU, though both share the machine's cores): asyncio, one kept-alive connection each, plain
HTTP/1.1 written by hand with every request body encoded before the clock starts, so a client
costs a few microseconds a request. Each client is the referee of its own Porrinha matches (real
matches of 5 random players, recorded once in memory and replayed): it creates them with POST
/api/matches before the clock starts, then appends their events in batches of 1 or 10 with
`expected_seq`, each batch judged by the rules and durable before it is answered, the next sent
only after that answer. Figures: events acknowledged per second of wall time, and the p50 and p99
of each request's time from its first byte sent to its last byte read. The store runs the same
appends from as many threads with `Store.append`, in this process, into a fresh file. The state
read is GET /api/matches/{id}/state of a random one of READ_MATCHES finished matches written
before, by as many clients; "304" readers send back the ETag they last got for a match
(If-None-Match), as a browser or a proxy does. `max` is the longest request: a checkpoint of the
file that held appends shows there. The last line is what the server says its writer's checkpoints
cost (`/api/health`). The CPU each side used is read from /proc (user + system seconds per wall
second).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from matchlog.events import Event, uuid7
from matchlog.referee import MemoryRecorder, make_player, play_match, seats_from_specs
from matchlog.store import Store

SEATS = 5
#: The finished matches the readers read (the replays people are watching).
READ_MATCHES = 100


def sample_matches(count: int, seed: int) -> list[list[Event]]:
    """The events of `count` recorded Porrinha matches of 5 random players (match.started first)."""
    matches = []
    seats = seats_from_specs("porrinha", ["random"] * SEATS)
    for n in range(count):
        rng = random.Random(seed + n)
        players = [make_player("porrinha", s.player, random.Random(rng.random())) for s in seats]
        recorder = MemoryRecorder()
        play_match("porrinha", seats, players, recorder=recorder)
        matches.append([d.event for d in recorder.drafts])
    return matches


def percentiles(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.99)] * 1000


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process (all its threads) and its children running now have used
    (a server with --fronts: its fronts)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return own + sum(cpu_seconds(int(child)) for child in children)


# -- the clients' process ------------------------------------------------------------------------

_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)
_ETAG = re.compile(rb"etag:\s*(\S+)", re.IGNORECASE)


class Connection:
    """One kept-alive HTTP/1.1 connection, written by hand: the client must cost next to nothing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str) -> None:
        self.reader, self.writer = reader, writer
        self.auth = f"Authorization: Bearer {token}\r\n".encode()

    @classmethod
    async def open(cls, host: str, port: int, token: str) -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, token)

    async def call(self, method: bytes, path: bytes, body: bytes = b"", extra: bytes = b"") -> tuple[int, bytes]:
        status, content, _ = await self.exchange(method, path, body, extra)
        return status, content

    async def exchange(
        self, method: bytes, path: bytes, body: bytes = b"", extra: bytes = b""
    ) -> tuple[int, bytes, bytes]:
        """One request: the answer's status, body and ETag (b"" when it has none)."""
        head = b"%s %s HTTP/1.1\r\nHost: bench\r\n%s%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (
            method,
            path,
            self.auth,
            extra,
            len(body),
        )
        self.writer.write(head + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        found = _LENGTH.search(raw)
        content = await self.reader.readexactly(int(found[1])) if found else b""
        tag = _ETAG.search(raw)
        return int(raw[9:12]), content, tag[1] if tag else b""


def _bodies(template: list[Event], batch: int) -> list[bytes]:
    """The append requests of one match (after match.started), `batch` events each."""
    events = [msgspec.json.encode(e) for e in template[1:]]
    bodies = []
    for start in range(0, len(events), batch):
        chunk = b",".join(b'{"event":%s}' % e for e in events[start : start + batch])
        bodies.append(b'{"expected_seq":%d,"events":[%s]}' % (start + 1, chunk))
    return bodies


async def _appends(url: str, token: str, clients: int, batch: int, seconds: float, templates: list) -> dict:
    host, port = url.removeprefix("http://").split(":")
    connections = [await Connection.open(host, int(port), token) for _ in range(clients)]
    mean = statistics.mean(len(t) for t in templates)
    per_client = max(2, min(60, int(40_000 * seconds / clients / mean) + 2))
    seats = [{"name": f"p{i}", "player": "random"} for i in range(SEATS)]
    new = msgspec.json.encode({"game": "porrinha", "seats": seats})

    async def create(connection: Connection) -> bytes:
        status, body = await connection.call(b"POST", b"/api/matches", new)
        assert status == 201, body
        return f"/api/matches/{json.loads(body)['match_id']}/events".encode()

    async def prepare(number: int, connection: Connection) -> list[tuple[bytes, list[bytes], int]]:
        work = []
        for m in range(per_client):
            template = templates[(number * per_client + m) % len(templates)]
            work.append((await create(connection), _bodies(template, batch), len(template) - 1))
        return work

    plans = await asyncio.gather(*(prepare(n, c) for n, c in enumerate(connections)))
    latencies: list[float] = []
    events = [0]
    start = asyncio.Event()

    async def run(connection: Connection, plan: list) -> None:
        await start.wait()
        while time.perf_counter() < deadline:
            if not plan:  # more matches than were made ahead: make one more (rare)
                plan.append((await create(connection), _bodies(random.choice(templates), batch), 0))
            path, bodies, _ = plan.pop(0)
            for body in bodies:
                began = time.perf_counter()
                status, answer = await connection.call(b"POST", path, body)
                latencies.append(time.perf_counter() - began)
                assert status == 200, answer
                events[0] += body.count(b'{"event":')
                if time.perf_counter() >= deadline:
                    return

    tasks = [asyncio.create_task(run(c, p)) for c, p in zip(connections, plans, strict=True)]
    if os.environ.get("BENCH_READY_FILE"):  # a profiler waits for the clock to start
        Path(os.environ["BENCH_READY_FILE"]).touch()
    cpu_began = time.process_time()
    began = time.perf_counter()
    deadline = began + seconds
    start.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - began
    for connection in connections:
        connection.writer.close()
    return {
        "events": events[0],
        "elapsed": elapsed,
        "latencies": latencies,
        "client_cpu": (time.process_time() - cpu_began) / elapsed,
    }


async def _reads(url: str, token: str, clients: int, seconds: float, revalidate: bool = False) -> dict:
    """`clients` readers of random matches' states; `revalidate`: each sends the ETag it last got
    for a match (If-None-Match), as a browser or a proxy does, and counts 304s as answers."""
    host, port = url.removeprefix("http://").split(":")
    connections = [await Connection.open(host, int(port), token) for _ in range(clients)]
    _, body = await connections[0].call(b"GET", b"/api/matches?game=porrinha&status=finished&limit=%d" % READ_MATCHES)
    ids = [m["match_id"] for m in json.loads(body)]
    latencies: list[float] = []
    unchanged = [0]

    async def run(connection: Connection, rng: random.Random) -> None:
        tags: dict[str, bytes] = {}
        while time.perf_counter() < deadline:
            match_id = rng.choice(ids)
            path = f"/api/matches/{match_id}/state".encode()
            extra = b"If-None-Match: %s\r\n" % tags[match_id] if revalidate and match_id in tags else b""
            began = time.perf_counter()
            status, answer, tag = await connection.exchange(b"GET", path, extra=extra)
            latencies.append(time.perf_counter() - began)
            assert status in (200, 304), answer
            unchanged[0] += status == 304
            if tag:
                tags[match_id] = tag

    if os.environ.get("BENCH_READY_FILE"):  # a profiler waits for the clock to start
        Path(os.environ["BENCH_READY_FILE"]).touch()
    began = time.perf_counter()
    deadline = began + seconds
    await asyncio.gather(*(run(c, random.Random(n)) for n, c in enumerate(connections)))
    elapsed = time.perf_counter() - began
    return {"requests": len(latencies), "elapsed": elapsed, "latencies": latencies, "unchanged": unchanged[0]}


def client_process(url: str, token: str, job: tuple, templates: list, results: Any) -> None:
    """The clients, in a process of their own: run one job and send back what it measured."""
    kind, *args = job
    if kind == "appends":
        results.send(asyncio.run(_appends(url, token, *args, templates)))
    else:
        results.send(asyncio.run(_reads(url, token, *args)))


def in_another_process(url: str, token: str, job: tuple, templates: list, server_pid: int) -> dict:
    receive, send = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.get_context("spawn").Process(
        target=client_process, args=(url, token, job, templates, send)
    )
    process.start()
    server_cpu = cpu_seconds(server_pid)
    result = receive.recv()
    result["server_cpu"] = (cpu_seconds(server_pid) - server_cpu) / result["elapsed"]  # includes the set-up
    process.join()
    return result


# -- the store on its own --------------------------------------------------------------------


def store_appends(path: Path, templates: list[list[Event]], threads: int, batch: int, seconds: float) -> dict:
    """`threads` threads, each appending its own matches `batch` events at a time with Store.append."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    counts = [0] * threads
    barrier = threading.Barrier(threads + 1)
    with Store(path) as store:

        def run(worker: int) -> None:
            own = latencies[worker]
            rng = random.Random(worker)
            ready = []
            for _ in range(8):
                template = rng.choice(templates)
                match_id = uuid7()
                store.append(match_id, template[:1], 0)
                ready.append((match_id, template))
            barrier.wait()
            while time.perf_counter() < deadline[0]:
                if ready:
                    match_id, template = ready.pop()
                else:
                    match_id, template = uuid7(), rng.choice(templates)
                    store.append(match_id, template[:1], 0)
                for start in range(1, len(template), batch):
                    chunk = template[start : start + batch]
                    began = time.perf_counter()
                    store.append(match_id, chunk, start)
                    own.append(time.perf_counter() - began)
                    counts[worker] += len(chunk)
                    if time.perf_counter() >= deadline[0]:
                        return

        deadline = [0.0]
        workers = [threading.Thread(target=run, args=(w,)) for w in range(threads)]
        for worker in workers:
            worker.start()
        cpu_began = time.process_time()
        began = time.perf_counter()
        deadline[0] = began + seconds
        barrier.wait()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - began
    return {
        "events": sum(counts),
        "elapsed": elapsed,
        "latencies": [x for own in latencies for x in own],
        "server_cpu": (time.process_time() - cpu_began) / elapsed,
    }


# -- the server ------------------------------------------------------------------------------


def start_server(db: Path, fronts: int = 1) -> tuple[subprocess.Popen[bytes], str, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "matchlog.cli", "serve", "--db", str(db), "--port", "0", "--fronts", str(fronts)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server_file = Path(f"{db}.server")
    deadline = time.monotonic() + 120
    while not server_file.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the server did not start: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        time.sleep(0.05)
    url = json.loads(server_file.read_text())["url"]
    return process, url, Path(f"{db}.token").read_text().strip()


def _checkpoints(url: str, token: str) -> str:
    """What the server's health says its writer's checkpoints of the file cost (older servers: n/a)."""
    import urllib.request

    asked = urllib.request.Request(f"{url}/api/health", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(asked, timeout=60) as answer:
        done = json.loads(answer.read()).get("wal_checkpoints")
    if not done:
        return "n/a (DuckDB checkpoints inside the commits that reach its threshold)"
    return (
        f"{done['idle']} while idle, {done['forced']} with the WAL at its limit, "
        f"longest {done['longest'] * 1000:.0f} ms, {done['seconds'] * 1000:.0f} ms in all"
    )


def line(name: str, result: dict, unit: str = "events") -> str:
    count = result.get("events", result.get("requests"))
    p50, p99 = percentiles(result["latencies"])
    cpu = f"server {result['server_cpu']:.2f}"
    if "client_cpu" in result:
        cpu += f", clients {result['client_cpu']:.2f}"
    rate = count / result["elapsed"]
    longest = max(result["latencies"]) * 1000
    return (
        f"{name:<60} {rate:>9,.0f} {unit}/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   max {longest:7.1f} ms   "
        f"cpu: {cpu}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per figure (default 5)")
    parser.add_argument("--only", choices=["http", "store", "reads"], help="one part only")
    parser.add_argument(
        "--fronts", type=int, nargs="+", default=[1], help="the server's front processes, each in turn (default 1)"
    )
    args = parser.parse_args()
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {python}")
    templates = sample_matches(200, seed=1)
    mean = statistics.mean(len(t) for t in templates)
    print(f"sample: 200 Porrinha matches of {SEATS} random players, {mean:.0f} events each on average")
    configs = [(1, 1), (1, 10), (64, 1), (64, 10)]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for fronts in args.fronts if args.only in (None, "http", "reads") else []:
            served = f" ({fronts} fronts)" if fronts > 1 else ""
            server, url, token = start_server(folder / f"served-{fronts}.duckdb", fronts)
            try:
                if args.only != "reads":
                    for clients, batch in configs:
                        job = ("appends", clients, batch, args.seconds)
                        result = in_another_process(url, token, job, templates, server.pid)
                        name = f"HTTP append{served}, {clients} client(s), batches of {batch}"
                        print(line(name, result), flush=True)
                else:  # something to read
                    in_another_process(url, token, ("appends", 16, 10, 1.0), templates, server.pid)
                for clients, revalidate in ((1, False), (64, False), (64, True)):
                    job = ("reads", clients, args.seconds, revalidate)
                    result = in_another_process(url, token, job, templates, server.pid)
                    said = f", {result['unchanged'] / result['requests']:.0%} 304" if revalidate else ""
                    name = f"HTTP state read{served}, {clients} client(s){said}"
                    print(line(name, result, "requests"), flush=True)
                print(f"the writer's WAL checkpoints{served}: {_checkpoints(url, token)}", flush=True)
            finally:
                server.send_signal(signal.SIGINT)
                server.wait(60)
        if args.only in (None, "store"):
            for threads, batch in configs:
                path = folder / f"store-{threads}-{batch}.duckdb"
                result = store_appends(path, templates, threads, batch, args.seconds)
                print(line(f"Store.append, {threads} thread(s), batches of {batch}", result), flush=True)


if __name__ == "__main__":
    main()

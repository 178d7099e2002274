"""Analysing a log's matches: here, or on worker processes (`jobs`), each match's notes written as
soon as it is judged, all of a match's at once.

Only ended matches are analysed (during play an analysis would be advice). A match its analyser
(the same name and version) has annotated already is skipped unless `again`, so `--all` stopped
by Ctrl-C or a crash starts where it stopped; analysing again appends, never overwrites. Workers
are spawned processes that ignore Ctrl-C (the parent ends them, and each ends the gnubg it runs);
what they finished and the parent wrote stays written.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from uuid import UUID

import msgspec

from matchlog.events import MatchlogError, Record, UsageError
from matchlog.referee.tournament import starting_processes
from matchlog.replay.annotations import Judged

from . import make_analyser

__all__ = ["Analysed", "analyse_matches", "plan"]

#: Matches handed to an analyser at once: gnubg starts once for several (it takes a second to load).
CHUNK = {"backgammon": 8}
DEFAULT_CHUNK = 32


class Analysed(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to one match: analysed (how many notes written), skipped (why), or failed (the
    error's code and message)."""

    match_id: UUID
    game: str
    author: str = ""
    written: int = 0
    skipped: str | None = None
    code: str | None = None
    error: str | None = None


def plan(
    log: Any, infos: Sequence[Any], spec: str | None = None, *, again: bool = False
) -> tuple[list[tuple[Any, Any]], list[Analysed]]:
    """Which matches to analyse with which analyser, and which are skipped and why.

    Raises:
        UsageError: `spec` names no analyser, or gnubg is missing where backgammon is to be analysed.
    """
    from . import analyser_game

    only = analyser_game(spec) if spec else None
    analysers: dict[str, Any] = {}
    done: dict[str, set[UUID]] = {}
    todo, skipped = [], []
    for info in infos:
        if only is not None and info.game != only:
            skipped.append(Analysed(match_id=info.match_id, game=info.game, skipped=f"not {only}"))
            continue
        if info.status == "running":
            skipped.append(Analysed(match_id=info.match_id, game=info.game, skipped="in play"))
            continue
        if info.game not in analysers:
            try:
                analysers[info.game] = make_analyser(info.game, spec)
            except UsageError as error:
                if error.code != "usage.analyser" or only is not None:
                    raise
                analysers[info.game] = None  # a game no analyser judges (a knockout's record)
        analyser = analysers[info.game]
        if analyser is None:
            skipped.append(Analysed(match_id=info.match_id, game=info.game, skipped="no analyser of its game"))
            continue
        author = analyser.author
        if not again:
            if author not in done:
                done[author] = log.analysed(author)
            if info.match_id in done[author]:
                skipped.append(Analysed(match_id=info.match_id, game=info.game, author=author, skipped="analysed"))
                continue
        todo.append((info, analyser))
    return todo, skipped


def _chunks(todo: Sequence[tuple[Any, Any]]) -> Iterator[tuple[str, str, list[Any]]]:
    """The work in chunks of one game's matches: (game, analyser name, infos)."""
    by_game: dict[tuple[str, str], list[Any]] = {}
    for info, analyser in todo:
        by_game.setdefault((info.game, analyser.name), []).append(info)
    for (game, name), infos in by_game.items():
        size = CHUNK.get(game, DEFAULT_CHUNK)
        for start in range(0, len(infos), size):
            yield game, name, infos[start : start + size]


#: A worker's analysers, by (game, name): made once.
_MADE: dict[tuple[str, str], Any] = {}


def judge(game: str, name: str, matches: list[list[Record]]) -> list[list[Judged] | tuple[str, str]]:
    """Each match's notes, or the (code, message) of the error that stopped its analysis; one
    failing match of a chunk does not fail the others."""
    analyser = _MADE.get((game, name))
    if analyser is None:
        analyser = _MADE[(game, name)] = make_analyser(game, name)
    try:
        return list(analyser.analyse_many(matches))
    except MatchlogError:
        if len(matches) == 1:
            raise
    found: list[list[Judged] | tuple[str, str]] = []
    for records in matches:
        try:
            found.append(analyser.analyse(records))
        except MatchlogError as error:
            found.append((error.code, error.message))
    return found


def _judge_safely(game: str, name: str, matches: list[list[Record]]) -> list[list[Judged] | tuple[str, str]]:
    try:
        return judge(game, name, matches)
    except MatchlogError as error:
        return [(error.code, error.message)] * len(matches)


def _worker(tasks: Any, results: Any) -> None:
    """A worker: judge the chunks handed out until told to stop. It leaves Ctrl-C to the parent,
    and ends (with the gnubg it runs: subprocess.run kills its child on the way out) when terminated."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    while (item := tasks.get()) is not None:
        number, task = item
        results.put((number, _judge_safely(*task)))


class _Workers:
    """`jobs` spawned worker processes fed chunks through a queue; every one of them has ended when
    the block does, however it ends (finished, Ctrl-C, a worker that died)."""

    def __init__(self, jobs: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.tasks, self.results = context.Queue(), context.Queue()
        self.processes = [
            context.Process(target=_worker, args=(self.tasks, self.results), daemon=True) for _ in range(jobs)
        ]

    def __enter__(self) -> _Workers:
        try:
            with starting_processes():  # a Ctrl-C now waits until every worker has its arguments
                for process in self.processes:
                    process.start()
        except BaseException:  # the Ctrl-C, delivered as the block ends: end the ones started
            self.__exit__()
            raise
        return self

    def judged(self, tasks: Sequence[Any]) -> Iterator[tuple[int, list[Any]]]:
        """(number of the task, its results) as each finishes.

        Raises:
            MatchlogError: every worker stopped with tasks not done (`analyser.failed`).
        """
        for number, task in enumerate(tasks):
            self.tasks.put((number, task))
        for _ in self.processes:
            self.tasks.put(None)
        waiting = len(tasks)
        while waiting:
            try:
                number, result = self.results.get(timeout=0.5)
            except queue.Empty:
                if not any(process.is_alive() for process in self.processes) and self.results.empty():
                    codes = ", ".join(str(process.exitcode) for process in self.processes)
                    raise MatchlogError(
                        f"every worker stopped (exit codes {codes}) with {waiting} of {len(tasks)} chunks not analysed",
                        code="analyser.failed",
                    ) from None
                continue
            waiting -= 1
            yield number, result

    def __exit__(self, *exc_info: object) -> None:
        started = [process for process in self.processes if process.pid is not None]
        for process in started:
            if process.is_alive():
                process.terminate()
        for process in started:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()
        for channel in (self.tasks, self.results):  # nobody reads them any more: never wait on them
            channel.cancel_join_thread()
            channel.close()


def analyse_matches(
    log: Any,
    infos: Sequence[Any],
    spec: str | None = None,
    *,
    jobs: int = 1,
    again: bool = False,
    on_match: Callable[[Analysed], None] | None = None,
) -> list[Analysed]:
    """Analyse `infos` (catalogue rows) of `log` with their game's analyser (or `spec`'s), on `jobs`
    processes; each match's notes are written once it is judged. Returns what happened to each
    (`on_match` hears it as it happens).

    Raises:
        UsageError: as `plan`, or `jobs` below 1.
        KeyboardInterrupt: Ctrl-C; every match written before it stays written.
    """
    if jobs < 1:
        raise UsageError("--jobs is at least 1", code="usage.jobs")
    todo, skipped = plan(log, infos, spec, again=again)
    outcomes: list[Analysed] = []

    def tell(outcome: Analysed) -> None:
        outcomes.append(outcome)
        if on_match is not None:
            on_match(outcome)

    for outcome in skipped:
        tell(outcome)
    authors = {info.match_id: analyser.author for info, analyser in todo}

    def tasks() -> Iterator[tuple[tuple[str, str, list[list[Record]]], list[Any]]]:
        for game, name, chunk in _chunks(todo):
            yield (game, name, [log.read(info.match_id) for info in chunk]), chunk

    def write(chunk: list[Any], records: list[list[Record]], results: list[Any]) -> None:
        for info, read, result in zip(chunk, records, results, strict=True):
            author = authors[info.match_id]
            if isinstance(result, tuple):
                tell(Analysed(match_id=info.match_id, game=info.game, author=author, code=result[0], error=result[1]))
                continue
            hashes = {record.seq: record.hash for record in read}
            try:
                written = log.put_annotations(info.match_id, author, result, hashes=hashes)
            except MatchlogError as error:
                tell(
                    Analysed(
                        match_id=info.match_id, game=info.game, author=author, code=error.code, error=error.message
                    )
                )
                continue
            tell(Analysed(match_id=info.match_id, game=info.game, author=author, written=written))

    if jobs == 1 or len(todo) <= 1:  # here: no process to start
        for task, chunk in tasks():
            write(chunk, task[2], _judge_safely(*task))
        return outcomes
    handed = list(tasks())
    with _Workers(min(jobs, len(handed))) as workers:
        for number, results in workers.judged([task for task, _ in handed]):
            task, chunk = handed[number]
            write(chunk, task[2], results)
    return outcomes

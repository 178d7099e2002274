"""One Store, used from several processes: the process that owns the file serves it over a Unix
socket (`StoreServer`), and each other process reads and appends through a `RemoteStore`.

DuckDB lets one process write a file and no other open it meanwhile, so a service that runs its
front (HTTP, tokens, decoding, judging, folding, its caches) in several processes keeps the log in
one: every call a front makes is carried to it and answered there, by the same Store, so every
guarantee is the Store's own (one writer thread: one write per seq, the chain and the tree in
commit order; an append is answered once it is durable).

What crosses the socket is pickled, between processes of ours only (the listener takes no
connection without the random key the owner gave its fronts, on a socket in a private folder):

- a call (`("call", id, handle, name, args, kwargs)`) is answered with its result, or the error it
  raised, rebuilt as the same typed error on the other side; an append's future is answered when
  the writer settles it, and appends are handed to the writer in the order a front sent them, so a
  front may queue a match's next batch before the last one is committed, as in one process;
- an iterator (of records, of batches) stays in the owner behind a handle the front pulls items
  from; a tree reader (`tree()`) is the front's own, reading its rows through the owner's cursors;
  a callable argument (a signer, an import's check) or a file to write to (an export) is called
  back in the front;
- every commit is announced on a second connection of each front (`("commit", heads)`) before any
  append of it is answered, so a front that drains its notices before it answers from a cache
  (`catch_up`) never answers a request made after an acknowledgement with what came before it.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Client, Connection, Listener
from typing import Any

from matchlog.events import StoreError

from .tree import TreeReader

__all__ = ["RemoteStore", "StoreServer"]

#: Calls handed to the store on the connection's own thread, in the order they came: they only
#: queue work for the writer, and a match's batches must reach it in the order its front sent them.
_IN_ORDER = frozenset({"append_async"})
#: Calls whose answer is a future the front keeps (the rest are waited for).
_FUTURES = frozenset({"append_async"})
#: What a front reads once, when it connects (fixed while the log is open).
_FIXED = ("path", "read_only", "writable", "has_tree", "has_annotations")
#: Items of an iterator sent per round trip.
_CHUNK = 2_000
#: Bytes an export's writes are gathered into before they cross.
_WRITES = 1 << 18


class _Callback(tuple):
    """A callable argument left in the front: (its number, and whether it is a file's `write`)."""

    __slots__ = ()


class _Handle(tuple):
    """An iterator kept in the owner, that the front pulls items from: (its number,)."""

    __slots__ = ()


def _portable(error: BaseException) -> tuple[str, str, tuple[Any, ...], dict[str, Any]]:
    """An error as it crosses: its class by name, its args and attributes (our errors' `__init__`s
    take other arguments than their `args`, so pickling them as they are would not rebuild them)."""
    kind = type(error)
    state = {k: v for k, v in vars(error).items() if not k.startswith("__")} if hasattr(error, "__dict__") else {}
    return kind.__module__, kind.__qualname__, error.args, state


def _rebuilt(portable: tuple[str, str, tuple[Any, ...], dict[str, Any]]) -> BaseException:
    """The error a call raised in the owner, as the same class (a StoreError if it cannot be)."""
    module, name, args, state = portable
    try:
        kind: Any = importlib.import_module(module)
        for part in name.split("."):
            kind = getattr(kind, part)
        error = kind.__new__(kind)
        BaseException.__init__(error, *args)
        error.__dict__.update(state)
        return error  # type: ignore[no-any-return]
    except Exception:
        return StoreError(f"the log's process failed: {name}: {args[0] if args else ''}", code="store.remote")


# -- the owner's side ------------------------------------------------------------------------------


class _FileWrites:
    """A file in the front, as a store method writing an export sees it: writes gathered, then sent."""

    def __init__(self, call: Callable[..., Any]) -> None:
        self._call = call
        self._gathered: list[bytes] = []
        self._size = 0
        self._told = 0

    def write(self, data: bytes) -> int:
        self._gathered.append(bytes(data))
        self._size += len(data)
        self._told += len(data)
        if self._size >= _WRITES:
            self.flush()
        return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._gathered:
            joined, self._gathered, self._size = b"".join(self._gathered), [], 0
            self._call(joined)

    def tell(self) -> int:
        return self._told

    def close(self) -> None:
        self.flush()

    def writable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return False


class _Front:
    """One front's call connection, served in the owner."""

    def __init__(self, server: StoreServer, connection: Connection) -> None:
        self.server = server
        self.connection = connection
        self._send_lock = threading.Lock()
        self._handles: dict[int, Any] = {}
        self._numbers = itertools.count(1)
        self._answers: dict[int, Future[Any]] = {}
        self._answers_lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock, contextlib.suppress(OSError, ValueError):  # (a front gone: nobody to tell)
            self.connection.send(message)

    def reply(self, number: int, value: Any = None, error: BaseException | None = None) -> None:
        if error is not None:
            self.send(("result", number, False, _portable(error)))
            return
        try:
            self.send(("result", number, True, value))
        except Exception as failure:  # the value cannot cross: say so rather than leave the front waiting
            self.send(("result", number, False, _portable(StoreError(str(failure), code="store.remote"))))

    def serve(self) -> None:
        """Answer the front's calls until it goes."""
        try:
            while True:
                try:
                    message = self.connection.recv()
                except (EOFError, OSError):
                    return
                kind = message[0]
                try:
                    if kind == "call":
                        _, number, handle, name, args, kwargs, nested = message
                        if name in _IN_ORDER:
                            self.run(number, handle, name, args, kwargs)
                        elif nested:  # made by a callback a call of this pool waits for: never queued behind it
                            threading.Thread(
                                target=self.run, args=(number, handle, name, args, kwargs), daemon=True
                            ).start()
                        else:
                            self.server.pool.submit(self.run, number, handle, name, args, kwargs)
                    elif kind == "next":
                        self.server.pool.submit(self.next, message[1], message[2], message[3])
                    elif kind == "drop":
                        it = self._handles.pop(message[1], None)
                        if hasattr(it, "close"):
                            self.server.pool.submit(it.close)
                except RuntimeError:  # the server has closed: nothing more is answered
                    return
                if kind == "answer":
                    with self._answers_lock:
                        waiting = self._answers.pop(message[1], None)
                    if waiting is not None:
                        if message[2]:
                            waiting.set_result(message[3])
                        else:
                            waiting.set_exception(_rebuilt(message[3]))
        finally:
            gone = StoreError("the front that called back has gone", code="store.closed")
            with self._answers_lock:
                for waiting in self._answers.values():
                    waiting.set_exception(gone)
                self._answers.clear()
            for it in self._handles.values():
                if hasattr(it, "close"):
                    with contextlib.suppress(Exception):
                        it.close()
            self._handles.clear()
            self.connection.close()

    def _called_back(self, marker: _Callback) -> Any:
        """A stand-in for the front's callable: each call is carried back and waited for."""

        def call(*args: Any, **kwargs: Any) -> Any:
            waiting: Future[Any] = Future()
            number = next(self._numbers)
            with self._answers_lock:
                self._answers[number] = waiting
            self.send(("callback", number, marker[0], args, kwargs))
            return waiting.result()

        return _FileWrites(call) if marker[1] else call

    def run(self, number: int, handle: int, name: str, args: tuple[Any, ...] | None, kwargs: dict[str, Any]) -> None:
        """Make one call and answer it (a future: once it is settled)."""
        writes: list[_FileWrites] = []

        def local(value: Any) -> Any:
            if isinstance(value, _Callback):
                made = self._called_back(value)
                if isinstance(made, _FileWrites):
                    writes.append(made)
                return made
            return value

        try:
            target = self.server if handle == -1 else self.server.store  # (-1: the server's own questions)
            if args is None:  # an attribute (a property)
                value = getattr(target, name)
            else:
                value = getattr(target, name)(*map(local, args), **{k: local(v) for k, v in kwargs.items()})
            for file in writes:
                file.flush()
        except BaseException as error:
            self.reply(number, error=error)
            return
        if isinstance(value, Future):
            value.add_done_callback(lambda done: self._settled(number, done))
        elif isinstance(value, Iterator):
            self.reply(number, self._keep(value))
        else:
            self.reply(number, value)

    def _settled(self, number: int, done: Future[Any]) -> None:
        error = done.exception()
        self.reply(number, None if error is not None else done.result(), error)

    def _keep(self, value: Any) -> _Handle:
        number = next(self._numbers)
        self._handles[number] = value
        return _Handle((number,))

    def next(self, number: int, handle: int, count: int) -> None:
        """The next `count` items of a kept iterator, and whether it is done."""
        try:
            it = self._handles[handle]
            items = list(itertools.islice(it, count))
        except BaseException as error:
            self.reply(number, error=error)
            return
        self.reply(number, (items, len(items) < count))


class StoreServer:
    """Serves `store` to the fronts that connect to `address` (a Unix socket path) with `key`, and
    announces every commit to each of them before it is acknowledged."""

    def __init__(self, store: Any, address: str, key: bytes, *, workers: int = 32) -> None:
        self.store = store
        self.address = address
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="matchlog-store-call")
        self._listener = Listener(address, family="AF_UNIX", authkey=key)
        self._notices: list[Connection] = []
        self._notices_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        store.on_commit(self._announce)
        self._accepting = threading.Thread(target=self._accept, name="matchlog-store-server", daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                connection = self._listener.accept()
                kind = connection.recv()
            except (OSError, EOFError):
                return
            except Exception:  # a caller without the key, or one that said nothing: not ours
                continue
            if kind == "notices":
                with self._notices_lock:
                    self._notices.append(connection)
                continue
            front = _Front(self, connection)
            thread = threading.Thread(target=front.serve, name="matchlog-store-front", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _announce(self, heads: list[tuple[Any, int]]) -> None:
        """The writer's listener: tell every front which matches moved, before anyone is answered."""
        with self._notices_lock:
            for connection in list(self._notices):
                try:
                    connection.send(("commit", heads))
                except (OSError, ValueError):
                    self._notices.remove(connection)

    def fixed(self) -> dict[str, Any]:
        """What a front reads once: the store's attributes that do not change while it is open."""
        return {name: getattr(self.store, name) for name in _FIXED}

    def tree_rows(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        """The rows of one of a tree reader's queries, on this thread's cursor (store/tree.py's)."""
        return self.store._read().execute(query, params).fetchall()  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop taking fronts and answering them (the store itself stays open: its owner closes it)."""
        with contextlib.suppress(OSError):
            self._listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self.address)
        with self._notices_lock:
            for connection in self._notices:
                connection.close()
            self._notices.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)


# -- a front's side ----------------------------------------------------------------------------------


class _TreeRows:
    """A tree reader's connection, in a front: each query is run by the owner."""

    def __init__(self, store: RemoteStore) -> None:
        self._store = store

    def execute(self, query: str, params: Any = None) -> _TreeRows:
        self._rows = self._store._call("tree_rows", (query, params), {}, handle=-1)
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows  # type: ignore[no-any-return]


class RemoteStore:
    """The Store of another process, through its `StoreServer`: the same methods, answered there.

    Raises:
        StoreError: (`store.closed`) the owner has gone; every call waiting is answered with it.
    """

    def __init__(self, address: str, key: bytes, *, on_lost: Callable[[], None] | None = None) -> None:
        self._calls = Client(address, family="AF_UNIX", authkey=key)
        self._calls.send("calls")
        self._notices = Client(address, family="AF_UNIX", authkey=key)
        self._notices.send("notices")
        self._on_lost = on_lost
        self._numbers = itertools.count(1)
        self._waiting: dict[int, Future[Any]] = {}
        self._callbacks: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._notices_lock = threading.Lock()
        self._listeners: list[Callable[[list[tuple[Any, int]]], None]] = []
        self._lost: StoreError | None = None
        self._hearing = True  # (False once the notices' connection has closed)
        self._this_thread = threading.local()
        threading.Thread(target=self._receive, name="matchlog-store-answers", daemon=True).start()
        threading.Thread(target=self._listen, name="matchlog-store-notices", daemon=True).start()
        fixed = self._call("fixed", (), {}, handle=-1)
        for name, value in fixed.items():
            setattr(self, name, value)

    # -- the connection --------------------------------------------------------------------------

    def _receive(self) -> None:
        while True:
            try:
                message = self._calls.recv()
            except (EOFError, OSError):
                break
            if message[0] == "result":
                with self._lock:
                    waiting = self._waiting.pop(message[1], None)
                if waiting is not None:
                    if message[2]:
                        waiting.set_result(message[3])
                    else:
                        waiting.set_exception(_rebuilt(message[3]))
            elif message[0] == "callback":
                # A thread each: a callback may wait (an export's reader), and the owner's writer may
                # be waiting for another (a signature).
                threading.Thread(target=self._call_back, args=message[1:], daemon=True).start()
        self._lose()

    def _lose(self) -> None:
        """The owner has gone: every call waiting fails, and so will every call from now on."""
        with self._lock:
            if self._lost is not None:
                return
            self._lost = StoreError("the process that holds the log has stopped", code="store.closed")
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            future.set_exception(self._lost)
        if self._on_lost is not None:
            self._on_lost()

    def _call_back(self, number: int, callback: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._this_thread.in_callback = True  # (its calls are nested in one the owner is making)
        try:
            answer = (True, self._callbacks[callback](*args, **kwargs))
        except BaseException as error:
            answer = (False, _portable(error))
        with self._send_lock, contextlib.suppress(OSError, ValueError):
            self._calls.send(("answer", number, *answer))

    def _submit(self, message: tuple[Any, ...]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._lost is not None:
                raise self._lost
            self._waiting[message[1]] = future
        try:
            with self._send_lock:
                self._calls.send(message)
        except (OSError, ValueError):
            self._lose()
        return future

    def _call(self, name: str, args: tuple[Any, ...] | None, kwargs: dict[str, Any], *, handle: int = 0) -> Any:
        """Call `name` on the owner's store (or on a thing it keeps) and wait for the answer."""
        callbacks: list[int] = []

        def portable(value: Any) -> Any:
            if isinstance(value, Iterator):  # (an import's lines: read here, sent whole)
                return list(value)
            writes = hasattr(value, "write") and not isinstance(value, bytes | str)
            if not (callable(value) or writes) or isinstance(value, type):
                return value
            number = next(self._numbers)
            self._callbacks[number] = value.write if writes else value
            callbacks.append(number)
            return _Callback((number, writes))

        sent_args = None if args is None else tuple(map(portable, args))
        sent_kwargs = {k: portable(v) for k, v in kwargs.items()}
        nested = getattr(self._this_thread, "in_callback", False)
        future = self._submit(("call", next(self._numbers), handle, name, sent_args, sent_kwargs, nested))
        if name in _FUTURES or (name == "put_figures" and kwargs.get("wait") is False):
            return future
        try:
            value = future.result()
        finally:
            for number in callbacks:
                self._callbacks.pop(number, None)
        return self._local(value)

    def _local(self, value: Any) -> Any:
        return self._iterate(value[0]) if isinstance(value, _Handle) else value

    def _iterate(self, handle: int) -> Iterator[Any]:
        try:
            while True:
                items, done = self._submit(("next", next(self._numbers), handle, _CHUNK)).result()
                yield from items
                if done:
                    return
        finally:
            self._drop(handle)

    def _drop(self, handle: int) -> None:
        with self._send_lock, contextlib.suppress(OSError, ValueError):
            self._calls.send(("drop", handle))

    # -- the commits -----------------------------------------------------------------------------

    def _listen(self) -> None:
        """Apply commit notices as they come (so follow streams wake without a request)."""
        while True:
            try:
                ready = self._notices.poll(None)
            except (EOFError, OSError):
                return
            if ready:
                self.catch_up()
                if not self._hearing:
                    return

    def catch_up(self) -> None:
        """Apply every commit notice the owner has sent: after this, nothing acknowledged before the
        call is unknown here (the owner sends a commit's notice before it acknowledges it)."""
        with self._notices_lock:
            while True:
                try:
                    if not self._notices.poll(0):
                        return
                    _, heads = self._notices.recv()
                except (EOFError, OSError):  # the owner has gone: the calls say so
                    self._hearing = False
                    return
                for listener in self._listeners:
                    with contextlib.suppress(Exception):
                        listener(heads)

    def on_commit(self, listener: Callable[[list[tuple[Any, int]]], None]) -> None:
        """Call `listener([(match id, last seq), ...])` after every commit the owner announces."""
        self._listeners.append(listener)

    # -- the Store's methods ---------------------------------------------------------------------

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def tree(self) -> TreeReader:
        """`Store.tree`: a reader of the committed tree, here, reading through the owner.

        Raises:
            ProofError: the log has no tree yet.
        """
        if not self.has_tree:
            return self._call("tree", (), {})  # type: ignore[no-any-return]  # (it raises ProofError)
        return TreeReader(_TreeRows(self), annotations=self.has_annotations)  # type: ignore[arg-type]

    def append_async(self, *args: Any, **kwargs: Any) -> Future[Any]:
        """`Store.append_async`, in the owner: the future settles when the group is committed."""
        return self._call("append_async", args, kwargs)  # type: ignore[no-any-return]

    @property
    def committed(self) -> int:
        """`Store.committed`, as the owner has it now."""
        return self._call("committed", None, {})  # type: ignore[no-any-return]

    @property
    def wal_checkpoints(self) -> Any:
        """`Store.wal_checkpoints`, as the owner has it now."""
        return self._call("wal_checkpoints", None, {})

    def close(self) -> None:
        """Let go of the owner (its store stays open)."""
        for connection in (self._calls, self._notices):
            with contextlib.suppress(OSError):
                connection.close()

    def __enter__(self) -> RemoteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

"""Fish over TCP: the course's remote protocol, a server that referees remote clients, and a client
that connects any local player to such a server.

Sign-up: a client connects and sends its name as a JSON string (1 to 12 ASCII letters) within
`name_timeout` seconds; the server waits `wait` seconds for at least `min_players` (one more period
if too few came) and stops taking sign-ups at `max_players`. Then it runs a knockout tournament
(`referee.knockout`) between the remote players, in sign-up order, recording every game and the
tournament itself in the log like any other match.

Each call is a JSON array `[name, [arguments...]]` from the server; the client answers with one
JSON value (any whitespace, or none, between values):

    ["start", [true]]                  -> "void"       the tournament starts
    ["playing-as", [Color]]            -> "void"       a game starts, you play this colour
    ["playing-with", [[Color, ...]]]   -> "void"       against these
    ["setup", [State]]                 -> Position     place a penguin: [row, column]
    ["take-turn", [State, [Action]]]   -> Action       move: [[row, column], [row, column]]; the list
                                                       holds the moves made since your last turn
    ["end", [Boolean]]                 -> "void"       the tournament is over; true if you won

State is {"players": [{"color", "score", "places"}...], "board": [[fish...]...]} with the players
still in, in turn order, the one to act first (see `engines.fish.state_to_json`). A reply that is
not JSON, a "void" that is not "void", a dropped connection or a late answer kicks the player (codes
remote.malformed, remote.closed, player.timeout); a well-formed but illegal answer is judged by the
rules like any player's (fish.*), and the answer is recorded.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from matchlog.engines import GameTree
from matchlog.engines.contract import shown
from matchlog.engines.fish import COLORS, ENGINE, FishState, state_from_json, state_to_json
from matchlog.events import Event, IllegalAction, RemoteError, Seat, UsageError
from matchlog.store import Store

from .calls import PlayerFailed
from .knockout import KnockoutResult, run_knockout

__all__ = [
    "Channel",
    "ClientResult",
    "RemoteClosed",
    "RemoteGarbled",
    "RemotePlayer",
    "RemoteSlow",
    "play_remote",
    "serve",
]

#: A client's name: 1 to 12 ASCII letters.
NAME = re.compile(r"[A-Za-z]{1,12}")
#: The longest message either side accepts.
MESSAGE_LIMIT = 1 << 20
#: The tail of a JSON text that may still become valid: a literal or number cut short.
_PARTIAL = re.compile(r"(t(r(u)?)?|f(a(l(s)?)?)?|n(u(l)?)?|-?[0-9]*(\.[0-9]*)?([eE][+-]?[0-9]*)?)\Z")
_INCOMPLETE = object()


class RemoteClosed(PlayerFailed):
    """The other side closed the connection, or it failed."""

    code = "remote.closed"


class RemoteGarbled(PlayerFailed):
    """The other side sent something that is not the JSON the protocol expects."""

    code = "remote.malformed"


class RemoteSlow(PlayerFailed):
    """The other side did not answer in time."""

    code = "player.timeout"


class Channel:
    """JSON values over a socket: each value sent ends with a newline; values received may be
    separated by any whitespace, or nothing."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._text = ""
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._decoder = json.JSONDecoder()

    def send(self, value: object, timeout: float | None = None) -> None:
        """Send one value.

        Raises:
            RemoteClosed: the connection is gone.
        """
        data = (json.dumps(value, separators=(",", ":")) + "\n").encode()
        try:
            self.sock.settimeout(timeout)
            self.sock.sendall(data)
        except OSError as error:  # socket.timeout is one too: a peer that stopped reading
            raise RemoteClosed(f"the connection failed while sending: {error}") from None

    def receive(self, timeout: float | None) -> Any:
        """The next value, waiting at most `timeout` seconds (None: no limit).

        Raises:
            RemoteSlow: nothing complete arrived in time.
            RemoteClosed: the connection closed or failed.
            RemoteGarbled: what arrived is not JSON (or is longer than MESSAGE_LIMIT).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while (value := self._take()) is _INCOMPLETE:
            if len(self._text) > MESSAGE_LIMIT:
                raise RemoteGarbled(f"a message longer than {MESSAGE_LIMIT} bytes")
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise RemoteSlow(f"no answer within {timeout:g} s")
            try:
                self.sock.settimeout(remaining)
                chunk = self.sock.recv(65536)
            except TimeoutError:
                raise RemoteSlow(f"no answer within {timeout:g} s") from None
            except OSError as error:
                raise RemoteClosed(f"the connection failed: {error}") from None
            if not chunk:
                raise RemoteClosed("the connection was closed" + (" mid-message" if self._text.strip() else ""))
            try:
                self._text += self._utf8.decode(chunk)
            except UnicodeDecodeError:
                raise RemoteGarbled("sent bytes that are not UTF-8 text") from None
        return value

    def _take(self) -> Any:
        text = self._text.lstrip()
        self._text = text
        if not text:
            return _INCOMPLETE
        try:
            value, end = self._decoder.raw_decode(text)
        except json.JSONDecodeError as error:
            if error.msg.startswith("Unterminated string") or _PARTIAL.match(text, error.pos):
                return _INCOMPLETE
            raise RemoteGarbled(f"sent {shown(text, 60)}, which is not JSON") from None
        except RecursionError:
            raise RemoteGarbled(f"sent {shown(text, 60)}, JSON nested too deeply to read") from None
        except ValueError:  # a number of more digits than Python converts (4,300)
            raise RemoteGarbled(f"sent {shown(text, 60)}, a number too long to read") from None
        self._text = text[end:]
        return value

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a socket that already failed
            self.sock.close()


# -- the server side -------------------------------------------------------------------------


class RemotePlayer:
    """The server's stand-in for a remote client: seed 003's player interface, spoken over a Channel.
    Its age is its place in the sign-up order, so earlier sign-ups play first."""

    def __init__(self, name: str, channel: Channel, age: int, timeout: float | None) -> None:
        self.name = name
        self.channel = channel
        self.age = age
        self.timeout = timeout
        self.seat = 0
        self._seen: FishState | None = None
        self._since: list[list[list[int]]] = []

    def _call(self, message: str, arguments: list[Any], *, void: bool = False) -> Any:
        self.channel.send([message, arguments], self.timeout)
        reply = self.channel.receive(self.timeout)
        if void and reply != "void":
            raise RemoteGarbled(f'answered {shown(reply, 60)} to {message}, not "void"')
        return reply

    def tournament_started(self, players: int) -> None:
        self._call("start", [True], void=True)

    def initialize(self, board: Any, players: int, color: str) -> int:
        self.seat = COLORS.index(color)
        self._seen, self._since = None, []
        self._call("playing-as", [color], void=True)
        self._call("playing-with", [[c for c in COLORS[:players] if c != color]], void=True)
        return self.age

    def listen(self, tree: GameTree) -> None:
        """Note the moves the others make, to send with this player's next take-turn (a penguin that
        changed tiles; placements and kicks change how many penguins a player has instead)."""
        state: FishState = tree.state
        seen, self._seen = self._seen, state
        if seen is None:
            return
        for seat, (before, after) in enumerate(zip(seen.penguins, state.penguins, strict=True)):
            if seat != self.seat and len(before) == len(after) and before != after:
                (source,) = set(before) - set(after)
                (target,) = set(after) - set(before)
                self._since.append([list(source), list(target)])

    def get_placement(self, state: FishState) -> Any:
        return self._call("setup", [state_to_json(state, self.seat)])

    def get_move(self, game: GameTree) -> Any:
        since, self._since = self._since, []
        return self._call("take-turn", [state_to_json(game.state, self.seat), since])

    def tournament_ended(self, won: bool) -> None:
        self._call("end", [won], void=True)


class SignUp(msgspec.Struct, frozen=True):
    """A client that signed up (or was turned away, with the reason)."""

    name: str
    address: str
    refused: str = ""


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    min_players: int = 5,
    max_players: int = 10,
    wait: float = 30.0,
    periods: int = 2,
    name_timeout: float = 10.0,
    timeout: float = 3.0,
    options: dict[str, Any] | None = None,
    store: Store | None = None,
    seed: int | None = None,
    on_listening: Callable[[str, int], None] | None = None,
    on_signup: Callable[[SignUp], None] | None = None,
    on_event: Callable[[Event, Any], None] | None = None,
) -> KnockoutResult:
    """Take sign-ups on `host`:`port` (0: any free port, told to `on_listening`), then referee a
    knockout between the clients and record it.

    Raises:
        UsageError: bad numbers of players, waits or options.
        RemoteError: the port cannot be used, or too few clients signed up.
    """
    if not 1 <= min_players <= max_players:
        raise UsageError(f"need 1 <= min players <= max players, not {min_players} and {max_players}", code="usage")
    if wait <= 0 or periods < 1 or name_timeout <= 0 or timeout <= 0:
        raise UsageError("waits and timeouts must be positive, and periods at least 1", code="usage")
    try:
        listener = socket.create_server((host, port))
    except OSError as error:
        raise RemoteError(f"cannot listen on {host}:{port}: {error}", code="remote.listen") from None
    lobby = _Lobby(max_players, name_timeout, on_signup)
    try:
        bound_host, bound_port = listener.getsockname()[:2]
        if on_listening is not None:
            on_listening(bound_host, bound_port)
        for _ in range(periods):
            lobby.take_sign_ups(listener, time.monotonic() + wait)
            if len(lobby.players) >= min_players or lobby.full:
                break
        lobby.close_sign_ups()
        listener.close()
        if len(lobby.players) < min_players:
            raise RemoteError(
                f"only {len(lobby.players)} client(s) signed up in {periods} x {wait:g} s; "
                f"at least {min_players} needed",
                code="remote.too_few",
            )
        players = [RemotePlayer(name, channel, age, timeout) for age, (name, channel) in enumerate(lobby.players)]
        seats = _unique_seats([name for name, _ in lobby.players])
        return run_knockout(
            "fish", seats, players, options=options, store=store, timeout=timeout, seed=seed, on_event=on_event
        )
    finally:
        listener.close()
        lobby.close_all()


class _Lobby:
    """Sign-ups: each connection reads its name on a thread of its own, so a slow one holds up nobody."""

    def __init__(self, most: int, name_timeout: float, on_signup: Callable[[SignUp], None] | None) -> None:
        self.most = most
        self.name_timeout = name_timeout
        self.on_signup = on_signup
        self.players: list[tuple[str, Channel]] = []
        self._pending: list[Channel] = []
        self._open = True
        self._lock = threading.Lock()

    @property
    def full(self) -> bool:
        with self._lock:
            return len(self.players) >= self.most

    def take_sign_ups(self, listener: socket.socket, deadline: float) -> None:
        while not self.full and (remaining := deadline - time.monotonic()) > 0:
            listener.settimeout(min(remaining, 0.1))
            try:
                sock, address = listener.accept()
            except TimeoutError:
                continue
            channel = Channel(sock)
            with self._lock:
                self._pending.append(channel)
            where = f"{address[0]}:{address[1]}"
            threading.Thread(target=self._read_name, args=(channel, where), daemon=True).start()

    def _read_name(self, channel: Channel, where: str) -> None:
        refused = ""
        name = ""
        try:
            value = channel.receive(self.name_timeout)
            name = value if isinstance(value, str) else shown(value, 30)
            if not isinstance(value, str) or not NAME.fullmatch(value):
                refused = f"a name is 1 to 12 ASCII letters, not {shown(value, 30)}"
        except PlayerFailed as error:
            refused = str(error)
        except Exception as error:  # whatever a client sends, it is refused, never a thread's traceback
            refused = f"its sign-up could not be read: {type(error).__name__}"
        with self._lock:
            if channel in self._pending:
                self._pending.remove(channel)
            if not refused and not self._open:
                refused = "sign-up is closed"
            if not refused and len(self.players) >= self.most:
                refused = "the tournament is full"
            if not refused:
                self.players.append((name, channel))
        if refused:
            channel.close()
        if self.on_signup is not None:
            self.on_signup(SignUp(name, where, refused))

    def close_sign_ups(self) -> None:
        with self._lock:
            self._open = False
            pending, self._pending = self._pending, []
        for channel in pending:
            channel.close()

    def close_all(self) -> None:
        self.close_sign_ups()
        with self._lock:
            for _, channel in self.players:
                channel.close()


def _unique_seats(names: Sequence[str]) -> list[Seat]:
    seen: dict[str, int] = {}
    seats = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        seats.append(Seat(name if seen[name] == 1 else f"{name}#{seen[name]}", "remote"))
    return seats


# -- the client side -------------------------------------------------------------------------


class ClientResult(msgspec.Struct):
    """What a client went through: the games it played and, once told, whether it won."""

    name: str
    games: int = 0
    won: bool | None = None


def play_remote(
    player: object,
    name: str,
    *,
    host: str = "127.0.0.1",
    port: int,
    timeout: float | None = 300.0,
    on_message: Callable[[str, list[Any]], None] | None = None,
) -> ClientResult:
    """Connect `player` (seed 003's interface) to a Fish server as `name` and play until the
    tournament ends or the server closes the connection. `timeout` bounds each wait for the server.

    Raises:
        UsageError: a name the server would refuse.
        RemoteError: no server there, or it broke the protocol or went away mid-tournament.
    """
    if not NAME.fullmatch(name):
        raise UsageError(f"a name is 1 to 12 ASCII letters, not {name!r}", code="usage.name")
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as error:
        raise RemoteError(f"no Fish server at {host}:{port}: {error}", code="remote.connect") from None
    channel = Channel(sock)
    client = _Client(player, ClientResult(name))
    try:
        channel.send(name, timeout)
        while client.result.won is None:
            try:
                message = channel.receive(timeout)
            except RemoteClosed:
                if client.result.games:  # kicked, or the server stopped: the tournament is over for us
                    return client.result
                raise RemoteError(
                    "the server closed the connection before the tournament began", code="remote.closed"
                ) from None
            if not (isinstance(message, list) and len(message) == 2 and isinstance(message[0], str)):
                raise RemoteError(
                    f"the server sent {shown(message, 60)}, not [name, [arguments]]", code="remote.protocol"
                )
            if on_message is not None:
                on_message(message[0], message[1])
            reply = client.answer(message[0], message[1])
            try:
                channel.send(reply, timeout)
            except (TypeError, ValueError):
                raise RemoteError(f"the player's answer {shown(reply, 60)} is not JSON", code="remote.player") from None
        return client.result
    except PlayerFailed as error:
        raise RemoteError(f"the connection to the server failed: {error}", code="remote.protocol") from None
    finally:
        channel.close()


class _Client:
    """Turns the server's calls into calls on a local player."""

    def __init__(self, player: object, result: ClientResult) -> None:
        self.player = player
        self.result = result
        self.color = "red"
        self.others: list[str] = []
        self.initialized = False

    def answer(self, message: str, arguments: Any) -> Any:
        """The reply to one call.

        Raises:
            RemoteError: the server sent something this client does not understand, or the local
                player raised (the server then kicks it when the connection closes).
        """
        if not isinstance(arguments, list):
            raise RemoteError(f"the arguments of {message} are not a list", code="remote.protocol")
        try:
            return self._answer(message, arguments)
        except IllegalAction as error:
            raise RemoteError(
                f"the server sent a bad state with {message}: {error.message}", code="remote.protocol"
            ) from None
        except RemoteError:
            raise
        except Exception as error:
            raise RemoteError(
                f"the player raised {type(error).__name__}: {shown(str(error), 200)} answering {message}",
                code="remote.player",
            ) from None

    def _answer(self, message: str, arguments: list[Any]) -> Any:
        match message, arguments:
            case "start", [_]:
                return "void"
            case "playing-as", [str() as color] if color in COLORS:
                self.color, self.initialized = color, False
                self.result.games += 1
                return "void"
            case "playing-with", [list() as others]:
                self.others = others
                return "void"
            case "setup", [state]:
                fish = self._state(state, "place")
                return list(self.player.get_placement(fish))  # type: ignore[attr-defined]
            case "take-turn", [state, list()]:
                move = self.player.get_move(GameTree(ENGINE, self._state(state, "move")))  # type: ignore[attr-defined]
                return False if move is None else [list(move[0]), list(move[1])]
            case "end", [bool() as won]:
                self.result.won = won
                ended = getattr(self.player, "tournament_ended", None)
                if callable(ended):
                    ended(won)
                return "void"
        raise RemoteError(
            f"the server sent {message} with {shown(arguments, 60)}, which this client does not know",
            code="remote.protocol",
        )

    def _state(self, data: object, phase: str) -> FishState:
        state = state_from_json(data, phase=phase)
        if not self.initialized:
            initialize = getattr(self.player, "initialize", None)
            if callable(initialize):
                initialize(state.board, 1 + len(self.others), self.color)
            self.initialized = True
        return state

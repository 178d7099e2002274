"""The contract every game passes, as functions a game's own tests call (and `Contract`, a pytest
class that calls them all).

Each check plays or reads real matches through matchlog's own referee, judge, codec and views, and
raises `AssertionError` saying what broke:

    check_declared(game)               a GameSpec, a random built-in player, a way to referee it
    check_playout(game, players, seed) a random match ends with every seat placed; apply never
                                       mutates; folding any prefix of its log gives the state the
                                       referee had; the audit (the judge run again) finds nothing
                                       and re-derives every draw from the committed seed
    check_codec(game)                  decode(encode(e)) == e for every event type of the game (a
                                       sample of each, and every event a playout recorded), bytes
                                       canonical, a JSON schema per type, and the game's samples
    check_folding(game, seed)          folding a log twice gives equal states, byte for byte
    check_views(game)                  every event type the game's log may hold declares what each
                                       seat sees of it; every figure it counts declares what it is
                                       derived from; a seat's view of a view is itself
    check_twins(records, twins)        no output a seat gets (its replay lines, states, whose turn,
                                       outcome, audit and dispute reports, errors) differs between a
                                       match and a twin that differs only in what that seat may not
                                       know then (the game brings its own twin maker), the times of
                                       the events the seat does not see whole included (`retimed`)
    check_bad_answers(game, seed)      a player that answers garbage gets rulings: its answers are
                                       recorded as rejected (or it is removed), and the match ends
                                       and audits clean
    check_encoding(game, seed)         for a game with an encoding for learners: every decision's
                                       tensor has the shape and bounds its match declares, the legal
                                       answers read from the seat's view are the rules' own, and each
                                       legal answer's index proposes it again; a game without one is
                                       refused by datasets with `usage.encoding`

A game with an encoding has its dataset rows among the outputs `check_twins` compares: a step row
holds nothing its seat may not know.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from matchlog.engines import CHANCE, Engine, Game, GameSpec
from matchlog.engines import game as registered
from matchlog.engines.chance import ChanceSource
from matchlog.engines.encodings import NO_ACTION, encoding
from matchlog.engines.figures import SEEN
from matchlog.engines.views import OWN_TIME, figure_derived, shown_event, shown_state
from matchlog.events import (
    AnswerRejected,
    Event,
    MatchlogError,
    MatchStarted,
    PlayerRemoved,
    Record,
    Seat,
    UsageError,
    decode,
    encode,
    json_schema,
    lifecycle,
)
from matchlog.referee import MemoryRecorder, PlayerCalls, Referee, builtin_names, make_player, runner
from matchlog.replay import (
    audit_records,
    check_seat,
    dispute_records,
    figures_of,
    fold,
    seat_audit_report,
    seat_dispute_report,
    seat_lines,
    seat_state,
    timeline,
)
from matchlog.replay.steps import decisions

__all__ = [
    "GARBAGE",
    "Playout",
    "Twin",
    "check_bad_answers",
    "check_codec",
    "check_declared",
    "check_encoding",
    "check_folding",
    "check_playout",
    "check_twins",
    "check_views",
    "playout",
    "retimed",
    "sample",
    "seat_outputs",
    "seat_reports",
]

#: A twin match (its records) and the first seq at which the seat could tell it from the original.
Twin = tuple[list[Record], int]
#: What a garbage player answers: nothing a game's protocol takes as an answer.
GARBAGE: tuple[Any, ...] = (None, "", "garbage", -1, 10**40, 2.5, [], {}, {"type": "no.such"}, [[-9]], True)


class _Guarded:
    """The game's engine, checked on every call for what the contract promises."""

    def __init__(self, engine: Engine[Any]) -> None:
        self.engine = engine
        self.spec = engine.spec
        self.decisions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def apply(self, state: Any, event: Event) -> Any:
        before = msgspec.msgpack.encode(state)
        after = self.engine.apply(state, event)
        assert msgspec.msgpack.encode(state) == before, f"apply({event.tag}) mutated its input"
        assert isinstance(after, msgspec.Struct), f"apply({event.tag}) gave a {type(after).__name__}, not a Struct"
        assert after.__struct_config__.frozen, f"{type(after).__name__} is not frozen"
        return after

    def chance(self, state: Any, rng: random.Random) -> Event:
        event = self.engine.chance(state, rng)
        outcomes = self.engine.chance_outcomes(state)
        assert not outcomes or event in outcomes, f"chance drew {event!r}, which it does not list as possible"
        self.engine.check_chance(state, event)  # what it draws, it accepts as possible
        return event

    def to_act(self, state: Any) -> Any:
        turn = self.engine.to_act(state)
        seats = len(getattr(state, "names", ())) or 0
        if turn is not None and turn.seat == CHANCE:
            for seat in range(seats):
                assert self.engine.legal(state, seat) == (), f"seat {seat} has legal answers while chance acts"
        elif turn is not None:
            self.decisions += 1
            legal = self.engine.legal(state, turn.seat)
            assert legal, f"nothing is legal for seat {turn.seat} at {turn.decision}"
            for action in random.Random(self.decisions).sample(list(legal), min(len(legal), 5)):
                self.engine.check(state, turn.seat, action)  # what legal lists, check allows
            for other in range(seats):
                if other != turn.seat:
                    assert self.engine.legal(state, other) == (), f"seat {other} has legal answers out of turn"
        return turn


class Playout(msgspec.Struct, frozen=True, kw_only=True):
    """A random match as its referee played it: the records, the state after each, the last state."""

    records: list[Record]
    states: list[Any]
    state: Any


def _players(game: str) -> list[str]:
    return sorted(name for name in builtin_names(game) if name != "human")  # no one at a terminal


def playout(
    game: str,
    players: int | None = None,
    seed: int = 0,
    *,
    options: dict[str, Any] | None = None,
    wrap: Callable[[int, object], object] | None = None,
) -> Playout:
    """A match of `game` between random built-in players (`players` seats, default the least),
    refereed through its own protocol with its engine checked on every call. `wrap(seat, player)`
    may stand another object in for a seat's player."""
    engine = registered(game).engine
    rng = random.Random(seed)
    count = players or engine.spec.min_players
    names = _players(game)
    seats = tuple(Seat(f"s{i}", rng.choice(names)) for i in range(count))
    started = MatchStarted(game=game, options=dict(options or {}), seats=seats)
    recorder = MemoryRecorder()
    states: list[Any] = []
    chance = ChanceSource(rng.randbytes(32)) if engine.spec.chance else None
    referee = Referee(
        _Guarded(engine),  # type: ignore[arg-type]
        started,
        recorder,
        on_event=lambda event, state: states.append(state),
        chance=chance,
    )
    calls = []
    for index, seat in enumerate(seats):
        player = make_player(game, seat.player, random.Random(rng.random()))
        calls.append(PlayerCalls(wrap(index, player) if wrap else player, None))
    runner(game)(referee, calls, chance or random.Random(rng.random()))
    return Playout(records=recorder.records(referee.match_id), states=states, state=referee.state)


def check_declared(game: str) -> None:
    """The game declares itself: its plugin, a GameSpec under its name, a `random` built-in."""
    found = registered(game)
    assert isinstance(found, Game), f"{game} is not a Game"
    spec = found.engine.spec
    assert isinstance(spec, GameSpec), f"{game}'s spec is not a GameSpec"
    assert spec.name == game, f"{game}'s spec is called {spec.name!r}"
    assert spec.min_players >= 1, "a game needs a seat"
    assert spec.max_players is None or spec.max_players >= spec.min_players, "max_players < min_players"
    assert "random" in builtin_names(game), "every game has a random player (the contract plays with it)"
    runner(game)  # matchlog can referee it


def check_playout(
    game: str, players: int | None = None, seed: int = 0, *, options: dict[str, Any] | None = None
) -> Playout:
    """A random match ends, within a bound, with every seat placed; folding any prefix of its log
    gives the state its referee had then; the audit finds nothing and re-derives every draw."""
    played = playout(game, players, seed, options=options)
    engine = registered(game).engine
    records = played.records
    count = len(records[0].event.seats)  # type: ignore[attr-defined]
    assert engine.to_act(played.state) is None, "the match did not end"
    assert len(records) < 200_000, "the match took more than 200,000 events"
    outcome = engine.outcome(played.state)
    assert outcome is not None, "a match that ended has no outcome"
    assert len(outcome.places) == count, outcome
    assert all(1 <= p <= count for p in outcome.places), outcome
    assert all(outcome.places[w] == 1 for w in outcome.winners), outcome
    assert len(played.states) == len(records)
    sample = random.Random(seed).sample(range(len(records)), min(25, len(records)))
    for seq in sorted({0, len(records) - 1, *sample}):
        assert fold(records[: seq + 1]) == played.states[seq], f"folding seqs 0..{seq} is not the referee's state"
    report = audit_records(records)
    assert report.findings == [], f"the audit found {report.findings[:3]}"
    assert report.checked["chance_rederived"] == report.checked["chance"], "a draw was not re-derived from the seed"
    if engine.spec.chance:
        assert report.checked["chance"] > 0, "a game with chance drew nothing"
    else:
        assert report.checked["chance"] == 0, "a game without chance drew something"
    return played


def sample(kind: type[Event]) -> Event:
    """An instance of an event type, each field a value of its declared type."""
    return msgspec.convert(_value_of(msgspec.inspect.type_info(kind)), kind)


def _value_of(info: Any) -> Any:
    inspect = msgspec.inspect
    match info:
        case inspect.StructType():
            fields = {field.encode_name: _value_of(field.type) for field in info.fields}
            if info.tag_field is not None:
                fields[info.tag_field] = info.tag
            return fields
        case inspect.BoolType():
            return True
        case inspect.IntType():
            if info.ge is not None:
                return info.ge
            return info.gt + 1 if info.gt is not None else 1
        case inspect.FloatType():
            return 0.5
        case inspect.StrType():
            return "x" * max(1, info.min_length or 0)
        case inspect.BytesType():
            return ""
        case inspect.ListType() | inspect.VarTupleType() | inspect.SetType() | inspect.FrozenSetType():
            return [_value_of(info.item_type)] if (info.max_length or 1) >= 1 else []
        case inspect.TupleType():
            return [_value_of(item) for item in info.item_types]
        case inspect.DictType():
            return {}
        case inspect.UnionType():
            chosen = next((t for t in info.types if not isinstance(t, inspect.NoneType)), info.types[0])
            return _value_of(chosen)
        case inspect.LiteralType():
            return info.values[0]
        case inspect.EnumType():
            return next(iter(info.cls)).value
        case inspect.NoneType():
            return None
    return None


def check_codec(game: str, *, samples: Path | None = None, playouts: Iterable[Playout] = ()) -> None:
    """decode(encode(e)) == e, with canonical bytes, for a sample of every event type of `game`
    and every event the `playouts` recorded; every type has a JSON schema; every encoded sample in
    the folder `samples` (`TAG.vN.json`, as matchlog keeps its own) still decodes."""
    found = registered(game)
    kinds = [*found.events]
    events: list[Event] = [sample(kind) for kind in kinds]
    events += [record.event for played in playouts for record in played.records]
    for event in events:
        encoded = encode(event)
        assert decode(encoded) == event, f"{event.tag} does not decode to itself: {encoded!r}"
        assert encode(decode(encoded)) == encoded, f"{event.tag}'s bytes are not canonical"
    described = {
        definition["properties"]["type"]["enum"][0]
        for definition in json_schema()["$defs"].values()
        if "type" in definition.get("properties", {})
    }
    missing = {kind.__struct_config__.tag for kind in kinds} - described
    assert not missing, f"no JSON schema for {sorted(missing)}"
    if samples is not None:
        for path in sorted(samples.glob(f"{game}.*.json")):
            tag, _, version = path.stem.rpartition(".v")
            event = decode(path.read_bytes().strip(), tag=tag, version=int(version.split(".")[0]))
            assert event.tag == tag, f"{path.name} decodes to {event.tag}"


def check_folding(game: str, seed: int = 0, *, players: int | None = None) -> None:
    """Folding the same log twice gives equal states, byte for byte (no clock, no random, no order
    of a set or a dict that differs between runs)."""
    records = playout(game, players, seed).records
    once = [step.after for step in timeline(records)]
    again = [step.after for step in timeline(records)]
    assert once == again, "two folds of one log differ"
    assert [msgspec.msgpack.encode(s) for s in once] == [msgspec.msgpack.encode(s) for s in again]


def check_views(game: str, playouts: Iterable[Playout] = ()) -> None:
    """Every event type the game's log may hold declares what each seat sees of it (nothing else
    is declared); every figure the playouts counted declares what it is derived from; a seat's
    view is idempotent, and shows a game without hidden information whole."""
    engine = registered(game).engine
    own = {kind for kind in registered(game).events}
    expected = set(lifecycle.EVENTS) | own
    declared = set(engine.views)
    undeclared = sorted(kind.__name__ for kind in expected - declared)
    assert not undeclared, f"{game} does not declare what each seat sees of {undeclared}"
    foreign = sorted(kind.__name__ for kind in declared - expected)
    assert not foreign, f"{game} declares views of events that are not its own: {foreign}"
    assert all(callable(reveal) for reveal in engine.views.values())
    for played in playouts:
        counted = {figure for _, figure, _ in figures_of(played.records) if not figure.startswith(SEEN)}
        undeclared = sorted(figure for figure in counted if figure_derived(engine, figure) is None)
        assert not undeclared, f"{game} counts figures it does not declare: {undeclared}"
        seats = len(played.records[0].event.seats)  # type: ignore[attr-defined]
        for state, record in list(zip(played.states, played.records, strict=True))[::7]:
            for seat in [None, *range(seats)]:
                seen = engine.view(state, seat)
                assert engine.view(seen, seat) == seen, f"a view of a view is not the view (seat {seat})"
                shown = shown_event(engine, state, record.event, seat)
                assert isinstance(shown, Event)
                if not engine.spec.hidden:
                    assert seen == state, f"{game} hides nothing, yet seat {seat} sees less of the state"
                    assert shown == record.event, f"{game} hides nothing, yet seat {seat} sees less of an event"


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value)


def seat_outputs(records: Sequence[Record], seat: int | None) -> list[tuple[Any, Any, Any]]:
    """Per seq: the replay and export line and the state (whose turn, outcome, text) `seat` gets,
    and its dataset row of the decision it made there (for a game with an encoding)."""
    engine = registered(records[0].event.game).engine  # type: ignore[attr-defined]
    rows = _seat_rows(records, seat)
    return [
        (_plain(line), _plain(seat_state(engine, line.match_id, line.seq, step.after, seat)), rows.get(line.seq))
        for line, step in zip(seat_lines(records, seat), timeline(records), strict=True)
    ]


#: What a step row says only at the match's end (the outcome every seat is shown then): a twin,
#: cut before the end, has neither.
_AT_THE_END = ("reward", "terminal")


def _seat_rows(records: Sequence[Record], seat: int | None) -> dict[int, Any]:
    """`seat`'s dataset rows by seq, as plain data without what the end adds (none for a
    spectator, who makes no decision, or a game without an encoding)."""
    if seat is None or registered(records[0].event.game).encoding() is None:  # type: ignore[attr-defined]
        return {}
    found = {}
    for row in decisions(records, seat=seat):
        plain = _plain(row)
        for name in _AT_THE_END:
            plain.pop(name)
        found[row.seq] = plain
    return found


def seat_reports(records: Sequence[Record], seat: int | None) -> Any:
    """The audit and dispute reports `seat` gets of the last event of `records`, and its errors."""
    seq = len(records) - 1
    audit = seat_audit_report(records, audit_records(records), seat)
    dispute = seat_dispute_report(records, dispute_records(records, seq, chain_verified=True), seat)
    errors = []
    for wrong in (lambda: dispute_records(records, seq + 1, chain_verified=True), lambda: check_seat(99, 4)):
        try:
            wrong()
        except MatchlogError as error:
            errors.append((error.code, error.message))
    return _plain(audit), _plain(dispute), errors


def retimed(records: Sequence[Record], seat: int | None, rng: random.Random) -> list[Record]:
    """`records` with each event `seat` (None: a spectator) does not see whole recorded at another
    time, between the last event before it that the seat sees whole and the event after it (the end
    of a match cut short keeps its time): a twin in how long a hidden step took, the times of what
    the seat sees whole unchanged."""
    hidden = [
        step.event != record.event and type(record.event) not in OWN_TIME
        for step, record in zip(timeline(records, seat, as_seat=True), records, strict=True)
    ]
    times = [record.at_us for record in records]
    first = 1
    while first < len(records):
        if not hidden[first]:
            first += 1
            continue
        end = next((seq for seq in range(first, len(records)) if not hidden[seq]), len(records))
        low, high = times[first - 1], times[end] if end < len(records) else times[end - 1]
        moved = sorted(rng.randint(min(low, high), max(low, high)) for _ in range(first, end))
        if end == len(records):
            moved[-1] = high
        times[first:end] = moved
        first = end
    return [msgspec.structs.replace(r, at_us=at) if at != r.at_us else r for r, at in zip(records, times, strict=True)]


def check_twins(
    records: Sequence[Record],
    twins: Callable[[Sequence[Record], int | None, random.Random], Iterator[Twin]],
    *,
    seed: int = 0,
) -> int:
    """Every output each seat (and a spectator) gets of `records` is the same from each twin the
    game's `twins(records, seat, rng)` makes, its hidden steps `retimed` too, up to the seq where
    that seat could tell them apart. Returns how many twins were compared."""
    rng = random.Random(seed)
    seats = len(records[0].event.seats)  # type: ignore[attr-defined]
    compared = 0
    for seat in [None, *range(seats)]:
        outputs = seat_outputs(records, seat)
        assert len(outputs) == len(records)
        for found, until in twins(records, seat, rng):
            twin = retimed(found, seat, rng)
            assert seat_outputs(twin, seat) == outputs[:until], f"seat {seat} tells a twin apart before seq {until}"
            for seq in sorted({until - 1, *rng.sample(range(1, until), min(2, until - 1))}):
                assert seat_reports(twin[: seq + 1], seat) == seat_reports(records[: seq + 1], seat), (
                    f"seat {seat}'s reports tell a twin apart at seq {seq}"
                )
            compared += 1
    return compared


def check_encoding(
    game: str, seed: int = 0, *, players: int | None = None, options: dict[str, Any] | None = None
) -> int:
    """For every decision of a random match: the tensor has the shape and bounds its match
    declares, the legal answers read from the seat's view are the rules' own (from the whole
    state), each legal answer's index proposes that answer again, and each seat's last decision
    ends its trajectory. A game without an encoding is refused with `usage.encoding`. Returns how
    many decisions were checked."""
    played = playout(game, players, seed, options=options)
    engine = registered(game).engine
    if registered(game).encoding() is None:
        try:
            decisions(played.records)
        except UsageError as error:
            refused = error.code
        else:
            raise AssertionError(f"{game} brings no encoding, yet a dataset of it was not refused")
        assert refused == "usage.encoding", f"a dataset of {game} is refused with {refused}"
        return 0
    code = encoding(game)
    start = engine.start(played.records[0].event)
    shape, (low, high), size = code.shape(start), code.bounds(start), code.actions(start)
    before = {step.record.seq: step.before for step in timeline(played.records)}
    rows = decisions(played.records)
    for row in rows:
        assert (len(row.observation),) == shape, f"seq {row.seq}: a tensor of {len(row.observation)}, not {shape}"
        assert low <= min(row.observation), f"seq {row.seq}: a value under {low}"
        assert max(row.observation) <= high, f"seq {row.seq}: a value over {high}"
        whole = before[row.seq]
        view = shown_state(engine, whole, row.seat)
        assert engine.legal(view, row.seat) == engine.legal(whole, row.seat), (
            f"seq {row.seq}: legal differs in the view"
        )
        for option in engine.legal(view, row.seat):
            index = code.action_of(view, option)
            assert 0 <= index < size, f"seq {row.seq}: {option!r} has index {index}, outside 0..{size - 1}"
            assert code.event_of(view, row.seat, index) == option, f"seq {row.seq}: index {index} is not {option!r}"
        assert row.action in row.legal or row.rejected or row.action == NO_ACTION
    ended = {row.seat for row in rows if row.terminal}
    assert ended == {row.seat for row in rows}, "a seat's last decision does not end its trajectory"
    return len(rows)


class _Garbage:
    """A player that answers garbage to about a third of its decisions, and plays as `player` does
    otherwise; it says what it answered."""

    def __init__(self, player: object, rng: random.Random) -> None:
        self._player = player
        self._rng = rng
        self.given = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._player, name)
        if not callable(method):
            return method

        def answer(*args: Any, **kwargs: Any) -> Any:
            value = method(*args, **kwargs)
            if value is None or self._rng.random() > 0.35:
                return value  # a notification (nothing to answer), or an honest answer
            self.given += 1
            return self._rng.choice(GARBAGE)

        return answer


def check_bad_answers(game: str, seed: int = 0, *, players: int | None = None) -> Playout:
    """A player that answers garbage never stops the match: each answer is judged and recorded as
    rejected (or the player is removed, as the game's policy rules), the match ends, and the audit
    finds nothing."""
    liars: list[_Garbage] = []

    def wrap(seat: int, player: object) -> object:
        if seat:
            return player
        liar = _Garbage(player, random.Random(seed))
        liars.append(liar)
        return liar

    played = playout(game, players, seed, wrap=wrap)
    rulings = [r for r in played.records if isinstance(r.event, AnswerRejected | PlayerRemoved) and r.event.seat == 0]
    if liars[0].given:
        assert rulings, f"seat 0 answered garbage {liars[0].given} times and nothing was ruled"
    report = audit_records(played.records)
    assert report.findings == [], f"the audit found {report.findings[:3]}"
    assert registered(game).engine.to_act(played.state) is None, "the match did not end"
    return played

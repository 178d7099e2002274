"""Every reader of outside input is linear and bounded, and refuses what is past its bounds with a
clear error before doing the work it would cost; every writer whose output grows with its input is
bounded the same way.

Readers: another tool's records (SGF, .mat, Fish States, text records) and JSON Lines imports,
checkpoints and receipts (signed notes), verifier keys, and proof bundles (tests/test_proofs.py
holds the bundle's own tests). Writers: the HTML export and the text exports. Each reader gets a
large and a deep input and is fuzzed by hypothesis; what the tests assert is the refusal and the
work done (moves judged, views asked for, bytes written), never how long it took.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from matchlog.cli import app
from matchlog.events import MatchStarted, Record, Seat, UsageError
from matchlog.file import FileLog
from matchlog.formats import FormatError, bounds, export, read
from matchlog.formats import imported as imported_module
from matchlog.proofs import verifier
from matchlog.proofs.notes import Signer, load_signer
from matchlog.referee.play import play_match
from matchlog.referee.players import make_player, seats_from_specs
from matchlog.service import html_export

runner = CliRunner()


def _match(game: str, specs: list[str], seed: int) -> list[Record]:
    seats = seats_from_specs(game, specs)
    rng = random.Random(seed)
    players = [make_player(game, seat.player, random.Random(rng.randrange(2**32))) for seat in seats]
    result = play_match(game, seats, players, seed=seed)
    return result.recorder.records(result.match_id)


@pytest.fixture(scope="module")
def records() -> dict[str, str]:
    """A real record in each format, to grow and to fuzz."""
    backgammon = _match("backgammon", ["heuristic", "random"], 3)
    return {
        "sgf": export(backgammon, "sgf"),
        "mat": export(backgammon, "mat"),
        "fish-state": export(_match("fish", ["random", "random"], 4), "fish-state"),
        "text": export(_match("porrinha", ["random", "random", "random"], 5), "text"),
    }


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every event a reader hands to the engine to judge, counted: the work past parsing."""
    counted: list[str] = []
    for name in ("answer", "chance"):
        method = getattr(imported_module.Recording, name)

        def counting(self: Any, event: Any, where: str, method: Callable[..., Any] = method) -> None:
            counted.append(event.tag)
            method(self, event, where)

        monkeypatch.setattr(imported_module.Recording, name, counting)
    return counted


def _refused(data: str | bytes, format: str) -> FormatError:
    with pytest.raises(FormatError) as refused:
        read(data.encode() if isinstance(data, str) else data, format)
    assert refused.value.code == f"import.{format}"
    return refused.value


# -- large and deep records ---------------------------------------------------------------------


def test_an_sgf_of_160000_nodes_is_refused_at_its_bound_before_a_move_is_judged(judged: list[str]):
    text = "(;FF[4]GM[6]PW[a]PB[b]\n" + ";W[31]\n" * 160_000 + ")"
    assert len(text) > 1_100_000
    refused = _refused(text, "sgf")
    assert f"line {bounds.MAX_TURNS + 1}: more than {bounds.MAX_TURNS:,} nodes" in str(refused)
    assert judged == []
    # Under the bound, the same record is read through and refused by the rules at its first move.
    _refused(text.replace(";W[31]\n" * 160_000, ";W[31]\n" * (bounds.MAX_TURNS - 1)), "sgf")
    assert judged == ["backgammon.opening_rolled"]


def test_sgf_variations_nested_deeply_and_games_past_the_bound_are_refused(judged: list[str]):
    deep = "(;GM[6]" + "(;W[31]" * 5_000 + ")" * 5_001
    assert f"more than {bounds.MAX_VARIATION_DEPTH} variations nested" in str(_refused(deep, "sgf"))
    many = "(;GM[6]PW[a]PB[b])" * (bounds.MAX_GAMES + 1)
    assert f"more than {bounds.MAX_GAMES:,} game trees" in str(_refused(many, "sgf"))
    assert judged == []


def test_a_roll_moving_more_checkers_than_dice_is_refused_before_its_orders_are_searched(
    monkeypatch: pytest.MonkeyPatch, judged: list[str]
):
    from matchlog.formats import gnubg

    searched: list[int] = []
    search = gnubg._search
    monkeypatch.setattr(gnubg, "_search", lambda *args: searched.append(1) or search(*args))
    # 13 steps: 13! orders to search before; now refused as it stands.
    refused = _refused("(;GM[6]PW[a]PB[b];W[31abcdefghijklmnopqrstuvwxyz])", "sgf")
    assert f"more than {bounds.MAX_STEPS} checkers moved by one roll" in str(refused)
    assert searched == []
    refused = _refused(
        "1 point match\n\n Game 1\n a : 0   b : 0\n  1) 31: 8/5 6/5 8/5 6/5 8/5 6/5 8/5 6/5 8/5(9)\n", "mat"
    )
    assert f"more than {bounds.MAX_STEPS} checkers moved by one roll" in str(refused) and searched == []


def test_a_mat_of_long_lines_many_games_and_many_moves_is_refused_at_each_bound(records: dict[str, str]):
    text = records["mat"]
    assert "characters, more than a line holds" in str(_refused(text + "x" * (bounds.MAX_LINE_CHARS + 1), "mat"))
    many = text.split(" Game 1")[0] + " Game 1\n a : 0   b : 0\n" * (bounds.MAX_GAMES + 1)
    assert f"more than {bounds.MAX_GAMES:,} games" in str(_refused(many, "mat"))
    long_game = text.split(" Game 1")[0] + " Game 1\n a : 0   b : 0\n" + "  1) 31: 8/5 6/5\n" * bounds.MAX_TURNS
    assert f"more than {bounds.MAX_TURNS:,} lines in one game" in str(_refused(long_game, "mat"))
    # Lines that made the tag and score patterns quadratic or worse read in one pass, and a number of
    # 5,000 digits is no number of the record.
    header = "; [Player 1" + " " * 50_000 + "x\n" + "1 point match\n\n Game 1\n"
    assert "not a score line" in str(_refused(header + " a" + " :1 " * 10_000 + "x\n", "mat"))
    assert "cannot read" in str(_refused(header + " a : 0   b : 0\n  1) Wins " + "9" * 5_000 + " points\n", "mat"))
    assert "is not a point" in str(_refused(header + " a : 0   b : 0\n  1) 31: " + "9" * 5_000 + "/5\n", "mat"))


def test_a_fish_state_file_nested_5000_deep_or_of_too_many_states_is_refused(records: dict[str, str]):
    for deep in ("[" * 5_000 + "]" * 5_000, '[{"players": ' + "[" * 5_000 + "]" * 5_000 + ', "board": [[1]]}]'):
        refused = _refused(deep, "fish-state")
        assert "a Fish game is a JSON array of successive States" in str(refused)
    states = records["fish-state"].strip()[1:-1].strip().split(",\n")
    many = "[" + ",".join([states[0]] * (bounds.MAX_TURNS + 1)) + "]"
    assert f"more than {bounds.MAX_TURNS:,} States" in str(_refused(many, "fish-state"))


def test_a_text_record_of_too_many_seats_lines_or_characters_is_refused(records: dict[str, str]):
    text = records["text"]
    seats = "".join(f'[Seat{n} "s{n}"]\n' for n in range(bounds.MAX_SEATS + 1))
    assert f"more than {bounds.MAX_SEATS} seats" in str(
        _refused('[Game "porrinha"]\n' + seats + "\n0: hand 1\n", "text")
    )
    assert f"more than {bounds.MAX_TURNS:,} tags and lines" in str(
        _refused(text + "0: hand 1\n" * bounds.MAX_TURNS, "text")
    )
    long_line = text + f'0: rejected hand x "{"y" * bounds.MAX_LINE_CHARS}" "z"\n'
    assert "characters, more than a line holds" in str(_refused(long_line, "text"))


def test_a_file_bigger_than_any_record_is_refused_unread(tmp_path: Path):
    assert "more than a record is" in str(_refused(b" " * (bounds.MAX_RECORD_BYTES + 1), "sgf"))
    big = tmp_path / "big.sgf"
    with big.open("wb") as out:
        out.truncate(bounds.MAX_RECORD_BYTES + 1)
    said = runner.invoke(app, ["import", str(big), "--db", str(tmp_path / "log.duckdb")])
    assert said.exit_code == 2 and "error[import.sgf]" in said.stderr and "bigger than" in said.stderr, said.stderr


def test_a_json_lines_import_with_a_line_past_its_bound_is_refused_naming_it(tmp_path: Path):
    lines = tmp_path / "events.jsonl"
    with lines.open("wb") as out:
        out.write(b" " * (bounds.MAX_JSONL_LINE_BYTES + 1) + b"\n")
    said = runner.invoke(app, ["import", str(lines), "--db", str(tmp_path / "log.duckdb")])
    assert said.exit_code == 2 and "error[store.import_rejected]" in said.stderr, said.stderr
    assert "line 1: longer than" in said.stderr, said.stderr
    # A line nested 5,000 deep: refused as that line, not a RecursionError.
    envelope = '{"match_id":"01a219c6-098c-7151-9f52-b1fb6dc915cb","seq":0,"event":' + "[" * 5_000 + "]" * 5_000 + "}\n"
    lines.write_text(envelope)
    said = runner.invoke(app, ["import", str(lines), "--db", str(tmp_path / "log.duckdb")])
    assert said.exit_code == 2 and "error[store.import_rejected]: line 1" in said.stderr, said.stderr


def test_notes_and_keys_of_any_size_or_number_are_refused_as_notes(tmp_path: Path):
    with FileLog(tmp_path / "log.duckdb", mode="create") as log:
        key = verifier.parse_verifier_key(log.key())
        checkpoint = log.checkpoint()
    origin, size, root = checkpoint.split("\n")[:3]
    for text in (
        f"{origin}\n{'9' * 5_000}\n{root}\n",  # a size of 5,000 digits (int() alone refuses 4,300)
        f"{origin}\n{1 << 63}\n{root}\n",
        f"{origin}\n{size}\n{root}\nan extension line\n",
        f"{origin}\nmatchlog receipt\nmatch x {'9' * 30}\nhead {root}\ntree 1 {root}\nleaf 0\nproof\n",
    ):
        with pytest.raises(verifier.NoteError) as refused:
            verifier.parse_note(text)
        assert refused.value.code == "note.format"
    with pytest.raises(verifier.NoteError) as refused:
        verifier.parse_verifier_key(str(key) + "A" * verifier.MAX_KEY_CHARS)
    assert refused.value.code == "key.format"
    with pytest.raises(verifier.NoteError) as refused:
        verifier.open_note("x\n" * (verifier.MAX_NOTE_CHARS // 2 + 1), key)
    assert refused.value.code == "note.format"
    # A key too long to be a file's name is read as a key, and refused as one (the CLI and the verifier).
    # (`check` names a missing bundle first: the bundle is there.)
    long_key = "A+" * 3_000
    (tmp_path / "some.bundle").write_text("{}")
    said = runner.invoke(app, ["check", str(tmp_path / "some.bundle"), "--key", long_key])
    assert said.exit_code == 2 and said.stderr.startswith("error[usage.key]: --key: a verifier key is at most")
    assert verifier.main([str(tmp_path / "none.json"), "--key", long_key]) == 2
    # Through the CLI: one line, never an internal error.
    held = tmp_path / "held.checkpoint"
    signer = load_signer(tmp_path / "log.duckdb", create=False)
    assert signer is not None
    held.write_text(signer.sign(f"{origin}\n{'9' * 5_000}\n{root}\n"))
    said = runner.invoke(app, ["verify", "--db", str(tmp_path / "log.duckdb"), "--against", str(held)])
    assert said.exit_code == 1 and "[against.format]" in said.stdout, (said.stdout, said.stderr)


# -- writers ------------------------------------------------------------------------------------


class _Counting:
    """A log that counts what the HTML export asks it for."""

    def __init__(self, log: FileLog) -> None:
        self.log = log
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.asked.append(name)
        return getattr(self.log, name)


def test_the_html_export_of_a_3005_seat_match_is_refused_before_it_reads_a_view(tmp_path: Path):
    log = FileLog(":memory:", mode="write")
    match_id = UUID(int=7 << 100)
    seats = tuple(Seat(name=f"s{n}", player="random") for n in range(3_005))
    log.append(match_id, [MatchStarted(game="porrinha", options={}, seats=seats)], 0)
    counting = _Counting(log)
    with pytest.raises(UsageError) as refused:
        html_export.html_replay(counting, match_id)
    assert refused.value.code == "usage.export" and "--as-seat" in refused.value.message
    assert counting.asked.count("lines") == 1 and "frames" not in counting.asked
    # One view of it is one page of that view, which grows with the match, not with its views.
    big = io.BytesIO()
    assert html_export.write_html(counting, match_id, big, as_seat=0) == 1
    assert counting.asked.count("frames") == 1
    small = FileLog(":memory:", mode="write")
    small.append(match_id, [MatchStarted(game="porrinha", options={}, seats=seats[:300])], 0)
    page = io.BytesIO()
    html_export.write_html(small, match_id, page, as_seat=0)
    assert len(page.getvalue()) < len(big.getvalue()) < 12 * len(page.getvalue())


def test_a_page_past_its_bound_of_events_or_bytes_is_refused(monkeypatch: pytest.MonkeyPatch):
    records = _match("porrinha", ["random", "random", "random"], 6)
    log = FileLog(":memory:", mode="write")
    log.append(records[0].match_id, [r.event for r in records], 0)
    monkeypatch.setattr(html_export, "MAX_VIEW_EVENTS", len(records) * 5 - 1)  # 5 views: all, -1, 0, 1, 2
    with pytest.raises(UsageError) as refused:
        html_export.html_replay(log, records[0].match_id)
    assert "more than one page shows" in refused.value.message
    monkeypatch.setattr(html_export, "MAX_VIEW_EVENTS", 200_000)
    monkeypatch.setattr(html_export, "MAX_PAGE_BYTES", 10_000)
    with pytest.raises(UsageError) as refused:
        html_export.html_replay(log, records[0].match_id)
    assert "MiB of the match" in refused.value.message


def test_the_text_exports_grow_linearly_with_the_match():
    sizes = []
    for count in (100, 200, 400):
        seats = tuple(Seat(name=f"s{n}", player="random") for n in range(count))
        started = Record(
            match_id=UUID(int=1),
            seq=0,
            event_id=UUID(int=2),
            at_us=0,
            actor=None,
            version=1,
            hash=b"",
            event=MatchStarted(game="porrinha", options={}, seats=seats),
        )
        sizes.append(len(export([started], "text")))
    assert sizes[1] - sizes[0] == pytest.approx((sizes[2] - sizes[1]) / 2, rel=0.1)


# -- fuzzing ------------------------------------------------------------------------------------

_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "replace", "repeat"]),
        st.floats(min_value=0, max_value=1),
        st.text(alphabet='[]();:\\"{},.-+*/ \n\t0123456789abcxyzWBGMPLDI' + "\u00e9\u00b2\ufeff", max_size=8),
    ),
    min_size=1,
    max_size=6,
)


def _edited(text: str, edits: list[tuple[str, float, str]]) -> str:
    for kind, where, piece in edits:
        at = int(where * len(text))
        if kind == "insert":
            text = text[:at] + piece + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + len(piece) + 1 :]
        elif kind == "replace":
            text = text[:at] + piece + text[at + len(piece) :]
        else:  # a run of what is there, repeated: long lines, deep brackets, many nodes
            text = text[:at] + text[at : at + 8] * 200 + text[at:]
    return text


@pytest.mark.parametrize("format", ["sgf", "mat", "fish-state", "text"])
@settings(max_examples=60, deadline=None)
@given(edits=_EDITS, raw=st.binary(max_size=64))
def test_every_reader_takes_a_record_or_refuses_it_with_its_format_error(
    records: dict[str, str], format: str, edits: list[tuple[str, float, str]], raw: bytes
):
    for data in (_edited(records[format], edits).encode(), raw, records[format].encode()[: len(raw) * 50] + raw):
        assert _refusal(lambda data=data: read(data, format), FormatError) in (None, f"import.{format}")


_SIGNER = Signer.generate("matchlog/fuzz")


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400), raw=st.binary(max_size=200))
def test_notes_keys_and_bundles_of_anything_are_refused_with_the_verifiers_errors(text: str, raw: bytes):
    key = _SIGNER.verifier
    for note in (text, text + "\n\n\u2014 matchlog/x AAAA\n", raw.decode("utf-8", "replace")):
        for reading in (verifier.parse_note, lambda n: verifier.open_note(n, key), verifier.parse_verifier_key):
            assert _refusal(lambda reading=reading, note=note: reading(note), verifier.NoteError) != ""
    for bundle in (raw, text):
        if _refusal(lambda bundle=bundle: verifier.load_bundle(bundle), verifier.NoteError) is None:
            checked = verifier.check_bundle(verifier.load_bundle(bundle), key)
            assert all(problem.code and problem.message for problem in checked.problems)


def _refusal(reading: Callable[[], object], refused_as: type[Exception]) -> str | None:
    """The code `reading` is refused with (an error of `refused_as`, and no other), None if it reads."""
    try:
        reading()
    except refused_as as error:
        return getattr(error, "code", "") or ""
    return None

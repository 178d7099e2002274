"""GNU Backgammon as backgammon's analyser: its equities, its marks and its luck, read back from it.

GNU Backgammon is GPL, so matchlog never imports it: it runs Debian's `gnubg` as a separate process
(`gnubg -t`, found on the PATH, in /usr/games, or at $MATCHLOG_GNUBG), hands it each match as
matchlog's own `.mat` export (`formats.mat`), has it `analyse match` and `save match` as SGF, and
reads the analysis properties of that SGF back (gnubg's sgf.c writes them, and reads them when it
opens a file):

    ;B[43aeqt]A[5][aelo E ver 3 0.499965 0.136256 0.006281 0.132789 0.006038 -0.000070 2C 0 1 0.000000 1]...
     MR[]LU[0.01309]DO[]

A turn's node names its roll and play; `A[i]` lists the plays gnubg weighed, best first, each as SGF
letters, `E`, the format's version, five probabilities (win, win gammon, win backgammon, lose
gammon, lose backgammon), its equity and the evaluation context, `i` being the play made; `LU` is
the roll's luck and `GW[n]`/`GB[n]` marks it lucky for White or Black (n = 2: very); `DO[]`,
`BM[1]` and `BM[2]` mark the play doubtful, bad and very bad. White is gnubg's player 0 and
matchlog's seat 0. Each turn's play becomes a `Decision` on the seq of its first checker (the
whole play, in GNU Backgammon's notation: `engines.backgammon_notation`), and its roll a `Luck`
on the seq of the dice. Cube actions are gnubg's to analyse too, but not yet matchlog's to record:
their nodes are passed over.

`sgf_properties` writes the same properties back from the annotations, so an SGF export of an
analysed match opens in gnubg with its marks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from matchlog.engines.backgammon import ENGINE, BackgammonState
from matchlog.engines.backgammon_notation import BAR, OFF, Step, index_of, play_text
from matchlog.events import Choice, Decision, Luck, Record, UsageError
from matchlog.formats.gnubg import Roll, game_of
from matchlog.formats.mat import export_mat
from matchlog.formats.sgf import export_sgf, read_nodes
from matchlog.replay.annotations import Judged
from matchlog.replay.fold import effective

__all__ = ["PROGRAM", "GnubgAnalyser", "analysed_sgf", "gnubg_program", "gnubg_version", "sgf_properties"]

#: Where gnubg is looked for when it is not on the PATH (Debian installs it there).
PROGRAM = "/usr/games/gnubg"
#: How long gnubg may take over one match before it is stopped (a match takes seconds).
SECONDS_A_MATCH = 600.0
#: gnubg's SGF marks of a play, and the names matchlog gives them.
_SKILL = {"DO": "doubtful", "BM1": "bad", "BM2": "very bad"}
#: A node's move that is a cube action, not a roll and its play.
_CUBE = ("double", "take", "drop")


def gnubg_program() -> str:
    """The gnubg to run: $MATCHLOG_GNUBG, else the one on the PATH, else Debian's."""
    return os.environ.get("MATCHLOG_GNUBG") or shutil.which("gnubg") or PROGRAM


@cache
def gnubg_version(program: str) -> str:
    """The version of the gnubg at `program` ("1.07.001").

    Raises:
        UsageError: there is no gnubg there (`analyser.missing`).
    """
    try:
        found = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(
            f"GNU Backgammon analyses backgammon and cannot be run ({program}: {error}); install it "
            "(Debian's gnubg: sh scripts/system-packages) or set MATCHLOG_GNUBG",
            code="analyser.missing",
        ) from None
    words = found.stdout.split()
    if len(words) < 3 or words[:2] != ["GNU", "Backgammon"]:
        raise UsageError(f"{program} is not GNU Backgammon (it says {found.stdout[:60]!r})", code="analyser.missing")
    return words[2]


class GnubgAnalyser:
    """Backgammon judged by GNU Backgammon at its default analysis, or at `plies` plies."""

    game = "backgammon"

    def __init__(self, plies: int | str | None = None, *, program: str | None = None) -> None:
        if plies is not None:
            try:
                plies = int(plies)
            except ValueError:
                raise UsageError(f"gnubg takes its plies from 0 to 4, not {plies!r}", code="usage.analyser") from None
            if not 0 <= plies <= 4:
                raise UsageError(f"gnubg takes its plies from 0 to 4, not {plies}", code="usage.analyser")
        self.plies = plies
        self.program = program or gnubg_program()
        self.name = "gnubg" if plies is None else f"gnubg:{plies}"
        self.version = gnubg_version(self.program)

    @property
    def author(self) -> str:
        return f"{self.name} {self.version}"

    def analyse(self, records: Sequence[Record]) -> list[Judged]:
        return self.analyse_many([records])[0]

    def analyse_many(self, matches: Sequence[Sequence[Record]]) -> list[list[Judged]]:
        """Every match in one run of gnubg.

        Raises:
            UsageError: a match is not backgammon or a .mat cannot hold it, or gnubg failed on one.
        """
        texts = [export_mat(list(records)) for records in matches]
        with tempfile.TemporaryDirectory(prefix="matchlog-gnubg-") as where:
            folder = Path(where)
            commands = ["set threads 1", "set confirm new off", "set confirm save off"]
            if self.plies is not None:
                commands += [
                    f"set analysis chequerplay evaluation plies {self.plies}",
                    f"set analysis cubedecision evaluation plies {self.plies}",
                ]
            for number, text in enumerate(texts):
                (folder / f"{number}.mat").write_text(text)
                mat, sgf = folder / f"{number}.mat", folder / f"{number}.sgf"
                commands += [f"import mat {mat}", "analyse match", f"save match {sgf}"]
            (folder / "commands").write_text("\n".join(commands) + "\n")
            output = folder / "output"
            with output.open("wb") as out:
                try:
                    subprocess.run(
                        [self.program, "-t", "-q", "-r", "-s", str(folder), "-c", str(folder / "commands")],
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        timeout=SECONDS_A_MATCH * len(texts),
                        cwd=folder,
                        check=False,
                    )
                except subprocess.TimeoutExpired:
                    raise UsageError(
                        f"GNU Backgammon took more than {SECONDS_A_MATCH:g} s a match and was stopped",
                        code="analyser.failed",
                    ) from None
            judged = []
            for number, records in enumerate(matches):
                analysed = folder / f"{number}.sgf"
                if not analysed.exists():
                    said = output.read_text(errors="replace")[-400:]
                    raise UsageError(
                        f"GNU Backgammon did not analyse match {records[0].match_id}: {said.strip()[-200:]}",
                        code="analyser.failed",
                    )
                judged.append(self._read(records, analysed.read_text(errors="replace")))
            return judged

    def _read(self, records: Sequence[Record], sgf: str) -> list[Judged]:
        """The annotations of one match from the SGF gnubg saved of it.

        Raises:
            UsageError: the SGF is not of this match (another number of turns, other dice).
        """
        match_id = records[0].match_id
        game = game_of(list(records))
        rolls = [action for action in game.actions if isinstance(action, Roll)]
        nodes = [node for node in read_nodes(sgf)[0][1:] if _roll(node) is not None]
        if len(nodes) != len(rolls):
            raise UsageError(
                f"GNU Backgammon read {len(nodes)} turns of match {match_id}, which has {len(rolls)}",
                code="analyser.failed",
            )
        before = _states_before_plays(records, {roll.seq for roll in rolls if roll.steps})
        judged: list[Judged] = []
        for number, (node, roll) in enumerate(zip(nodes, rolls, strict=True)):
            colour, dice = _roll(node)  # type: ignore[misc]
            seat = "WB".index(colour)
            if seat != roll.player or dice != f"{roll.dice[0]}{roll.dice[1]}":
                raise UsageError(
                    f"GNU Backgammon's turn {number + 1} of match {match_id} is not the match's "
                    f"({colour} {dice}, the match's seat {roll.player} {roll.dice})",
                    code="analyser.failed",
                )
            assert roll.seq is not None
            if "LU" in node:
                luck = float(node["LU"][0])
                judged.append(Judged(roll.seq, seat, self._luck(seat, luck, node)))
            if "A" in node and roll.steps:
                decision = self._decision(seat, roll, node, before[roll.seq])
                judged.append(Judged(roll.step_seqs[0], seat, decision))
        return judged

    def _luck(self, seat: int, luck: float, node: dict[str, list[str]]) -> Luck:
        own, other = "GW" if seat == 0 else "GB", "GB" if seat == 0 else "GW"
        if own in node:
            name = "very lucky" if node[own][0] == "2" else "lucky"
        elif other in node:
            name = "very unlucky" if node[other][0] == "2" else "unlucky"
        else:
            name = None  # gnubg's marks only: the thresholds it was run with are its own
        return Luck(analyser=self.name, version=self.version, seat=seat, luck=luck, unit="equity", mark=name)

    def _decision(self, seat: int, roll: Roll, node: dict[str, list[str]], state: BackgammonState) -> Decision:
        played_at, *entries = node["A"]
        weighed = [_entry(seat, state, entry) for entry in entries]
        index = int(played_at)
        played = weighed[index]
        best = max(weighed, key=lambda choice: choice[1].value)
        if best[1].value <= played[1].value:
            best = played
        # The play's own notation from the record (its hits as they happened), gnubg's for the rest.
        played_text = play_text(roll.steps)
        shown = [choice for _, choice, _ in weighed[:5]]
        if index >= 5:
            shown.append(played[1])
        shown = [Choice(played_text, c.value, c.move, c.odds) if c is played[1] else c for c in shown]
        skill = next((_SKILL[key] for key in ("DO", "BM1", "BM2") if _marked(node, key)), None)
        return Decision(
            analyser=self.name,
            version=self.version,
            seat=seat,
            decision="play",
            played=played_text,
            best=played_text if best is played else best[1].choice,
            before=best[1].value,
            after=played[1].value,
            loss=max(0.0, best[1].value - played[1].value),
            unit="equity",
            mark=skill,
            forced=len(entries) == 1,
            chance=played[1].odds[0],
            best_chance=best[1].odds[0],
            last_seq=roll.step_seqs[-1],
            steps=best[0],
            choices=tuple(shown),
            evaluation=played[2],
        )


def _roll(node: dict[str, list[str]]) -> tuple[str, str] | None:
    """The colour ("W", "B") and dice ("64") of the roll a node holds: a turn's roll and play, or a
    roll not played (`PL[B]DI[64]`: rolled, then resigned); None for the root or a cube action."""
    for colour in "WB":
        if colour in node and node[colour][0] not in _CUBE:
            return colour, node[colour][0][:2]
    if "DI" in node and node.get("PL", [""])[0] in ("W", "B"):
        return node["PL"][0], node["DI"][0]
    return None


def _marked(node: dict[str, list[str]], key: str) -> bool:
    if key == "DO":
        return "DO" in node
    return node.get("BM", [""])[0] == key[2:]


def _states_before_plays(records: Sequence[Record], seqs: set[int | None]) -> dict[int, BackgammonState]:
    """The state right after each roll of `seqs`: what its play starts from."""
    history = effective(records)
    state: BackgammonState = ENGINE.start(history[0].event)  # type: ignore[arg-type]
    found = {}
    for record in history[1:]:
        state = ENGINE.apply(state, record.event)
        if record.seq in seqs:
            found[record.seq] = state
    return found


def _point_of(seat: int, letter: str) -> int:
    """The mover's point number (1 to 24; the bar 25, off 0) of an SGF letter."""
    if letter == "y":
        return BAR
    if letter == "z":
        return OFF
    return ord(letter) - ord("a") + 1 if seat == 0 else ord("x") - ord(letter) + 1


def _index_of(seat: int, point: int) -> int | None:
    """The engine's point index of the mover's point number (None: the bar or off)."""
    return None if point == OFF else index_of(seat, point)


def _entry(
    seat: int, state: BackgammonState, entry: str
) -> tuple[tuple[tuple[int | None, int | None], ...], Choice, str]:
    """One play gnubg weighed: its steps on the board (engine indices), the choice (notation,
    equity, SGF letters, probabilities) and the evaluation context.

    Raises:
        UsageError: not an evaluation as gnubg writes one (a rollout, say).
    """
    letters, _, rest = entry.partition(" ")
    words = rest.split()
    if len(words) < 9 or words[0] != "E" or words[1] != "ver":
        raise UsageError(
            f"GNU Backgammon's analysis holds a play matchlog does not read ({entry[:40]!r}): only evaluations",
            code="analyser.failed",
        )
    odds = tuple(float(word) for word in words[3:8])
    equity = float(words[8])
    # The steps with their hits, played out on the board the play starts from.
    points = list(state.points)
    sign = 1 if seat == 0 else -1
    steps: list[Step] = []
    drawn: list[tuple[int | None, int | None]] = []
    for at in range(0, len(letters) - 1, 2):
        start, end = _point_of(seat, letters[at]), _point_of(seat, letters[at + 1])
        source, target = _index_of(seat, start), _index_of(seat, end)
        if source is not None:
            points[source] -= sign
        hit = target is not None and points[target] == -sign
        if target is not None:
            points[target] = sign if hit else points[target] + sign
        steps.append(Step(start, end, hit))
        drawn.append((source, target))
    text = play_text(steps)
    return tuple(drawn), Choice(text, equity, letters, odds), " ".join(words[9:])


def sgf_properties(decision: Decision | None, luck: Luck | None, comments: Sequence[str] = ()) -> str:
    """GNU Backgammon's analysis properties of one turn's node, from its annotations: the plays
    weighed (`A`), the luck (`LU`, `GW`/`GB`), the play's mark (`DO`, `BM`) and comments (`C`)."""
    written = ""
    if decision is not None and decision.choices and all(c.move and len(c.odds) == 5 for c in decision.choices):
        played = next((i for i, c in enumerate(decision.choices) if c.choice == decision.played), None)
        if played is not None:
            written += f"A[{played}]"
            for choice in decision.choices:
                odds = " ".join(f"{p:.6f}" for p in choice.odds)
                written += f"[{choice.move} E ver 3 {odds} {choice.value:.6f} {decision.evaluation}]"
            written += "MR[]"
    if luck is not None:
        written += f"LU[{luck.luck:.5f}]"
        if luck.mark is not None:
            lucky = "unlucky" not in luck.mark
            colour = "WB"[luck.seat] if lucky else "WB"[1 - luck.seat]
            written += f"G{colour}[{2 if 'very' in luck.mark else 1}]"
    if decision is not None:
        written += {"doubtful": "DO[]", "bad": "BM[1]", "very bad": "BM[2]"}.get(decision.mark or "", "")
    if comments:
        text = "\n".join(comments).replace("\\", "\\\\").replace("]", "\\]")
        written += f"C[{text}]"
    return written


def analysed_sgf(records: Sequence[Record], annotations: Sequence[Any]) -> str:
    """A backgammon match as SGF (`formats.sgf`) with its latest analysis as GNU Backgammon's own
    properties on each turn, and its comments, so gnubg opens it with the marks.

    Raises:
        UsageError: the match is not backgammon.
    """
    from matchlog.events import Comment
    from matchlog.replay.annotations import latest_analysis

    latest = latest_analysis(annotations)
    decisions = {a.seq: a.note for a in latest if isinstance(a.note, Decision)}
    lucks = {a.seq: a.note for a in latest if isinstance(a.note, Luck)}
    comments: dict[int, list[str]] = {}
    for annotation in annotations:
        note = annotation.note
        if isinstance(note, Comment):
            said = f"{'ruling' if note.ruling else 'comment'} by {annotation.author}: {note.text}"
            comments.setdefault(annotation.seq, []).append(said + (f" {note.mark}" if note.mark else ""))

    def extra(roll: Roll) -> str:
        first = roll.step_seqs[0] if roll.step_seqs else None
        span = sorted({seq for seq in (roll.seq, *roll.step_seqs) if seq is not None})
        said = [text for seq in span for text in comments.get(seq, [])]
        return sgf_properties(decisions.get(first), lucks.get(roll.seq), said)  # type: ignore[arg-type]

    return export_sgf(list(records), extra)

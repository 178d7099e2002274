"""How the CLI shows things: JSON for programs, rich tables and plain lines for people."""

from __future__ import annotations

import csv
import re
import sys
from typing import TYPE_CHECKING, Any
from uuid import UUID

import msgspec
from rich.console import Console
from rich.table import Table
from rich.text import Text

from matchlog.engines import ordinal
from matchlog.events import MatchlogError, us_to_datetime

if TYPE_CHECKING:
    from matchlog.store import Finding, MatchInfo

__all__ = [
    "console",
    "emit_json",
    "error_line",
    "escaped",
    "finding_dict",
    "match_dict",
    "matches_table",
    "short",
    "when",
]

#: Output to a pipe or file is not folded at 80 columns: programs and people grep it.
_PIPE_WIDTH = 200

#: What a terminal would act on rather than show: C0 and C1 controls but newline and tab, bidi overrides.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escaped(text: str) -> str:
    """`text` with every control character written as an escape (ESC as \\x1b), so a value
    from the log shows as what it is and never clears a screen or colours a terminal."""
    return _CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


class _Screen(Console):
    """A console that prints text as it is: no markup read from it (a value `[/x]` is text) and
    control characters shown as escapes. Styles come only from `Text` objects made here."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        kwargs["markup"] = False
        return super().render_str(escaped(text), **kwargs)


console = _Screen(highlight=False, soft_wrap=True, markup=False)
errors = _Screen(stderr=True, highlight=False, soft_wrap=True, markup=False)


def heading(words: str, rest: str = "") -> Text:
    """A rule's title: `words` in bold, then `rest` (both shown as text)."""
    return Text.assemble((escaped(words), "bold"), escaped(rest))


def fit_to_output() -> None:
    """Use the terminal's width on a terminal, and a wide page anywhere else."""
    console.width = console.size.width if console.is_terminal else _PIPE_WIDTH


def _hook(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def emit_json(value: Any) -> None:
    """Print `value` as indented JSON on stdout (bytes as hex)."""
    data = msgspec.json.encode(msgspec.to_builtins(value, enc_hook=_hook, builtin_types=(UUID,)), enc_hook=_hook)
    sys.stdout.write(msgspec.json.format(data, indent=2).decode() + "\n")


def error_line(error: MatchlogError | str, code: str | None = None) -> None:
    """Print `error[code]: message` on stderr."""
    if isinstance(error, MatchlogError):
        code, message = error.code, error.message
    else:
        message = error
    errors.out(f"error[{code}]: {message}")


def short(match_id: UUID | str) -> str:
    """The first 18 characters of an id, accepted as a prefix: the time to the millisecond and the
    counter that orders ids made in the same millisecond (as a tournament's are)."""
    return str(match_id)[:18]


def short_spec(spec: str) -> str:
    """A player spec without its folders: `/long/path/my_ai.py:Player` -> `my_ai.py:Player`."""
    where, colon, name = spec.rpartition(":")
    return (
        f"{where.replace(chr(92), '/').rsplit('/', 1)[-1]}:{name}"
        if colon and "/" in where.replace(chr(92), "/")
        else spec
    )


def when(at_us: int | None) -> str:
    """A UTC time a person reads."""
    return "" if at_us is None else us_to_datetime(at_us).strftime("%Y-%m-%d %H:%M:%SZ")


def match_dict(info: MatchInfo) -> dict[str, Any]:
    """A catalogue row for --json."""
    outcome = info.outcome
    return {
        "match_id": str(info.match_id),
        "game": info.game,
        "status": info.status,
        "created_at": when(info.created_us),
        "ended_at": when(info.ended_us) or None,
        "players": list(info.players),
        "strategies": list(info.strategies),
        "options": msgspec.json.decode(info.options),
        "events": info.last_seq + 1,
        "head_hash": info.head_hash.hex() or None,  # empty: withheld from a seat
        "outcome": msgspec.to_builtins(outcome) if outcome is not None else None,
        "origin": {"match_id": str(info.origin_match), "seq": info.origin_seq} if info.origin_match else None,
        "series": {"id": info.series_id, "game": info.series_game} if info.series_id else None,
    }


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {
        "match_id": str(finding.match_id),
        "seq": finding.seq,
        "code": finding.code,
        "message": finding.message,
    }


def result_text(info: MatchInfo) -> str:
    """Who placed where, briefly."""
    outcome = info.outcome
    if outcome is None:
        return ""
    if outcome.result == "abandoned":
        return "abandoned"
    return ", ".join(f"{ordinal(outcome.places[s])} {info.players[s]}" for s in outcome.ranking[:3]) + (
        ", …" if len(outcome.ranking) > 3 else ""
    )


def matches_table(matches: list[MatchInfo]) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in ("match", "game", "status", "started", "events", "players", "result"):
        table.add_column(column, justify="right" if column == "events" else "left", no_wrap=column == "match")
    for info in matches:
        origin = f" (fork of {short(info.origin_match)}@{info.origin_seq})" if info.origin_match else ""
        table.add_row(
            short(info.match_id) + origin,
            info.game,
            info.status,
            when(info.created_us),
            str(info.last_seq + 1),
            ", ".join(info.players),
            result_text(info),
        )
    return table


def print_audit(reports: list[Any]) -> None:
    """An audit as text: every finding, then what was checked and what could not be."""
    findings = [f for r in reports for f in r.findings]
    for finding in findings:
        where = f" seq {finding.seq}" if finding.seq is not None else ""
        console.out(f"FAIL match {finding.match_id}{where} [{finding.rule}] {finding.message}")
        for key, value in finding.evidence.items():
            console.out(f"     {key}: {msgspec.json.encode(value, enc_hook=_hook).decode()}")
    totals: dict[str, int] = {}
    for report in reports:
        for key, value in report.checked.items():
            totals[key] = totals.get(key, 0) + value
    events = sum(r.events for r in reports)
    verdict = "no findings" if not findings else f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
    console.out(f"audited {len(reports)} match{'es' if len(reports) != 1 else ''} ({events:,} events): {verdict}")
    console.out(
        f"  re-judged {totals.get('answers', 0):,} answers, {totals.get('rejections', 0):,} rejections "
        f"({totals.get('rejections_not_rechecked', 0):,} cut short and {totals.get('protocol_rulings', 0):,} protocol "
        f"rulings, not re-judged), {totals.get('removals', 0):,} "
        f"removals, {totals.get('undos', 0):,} undos, {totals.get('chance', 0):,} chance events "
        f"({totals.get('chance_rederived', 0):,} re-derived from revealed seeds)"
    )
    notes: dict[str, int] = {}
    for report in reports:
        for note in report.notes:
            notes[note] = notes.get(note, 0) + 1
    for note, count in sorted(notes.items()):
        console.out(f"  note: {count} match{'es' if count != 1 else ''}: {note}")


def print_dispute(report: Any) -> None:
    """A dispute report as text."""
    console.rule(heading(f"match {report.match_id} · {report.game} · seq {report.seq}"))
    console.out(f"event:    {report.said}   [{report.event.get('type')}]")
    if report.seat_name is not None:
        asked = f", asked to {report.decision}" if report.decision else ""
        console.out(f"seat:     {report.seat} ({report.seat_name}){asked}")
    rule = f" [{report.rule}]" if report.rule else ""
    console.out(f"ruling:   {report.ruling}{rule}" + (f" — {report.rule_says}" if report.rule_says else ""))
    console.out("\nthe state before, as the referee saw it:")
    console.out(report.before)
    if report.before_as_seat is not None:
        console.out(f"\n... and as seat {report.seat} saw it:")
        console.out(report.before_as_seat)
    if report.alternatives_total:
        console.out(f"\nlegal answers there ({report.alternatives_total}):")
        for line in report.alternatives:
            console.out(f"  - {line}")
        if report.alternatives_total > len(report.alternatives):
            console.out(f"  ... and {report.alternatives_total - len(report.alternatives)} more")
    console.out(f"\nhash:     {report.hash or '(withheld)'}")
    if report.previous_hash:
        console.out(f"previous: {report.previous_hash}")
    chain = "verifies" if report.chain_verified else "DOES NOT verify (see matchlog verify)"
    head = f", {report.head_hash[:16]}…" if report.head_hash else ""
    console.out(f"chain:    seq 0 to the head (seq {report.head_seq}{head}) {chain}")
    if report.findings:
        console.out("findings at this seq:")
        for finding in report.findings:
            console.out(f"  [{finding.rule}] {finding.message}")
    else:
        console.out("findings at this seq: none")


def _table(title: str, columns: list[str], left: int = 1) -> Table:
    table = Table(title=title, show_edge=False, box=None, header_style="bold", title_justify="left", pad_edge=False)
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index < left else "right")
    return table


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_statistics(result: Any) -> None:
    """The statistics as tables."""
    if result.projected:
        console.out(f"(projected the figures of {result.projected} match(es) first)\n")
    for skipped in result.skipped:
        errors.out(f"note: left out of the figures: {skipped}")
    games = _table(
        "games",
        [
            "game",
            "matches",
            "finished",
            "abandoned",
            "running",
            "events",
            "turns (mean/median)",
            "seconds (mean/median)",
            "answers rejected",
            "players removed",
        ],
    )
    for g in result.games:
        games.add_row(
            g.game,
            f"{g.matches:,}",
            f"{g.finished:,}",
            f"{g.abandoned:,}",
            f"{g.running:,}",
            f"{g.events:,}",
            f"{_number(g.mean_turns)} / {_number(g.median_turns)}",
            f"{_number(g.mean_seconds, 2)} / {_number(g.median_seconds, 2)}",
            f"{g.rejected:,} ({g.rejection_rate:.1%})",
            f"{g.removed:,} ({g.removal_rate:.1%})",
        )
    console.print(games)
    _print_rates(f"win rates by {result.by} (finished matches)", result.rates, result.by)
    if result.by == "player" and result.seats:
        _print_rates("win rates by seat: first-mover advantage", result.seats, "seat")
    if result.dice:
        dice = _table(
            "dice fairness (a small p says the faces are unlikely from fair dice)",
            ["game", "who", "1", "2", "3", "4", "5", "6", "rolls", "chi-square", "p"],
            left=2,
        )
        for d in result.dice:
            dice.add_row(
                d.game,
                d.subject,
                *(f"{c:,}" for c in d.counts),
                f"{d.rolls:,}",
                f"{d.chi_square:.2f}",
                f"{d.p_value:.3f}",
            )
        console.out("")
        console.print(dice)
    if result.figures:
        figures = _table(
            "each game's own figures (finished matches)", ["game", "who", "figure", "value", "over"], left=3
        )
        for f in result.figures:
            value = f"{f.value:.1%}" if "accuracy" in f.figure or "rate" in f.figure else f"{f.value:,.2f}"
            figures.add_row(f.game, f.subject, f.figure, value, f"{f.count:,}")
        console.out("")
        console.print(figures)
    if getattr(result, "analysis", ()):
        _print_analysis_figures(result.analysis, result.by)


def _print_analysis_figures(rows: Any, by: str) -> None:
    """Each player's analysed decisions: error rate (gnubg's mEMG for backgammon), marks, luck."""
    table = _table(
        f"analysis by {by} (matchlog analyse; games without hidden information)",
        ["game", by, "analyser", "matches", "decisions", "error rate", "marks", "luck a match"],
        left=3,
    )
    for row in rows:
        equity = row.unit == "equity"
        rate = "-" if row.error_rate is None else f"{row.error_rate * (1000 if equity else 1):.2f}"
        marks = ", ".join(f"{count} {mark}" for mark, count in sorted(row.marks.items())) or "none"
        table.add_row(
            row.game,
            row.subject,
            row.analyser,
            f"{row.matches:,}",
            f"{row.unforced:,}/{row.decisions:,}",
            f"{rate} {'mEMG' if equity else row.unit}",
            marks,
            _number(row.luck, 3),
        )
    console.out("")
    console.print(table)


def _print_rates(title: str, rates: Any, by: str) -> None:
    columns = ["game", by] + (["strategy"] if by == "player" else [])
    scored = any(r.mean_score is not None for r in rates)  # no column of zeros for games without scores
    table = _table(
        title,
        [
            *columns,
            "matches",
            "wins",
            "win rate (95% CI)",
            "mean place",
            *(["mean score"] if scored else []),
            "removed",
        ],
        left=len(columns),
    )
    for r in rates:
        who = [r.subject, short_spec(r.player)] if by == "player" else [r.subject]
        table.add_row(
            r.game,
            *who,
            f"{r.matches:,}",
            f"{r.wins:,}",
            f"{r.win_rate:.1%} ({r.win_low:.1%}-{r.win_high:.1%})",
            f"{r.mean_place:.2f}",
            *([("" if r.mean_score is None else f"{r.mean_score:.2f}")] if scored else []),
            f"{r.removed:,}",
        )
    console.out("")
    console.print(table)


def print_statistics_csv(result: Any) -> None:
    """Every figure as a CSV row: section, game, subject, measure, value."""
    writer = _EscapingWriter(sys.stdout)
    writer.writerow(["section", "game", "subject", "measure", "value"])
    for g in result.games:
        for measure in (
            "matches",
            "finished",
            "abandoned",
            "running",
            "events",
            "mean_turns",
            "median_turns",
            "mean_seconds",
            "median_seconds",
            "answers",
            "rejected",
            "rejection_rate",
            "seats",
            "removed",
            "removal_rate",
        ):
            writer.writerow(["games", g.game, "", measure, getattr(g, measure)])
    for section, rates in (
        ("by_" + result.by, result.rates),
        ("by_seat", result.seats if result.by == "player" else ()),
    ):
        for r in rates:
            subject = f"{r.subject} ({r.player})" if r.player else r.subject
            for measure in (
                "matches",
                "wins",
                "win_rate",
                "win_low",
                "win_high",
                "mean_place",
                "mean_score",
                "removed",
            ):
                if getattr(r, measure) is not None:  # a game without scores has no mean score
                    writer.writerow([section, r.game, subject, measure, getattr(r, measure)])
    for d in result.dice:
        for face, count in enumerate(d.counts, start=1):
            writer.writerow(["dice", d.game, d.subject, f"face_{face}", count])
        for measure in ("rolls", "chi_square", "p_value"):
            writer.writerow(["dice", d.game, d.subject, measure, getattr(d, measure)])
    for f in result.figures:
        writer.writerow(["figures", f.game, f.subject, f.figure, f.value])


class _EscapingWriter:
    """A CSV writer whose text values have their control characters escaped (see `escaped`)."""

    def __init__(self, out: Any) -> None:
        self._writer = csv.writer(out, lineterminator="\n")

    def writerow(self, row: list[Any]) -> None:
        self._writer.writerow([escaped(value) if isinstance(value, str) else value for value in row])

    def writerows(self, rows: list[list[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(out: Any) -> _EscapingWriter:
    """A CSV writer for the screen or a pipe: text values with control characters escaped."""
    return _EscapingWriter(out)

"""`matchlog export MATCH --format html`: one file that replays a match with no server and no
network, the way Kaggle's renderer replays an episode from its JSON.

The file is the viewer's own page with everything inlined: the stylesheet, every script (each
module's text as a `data:` URL under the name the page imports it by, so the same code runs), and
the match: for each view it holds (the one `--as-seat` names, or every view the log lets its
reader have), that view's event lines, its frames, the audit findings as that view may see them,
and for the whole record the dispute reports of those findings. A value two views share (every
view of a game without hidden information) is stored once.

A page is bounded, and refused with `usage.export` before the work past the bound is done: every
view of a match in one page only up to MAX_VIEWS views (a match of more seats exports one view,
`--as-seat`), at most MAX_VIEW_EVENTS events over all its views, and at most MAX_PAGE_BYTES of
match data; the work is linear in the page it writes.
"""

from __future__ import annotations

import base64
from typing import IO, Any
from uuid import UUID

import msgspec

from matchlog.events import Forbidden, UsageError
from matchlog.log import SPECTATOR

from .pages import STATIC, board_script, render_page

__all__ = ["MAX_PAGE_BYTES", "MAX_VIEWS", "MAX_VIEW_EVENTS", "html_replay", "write_html"]

_encode = msgspec.json.Encoder().encode

#: The most views one page holds: the whole record, the spectator's and 10 seats'.
MAX_VIEWS = 12
#: The most events one page shows, over all its views (a backgammon match is a few hundred a view).
MAX_VIEW_EVENTS = 200_000
#: The most bytes of match data (lines, frames, reports) one page holds.
MAX_PAGE_BYTES = 64 << 20


class _Pool:
    """Values stored once each, named by their index, up to MAX_PAGE_BYTES in all."""

    def __init__(self) -> None:
        self.values: list[msgspec.Raw] = []
        self.size = 0
        self._index: dict[bytes, int] = {}

    def add(self, value: Any) -> int:
        """The index of `value`, stored if it is new.

        Raises:
            UsageError: the page would hold more than MAX_PAGE_BYTES (`usage.export`).
        """
        encoded = _encode(value)
        index = self._index.get(encoded)
        if index is None:
            self.size += len(encoded)
            if self.size > MAX_PAGE_BYTES:
                raise UsageError(
                    f"the page would hold more than {MAX_PAGE_BYTES >> 20} MiB of the match: export one view "
                    "(--as-seat), or the events as JSON Lines",
                    code="usage.export",
                )
            index = self._index[encoded] = len(self.values)
            self.values.append(msgspec.Raw(encoded))
        return index


def _views(log: Any, match_id: UUID, seats: int) -> tuple[list[int | None], int | None]:
    """The views of a match the log lets its reader have, and the reader's default one (a server
    decides both from the log's token; a file gives every view).

    Raises:
        UsageError: the reader may have every view and there are more than MAX_VIEWS (`usage.export`).
    """
    default = log.lines(match_id, stop=0)[0].as_seat
    if default is None:  # the whole record: every view, so none to ask for
        if seats + 2 > MAX_VIEWS:
            raise UsageError(
                f"a match of {seats:,} seats has {seats + 2:,} views, and one page holds at most {MAX_VIEWS}: "
                "export one view with --as-seat SEAT (-1 the spectator's)",
                code="usage.export",
            )
        return [None, *range(SPECTATOR, seats)], default
    # A narrower reader has its own view and at most the spectator's besides (a seat never another's).
    allowed: list[int | None] = []
    for view in dict.fromkeys((SPECTATOR, default)):
        try:
            log.lines(match_id, stop=0, as_seat=view)
        except Forbidden:
            continue
        allowed.append(view)
    return allowed, default


def _line(line: Any) -> dict[str, Any]:
    """What the page reads of a line (not its id or hash: the page has no use for them)."""
    return {
        "seq": line.seq,
        "type": line.type,
        "text": line.text,
        "undone_by": line.undone_by,
        "as_seat": line.as_seat,
        "event": line.event,
        "joins": line.joins,
    }


def html_replay(log: Any, match: UUID | str, *, as_seat: int | None = None) -> tuple[str, int]:
    """The self-contained page of one match and how many events it shows: the view `as_seat`
    only when it is given, else every view the log allows its reader.

    Raises:
        UnknownMatch: no such match.
        UsageError: a seat the match does not have.
        Forbidden: (a server) the token may not see that view.
    """
    info = log.info(match, as_seat=as_seat)  # its catalogue row too as that view may know it
    match_id = info.match_id
    if as_seat is not None:
        log.lines(match_id, stop=0, as_seat=as_seat)  # the seat is checked (and, on a server, allowed)
        views, default = [as_seat], as_seat
    else:
        views, default = _views(log, match_id, len(info.players))
    events = info.last_seq + 1
    if events * len(views) > MAX_VIEW_EVENTS:
        raise UsageError(
            f"{len(views)} view(s) of {events:,} events are more than one page shows ({MAX_VIEW_EVENTS:,}): "
            "export one view (--as-seat), or the events as JSON Lines",
            code="usage.export",
        )
    report = next(iter(log.audit([match_id])), None)
    findings = [f for f in (report.findings if report is not None else []) if f.seq is not None]
    pool = _Pool()
    by_view: dict[str, Any] = {}
    shown = 0
    for view in views:
        lines = log.lines(match_id, as_seat=view)
        shown = max(shown, len(lines))
        entry: dict[str, Any] = {
            "lines": [pool.add(_line(line)) for line in lines],
            "frames": [pool.add(frame) for frame in log.frames(match_id, as_seat=view)],
            "disputes": {},
            "analysis": pool.add(log.analysis(match_id, as_seat=view)),  # annotations, summaries, graph
        }
        if view is None and default is None:
            entry["findings"] = findings
            disputed = sorted({f.seq for f in findings})
            entry["disputes"] = {str(seq): pool.add(log.dispute(match_id, seq)) for seq in disputed}
        else:
            # A narrower view learns where the audit found something and under which rule, no more.
            entry["findings"] = [{"seq": f.seq, "rule": f.rule} for f in findings]
        by_view["all" if view is None else str(view)] = entry
    data = {"info": info, "views": views, "default": default, "pool": pool.values, "by_view": by_view}
    modules = {
        f"matchlog/{path.relative_to(STATIC / 'js').as_posix()}": "data:text/javascript;base64,"
        + base64.b64encode(path.read_bytes()).decode()
        for path in sorted((STATIC / "js").rglob("*.js"))
    }
    script = board_script(info.game)
    if script is not None:  # the board a game's plugin ships
        modules[f"matchlog/games/{info.game}.js"] = (
            "data:text/javascript;base64," + base64.b64encode(script.read_bytes()).decode()
        )
    style = (STATIC / "viewer.css").read_text(encoding="utf-8")
    page = render_page(
        "match.js",
        f"{info.game} match {match_id} · matchlog",
        {"nav": False, "data": data},
        importmap={"imports": modules},
        style=f"<style>\n{style}</style>",
    )
    return page, shown


def write_html(log: Any, match: UUID | str, out: IO[bytes], *, as_seat: int | None = None) -> int:
    """Write the self-contained page of one match to `out` (see `html_replay`); returns how many
    events it shows.

    Raises:
        UnknownMatch, UsageError, Forbidden: as `html_replay`.
    """
    page, shown = html_replay(log, match, as_seat=as_seat)
    out.write(page.encode("utf-8"))
    return shown

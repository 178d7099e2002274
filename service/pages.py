"""The viewer on the service: its pages (the match list, a match step by step, a dispute report,
the statistics), their assets, and the two questions the pages ask that the CLI does not: a
match's frames (the drawing model at each seq) and the views a token allows.

The pages are one HTML shell each around plain ES modules under `static/js` (no build step: what
is in the package is what the browser runs). The shell maps the modules' names (`matchlog/...`)
to `/static/js/` with an import map; an exported file maps the same names to the modules'
text, so the page and the file run the same code. Every frame is computed here from the view the
caller's token allows, never from the whole record for a narrower reader.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Annotated, Any
from uuid import UUID

import msgspec
from litestar import MediaType, Response, get
from litestar.params import Parameter
from litestar.static_files import create_static_files_router

from matchlog import __version__
from matchlog.engines import game as registered
from matchlog.engines import names
from matchlog.events import Forbidden, MatchlogError, UnknownMatch, UsageError
from matchlog.replay.frames import Frame

from .auth import Access
from .core import SEQ_MAX, Service, route

__all__ = ["FRAMES_PER_REQUEST", "STATIC", "VIEWER_ROUTES", "Views", "render_page", "views_allowed"]

#: The page's assets: the HTML shell, the stylesheet, and the scripts under js/.
STATIC = Path(__file__).with_name("static")
#: The most frames one request returns (the page asks for those around the seq it shows).
FRAMES_PER_REQUEST = 1_000

_SHELL = (STATIC / "page.html").read_text(encoding="utf-8")


class Views(msgspec.Struct, frozen=True):
    """The views of one match a caller may ask for (`as_seat`: None the whole record, -1 a
    spectator, K seat K) and the one it gets when it does not say."""

    views: list[int | None]
    default: int | None


def views_allowed(access: Access, match_id: UUID, seats: int) -> Views:
    """The views of a match of `seats` seats that `access` allows, as `Access.view` decides them."""
    allowed: list[int | None] = [None] if access.sees_all_of(match_id) else []
    for view in range(-1, seats):
        try:
            access.view(match_id, view)
        except Forbidden:
            continue
        allowed.append(view)
    return Views(views=allowed, default=access.view(match_id, None))


def _json_in_html(value: Any) -> str:
    """`value` as JSON that can sit inside a <script> element (no `<`, so no `</script>`)."""
    return msgspec.json.encode(value).decode().replace("<", "\\u003c")


def render_page(entry: str, title: str, config: Any, *, importmap: dict[str, Any], style: str) -> str:
    """The HTML shell that runs the module `entry` (under js/) with `config`."""
    filled = {
        "version": html.escape(__version__),
        "title": html.escape(title),
        "style": style,
        "importmap": _json_in_html(importmap),
        "config": _json_in_html(config),
        "entry": html.escape(entry),
    }
    page = _SHELL
    for name, value in filled.items():
        page = page.replace("{{" + name + "}}", value)
    return page


def _served(entry: str, title: str, **config: Any) -> Response[str]:
    page = render_page(
        entry,
        title,
        {"nav": True, "games": names(), **config},
        importmap={"imports": {"matchlog/": "/static/js/", "matchlog/games/": "/games/"}},
        style='<link rel="stylesheet" href="/static/viewer.css">',
    )
    return Response(page, media_type=MediaType.HTML)


# -- pages --------------------------------------------------------------------------------------


@get("/", include_in_schema=False, sync_to_thread=False)
def index_page() -> Response[str]:
    """The matches, newest first, filtered and paged."""
    return _served("list.js", "matches · matchlog")


def _not_found(match_id: str, error: MatchlogError) -> Response[str]:
    """A page of its own, status 404, for a match the log does not have: not a viewer with nothing to show."""
    said = html.escape(error.message)
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>no match {html.escape(match_id[:40])} · matchlog</title>"
        '<link rel="stylesheet" href="/static/viewer.css"></head>'
        f'<body><main class="not-found"><h1>No such match</h1><p data-code="{html.escape(error.code)}">{said}</p>'
        '<p><a href="/">All the matches of this log</a></p></main></body></html>'
    )
    return Response(page, media_type=MediaType.HTML, status_code=404)


@get("/matches/{match_id:str}", include_in_schema=False, sync_to_thread=True)
def match_page(match_id: str, service: Service) -> Response[str]:
    """One match, step by step (`?seq=N`, `?as_seat=K`); a 404 page for a match the log has not."""
    try:
        service.log.info(match_id)  # whether a match exists is public: the list shows every one
    except UnknownMatch as error:
        return _not_found(match_id, error)
    return _served("match.js", f"match {match_id} · matchlog", match=match_id)


@get("/matches/{match_id:str}/audit/{seq:int}", include_in_schema=False, sync_to_thread=True)
def dispute_page(match_id: str, seq: int, service: Service) -> Response[str]:
    """The dispute report about one event; a 404 page for a match the log has not."""
    try:
        service.log.info(match_id)
    except UnknownMatch as error:
        return _not_found(match_id, error)
    return _served("dispute.js", f"seq {seq} of match {match_id} · matchlog", match=match_id, seq=seq)


@get("/stats", include_in_schema=False, sync_to_thread=False)
def stats_page() -> Response[str]:
    """`matchlog stats` with its charts."""
    return _served("stats.js", "statistics · matchlog")


# -- what the pages ask -------------------------------------------------------------------------


@route(get, "/api/matches/{match_id:str}/frames", sync_to_thread=True, errors=(403, 404))
def match_frames(
    match_id: str,
    service: Service,
    access: Access,
    start: Annotated[int, Parameter(ge=0, le=SEQ_MAX)] = 0,
    stop: Annotated[int | None, Parameter(ge=0, le=SEQ_MAX)] = None,
    as_seat: Annotated[int | None, Parameter(ge=-1, le=32_767)] = None,
) -> list[Frame]:
    """The drawing model of the board after each seq from `start` to `stop` (at most 1,000 of
    them), with whose turn it is, as the caller may see it (`as_seat` as for `events`)."""
    log = service.log
    info = log.info(match_id)
    view = access.view(info.match_id, as_seat)
    last = info.last_seq if stop is None else min(stop, info.last_seq)
    return log.frames(info.match_id, start=start, stop=min(last, start + FRAMES_PER_REQUEST - 1), as_seat=view)


@get("/games/{script:str}", include_in_schema=False, sync_to_thread=False)
def game_script(script: str) -> Response[bytes]:
    """The ES module a game's plugin ships to draw its board (`Game.script`), as `NAME.js`."""
    name, dot, kind = script.rpartition(".")
    path = board_script(name) if dot and kind == "js" else None
    if path is None:
        return Response(b"no such board script", status_code=404, media_type=MediaType.TEXT)
    return Response(path.read_bytes(), media_type="text/javascript")


def board_script(game: str) -> Path | None:
    """The ES module that draws `game`'s board, where its plugin ships one (else None)."""
    try:
        return registered(game).script if game in names() else None
    except UsageError:
        return None


@route(get, "/api/matches/{match_id:str}/views", sync_to_thread=True, errors=(404,))
def match_views(match_id: str, service: Service, access: Access) -> Views:
    """The views of the match the caller's token allows, and the one it gets by default."""
    info = service.log.info(match_id)
    return views_allowed(access, info.match_id, len(info.players))


VIEWER_ROUTES = [
    index_page,
    match_page,
    dispute_page,
    stats_page,
    match_frames,
    match_views,
    game_script,
    create_static_files_router(path="/static", directories=[STATIC], name="static", include_in_schema=False),
]

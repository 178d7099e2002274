"""Ratings and duels on the service: `GET /api/ratings`, `GET /api/duels/{id}` and the leaderboard
page (`/ratings`), which draws each player's Elo with its 95% interval.

Both answers are aggregates of results: who won each ended match, which every reader may know
once the match has ended (a running match counts for nobody), with the names and strategies the
match list shows everyone. So they are the same for every token, and computed from the log as the
CLI computes them. A rating table is a projection of the log up to its head: it is kept by that
head (`RatingCache`) and computed again only once the log has grown, and its ETag names the head
and the question, so a client that has it is answered 304 Not Modified until the log grows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import Response, get
from litestar.params import Parameter

from matchlog.engines import get as get_engine
from matchlog.events import UsageError
from matchlog.replay.duels import DuelReport
from matchlog.replay.ratings import RatingCache, RatingTable
from matchlog.replay.results import log_head

from .auth import Access
from .core import IfNoneMatch, Service, route
from .pages import _served  # the viewer's one page shell
from .reads import names_tag

__all__ = ["ROUTES"]


def _aliases(given: list[str]) -> dict[str, str]:
    """The aliases a request gives, OLD=NEW each.

    Raises:
        UsageError: an alias that is not OLD=NEW.
    """
    aliases: dict[str, str] = {}
    for pair in given:
        old, equals, new = pair.partition("=")
        if not equals or not old.strip() or not new.strip():
            raise UsageError(f"alias takes OLD=NEW, not {pair!r}", code="usage.alias")
        aliases[old.strip()] = new.strip()
    return aliases


@route(get, "/api/ratings", sync_to_thread=True)
def ratings(
    service: Service,
    access: Access,  # the same table for every reader, but a token must be one of this log's
    game: str | None = None,
    since: datetime | None = None,
    series: str | None = None,
    anchor: str | None = None,
    player: Annotated[list[str] | None, Parameter(query="player")] = None,
    alias: Annotated[list[str] | None, Parameter(query="alias")] = None,
    if_none_match: IfNoneMatch = None,
) -> Response[RatingTable]:
    """The players' ratings from the ended matches, as `matchlog ratings`: Weng-Lin μ, σ and μ - 3σ,
    and Bradley-Terry Elo with a 95% interval relative to an anchor player. The ETag names the
    log's head: If-None-Match with it is answered 304 until the log grows."""
    if game is not None:
        get_engine(game)  # an unknown game is a usage error naming the games there are
    question = RatingCache.question(
        game, since=since, series=series, players=player or (), aliases=_aliases(alias or []), anchor=anchor
    )
    head = log_head(service.log.store)
    # Keyed, as every tag the service gives: the head hash may be an event's a reader may not see.
    tag = service.reads.tag([head.leaf, head.hash], None, ("ratings", *question))
    headers = {"ETag": tag, "Cache-Control": "no-cache"}  # keep it, but ask again each time
    if names_tag(tag, if_none_match):
        return Response(b"", status_code=304, headers=headers)  # type: ignore[arg-type]
    return Response(service.ratings.table(service.log.store, head, question), headers=headers)


@route(get, "/api/duels/{duel_id:str}", sync_to_thread=True, errors=(404,))
def duel(duel_id: str, service: Service, access: Access) -> DuelReport:
    """A duel's report, computed again from its games: pairs, score, Elo, LOS, LLR and verdict."""
    return service.log.duel(duel_id)


@get("/ratings", include_in_schema=False, sync_to_thread=False)
def ratings_page() -> Response[str]:
    """The leaderboard: every player's ratings, with its Elo interval drawn."""
    return _served("ratings.js", "ratings · matchlog")


ROUTES = [ratings, duel, ratings_page]

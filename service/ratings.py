"""Ratings and duels on the service: `GET /api/ratings`, `GET /api/duels/{id}` and the leaderboard
page (`/ratings`), which draws each player's Elo with its 95% interval.

Both answers are aggregates of results: who won each ended match, which every reader may know
once the match has ended (a running match counts for nobody), with the names and strategies the
match list shows everyone. So they are the same for every token, and computed again from the log
for each request, as the CLI computes them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import Response, get
from litestar.params import Parameter

from matchlog.events import UsageError
from matchlog.replay.duels import DuelReport
from matchlog.replay.ratings import RatingTable

from .core import Service, route
from .pages import _served  # the viewer's one page shell

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
    game: str | None = None,
    since: datetime | None = None,
    series: str | None = None,
    anchor: str | None = None,
    player: Annotated[list[str] | None, Parameter(query="player")] = None,
    alias: Annotated[list[str] | None, Parameter(query="alias")] = None,
) -> RatingTable:
    """The players' ratings from the ended matches, as `matchlog ratings`: Weng-Lin μ, σ and μ - 3σ,
    and Bradley-Terry Elo with a 95% interval relative to an anchor player."""
    return service.log.rating_table(
        game, since=since, series=series, players=player or (), aliases=_aliases(alias or []), anchor=anchor
    )


@route(get, "/api/duels/{duel_id:str}", sync_to_thread=True, errors=(404,))
def duel(duel_id: str, service: Service) -> DuelReport:
    """A duel's report, computed again from its games: pairs, score, Elo, LOS, LLR and verdict."""
    return service.log.duel(duel_id)


@get("/ratings", include_in_schema=False, sync_to_thread=False)
def ratings_page() -> Response[str]:
    """The leaderboard: every player's ratings, with its Elo interval drawn."""
    return _served("ratings.js", "ratings · matchlog")


ROUTES = [ratings, duel, ratings_page]

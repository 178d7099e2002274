"""What readers who may not see a whole match get of its catalogue row (their audit reports,
states and events go through `replay.views`, as the CLI's `--as-seat` do). The admin and the
match's referee get it whole; a seat its seat's row, everyone else a spectator's, each column as
`engines.views.CATALOGUE` declares it (`replay.aggregates.catalogue_row`).

Hashes: a hash covers hidden values, so a reader who could recompute one could test guesses of
them (a Porrinha hand of 0 to 3, a referee elsewhere choosing its events' ids). So in a game with
hidden information, a reader who may not see the whole record gets no hash of a match, its head's
or any event's, ever: even once it has ended, a rejected hand counted as 0 or a winner's tiles stay
hidden.
"""

from __future__ import annotations

from matchlog.replay.aggregates import catalogue_row
from matchlog.store import MatchInfo

from .auth import Access

__all__ = ["catalogue_for"]


def catalogue_for(info: MatchInfo, access: Access) -> MatchInfo:
    """A match's catalogue row as `access` may see it."""
    return catalogue_row(info, access.view(info.match_id, None))

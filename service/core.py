"""What every part of the service shares: the one dependency handlers take (`Service`), the error
body, and `route`, which names each handler in the OpenAPI document and describes its errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from litestar.openapi.datastructures import ResponseSpec

from matchlog.file import FileLog
from matchlog.replay.ratings import RatingCache

from .auth import Keys
from .follow import Hub
from .live import LiveMatches

__all__ = ["ERRORS", "Error", "Service", "route"]


class Error(msgspec.Struct, frozen=True):
    """Every error: the stable code (as the CLI prints it), what happened, and the HTTP status."""

    code: str
    message: str
    status: int


ERRORS = {
    400: "A request that cannot be carried out as given: a bad parameter or body (`usage.*`), or an event, "
    "import or query the log refuses (`store.*`, `sql.*`, `event.decode`)",
    401: "A token this log did not give (`auth.token`)",
    403: "A token that does not allow it (`auth.admin`, `auth.view`, `auth.write`)",
    404: "No such match, or an id prefix that names more than one (`store.unknown_match`)",
    409: "A stale `expected_seq` (`store.concurrency`): nothing was written",
    422: "An event the rules refuse; the code names the rule: nothing was written",
    503: "The log cannot take this write now (`store.*`)",
}


def route(method: type, path: str, *, errors: tuple[int, ...] = (), **options: Any) -> Callable[[Any], Any]:
    """A route handler named after its function in the OpenAPI document, summarised by its
    docstring's first sentence, with its error answers (400, 401 and `errors`) described."""

    def make(function: Callable[..., Any]) -> Any:
        words = function.__name__.split("_")
        doc = " ".join((function.__doc__ or "").split())
        summary = doc.split(". ")[0].split(": ")[0].rstrip(".")
        responses = {
            status: ResponseSpec(Error, description=ERRORS[status], generate_examples=False)
            for status in sorted({400, 401, *errors})
        }
        operation = words[0] + "".join(word.title() for word in words[1:])
        return method(path, operation_id=operation, summary=summary, responses=responses, **options)(function)

    return make


class Service:
    """What the handlers work with: the log, the matches recorded through the service, the keys
    that make and check tokens, the hub of the follow streams, and the rating tables computed at
    the log's recent heads. One dependency rather than several:
    Litestar resolves a handler's independent dependencies side by side, in a task group per
    request, which cost a third of an append's time on the event loop."""

    def __init__(self, log: FileLog, admin_token: str) -> None:
        self.log = log
        self.keys = Keys(admin_token)
        self.hub = Hub()
        self.live = LiveMatches(log, admin_token.encode())
        self.ratings = RatingCache()

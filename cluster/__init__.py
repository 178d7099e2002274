"""Past one machine: a tournament's games and an audit's re-judging spread over a Ray cluster.

This process stays the log's one writer (or the client of the service that owns the log); the
cluster's nodes play and judge, and need only matchlog installed (`pip install 'matchlog[ray]'`).
`ray` is imported only when one of these is used.

    from matchlog.cluster import ray_pool, audit_on_ray
    run_tournament("porrinha", specs, games=10_000, store=log, pool=ray_pool("auto"))
    for report in audit_on_ray(log, address="auto"): ...
"""

from __future__ import annotations

from typing import Any

__all__ = ["audit_on_ray", "connected", "ray_pool", "require_ray"]

_LAZY = {
    "audit_on_ray": ".audit",
    "connected": ".connect",
    "require_ray": ".connect",
    "ray_pool": ".tournament",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

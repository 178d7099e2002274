"""Connecting this process to a Ray cluster, for as long as a command needs it.

`--ray ADDRESS` takes what `ray.init` takes: `host:port` of a running cluster's head (`ray start
--head` prints it), `auto` (the cluster this machine is part of, or $RAY_ADDRESS), `local` (a
Ray instance started here for this command only) or `ray://host:10001` (Ray Client). A process
already connected (a notebook, a test) is used as it is and left connected.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from types import ModuleType

from matchlog.events import RemoteError, UsageError

__all__ = ["connected", "require_ray"]

#: How long an address of the form host:port has to accept a connection before we give up on it
#: (ray.init itself retries an address nobody answers at for minutes).
_REACH_SECONDS = 5.0


def require_ray() -> ModuleType:
    """The `ray` package.

    Raises:
        UsageError: it is not installed (`usage.ray`).
    """
    try:
        import ray
    except ImportError:
        raise UsageError(
            "--ray needs the ray package: pip install 'matchlog[ray]' (on every node of the cluster too)",
            code="usage.ray",
        ) from None
    return ray


@contextlib.contextmanager
def connected(address: str) -> Iterator[ModuleType]:
    """This process connected to the Ray cluster at `address` (see the module docstring), and
    disconnected afterwards if it was connected here.

    Raises:
        UsageError: ray is not installed, or the address is not one.
        RemoteError: no cluster answers there (`cluster.unreachable`).
    """
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    _check_reachable(address)
    options: dict[str, object] = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address == "local":
        options["include_dashboard"] = False
    try:
        ray.init(address=address, **options)
    except ConnectionError as error:
        raise RemoteError(f"cannot reach the Ray cluster at {address}: {error}", code="cluster.unreachable") from None
    except ValueError as error:
        raise UsageError(f"--ray {address}: {error}", code="usage.ray") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """Fail fast when nothing listens at a host:port address.

    Raises:
        UsageError: a host:port whose port is not a number.
        RemoteError: nothing accepts a connection there.
    """
    if address in ("auto", "local") or "://" in address or ":" not in address:
        return  # ray.init resolves these itself, quickly
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise UsageError(f"--ray takes host:port, auto, local or ray://host:port, not {address!r}", code="usage.ray")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_REACH_SECONDS):
            pass
    except OSError as error:
        raise RemoteError(
            f"no Ray cluster answers at {address} ({error.strerror or error}); start one with `ray start --head`",
            code="cluster.unreachable",
        ) from None

"""A run's area on an object store: marked with its owner, removed like scratch files.

Each run writes below ``PREFIX/iotune-scratch-XXXX/`` (the local scratch
directory's name), whose ``.iotune-owner`` object names the host and process.
The session removes the area when the run ends, SIGINT and SIGTERM included;
``iotune clean --storage URL`` removes the areas of runs on this host that
are gone, as it removes their scratch directories.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

from iotune.objectstore.target import Target

logger = logging.getLogger(__name__)
OWNER = ".iotune-owner"
AREA_PREFIX = "iotune-scratch-"


def mark(target: Target, pid: int) -> None:
    """Write the owner mark of ``target``'s area."""
    import obstore as obs

    obs.put(
        target.obstore(retries=5), target.key(OWNER), f"{socket.gethostname()} {pid}\n".encode()
    )


def keys_under(target: Target, prefix: str) -> Iterator[str]:
    """Every key below ``prefix`` (``prefix/...``)."""
    import obstore as obs

    for batch in obs.list(target.obstore(retries=5), prefix=prefix.rstrip("/") + "/"):
        for meta in batch:
            yield meta["path"]


def remove_prefix(target: Target, prefix: str) -> int:
    """Delete every object below ``prefix``; returns how many.

    Multipart uploads that never completed leave no listed object, and S3
    keeps their parts until aborted: the store's lifecycle rule for incomplete
    uploads is the user's; obstore aborts its own on failure.
    """
    import obstore as obs

    store = target.obstore(retries=5)
    keys = list(keys_under(target, prefix))
    for i in range(0, len(keys), 1000):  # DeleteObjects takes 1000 keys
        obs.delete(store, keys[i : i + 1000])
    return len(keys)


def remove_area(target: Target) -> int:
    """Delete the run's whole area, its owner mark last."""
    return remove_prefix(target, target.key())


def leftovers(target: Target) -> list[tuple[str, str, int]]:
    """Areas under the storage prefix: ``(area, host, pid)`` from their owner marks."""
    import obstore as obs

    store = target.obstore(retries=5)
    base = Target(target.spec)
    listing = obs.list_with_delimiter(store, prefix=base.key() + "/" if base.key() else None)
    found = []
    for common in listing["common_prefixes"]:
        area = common.rstrip("/").rsplit("/", 1)[-1]
        if not area.startswith(AREA_PREFIX):
            continue
        try:
            text = bytes(obs.get(store, Target(target.spec, area).key(OWNER)).bytes()).decode()
            host, pid = text.split()
            found.append((area, host, int(pid)))
        except (FileNotFoundError, ValueError):
            found.append((area, "", 0))
    return found

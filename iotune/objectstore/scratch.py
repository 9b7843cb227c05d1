"""A run's area on an object store: marked with its owner, removed like scratch files.

Each run writes below ``PREFIX/iotune-scratch-XXXX/`` (the local scratch
directory's name), whose ``.iotune-owner`` object names the host and process.
The session removes the area when the run ends, SIGINT and SIGTERM included;
``iotune clean --storage URL`` removes the areas of runs on this host that
are gone, as it removes their scratch directories.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from iotune.core.processes import is_gone
from iotune.core.units import format_size
from iotune.objectstore.retry import MAX_RETRIES
from iotune.objectstore.target import Target

logger = logging.getLogger(__name__)
OWNER = ".iotune-owner"
AREA_PREFIX = "iotune-scratch-"


def mark(target: Target, pid: int) -> None:
    """Write the owner mark of ``target``'s area."""
    import obstore as obs

    obs.put(
        target.obstore(retries=MAX_RETRIES),
        target.key(OWNER),
        f"{socket.gethostname()} {pid}\n".encode(),
    )


def keys_under(target: Target, prefix: str) -> Iterator[str]:
    """Every key below ``prefix`` (``prefix/...``)."""
    import obstore as obs

    for batch in obs.list(target.obstore(retries=MAX_RETRIES), prefix=prefix.rstrip("/") + "/"):
        for meta in batch:
            yield meta["path"]


def remove_prefix(target: Target, prefix: str, *, uploads: bool = True) -> int:
    """Delete every object below ``prefix``; returns how many.

    Multipart uploads that never completed (a run stopped mid-upload) leave no
    listed object, but S3 keeps and bills their parts until they are aborted:
    with ``uploads`` those under ``prefix`` are aborted too.
    """
    import obstore as obs

    store = target.obstore(retries=MAX_RETRIES)
    keys = list(keys_under(target, prefix))
    for i in range(0, len(keys), 1000):  # DeleteObjects takes 1000 keys
        obs.delete(store, keys[i : i + 1000])
    if uploads and target.spec.scheme == "s3":
        abort_uploads(target, prefix)
    return len(keys)


def abort_uploads(target: Target, prefix: str) -> int:
    """Abort the incomplete multipart uploads below ``prefix``; returns how many."""
    from iotune.objectstore.clients import close_fsspec

    fs = target.fsspec()
    bucket = target.spec.bucket
    try:
        listed = fs.call_s3("list_multipart_uploads", Bucket=bucket, Prefix=prefix + "/")
        uploads = listed.get("Uploads", [])
        for upload in uploads:
            fs.call_s3(
                "abort_multipart_upload",
                Bucket=bucket,
                Key=upload["Key"],
                UploadId=upload["UploadId"],
            )
    finally:
        close_fsspec(fs)
    return len(uploads)


def remove_area(target: Target) -> int:
    """Delete the run's whole area, its owner mark last."""
    removed = remove_prefix(target, target.key())
    if target.spec.scheme == "file":  # LocalStore deletes files, not the directories it made
        for folder, _dirs, _files in os.walk(f"{target.spec.prefix}/{target.key()}", False):
            try:
                Path(folder).rmdir()
            except OSError:
                continue  # not empty: something else lives there, leave it
    return removed


def leftovers(target: Target) -> list[tuple[str, str, int]]:
    """Areas under the storage prefix: ``(area, host, pid)`` from their owner marks."""
    import obstore as obs

    store = target.obstore(retries=MAX_RETRIES)
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


def new_area(target: Target, label: str = "") -> Target:
    """A fresh area under ``target``'s prefix: ``iotune-scratch-LABEL-XXXXXXXX``.

    For work that has no local scratch directory to name it (``iotune calibrate
    --storage``).  Nothing is written: the caller marks it (:func:`mark`) once
    its removal is arranged, so an interruption in between leaves nothing, and
    :func:`remove_dead_areas` finds it like a run's if the process is killed.
    """
    return Target(
        target.spec, area=f"{AREA_PREFIX}{label}{'-' if label else ''}{uuid.uuid4().hex[:8]}"
    )


@dataclass(frozen=True)
class Area:
    """An ``iotune-scratch-*`` area on a store and what its owner mark says.

    ``state`` follows :class:`iotune.runner.scratch.Leftover`: ``dead`` (a
    process of this host that is gone), ``alive``, ``elsewhere`` (another host:
    cannot be checked from here) or ``unmarked``.
    """

    target: Target
    state: str
    host: str = ""
    pid: int = 0

    @property
    def where(self) -> str:
        return self.target.url(self.target.key()) + "/"

    def text(self, objects: int, nbytes: int) -> str:
        """One line saying what was removed or why it was left alone."""
        size = f"{objects} object{'' if objects == 1 else 's'}, {format_size(nbytes, exact=False)}"
        if self.state == "dead":
            return f"removed objects left by an earlier run (pid {self.pid}, {size}): {self.where}"
        if self.state == "alive":
            return f"kept objects of a running iotune (pid {self.pid}, {size}): {self.where}"
        if self.state == "elsewhere":
            return (
                f"kept objects of pid {self.pid} on host {self.host} ({size}; cannot be "
                f"checked from here, delete them by hand if that run is gone): {self.where}"
            )
        return f"kept {self.where} ({size}): no owner mark, so not known to be iotune's"


def scan(target: Target) -> list[Area]:
    """Every area under ``target``'s storage prefix with its owner's state."""
    found = []
    for name, host, pid in sorted(leftovers(target)):
        area = Target(target.spec, area=name)
        if not host:
            found.append(Area(area, "unmarked"))
        elif host != socket.gethostname():
            found.append(Area(area, "elsewhere", host, pid))
        else:
            found.append(Area(area, "dead" if is_gone(pid) else "alive", host, pid))
    return found


def usage(target: Target) -> tuple[int, int]:
    """Objects below ``target``'s area and the bytes they hold."""
    import obstore as obs

    objects = nbytes = 0
    for batch in obs.list(target.obstore(retries=MAX_RETRIES), prefix=target.key() + "/"):
        objects += len(batch)
        nbytes += sum(int(meta["size"]) for meta in batch)
    return objects, nbytes


def remove_dead_areas(target: Target, *, report_kept: bool = False) -> list[str]:
    """Delete the areas whose owner process on this host is gone; one line for each.

    With ``report_kept``, also a line for each area left alone and why; the
    policy and wording of :func:`iotune.runner.scratch.remove_leftovers`.
    """
    lines = []
    for area in scan(target):
        if area.state == "dead":
            objects, nbytes = usage(area.target)
            remove_area(area.target)
            lines.append(area.text(objects, nbytes))
        elif report_kept:
            lines.append(area.text(*usage(area.target)))
    return lines


def clean(target: Target) -> list[str]:
    """:func:`remove_dead_areas` after the pre-flight check, lines for the kept ones too.

    Raises
    ------
    StorageError
        The store cannot be reached, the bucket is missing or access is denied
        (one line).
    """
    from iotune.objectstore.check import StorageError, check, explain

    check(target)  # a wrong endpoint, bucket or credentials: one line, within seconds
    try:
        return remove_dead_areas(target, report_kept=True)
    except Exception as err:  # obstore's own classes: one line, as the check says them
        raise StorageError(f"--storage {target.spec.url}: {explain(err)}") from err

"""What every backend's exports share: the target, the export records, Lustre and MPI-IO hints.

A backend's :meth:`~iotune.backends.base.Backend.exports` turns one grid point's
effective parameters (``settings``: the ``effective`` JSON of a results point) into
code and commands to paste, keyed by name.  Each value has ``text`` (to paste) and,
for structured exports, ``value`` (JSON-friendly); an export the settings cannot be
expressed in has only ``unavailable`` (the reason), because its maker raised
:class:`~iotune.core.errors.NotApplicable`.  MPI-IO hints are a plain ``{key: value}``
dict.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from iotune.core.errors import NotApplicable
from iotune.core.units import parse_chunk_label
from iotune.model import codecs

#: one export: ``text`` and ``value``, or ``unavailable``
Export = dict[str, Any]
#: exports by name, each made only when asked for (so one that does not apply is a note)
Makers = dict[str, Callable[[], Export]]


@dataclass(frozen=True)
class Target:
    """The variable the exports describe."""

    variable: str
    dims: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: str

    @property
    def itemsize(self) -> int:
        import numpy as np

        return np.dtype(self.dtype).itemsize


def codec_of(settings: Mapping[str, Any]) -> codecs.Codec:
    """The :class:`~iotune.model.codecs.Codec` of a settings dict (``none`` when absent)."""
    return codecs.resolve_params(settings)[0]


def chunk_shape(settings: Mapping[str, Any]) -> str | tuple[int, ...]:
    """``"contiguous"``, ``"auto"`` or the chunk shape (``"auto"`` when not set)."""
    label = settings.get("chunks") or "auto"
    return parse_chunk_label(str(label))


def is_set(settings: Mapping[str, Any], *names: str) -> bool:
    """Whether any of ``names`` has a value other than unset (``None``, 0, empty)."""
    return any(settings.get(n) for n in names)


def make_all(makers: Makers) -> dict[str, Export]:
    """Run every maker; one that raises NotApplicable becomes ``{"unavailable": reason}``."""
    out = {}
    for name, make in makers.items():
        try:
            out[name] = make()
        except NotApplicable as err:
            out[name] = {"unavailable": str(err)}
    return out


def structured(value: dict[str, Any]) -> Export:
    """An ``encoding = {...}`` export with its value."""
    return {"text": f"encoding = {value!r}", "value": value}


def command(argv: list[str]) -> Export:
    """A command line export: the shell text and its argv."""
    return {"text": shlex.join(argv), "value": argv}


# --- Lustre striping and MPI-IO hints (the launched trials' knobs) ---------------------


def lfs_setstripe_args(settings: Mapping[str, Any], directory: str = "DIR") -> list[str]:
    """``lfs setstripe -c COUNT -S SIZE DIR`` for the stripe settings.

    Raises
    ------
    NotApplicable
        Neither ``stripe_count`` nor ``stripe_size`` is set.
    """
    count, size = settings.get("stripe_count"), settings.get("stripe_size")
    if count is None and size is None:
        raise NotApplicable("the sweep set no Lustre stripe parameters")
    args = ["lfs", "setstripe"]
    if count is not None:
        args += ["-c", str(int(count))]
    if size is not None:
        args += ["-S", _lfs_size(int(size))]
    return [*args, directory]


def _lfs_size(nbytes: int) -> str:
    """Sizes as ``lfs`` spells them: ``4M``, ``64K``, ``1G`` (binary units)."""
    for unit, factor in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if nbytes % factor == 0:
            return f"{nbytes // factor}{unit}"
    return str(nbytes)


def check_hints(hints: Mapping[str, Any]) -> dict[str, str]:
    """Hints as text; raise NotApplicable for a key or value a hint string cannot hold."""
    out = {}
    for key, value in hints.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        for bad in (":", ",", "=", " ", "\n"):
            if bad in str(key) or bad in text:
                raise NotApplicable(f"hint {key}={value!r} contains {bad!r}, which hints cannot")
        out[str(key)] = text
    return out


def mpich_hints(hints: Mapping[str, Any], *, pattern: str = "*") -> str:
    """``MPICH_MPIIO_HINTS`` value: ``pattern:key=value:key=value`` (Cray/HPE MPICH).

    Raises
    ------
    NotApplicable
        No hints (the defaults need no variable) or a value that cannot be written.
    """
    clean = check_hints(hints)
    if not clean:
        raise NotApplicable("the winning hint set is empty: the MPI library defaults")
    return ":".join([pattern, *(f"{k}={v}" for k, v in clean.items())])


def romio_hints_file(hints: Mapping[str, Any]) -> str:
    """A ROMIO hints file (``key value`` per line); point ``ROMIO_HINTS`` at it."""
    clean = check_hints(hints)
    if not clean:
        raise NotApplicable("the winning hint set is empty: the MPI library defaults")
    return "".join(f"{k} {v}\n" for k, v in clean.items())


def launch_makers(settings: Mapping[str, Any], hints: Mapping[str, Any] | None) -> Makers:
    """Striping (when the settings carry it) and hint exports (when hints were swept)."""
    makers: Makers = {}
    if "stripe_count" in settings or "stripe_size" in settings:
        makers["lfs_setstripe"] = lambda: command(lfs_setstripe_args(settings))
    if hints is not None:
        makers["mpich_mpiio_hints"] = lambda: {
            "text": f"export MPICH_MPIIO_HINTS={shlex.quote(mpich_hints(hints))}",
            "value": mpich_hints(hints),
        }
        makers["romio_hints_file"] = lambda: {
            "text": romio_hints_file(hints) + "# then: export ROMIO_HINTS=/path/to/this/file",
            "value": romio_hints_file(hints),
        }
    return makers

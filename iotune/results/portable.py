"""The portability limit of an objective: only codecs the named readers open as is.

``--portable`` (every reader of a point's format) or ``--readers ncdump,h5netcdf``
(:attr:`iotune.model.objective.Objective.readers`) leaves out the points whose codec
one of those readers decodes only with a plugin; which readers a format has is its
backend's (``Backend.readers``), which need a plugin for a codec the codec table's
(:data:`iotune.model.codecs.PLUGINS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from iotune.backends import readability, reader_names
from iotune.core.errors import RecommendError
from iotune.model.readers import ALL, check_reader_names


class _Point(Protocol):
    """A ranked point (:class:`iotune.results.objective.Candidate`): its effective settings."""

    @property
    def settings(self) -> Mapping[str, Any]: ...


Candidate = TypeVar("Candidate", bound=_Point)


def flag(readers: Sequence[str]) -> str:
    """The option as the user gave it: ``--portable`` or ``--readers a,b``."""
    return "--portable" if tuple(readers) == (ALL,) else f"--readers {','.join(readers)}"


def keep_readable(
    cands: list[Candidate], readers: Sequence[str] | None
) -> tuple[list[Candidate], str]:
    """The candidates whose codec every reader in ``readers`` opens without a plugin.

    Returns them and the line that says what was left out (empty: nothing).

    Raises
    ------
    RecommendError
        An unknown reader name (the message lists the allowed ones), or no
        candidate left (the message names the codecs that need plugins).
    """
    if not readers:
        return list(cands), ""
    check_reader_names(readers, reader_names())
    kept: list[Candidate] = []
    left: list[Candidate] = []
    for cand in cands:
        (left if readability(cand.settings).blocks(readers) else kept).append(cand)
    codecs = ", ".join(dict.fromkeys(str(c.settings.get("codec")) for c in left))
    if cands and not kept:
        raise RecommendError(
            f"{flag(readers)}: every successful configuration's codec needs a plugin "
            f"({codecs}); sweep one the readers open as is, such as zlib or none"
        )
    if not left:
        return kept, ""
    points = f"{len(left)} point{'' if len(left) == 1 else 's'}"
    return kept, f"{flag(readers)}: left out {points} whose codec needs a plugin ({codecs})"

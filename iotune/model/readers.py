"""Which programs open a stored file, and which of them need a plugin for its codec.

A format declares its readers (``Backend.readers``: a tuple of :class:`ReaderGroup`,
programs that find filters the same way); which reader family needs which plugin
for a codec is the codec table's (:data:`iotune.model.codecs.PLUGINS`).  From the two,
:class:`Readability` says who opens a pick as it is and who needs what first, and
:func:`check_reader_names` checks the readers a user names (``--readers``, a spec's
``readers``) against those the formats declare.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from iotune.core.errors import RecommendError
from iotune.model.codecs import CODECS, PLUGINS, Plugin, parse_codec_name

#: the reader name meaning every reader of the pick's format (``--portable``)
ALL = "all"


@dataclass(frozen=True)
class ReaderGroup:
    """Readers a user may name that get their filters or codecs one way (``family``)."""

    family: str  # a reader family of the codec table: hdf5-c, hdf5plugin, zarr-python
    names: tuple[str, ...]


def plugin_needed(codec: str, family: str) -> Plugin | None:
    """The plugin readers of ``family`` need to decode ``codec`` (None: they have it)."""
    return PLUGINS.get(CODECS[parse_codec_name(codec)].family, {}).get(family)


@dataclass
class Readability:
    """Who opens a file stored with ``codec`` as it is, and who needs a plugin first."""

    codec: str
    readers: list[str] = field(default_factory=list)
    #: ``{"readers": [...], "plugin": name, "hint": how}`` per group that needs one
    plugins: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, codec: str, groups: Sequence[ReaderGroup]) -> Readability:
        found = cls(codec)
        for group in groups:
            plugin = plugin_needed(codec, group.family)
            if plugin is None:
                found.readers += group.names
            else:
                entry = {"readers": list(group.names), "plugin": plugin.name, "hint": plugin.hint}
                found.plugins.append(entry)
        return found

    def lines(self) -> list[str]:
        """``readers: ...`` and a warning per plugin needed; empty for a format without readers."""
        lines = []
        if self.readers:
            lines.append(f"readers: {', '.join(self.readers)} open it without plugins")
        for need in self.plugins:  # the hint on a line of its own, to paste whole
            readers = ", ".join(need["readers"])
            lines.append(f"warning: {readers} open codec {self.codec} only with {need['plugin']}:")
            lines.append(f"  {need['hint']}")
        if self.plugins:
            lines.append("(--portable picks a codec every reader opens without plugins)")
        return lines

    def blocks(self, wanted: Iterable[str]) -> bool:
        """Whether a reader in ``wanted`` (or any, for ``all``) needs a plugin for the codec."""
        wanted = set(wanted)
        return any(ALL in wanted or wanted & set(n["readers"]) for n in self.plugins)

    def to_dict(self) -> dict[str, Any]:
        return {"codec": self.codec, "readers": self.readers, "plugins": self.plugins}


def readers_lines(readers: Mapping[str, Any] | None) -> list[str]:
    """:meth:`Readability.lines` of its ``to_dict`` form, after its ``note`` if it has one."""
    if not readers:
        return []
    found = Readability(readers["codec"], list(readers["readers"]), list(readers["plugins"]))
    note = readers.get("note")
    return [note, *found.lines()] if note else found.lines()


def check_reader_names(names: Iterable[str], known: Iterable[str]) -> tuple[str, ...]:
    """``names`` if each is ``all`` or a reader in ``known``.

    Raises
    ------
    RecommendError
        An unknown name; the message lists the allowed ones.
    """
    allowed = [ALL, *dict.fromkeys(known)]
    checked = tuple(names)
    for name in checked:
        if name not in allowed:
            raise RecommendError(
                f"--readers: {name!r} is not a reader; allowed: {', '.join(allowed)}"
            )
    return checked


def parse_readers(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """``"ncdump,h5netcdf"`` or a list -> a tuple of names (checked later against the formats)."""
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else list(value)
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise RecommendError(
            f"--readers: {value!r}; allowed: reader names separated by commas, or all"
        )
    return tuple(n.strip() for n in names)

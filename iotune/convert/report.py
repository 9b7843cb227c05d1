"""What a conversion changed: per variable chunks and codec, the size before and after.

One vocabulary for both sides: each variable's codec is read back from the file
(xarray's encoding of the source and of the target) and named as a spec names it
(:func:`iotune.model.codecs.codec_text`: ``zstd 4 in shards of 64x64x64``,
``zlib 4 + shuffle``, ``none``); a target's file-level properties by their knob names,
and only those that differ from the library's default (the backend's ``Knobs``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.convert.lossy import Tolerance
from iotune.convert.source import Source, source_chunks
from iotune.core.errors import NotApplicable
from iotune.core.units import chunk_label, format_duration, format_size
from iotune.model import parameters
from iotune.model.codec_names import codec_of_encoding, codec_text
from iotune.model.readers import readers_lines

if TYPE_CHECKING:
    import xarray as xr

#: a file property read back under another name than the knob that sets it
PROPERTY_KNOBS = {"file_space_page_size": "page_size"}


@dataclass
class ApplyReport:
    """A finished conversion; ``to_dict`` is its JSON form and :meth:`text` its report."""

    source: str
    target: str
    settings: str
    variables: list[dict[str, Any]] = field(default_factory=list)
    bytes_before: int = 0
    bytes_after: int = 0
    regions: int = 0
    regions_skipped: int = 0
    verify: str = "sample"
    regions_verified: int = 0
    seconds: float = 0.0
    #: the engine that ran and where (:mod:`iotune.convert.engines`)
    engine: str = ""
    #: a quantised layout's error limits (``Tolerance.to_dict``); None when lossless
    error_limit: dict[str, Any] | None = None
    #: an HDF5 target's file-level properties as read back, by knob name, where they
    #: differ from the library's default
    file_properties: dict[str, Any] | None = None
    #: ``finished``: a resumed apply found the conversion done and verified; ``measured``:
    #: the measurements after too (nothing was done again); empty for a conversion run now
    state: str = ""
    #: the read patterns timed on the source and the target after the conversion
    #: (:mod:`iotune.convert.after`); None when not measured
    after: dict[str, Any] | None = None
    #: who opens the target without plugins, who needs which (``Readability.to_dict``),
    #: and what ``--portable`` left out (``note``); None when not known
    readers: dict[str, Any] | None = None
    #: the knobs a reader sets, not the file, and the lines to set them (``Layout.reading_lines``)
    reading: list[str] = field(default_factory=list)
    #: the objective the settings were recommended for, and why when it was the default
    #: (:attr:`iotune.model.objective.Objective.said`); empty with ``--settings``
    objective: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        lines = [self._state()] if self.state else []
        lines += [f"applied {self.settings}", f"  {self.source} -> {self.target}"]
        if self.objective:
            lines.append(f"  objective: {self.objective}")
        for var in self.variables:
            lines.append(
                f"  {var['name']}: chunks {var['chunks_before']} -> {var['chunks_after']}, "
                f"codec {var['codec_before']} -> {var['codec_after']}"
            )
            if "max_abs_error" in var:
                lines.append(
                    f"    largest error {var['max_abs_error']:.3g} (relative "
                    f"{var['max_rel_error']:.3g}); allowed {var['error_allowed']}"
                )
        ratio = self.bytes_after / self.bytes_before if self.bytes_before else float("nan")
        lines.append(
            f"  size {format_size(self.bytes_before, exact=False)} -> "
            f"{format_size(self.bytes_after, exact=False)} ({ratio:.2f}x)"
        )
        if self.file_properties:
            shown = ", ".join(
                f"{k} {parameters.show(k, v)}" for k, v in self.file_properties.items()
            )
            lines.append(f"  HDF5 file: {shown}")
        resumed = f", {self.regions_skipped} already written" if self.regions_skipped else ""
        lines.append(
            f"  {_count(self.regions, 'region')}{resumed}; verify {self.verify}: "
            f"{_count(self.regions_verified, 'region')} "
            f"{'within the error' if self.error_limit else 'equal'}"
            f"; {format_duration(self.seconds)}"
        )
        lines += [f"  {line}" for line in self.reading]
        if self.engine:
            lines.append(f"  engine: {self.engine}")
        lines += [f"  {line}" for line in readers_lines(self.readers)]
        if self.after is not None:
            from iotune.convert.after import after_text

            lines += after_text(self.after)
        return "\n".join(lines)

    def _state(self) -> str:
        done = f"{self.target}: the conversion finished and was verified"
        if self.state == "measured":
            return f"{done}, and measured after; nothing to do"
        return done + ("; measured after now" if self.after is not None else "")


def describe(
    source: Source,
    target: Path | str,
    *,
    settings: str,
    converted: list[str],
    regions: int,
    storage: dict[str, tuple[Any, Any]],
    before: int,
    after: int,
    skipped: int,
    checked: int,
    verify_mode: str,
    seconds: float,
    tolerance: Tolerance | None = None,
    errors: dict[str, dict[str, float]] | None = None,
    file_properties: dict[str, Any] | None = None,
) -> ApplyReport:
    """The :class:`ApplyReport` of a finished conversion; ``storage`` as the target reports it.

    ``errors`` are the largest errors verification saw per quantised variable
    (:meth:`ErrorMeter.result`), within ``tolerance``.
    """
    variables: list[dict[str, Any]] = []
    written = _codecs_of(target, converted)
    for name in converted:
        var = source.ds[name].variable
        chunks, _ = storage[name]
        variables.append(
            {
                "name": name,
                "chunks_before": chunk_label(source_chunks(var)),
                "chunks_after": chunk_label(chunks) if not isinstance(chunks, str) else chunks,
                "codec_before": stored_codec(var),
                "codec_after": written[name],
            }
        )
        if tolerance is not None and name in (errors or {}):
            found = (errors or {})[name]
            variables[-1] |= {
                "max_abs_error": found["max_abs_error"],
                "max_rel_error": found["max_rel_error"],
                "error_allowed": f"{tolerance.label}: {tolerance.text()}",
            }
    return ApplyReport(
        source=source.label(),
        target=str(target),
        settings=settings,
        variables=variables,
        bytes_before=before,
        bytes_after=after,
        regions=regions,
        regions_skipped=skipped,
        verify=verify_mode,
        regions_verified=checked,
        seconds=round(seconds, 3),
        error_limit=tolerance.to_dict() if tolerance is not None else None,
        file_properties=_not_default(file_properties, settings) if file_properties else None,
    )


def stored_codec(var: xr.Variable) -> str:
    """A variable's codec as its file reports it, in iotune's words (and its Zarr shards)."""
    try:
        text = codec_text(codec_of_encoding(var.encoding))
    except NotApplicable as err:  # a compressor of the user's that iotune does not name
        text = str(err)
    shards = var.encoding.get("shards")
    return f"{text} in shards of {chunk_label(shards)}" if shards else text


def _codecs_of(target: Path | str, names: list[str]) -> dict[str, str]:
    """The converted variables' codecs, read back from the finished target as the source's."""
    from iotune.convert.opening import open_any

    opened = open_any(target)
    try:
        return {name: stored_codec(opened.ds[name].variable) for name in names}
    finally:
        opened.close()


def _not_default(found: dict[str, Any], settings: str) -> dict[str, Any]:
    """The file properties, by knob name, that the settings set or that differ from the
    default the backend's knobs declare (``None``: the library's own, not shown unless set)."""
    from iotune.backends import get_backend
    from iotune.convert.layout import parse_settings

    given = parse_settings(settings)
    knobs = get_backend(str(given["backend"])).knobs
    defaults = knobs.defaults() if knobs is not None else {}
    shown: dict[str, Any] = {}
    for prop, value in found.items():
        knob = PROPERTY_KNOBS.get(prop, prop)
        if knob not in defaults:
            continue  # how HDF5 records a knob (the page strategy of page_size), no knob
        default = defaults[knob]
        if knob in given or (default is not None and value != default):
            shown[knob] = value
    return shown


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

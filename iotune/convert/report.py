"""What a conversion changed: per variable chunks and codec, the size before and after."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iotune.convert.lossy import Tolerance
from iotune.convert.source import Source, source_chunks, source_codec
from iotune.core.units import chunk_label, format_duration, format_size


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
    #: an HDF5 target's file-level properties as the library applied them
    file_properties: dict[str, Any] | None = None
    #: the read patterns timed on the source and the target after the conversion
    #: (:mod:`iotune.convert.after`); None when not measured
    after: dict[str, Any] | None = None
    #: the objective the settings were recommended for, and why when it was the default
    #: (:attr:`iotune.model.objective.Objective.said`); empty with ``--settings``
    objective: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        lines = [f"applied {self.settings}", f"  {self.source} -> {self.target}"]
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
            shown = ", ".join(f"{k} {v}" for k, v in self.file_properties.items())
            lines.append(f"  HDF5 file: {shown}")
        resumed = f", {self.regions_skipped} already written" if self.regions_skipped else ""
        lines.append(
            f"  {_count(self.regions, 'region')}{resumed}; verify {self.verify}: "
            f"{_count(self.regions_verified, 'region')} "
            f"{'within the error' if self.error_limit else 'equal'}"
            f"; {format_duration(self.seconds)}"
        )
        if self.engine:
            lines.append(f"  engine: {self.engine}")
        if self.after is not None:
            from iotune.convert.after import after_text

            lines += after_text(self.after)
        return "\n".join(lines)


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
    for name in converted:
        var = source.ds[name].variable
        chunks, codec = storage[name]
        variables.append(
            {
                "name": name,
                "chunks_before": chunk_label(source_chunks(var)),
                "chunks_after": chunk_label(chunks) if not isinstance(chunks, str) else chunks,
                "codec_before": source_codec(var),
                "codec_after": _codec_text(codec),
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
        file_properties=file_properties,
    )


def _codec_text(codec: Any) -> str:
    if isinstance(codec, dict):  # netCDF4-python's filters()
        on = [k for k in ("zlib", "zstd", "bzip2", "blosc", "szip") if codec.get(k)]
        if not on:
            return "none"
        text = f"{on[0]} {codec.get('complevel')}"
        return text + (" +shuffle" if codec.get("shuffle") else "")
    return "+".join(codec) or "none"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

"""What a conversion changed: per variable chunks and codec, the size before and after."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iotune.convert.source import Source, source_chunks, source_codec
from iotune.core.units import chunk_label, format_size


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        lines = [f"applied {self.settings}", f"  {self.source} -> {self.target}"]
        for var in self.variables:
            lines.append(
                f"  {var['name']}: chunks {var['chunks_before']} -> {var['chunks_after']}, "
                f"codec {var['codec_before']} -> {var['codec_after']}"
            )
        ratio = self.bytes_after / self.bytes_before if self.bytes_before else float("nan")
        lines.append(
            f"  size {format_size(self.bytes_before, exact=False)} -> "
            f"{format_size(self.bytes_after, exact=False)} ({ratio:.2f}x)"
        )
        resumed = f", {self.regions_skipped} already written" if self.regions_skipped else ""
        lines.append(
            f"  {self.regions} regions{resumed}; verify {self.verify}: "
            f"{self.regions_verified} regions equal; {self.seconds:.1f} s"
        )
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
) -> ApplyReport:
    """The :class:`ApplyReport` of a finished conversion; ``storage`` as the target reports it."""
    variables = []
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
    return ApplyReport(
        source=source.url or str(source.path),
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
    )


def _codec_text(codec: Any) -> str:
    if isinstance(codec, dict):  # netCDF4-python's filters()
        on = [k for k in ("zlib", "zstd", "bzip2", "blosc", "szip") if codec.get(k)]
        if not on:
            return "none"
        text = f"{on[0]} {codec.get('complevel')}"
        return text + (" +shuffle" if codec.get("shuffle") else "")
    return "+".join(codec) or "none"

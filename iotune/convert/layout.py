"""The storage configuration a conversion writes: format, chunks and codec.

Made from a recommendation's settings (a results file's ``effective`` mapping) or
from the text of ``--settings`` (``"chunks=1x256x256 codec=zstd level=3"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iotune.backends import backend_names, get_backend
from iotune.backends.target import TargetWriter
from iotune.convert.lossy import parse_quantize
from iotune.core.errors import NotApplicable, UsageError
from iotune.core.units import chunk_label, parse_chunk_label
from iotune.model import parameters
from iotune.model.codecs import Codec, resolve
from iotune.model.quantize import Quantize

#: the knobs a Layout holds in fields of its own; every other knob is in ``settings``
LAYOUT_KNOBS = ("chunks", "codec", "level", "shuffle", "quantize")


def writable() -> tuple[str, ...]:
    """The registered formats ``apply`` writes: those whose backend has a target writer."""
    return tuple(n for n in backend_names() if get_backend(n).apply_target() is not None)


def writer_of(backend: str) -> type[TargetWriter]:
    """The target writer of format ``backend``.

    Raises
    ------
    UsageError
        ``backend`` is not registered, or cannot be written; the message lists those
        that can.
    """
    allowed = ", ".join(writable())
    if backend not in backend_names():
        raise UsageError(f"backend: {backend!r} is not registered; apply writes {allowed}")
    found = get_backend(backend).apply_target()
    if found is None:
        raise UsageError(f"backend: {backend!r} cannot be written; allowed: {allowed}")
    return found


def source_format(*, store: bool) -> str:
    """The format that reads a source: a store of objects (Zarr), else one file (netCDF4)."""
    for name in writable():
        writer = writer_of(name)
        if writer.object_store if store else writer.default_target:
            return name
    raise UsageError("no registered format reads this source")


def knob_names(backend: str) -> tuple[str, ...]:
    """The knobs of format ``backend``, as its backend declares them."""
    cls = get_backend(backend)
    return cls.knobs.names() if cls.knobs is not None else tuple(cls.parameters)


@dataclass(frozen=True)
class Layout:
    """Format, chunks (``contiguous``, ``auto`` or one length per dimension), codec, settings.

    ``dims`` names the dimensions ``chunks`` is given in (the workload's), empty when
    unknown (then chunks apply to the converted variables' dimensions in order).
    ``settings`` are the format's other knobs (``shards``, ``fill``, ``page_size``...)
    as ``(name, value)`` pairs, checked against the backend's knobs and its writer.
    """

    backend: str
    chunks: str | tuple[int, ...]
    codec: Codec
    dims: tuple[str, ...] = ()
    #: a lossy quantisation (``bitround:10``, ``digits:3``; ``off``): see convert/lossy.py
    quantize: str = "off"
    settings: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "quantize", parse_quantize(self.quantize).label)
        writer = writer_of(self.backend)
        knobs = knob_names(self.backend)
        for key, _ in self.settings:
            if key not in knobs or key in LAYOUT_KNOBS:
                raise UsageError(
                    f"{key}: not a knob of backend {self.backend}; its knobs: {', '.join(knobs)}"
                )
        if isinstance(self.chunks, str) and self.chunks not in ("contiguous", "auto"):
            raise UsageError(f"chunks: {self.chunks!r}; allowed: contiguous, auto or 1x256x256")
        if isinstance(self.chunks, tuple):
            if any(c < 1 for c in self.chunks):
                raise UsageError(f"chunks: {chunk_label(self.chunks)} has a length below 1")
            if self.dims and len(self.dims) != len(self.chunks):
                raise UsageError(
                    f"chunks: {chunk_label(self.chunks)} has {len(self.chunks)} lengths "
                    f"for the {len(self.dims)} dimensions {', '.join(self.dims)}"
                )
        if self.lossy.lossy and "quantize" not in writer.carried:
            raise UsageError(f"quantize {self.quantize}: {self.backend} cannot quantise")
        try:
            writer.check(self.mapping(), self.chunks, self.codec)
        except NotApplicable as err:
            raise UsageError(f"backend {self.backend}: {err}") from err

    @property
    def writer(self) -> type[TargetWriter]:
        """The format's target writer."""
        return writer_of(self.backend)

    def mapping(self) -> dict[str, Any]:
        """``settings`` as a dict, with the quantisation (the writer's view)."""
        return dict(self.settings) | {"quantize": self.quantize}

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (a multiple of ``chunks``), None for none."""
        found = dict(self.settings).get("shards")
        return None if found is None or found == "none" else tuple(found)

    def reading(self) -> dict[str, Any]:
        """The reader-side knobs of the settings: set when the target is read, not in it."""
        return {k: v for k, v in self.settings if k in self.writer.reader_side}

    def reading_lines(self) -> list[str]:
        """``set when reading: ...`` for the knobs a reader sets, then the lines that set them.

        A chunk cache or a client's concurrency belongs to whoever opens the target, so
        apply names it with the code to use instead of dropping it.
        """
        lines = []
        found = self.reading()
        if found:
            shown = ", ".join(f"{k} {parameters.show(k, v)}" for k, v in found.items())
            code = self.writer.reader_lines(dict(self.settings))
            lines += [f"set when reading (not stored in the file): {shown}"]
            lines += [f"  {c}" for c in code]
        unused = self.not_written()
        if unused:
            shown = ", ".join(f"{k} {parameters.show(k, v)}" for k, v in unused.items())
            lines.append(f"not part of the target (how the sweep ran): {shown}")
        return lines

    def not_written(self) -> dict[str, Any]:
        """Knobs of how the sweep ran (processes, hints) that no file carries nor reader sets."""
        writer = self.writer
        known = (*writer.carried, *writer.reader_side)
        return {k: v for k, v in self.settings if k not in known}

    def written(self) -> dict[str, Any]:
        """The settings the target's writer applies."""
        return {k: v for k, v in self.settings if k in self.writer.carried}

    @property
    def lossy(self) -> Quantize:
        """The quantisation, ``Quantize()`` (off) for lossless settings."""
        return parse_quantize(self.quantize)

    def shards_for(self, dims: Sequence[str], shape: Sequence[int]) -> tuple[int, ...] | None:
        """The shard shape of a variable: no longer than the whole chunks that cover it."""
        if self.shards is None or isinstance(self.chunks, str):
            return None
        chunks = self.chunks_for(dims, shape)
        assert isinstance(chunks, tuple)  # explicit chunks: checked at construction
        return tuple(
            min(s, -(-n // c) * c) for c, s, n in zip(chunks, self.shards, shape, strict=True)
        )

    def chunks_for(self, dims: Sequence[str], shape: Sequence[int]) -> tuple[int, ...] | str:
        """The chunk lengths of a variable of ``dims`` and ``shape``, clipped to its shape."""
        if isinstance(self.chunks, str):
            return self.chunks
        if self.dims and tuple(dims) == self.dims:
            lengths = self.chunks
        elif len(dims) == len(self.chunks):
            lengths = self.chunks  # positional: the variable's names differ from the workload's
        else:
            raise UsageError(
                f"chunks: {chunk_label(self.chunks)} does not fit a variable of dimensions "
                f"({', '.join(dims)})"
            )
        return tuple(max(1, min(c, n)) for c, n in zip(lengths, shape, strict=True))

    def text(self) -> str:
        """The configuration as ``--settings`` takes it."""
        parts = [f"backend={self.backend}", f"chunks={chunk_label(self.chunks)}"]
        parts.append(f"codec={self.codec.name}")
        if self.codec.level is not None:
            parts.append(f"level={self.codec.level}")
        if self.codec.shuffle != "none":
            parts.append(f"shuffle={self.codec.shuffle}")
        if self.lossy.lossy:
            parts.append(f"quantize={self.quantize}")
        parts += [f"{k}={_show(k, v)}" for k, v in self.settings]
        return " ".join(parts)


def _show(name: str, value: Any) -> str:
    return chunk_label(value) if isinstance(value, tuple) else parameters.show(name, value)


def default_format(target: Path) -> str:
    """The format a ``--settings`` configuration writes to ``target``: by its suffix, else
    the writer that is every other target's (netCDF4)."""
    found = [n for n in writable() if target.suffix in writer_of(n).suffixes]
    fallback = [n for n in writable() if writer_of(n).default_target]
    return (found or fallback)[0]


def parse_settings(text: str, *, backend: str | None = None) -> dict[str, Any]:
    """``"chunks=1x256x256 codec=zstd level=3"`` as a settings mapping.

    The keys are ``backend`` and the knobs of the format (``backend=`` in ``text``, else
    ``backend``; without either, of any format apply writes).
    """
    items = [item.partition("=") for item in text.replace(",", " ").split()]
    named = next((v for k, sep, v in items if k == "backend" and sep), None) or backend
    formats = (named,) if named in backend_names() else writable()
    allowed = ("backend", *dict.fromkeys(k for f in formats for k in knob_names(f)))
    settings: dict[str, Any] = {}
    for key, sep, value in items:
        if not sep or key not in allowed:
            which = f"a knob of {named}" if named in backend_names() else "a knob apply writes"
            shape = f"{key!r} is not {which}" if sep else f"{key!r} is not KEY=VALUE"
            raise UsageError(f"--settings: {shape}; KEY one of {', '.join(allowed)}")
        if key == "shards" and value == "none":
            settings[key] = value
        elif key in ("chunks", "shards"):
            try:
                settings[key] = parse_chunk_label(value)
            except ValueError as err:
                raise UsageError(f"--settings: {key}={value!r} is not AxBxC") from err
        elif key == "level":
            try:
                settings[key] = int(value)
            except ValueError as err:
                raise UsageError(f"--settings: level={value!r} is not an integer") from err
        else:
            settings[key] = _scalar(value)
    return settings


def _scalar(value: str) -> Any:
    """A ``--settings`` value as a spec's YAML reads it: numbers as numbers, true/false as
    booleans, anything else (``64MiB``, ``on``, ``start``) as text for the knob's parser."""
    switch = {"true": True, "false": False}.get(value.lower())
    if switch is not None:
        return switch
    for number in (int, float):
        try:
            return number(value)
        except ValueError:
            continue
    return value


def layout_of(
    settings: Mapping[str, Any],
    *,
    dims: Sequence[str] = (),
    backend: str | None = None,
    strict: bool = True,
) -> Layout:
    """The :class:`Layout` of a recommendation's (or ``--settings``') mapping.

    Every knob of the format in ``settings`` is parsed as a spec parses it (sizes like
    ``64KiB``) and kept; a key that is no knob of the format is refused (``strict``,
    ``--settings``) or left out (a recommendation's run-level parameters).

    Raises
    ------
    UsageError
        A setting that cannot be written (an unknown knob, codec or level, a value
        out of range, knobs the format cannot combine).
    """
    chunks = settings.get("chunks", "auto")
    if isinstance(chunks, str):
        chunks = parse_chunk_label(chunks)
    elif isinstance(chunks, Sequence):
        chunks = tuple(int(c) for c in chunks)
    try:
        codec, _ = resolve(
            settings.get("codec") or "none", settings.get("level"), settings.get("shuffle")
        )
    except (NotApplicable, ValueError, KeyError) as err:
        raise UsageError(f"codec: {err}") from err
    chosen = str(backend or settings.get("backend") or default_format(Path()))
    writer_of(chosen)
    knobs = knob_names(chosen)
    extra = [k for k in settings if k not in knobs and k != "backend"]
    if strict and extra:
        raise UsageError(
            f"{extra[0]}: not a knob of backend {chosen}; its knobs: {', '.join(knobs)}"
        )
    quantize = str(settings.get("quantize") or "off")
    given = tuple(
        (k, _parsed(k, settings[k]))
        for k in knobs
        if k not in LAYOUT_KNOBS and settings.get(k) is not None
    )
    found = tuple((k, v) for k, v in given if v is not None)
    return Layout(chosen, chunks, codec, tuple(dims), quantize, found)


def _parsed(key: str, value: Any) -> Any:
    """A knob's value as a spec parses it; ``shards`` as lengths, None for ``none``."""
    if key == "shards":
        if isinstance(value, str):
            value = None if value == "none" else parse_chunk_label(value)
        if isinstance(value, str):
            raise UsageError(f"shards: {value!r}; allowed: none or AxBxC")
        return None if value is None else tuple(int(n) for n in value)
    # a SpecError is a UsageError: one line naming the knob, the value and what is allowed
    return parameters.get(key).parse(value, key, None)  # type: ignore[arg-type]


def check_dtype(layout: Layout, dtype: Any, name: str) -> None:
    """Refuse a configuration that does not apply to a variable's dtype."""
    import numpy as np

    kind = np.dtype(dtype).kind
    if kind not in "biuf":
        raise UsageError(f"{name}: dtype {np.dtype(dtype)} cannot be converted (allowed: numbers)")
    if layout.codec.info.family == "blosc" and np.dtype(dtype).itemsize > 255:
        raise UsageError(f"{name}: blosc does not apply to items of {np.dtype(dtype).itemsize} B")

"""The Zarr exports: xarray's Zarr v3 encoding, zarr's config and ``create_array``.

The encoding is offered for every chunked format (:mod:`iotune.backends.layout_exports`);
the configuration and ``create_array`` calls only for the zarr backend, whose knobs
they carry.  A knob a tool cannot express raises
:class:`~iotune.core.errors.NotApplicable` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target, chunk_shape, codec_of
from iotune.core.errors import NotApplicable
from iotune.core.units import parse_chunk_label
from iotune.model import codecs, quantize


def zarr_compressors(settings: Mapping[str, Any], target: Target) -> list[dict[str, Any]]:
    """The Zarr v3 ``compressors`` as codec metadata (``{"name", "configuration"}``)."""
    calls = codecs.zarr_codecs(codec_of(settings), itemsize=target.itemsize)
    return [call.zarr_metadata() for call in calls]


def xarray_zarr_encoding(settings: Mapping[str, Any], target: Target) -> dict[str, Any]:
    """``encoding=`` for ``Dataset.to_zarr(zarr_format=3)`` with codecs as metadata dicts.

    :func:`zarr_encoding_code` gives the same with zarr codec objects, to paste.
    """
    encoding: dict[str, Any] = {"compressors": zarr_compressors(settings, target)}
    chunks = chunk_shape(settings)
    if chunks == "contiguous":
        encoding["chunks"] = list(target.shape)
    elif chunks != "auto":
        encoding["chunks"] = list(chunks)
    shards = settings.get("shards")
    if shards not in (None, "none"):
        encoding["shards"] = list(parse_chunk_label(str(shards)))
    lossy = quantize.zarr_filters(quantize.Quantize.from_params(settings))
    if lossy:
        encoding["filters"] = [f.to_dict() for f in lossy]
    return {target.variable: encoding}


def zarr_encoding_code(settings: Mapping[str, Any], target: Target) -> str:
    """Python that builds the Zarr encoding with the zarr backend's own codec objects."""
    (encoding,) = xarray_zarr_encoding(settings, target).values()
    calls = codecs.zarr_codecs(codec_of(settings), itemsize=target.itemsize)
    made = [call.code() for call in calls]
    parts = [
        f"{k!r}: {tuple(v)!r}" for k, v in encoding.items() if k not in ("compressors", "filters")
    ]
    if "filters" in encoding:
        parts.append(f"'filters': {encoding['filters']!r}")
    parts.append(f"'compressors': ({', '.join(made)}{',' if len(made) == 1 else ''})")
    return f"import zarr\nencoding = {{{target.variable!r}: {{{', '.join(parts)}}}}}"


def zarr_config_code(settings: Mapping[str, Any]) -> str:
    """``zarr.config.set`` for async concurrency and writing empty chunks."""
    config: dict[str, Any] = {}
    if settings.get("request_concurrency") is not None:
        config["async.concurrency"] = int(settings["request_concurrency"])
    if settings.get("write_empty_chunks"):
        config["array.write_empty_chunks"] = settings["write_empty_chunks"] == "on"
    if not config:
        raise NotApplicable("the sweep set no zarr configuration")
    return f"import zarr\nzarr.config.set({config!r})"


def zarr_array_code(settings: Mapping[str, Any], target: Target) -> str:
    """``zarr.create_array`` with every array-level knob: chunks, shards and their index
    location, compressors and quantising filters (the config knobs: :func:`zarr_config_code`).
    """
    q = quantize.Quantize.from_params(settings)
    if not q.lossy and not settings.get("shard_index"):
        raise NotApplicable("neither quantisation nor a shard index location was set")
    args = ["store", f"shape={tuple(target.shape)}", f"dtype={target.dtype!r}"]
    return (
        "import zarr\nimport zarr.codecs.numcodecs\narr = zarr.create_array("
        + ", ".join(args + array_keywords(settings, target))
        + ")"
    )


def array_keywords(settings: Mapping[str, Any], target: Target) -> list[str]:
    """``create_array``'s keywords, as code, for chunks, shards (with their index location),
    compressors and quantising filters; the codecs are ``zarr.codecs`` (and
    ``zarr.codecs.numcodecs``) objects."""
    q = quantize.Quantize.from_params(settings)
    index = settings.get("shard_index")
    args = []
    chunks = chunk_shape(settings)
    if chunks != "auto":
        args.append(f"chunks={tuple(target.shape if chunks == 'contiguous' else chunks)}")
    if settings.get("shards") not in (None, "none"):
        shape = parse_chunk_label(str(settings["shards"]))
        # zarr takes a mapping only with the index location, else the shape
        shards = f"{{'shape': {shape}, 'index_location': {index!r}}}" if index else f"{shape}"
        args.append(f"shards={shards}")
    made = [
        call.code() for call in codecs.zarr_codecs(codec_of(settings), itemsize=target.itemsize)
    ]
    args.append(f"compressors=({', '.join(made)}{',' if len(made) == 1 else ''})")
    if q.lossy:
        (lossy,) = quantize.zarr_filters(q)
        args.append(
            f"filters=[zarr.codecs.numcodecs.{type(lossy).__name__}(**{lossy.codec_config!r})]"
        )
    return args


def zarr_loader_open(target: Target) -> tuple[str, list[str]]:
    """A loader worker's zarr open of the array in the store's group."""
    return "import zarr", [
        f'self._array = zarr.open_array(self.path, path={target.variable!r}, mode="r")'
    ]

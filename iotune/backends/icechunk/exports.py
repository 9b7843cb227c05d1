"""The icechunk backend's export: the Python that writes one point's repository and reads it.

The code stands alone (Icechunk, zarr, NumPy; no iotune): ``values`` is the user's
array, written as the variable into ``VARIABLE.icechunk`` (a new local directory) in one
commit, with the point's chunks, shards, codecs and repository configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target
from iotune.backends.zarr.exports import array_keywords


def config_lines(settings: Mapping[str, Any]) -> list[str]:
    """The lines that build ``config``, Icechunk's ``RepositoryConfig`` of the knobs set."""
    lines = ["config = icechunk.RepositoryConfig.default()"]
    fields = {
        "inline_chunk_threshold_bytes": settings.get("inline_chunk_threshold"),
        "max_concurrent_requests": settings.get("max_concurrent_requests"),
    }
    lines += [f"config.{k} = {int(v)}" for k, v in fields.items() if v is not None]
    if settings.get("chunk_cache") is not None:
        cache = int(settings["chunk_cache"])
        lines.append(f"config.caching = icechunk.CachingConfig(num_bytes_chunks={cache})")
    split, preload = settings.get("manifest_split"), settings.get("manifest_preload")
    if split is None and preload is None:
        return lines
    parts = []
    if preload is not None:
        condition = "true" if preload == "on" else "false"
        parts.append(
            "preload=icechunk.ManifestPreloadConfig("
            f"preload_if=icechunk.ManifestPreloadCondition.{condition}())"
        )
    if split is not None:
        parts.append(
            "splitting=icechunk.ManifestSplittingConfig.from_dict("
            "{icechunk.ManifestSplitCondition.AnyArray(): "
            f"{{icechunk.ManifestSplitDimCondition.Axis(0): {int(split)}}}}})"
        )
    lines.append("config.manifest = icechunk.ManifestConfig(")
    lines += [f"    {part}," for part in parts]
    lines.append(")")
    return lines


def icechunk_code(settings: Mapping[str, Any], target: Target) -> str:
    """Python that writes ``values`` into a new repository as the point and opens it again."""
    var = target.variable
    keywords = [
        f"shape={tuple(target.shape)}",
        f"dtype={target.dtype!r}",
        *array_keywords(settings, target),
        f"dimension_names={tuple(target.dims)!r}",
    ]
    return "\n".join(
        [
            "import icechunk",
            "import zarr",
            "import zarr.codecs.numcodecs",
            "",
            *config_lines(settings),
            f'storage = icechunk.local_filesystem_storage("{var}.icechunk")',
            "repo = icechunk.Repository.create(storage, config=config)",
            'session = repo.writable_session("main")',
            'group = zarr.open_group(session.store, mode="w", zarr_format=3)',
            f"array = group.create_array({var!r}, " + ", ".join(keywords) + ")",
            "array[...] = values",
            f'session.commit("{var} written")',
            "",
            "# reading: the repository keeps its configuration",
            "repo = icechunk.Repository.open(storage)",
            'store = repo.readonly_session("main").store',
            f'{var} = zarr.open_array(store, path={var!r}, mode="r")',
        ]
    )

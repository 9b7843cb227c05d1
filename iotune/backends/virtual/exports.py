"""The virtual backend's exports: VirtualiZarr's lines that build one point's references."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target

_BUILD = {
    "kerchunk-json": 'vds.vz.to_kerchunk("refs.json", format="json")',
    "kerchunk-parquet": 'vds.vz.to_kerchunk("refs.parq", format="parquet")',
    "icechunk": (
        'repo = icechunk.Repository.create(icechunk.local_filesystem_storage("refs.icechunk"),'
        "\n    config=config, authorize_virtual_chunk_access=credentials)"
        '\nsession = repo.writable_session("main")\nvds.vz.to_icechunk(session.store)'
        '\nsession.commit("virtual references")'
    ),
}


def virtualizarr_code(settings: Mapping[str, Any], target: Target) -> str:
    """Python that references the source's files and opens ``target`` through them.

    The kerchunk forms inline chunks below ``inline_threshold`` as kerchunk's own
    translators do; the Icechunk form needs its virtual chunk container (``config``)
    and credentials for the sources' directory, named in the comment.
    """
    form = str(settings.get("reference") or "kerchunk-json")
    lines = [
        "from obspec_utils.registry import ObjectStoreRegistry",
        "from obstore.store import LocalStore",
        "from virtualizarr import open_virtual_mfdataset",
        "from virtualizarr.parsers import HDFParser",
        "",
        "urls = [p.resolve().as_uri() for p in sorted(SOURCES)]",
        'registry = ObjectStoreRegistry({"file://": LocalStore()})',
        "vds = open_virtual_mfdataset(",
        '    urls, registry=registry, parser=HDFParser(), combine="by_coords"',
        ")",
    ]
    threshold = settings.get("inline_threshold")
    if form != "icechunk" and threshold:
        lines.append(
            f"# inline chunks under {threshold} bytes: kerchunk.utils.do_inline(refs, {threshold})"
        )
    if form == "icechunk":
        lines.append("# config: a VirtualChunkContainer for the sources' directory (file://...)")
    lines.append(_BUILD[form])
    chunks = settings.get("dask_chunks")
    if chunks is not None:
        lines.append(f"# read with xarray, dask_chunks={chunks!r}: {target.variable!r}")
    return "\n".join(lines)

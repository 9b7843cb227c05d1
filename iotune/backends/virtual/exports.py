"""The virtual backend's exports: the Python that builds one point's references and opens them.

The code stands alone (VirtualiZarr, kerchunk, Icechunk, xarray; no iotune): ``SOURCE``
is the user's file or glob, as the workload's ``path``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.backends.exports_base import Target

_OPEN = [
    "import glob",
    "from pathlib import Path",
    "",
    "import xarray as xr",
    "from obspec_utils.registry import ObjectStoreRegistry",
    "from obstore.store import LocalStore",
    "from virtualizarr import open_virtual_mfdataset",
    "from virtualizarr.parsers import HDFParser",
    "",
    "files = [Path(p).resolve() for p in sorted(glob.glob(SOURCE))]",
    'registry = ObjectStoreRegistry({"file://": LocalStore()})',
    "vds = open_virtual_mfdataset(",
    '    [p.as_uri() for p in files], registry=registry, parser=HDFParser(), combine="by_coords"',
    ")",
]

_INLINE = [
    "import base64",
    "",
    "for key, ref in list(refs['refs'].items()):  # chunks under {threshold} bytes copied in",
    "    if isinstance(ref, list) and len(ref) == 3 and ref[2] < {threshold}:",
    "        with open(ref[0].removeprefix('file://'), 'rb') as f:",
    "            f.seek(ref[1])",
    "            refs['refs'][key] = 'base64:' + base64.b64encode(f.read(ref[2])).decode()",
]

_ICECHUNK = [
    "import os",
    "",
    "import icechunk",
    "",
    "folder = os.path.commonpath([str(p.parent) for p in files])",
    'prefix = Path(folder).as_uri().rstrip("/") + "/"',
    "config = icechunk.RepositoryConfig.default()",
    "config.set_virtual_chunk_container(",
    "    icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(folder))",
    ")",
    "credentials = icechunk.containers_credentials({{prefix: None}})",
    'storage = icechunk.local_filesystem_storage("refs.icechunk")',
    "repo = icechunk.Repository.create(",
    "    storage, config=config, authorize_virtual_chunk_access=credentials",
    ")",
    'session = repo.writable_session("main")',
    "vds.vz.to_icechunk(session.store)",
    'session.commit("virtual references")',
    "",
    "repo = icechunk.Repository.open(storage, authorize_virtual_chunk_access=credentials)",
    'store = repo.readonly_session("main").store',
    "ds = xr.open_zarr(store, consolidated=False, chunks={chunks})",
]


def virtualizarr_code(settings: Mapping[str, Any], target: Target) -> str:
    """Python that references ``SOURCE``'s files in the point's form and opens them with xarray.

    The kerchunk forms copy chunks under ``inline_threshold`` into the references
    (base64), as kerchunk's ``inline_threshold`` does; Icechunk's virtual chunks need a
    container for the sources' directory and credentials that authorise it.
    """
    form = str(settings.get("reference") or "kerchunk-json")
    chunks = _chunks(settings.get("dask_chunks"))
    lines = list(_OPEN)
    if form == "icechunk":
        lines += ["", *(line.format(chunks=chunks) for line in _ICECHUNK)]
    else:
        lines += ["", 'refs = vds.vz.to_kerchunk(format="dict")']
        threshold = settings.get("inline_threshold")
        if threshold:
            lines += ["", *(line.format(threshold=int(threshold)) for line in _INLINE)]
        lines += ["", *_write_kerchunk(form == "kerchunk-parquet", chunks)]
    lines.append(f"{target.variable} = ds[{target.variable!r}]")
    return "\n".join(lines)


def _write_kerchunk(parquet: bool, chunks: str) -> list[str]:
    if parquet:
        write = [
            "from kerchunk.df import refs_to_dataframe",
            "",
            'refs_to_dataframe(refs, "refs.parq")',
        ]
        fo = "refs.parq"
    else:
        write = ["import json", "", 'Path("refs.json").write_text(json.dumps(refs))']
        fo = "refs.json"
    options = f'{{"fo": "{fo}", "remote_protocol": "file"}}'
    return [
        *write,
        "ds = xr.open_dataset(",
        '    "reference://", engine="zarr", chunks=' + chunks + ",",
        f'    backend_kwargs={{"consolidated": False, "storage_options": {options}}},',
        ")",
    ]


def _chunks(label: object) -> str:
    """``chunks=`` of the open: None without dask, ``{}`` for the stored chunks, a mapping."""
    if label is None or label == "none":
        return "None"
    if label == "storage":
        return "{}"
    if label == "auto":
        return '"auto"'
    pairs = (item.partition("=") for item in str(label).split(","))
    return repr({dim: int(n) for dim, _, n in pairs})

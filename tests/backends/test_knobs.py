"""Every built-in backend declares its knobs once: a Knobs dataclass gives its parameters."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from iotune.backends import BUILTINS, get_backend
from iotune.backends.knobs import Knobs, combined
from iotune.backends.mpiio.knobs import MpiioKnobs
from iotune.backends.zarr.knobs import ZarrKnobs
from iotune.core.errors import UsageError
from iotune.model import parameters
from iotune.specfile.parse import load_spec_text

#: each built-in's parameters before the Knobs dataclasses: sweeps and results files name
#: them, and listings show them, in this order (then dask_chunks and dask_threads, the
#: xarray reads' knobs, added after)
PARAMETERS = {
    "netcdf4": (
        "chunks", "codec", "level", "shuffle", "chunk_cache", "nprocs", "fill", "format",
        "quantize", "alignment", "alignment_threshold", "cache_slots", "cache_preemption",
        "dask_chunks", "dask_threads",
    ),
    "h5py": (
        "chunks", "codec", "level", "shuffle", "chunk_cache", "nprocs", "io", "hints",
        "stripe_count", "stripe_size", "cb_nodes", "cb_buffer_size", "stripe_count_hint",
        "stripe_size_hint", "alignment", "alignment_threshold", "meta_block_size",
        "sieve_buf_size", "libver", "page_size", "page_buffer", "fill_time", "alloc_time",
        "cache_slots", "cache_preemption", "dask_chunks", "dask_threads",
    ),
    "zarr": (
        "chunks", "shards", "codec", "level", "shuffle", "chunk_cache", "request_concurrency",
        "write_empty_chunks", "shard_index", "quantize", "dask_chunks", "dask_threads",
    ),
    "posix": ("transfer_size", "preallocate", "direct", "fadvise", "sync"),
    "memory": ("chunks", "codec", "level", "shuffle"),
    "mpiio": (
        "nprocs", "transfer_size", "bytes_per_rank", "layout", "io", "access", "hints",
        "stripe_count", "stripe_size", "cb_nodes", "cb_buffer_size", "stripe_count_hint",
        "stripe_size_hint",
    ),
    "object": ("part_size", "request_concurrency", "coalesce"),
    "zarr-object": (
        "chunks", "shards", "codec", "level", "shuffle", "chunk_cache", "write_empty_chunks",
        "shard_index", "quantize", "dask_chunks", "dask_threads", "client",
        "request_concurrency", "consolidated",
    ),
    "hdf5-object": (
        "chunks", "codec", "level", "shuffle", "chunk_cache", "alignment",
        "alignment_threshold", "meta_block_size", "libver", "page_size", "page_buffer",
        "fill_time", "alloc_time", "cache_slots", "cache_preemption", "dask_chunks",
        "dask_threads", "cache_type", "read_block_size", "part_size", "request_concurrency",
    ),
    "netcdf4-object": (
        "chunks", "codec", "level", "shuffle", "chunk_cache", "fill", "format", "quantize",
        "alignment", "alignment_threshold", "cache_slots", "cache_preemption", "dask_chunks",
        "dask_threads", "cache_type", "read_block_size", "part_size", "request_concurrency",
    ),
    "virtual": ("reference", "inline_threshold", "dask_chunks", "dask_threads"),
    "icechunk": (
        "chunks", "shards", "codec", "level", "shuffle", "request_concurrency",
        "write_empty_chunks", "shard_index", "quantize", "dask_chunks", "dask_threads",
        "inline_chunk_threshold", "manifest_split", "manifest_preload",
        "max_concurrent_requests", "chunk_cache",
    ),
    "inplace": ("engine", "dask_chunks", "dask_threads"),
}  # fmt: skip


def test_every_builtin_is_pinned() -> None:
    assert set(PARAMETERS) == set(BUILTINS)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_builtins_parameters_are_its_knobs(name: str) -> None:
    backend = get_backend(name)
    knobs = backend.knobs
    assert isinstance(knobs, type) and issubclass(knobs, Knobs), knobs
    assert backend.parameters == knobs.names() == PARAMETERS[name]
    assert list(knobs.defaults()) == list(knobs.names())
    knobs()  # every field is a registered parameter


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_builtins_defaults_are_values_a_spec_may_give(name: str) -> None:
    knobs = get_backend(name).knobs
    assert knobs is not None
    workload = load_spec_text("version: 1\nworkload: {shape: {time: 8, y: 64, x: 64}}\n").workload
    for knob, default in knobs.defaults().items():
        if default is None:  # the library's own choice, which iotune does not name
            continue
        parsed = parameters.get(knob).parse(default, f"{name}.{knob}", workload)
        assert parsed == default, (knob, default, parsed)


def test_combined_knobs_take_the_library_s_then_their_own() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Store(Knobs):
        client: str = "fsspec"
        request_concurrency: int = 3

    made = combined("Made", ZarrKnobs, Store, without=("shards",), module=__name__, doc="d.")
    names = [n for n in ZarrKnobs.names() if n not in ("shards", "request_concurrency")]
    assert made.names() == (*names, "client", "request_concurrency")
    # a name in both moves to the backend's place with the backend's default
    assert made.default("request_concurrency") == 3
    assert made.default("chunks") == ZarrKnobs.default("chunks")
    assert made.__doc__ == "d." and made.__module__ == __name__
    knobs = made.of({"client": "obstore", "level": None})
    assert knobs.client == "obstore" and knobs.level is None  # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError):
        knobs.client = "fsspec"  # type: ignore[attr-defined]


def test_a_default_is_asked_by_a_name_the_knobs_have() -> None:
    assert MpiioKnobs.default("access") == "contiguous"
    with pytest.raises(KeyError, match="MpiioKnobs has no knob 'chunks'; knobs: nprocs"):
        MpiioKnobs.default("chunks")


def test_combined_knobs_check_the_registry_too() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Unregistered(Knobs):
        no_such_knob: int = 1

    made = combined("Made", MpiioKnobs, Unregistered, module=__name__, doc="d.")
    with pytest.raises(UsageError, match="unknown parameter 'no_such_knob'"):
        made()

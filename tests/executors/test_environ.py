"""Worker processes: glibc's malloc thresholds on workers dask starts with its defaults."""

from __future__ import annotations

from collections.abc import Iterator

import dask
import pytest
from distributed import Client, LocalCluster

from iotune.executors.dask_ import PrepareBackends


def page_faults_of_fresh_buffers(rounds: int = 8, nbytes: int = 16 * 2**20) -> dict:
    """Minor page faults per round of allocating, filling and dropping a codec-sized buffer."""
    import os
    import resource

    # malloc'ed and written as codecs' output buffers are (NumPy would use huge pages)
    bytearray(nbytes)  # the first one may fault whatever the thresholds
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        bytearray(nbytes)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    return {"per_round": faults / rounds, "env": os.environ.get("MALLOC_TRIM_THRESHOLD_")}


@pytest.fixture
def dask_default_workers() -> Iterator[Client]:
    """Two workers with dask's own nanny environment (as dask-jobqueue jobs get)."""
    assert "MALLOC_TRIM_THRESHOLD_" in dask.config.get("distributed.nanny.pre-spawn-environ")
    with (
        LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        yield client


def test_workers_with_dasks_trim_threshold_reuse_large_buffers_once_prepared(
    dask_default_workers: Client,
) -> None:
    client = dask_default_workers
    pages = 16 * 2**20 // 4096

    (before,) = client.run(page_faults_of_fresh_buffers).values()
    # the premise: dask's variable makes every 16 MiB buffer a fresh mmap
    assert before["env"] is not None
    assert before["per_round"] > 0.9 * pages, before

    client.register_plugin(PrepareBackends())
    (after,) = client.run(page_faults_of_fresh_buffers).values()

    assert after["per_round"] < 0.05 * pages, after

"""Fixtures of the executor tests: a throwaway single-node SLURM."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .slurm_cluster import LocalSlurm, SlurmStartError, SlurmUnavailable, start


@pytest.fixture(scope="session")
def local_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSlurm]:
    """A running single-node SLURM (munged, slurmctld, slurmd) for the whole session.

    Skips when this machine cannot run it (not root, slurm-wlm or munge not
    installed), unless ``IOTUNE_REQUIRE_SLURM=1`` (CI), where that is a failure.
    Daemons that are installed but do not come up are always a failure.
    """
    try:
        slurm = start(tmp_path_factory.mktemp("slurm"))
    except SlurmUnavailable as err:
        if os.environ.get("IOTUNE_REQUIRE_SLURM") == "1":
            pytest.fail(f"IOTUNE_REQUIRE_SLURM=1 but no local SLURM can run: {err}")
        pytest.skip(f"no local SLURM: {err}")
    except SlurmStartError as err:
        pytest.fail(f"the local SLURM did not start: {err}")
    try:
        yield slurm
    finally:
        slurm.stop()

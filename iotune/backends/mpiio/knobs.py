"""The mpiio backend's knobs, declared once with the library's defaults.

The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import Knobs


@dataclass(frozen=True)
class MpiioKnobs(Knobs):
    """The MPI-IO backend's knobs: IOR's and benchio's, Lustre striping, MPI-IO hints."""

    nprocs: int = 1
    transfer_size: int = 2**20
    #: None: the ranks move all the workload's bytes between them
    bytes_per_rank: int | None = None
    layout: str = "shared"
    io: str = "collective"
    access: str = "contiguous"
    hints: str | None = None
    stripe_count: int | None = None
    stripe_size: int | None = None
    cb_nodes: int | None = None
    cb_buffer_size: int | None = None
    stripe_count_hint: int | None = None
    stripe_size_hint: int | None = None

"""What iotune needs from the machine: Lustre striping and MPI launching.

Nothing here is imported by ``import iotune``; mpi4py is imported only by
the rank program (:mod:`iotune.platform.mpi_rank`), never by the parent.
"""

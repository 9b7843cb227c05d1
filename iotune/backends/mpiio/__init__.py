"""MPI-IO through mpi4py ranks (ROMIO hints, Lustre striping): knobs, trials."""

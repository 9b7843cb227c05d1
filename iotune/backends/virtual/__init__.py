"""A ``field: file`` workload's source read in place through virtual Zarr references."""

"""A ``field: file`` workload's source read as it is: opened with xarray, nothing written."""

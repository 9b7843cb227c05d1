"""Formats on object storage (raw objects, Zarr stores, HDF5/netCDF4 objects)."""

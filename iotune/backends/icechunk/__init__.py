"""Zarr arrays in an Icechunk repository (see :mod:`iotune.backends.icechunk.backend`)."""

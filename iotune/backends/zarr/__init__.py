"""Zarr v3 through zarr-python: knobs, trials, exports."""

"""Results: trial records to an xarray Dataset and back, the ds.iotune accessor, merge, summary.

This package imports nothing on purpose: see docs/architecture.md.
"""

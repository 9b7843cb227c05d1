"""Measuring primitives: timing, fsync, eviction, checksums, the workload's slabs, read
selections, precision.
"""

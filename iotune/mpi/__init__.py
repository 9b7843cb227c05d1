"""MPI and Lustre: launching ranks, the rank-side harness, striping.

This package imports nothing on purpose: see docs/architecture.md.
"""

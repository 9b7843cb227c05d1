"""Trials: planning, the trial runner and its steps, measurement, data, journal, scratch.

This package imports nothing on purpose: see docs/architecture.md.
"""

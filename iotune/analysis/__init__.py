"""Analysis of a results Dataset: recommendations, reports, exports.

This package imports nothing on purpose: see docs/architecture.md.
"""

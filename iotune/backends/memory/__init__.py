"""Codecs in memory, no file: the compute-only baseline of a layout."""

"""The sweep spec: plain frozen dataclasses (model) and the code that parses YAML into them.

This package imports nothing on purpose: see docs/architecture.md.
"""

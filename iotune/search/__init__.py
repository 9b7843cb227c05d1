"""Adaptive search over a sweep's space (``iotune tune``); see docs/architecture.md."""

"""Rewrite a user's dataset with chosen storage settings, out of core, resumable and verified.

The layer below the application's ``apply``: it knows nothing of results files.
:mod:`~iotune.convert.layout` is the configuration to write, :mod:`~iotune.convert.source`
what the source holds, :mod:`~iotune.convert.regions` the blocks that fit the memory
limit, :mod:`~iotune.convert.journal` the finished ones, the ``*_target`` modules the
two formats, :mod:`~iotune.convert.verify` the comparison and
:mod:`~iotune.convert.convert` the whole run.
"""

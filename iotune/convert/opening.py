"""A source anywhere: a local file or store, or one on an object store (by its URL)."""

from __future__ import annotations

import os

from iotune.convert.source import Source, open_source
from iotune.convert.stores import is_url, open_store_source


def open_any(path: str | os.PathLike[str]) -> Source:
    """:func:`~iotune.convert.stores.open_store_source` for a URL, else
    :func:`~iotune.convert.source.open_source`."""
    if is_url(path):
        return open_store_source(str(path))
    return open_source(path)

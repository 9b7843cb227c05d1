"""The icechunk backend's knobs, declared once with the libraries' defaults.

The arrays are zarr-python's, so the zarr backend's knobs come first
(:func:`~iotune.backends.knobs.combined`), then the repository's configuration.
The base class and the rules: :mod:`iotune.backends.knobs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.backends.knobs import Knobs, combined
from iotune.backends.zarr.knobs import ZarrKnobs


@dataclass(frozen=True)
class RepositoryKnobs(Knobs):
    """Icechunk's ``RepositoryConfig``: what it inlines, its manifests, requests, cache."""

    #: chunks smaller than this many bytes live in the manifest, not in a file of their own
    inline_chunk_threshold: int = 512
    #: chunks per manifest along the first dimension; None: one manifest per array
    manifest_split: int | None = None
    #: on: every manifest loaded as a session opens; None: Icechunk's (coordinates only)
    manifest_preload: str | None = None
    max_concurrent_requests: int | None = None
    #: bytes of chunks Icechunk keeps in memory (``CachingConfig.num_bytes_chunks``)
    chunk_cache: int | None = None


IcechunkKnobs = combined(
    "IcechunkKnobs",
    ZarrKnobs,
    RepositoryKnobs,
    module=__name__,
    doc="zarr-python's knobs of the arrays, then the Icechunk repository's configuration.",
)

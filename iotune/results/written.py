"""Which points wrote anything: a backend whose write makes nothing has no write figure.

The in-place backends (``Backend.one_off == "in-place"``) read the source as it is; their
"write" is a writer that stores nothing, so its seconds and MiB/s say nothing of writing
and must not win the ``write`` objective.  Building references (``"references"``) is a
write, but of kilobytes that point at the data: beside a backend that rewrites the data
(``"rewrite"``) its MiB/s of the raw size won the ``write`` objective at a "ratio" of 240,
so in a sweep with both, ``write`` ranks the rewrites (the references' build time stays
in ``write_s``, where ``compare`` weighs it as a one-off cost).  Names not registered
here (a plugin not installed where the results are read) are taken as writing, as the
results recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

#: the ``compare`` way of the backends that make nothing
NOTHING = "in-place"
#: the ways that make a copy of the data, and the one that makes references to it
REWRITE, REFERENCES = "rewrite", "references"


def without_nothing_written(figure: xr.DataArray, backends: tuple[str, ...]) -> xr.DataArray:
    """``figure`` (a write metric) with NaN at the points whose backend makes nothing,
    and at those that build references when others rewrite the data.

    Parameters
    ----------
    figure
        A write variable of the results (grid or flat): ``backend`` a coordinate when
        several backends were swept.
    backends
        The sweep's backends (``ds.iotune.backends``).
    """
    from iotune.backends import backend_names, get_backend

    known = set(backend_names())
    ways = {b: get_backend(b).one_off for b in backends if b in known}
    dropped = {NOTHING, REFERENCES} if REWRITE in ways.values() else {NOTHING}
    nothing = [b for b, way in ways.items() if way in dropped]
    if not nothing:
        return figure
    if "backend" in figure.coords:
        return figure.where(~figure["backend"].isin(nothing))
    return figure.where(figure.isnull())  # the one backend swept makes nothing: all NaN

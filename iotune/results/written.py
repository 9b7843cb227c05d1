"""Which points wrote anything: a backend whose write makes nothing has no write figure.

The in-place backends (``Backend.one_off == "in-place"``) read the source as it is; their
"write" is a writer that stores nothing, so its seconds and MiB/s say nothing of writing
and must not win the ``write`` objective.  Names not registered here (a plugin not
installed where the results are read) are taken as writing, as the results recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xarray as xr

#: the ``compare`` way of the backends that make nothing
NOTHING = "in-place"


def without_nothing_written(figure: xr.DataArray, backends: tuple[str, ...]) -> xr.DataArray:
    """``figure`` (a write metric) with NaN at the points whose backend makes nothing.

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
    nothing = [b for b in backends if b in known and get_backend(b).one_off == NOTHING]
    if not nothing:
        return figure
    if "backend" in figure.coords:
        return figure.where(~figure["backend"].isin(nothing))
    return figure.where(figure.isnull())  # the one backend swept makes nothing: all NaN

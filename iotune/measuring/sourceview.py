"""What the user's function is given: the trial's variable as the user's own file shows it.

A trial's file stores only the variable ``data``, the raw values the workload
writes.  The user's file also has coordinates, attributes and a CF encoding
(packed integers, a fill value, times in units of a calendar), and the code
users write relies on them (``.sel(lat=slice(20, 40))``,
``.resample(time="1MS")``).  For ``field: file`` they are read once per
process from the source (its coordinates along the variable's dimensions and
its attributes, never the variable's values), cropped or tiled as the
workload crops or tiles the values, and put around the trial's variable, which
is then decoded as ``xr.open_dataset(source)`` decodes the source; the
variable takes its name in the file.  A generated workload's dimensions get
index coordinates ``0..n-1``.  The reference answer is made on the same view
(:mod:`iotune.measuring.reference`), so trials and reference compare alike.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotune.model.spec import Workload

#: what the function is given; part of a reference's name, so an older view's is not reused
VERSION = 2
#: the variable every backend stores, as a Dataset holds it
VARIABLE = "data"
#: a coordinate larger than this is left out: attaching it must stay cheap beside the read
COORD_LIMIT = 16 * 2**20
#: encoding keys of the trial's own variable that the source's attributes decide
_CF_KEYS = ("_FillValue", "missing_value", "scale_factor", "add_offset", "units", "calendar")


@dataclass(frozen=True)
class Frame:
    """The source's metadata around its variable: raw, as stored, cropped to the workload."""

    name: str
    attrs: dict[str, Any]
    coords: dict[str, Any]  # name -> xarray.Variable, raw values and CF attributes
    global_attrs: dict[str, Any]


def view(dataset: Any, workload: Workload) -> Any:
    """``dataset`` (holding the raw variable ``data``) as the user's function sees it.

    Parameters
    ----------
    dataset
        An ``xarray.Dataset`` with the workload's raw values as ``data``, lazy or
        in memory; they are not read here.
    workload
        The trial's workload: ``field: file`` takes the source's coordinates,
        attributes and encoding, any other field index coordinates.

    Returns
    -------
    xarray.Dataset
        Closing it closes ``dataset``.
    """
    import xarray as xr

    raw = dataset[VARIABLE].variable
    if workload.field != "file":
        coords = {d: np.arange(n) for d, n in zip(workload.dims, workload.shape, strict=True)}
        return dataset.assign_coords(coords)
    frame = _frame(workload)
    variable = raw.copy(deep=False)  # the same lazy array: nothing is read
    variable.attrs = dict(frame.attrs)
    variable.encoding = {k: v for k, v in raw.encoding.items() if k not in _CF_KEYS}
    # copies: the function may change what it is given, and the frame serves every repeat
    coords = {name: coord.copy(deep=True) for name, coord in frame.coords.items()}
    packed = xr.Dataset({frame.name: variable}, coords=coords, attrs=dict(frame.global_attrs))
    decoded = xr.decode_cf(packed)
    decoded.set_close(dataset.close)
    return decoded


def prepare(workload: Workload) -> None:
    """Read the source's metadata now (once per process), so a timed :func:`view` does not."""
    if workload.field == "file":
        _frame(workload)


@functools.cache
def _frame(workload: Workload) -> Frame:
    import xarray as xr

    assert workload.path is not None and workload.variable is not None
    from iotune.measuring.data import open_source

    path = workload.path
    with open_source(path) as decoded:
        # which variables xarray makes coordinates of (dimension and ``coordinates`` ones)
        names = [str(n) for n in decoded[workload.variable].coords]
    with open_source(path, decode_cf=False) as raw:
        source = raw[workload.variable].variable
        rename = dict(zip(source.dims, workload.dims, strict=True))
        index = {
            d: np.arange(n) % m
            for d, n, m in zip(source.dims, workload.shape, source.shape, strict=True)
        }
        coords = {}
        for name in names:
            coord = raw.variables[name]
            if set(coord.dims) <= set(source.dims) and coord.nbytes <= COORD_LIMIT:
                taken = coord.isel({d: index[d] for d in coord.dims}).load()
                dims = tuple(rename[d] for d in coord.dims)
                coords[name] = xr.Variable(dims, taken.data, taken.attrs, taken.encoding)
        attrs = {k: v for k, v in source.attrs.items() if k != "coordinates"}
        return Frame(workload.variable, attrs, coords, dict(raw.attrs))

"""Reads through xarray need a format xarray opens: the check made before anything runs.

``dask_chunks`` and ``dask_threads`` (and any read that hands the user's code an
``xarray.Dataset``) read a trial's array with ``SlabBackend.open_dataset``,
which posix, memory and MPI-IO do not have: their bytes carry no names or shape.
"""

from __future__ import annotations

from collections.abc import Mapping

from iotune.model.checks import fail

#: the parameters whose trials read through xarray
XARRAY_PARAMETERS = ("dask_chunks", "dask_threads")


def require_xarray(backends: tuple[str, ...], field: str, *, every: bool = False) -> None:
    """Raise SpecError at ``field`` unless the sweep's backends open with xarray.

    Parameters
    ----------
    backends
        The sweep's backends.
    field
        The spec's field that asks for the xarray read (``parameters.dask_chunks``).
    every
        Each backend must open with xarray; otherwise one is enough, and the
        others' grid points do not apply.
    """
    from iotune.backends import XARRAY_BUILTINS, opens_with_xarray

    cannot = [b for b in backends if not opens_with_xarray(b)]
    if cannot and (every or len(cannot) == len(backends)):
        raise fail(
            field,
            f"backend {', '.join(cannot)} cannot be opened with xarray; allowed with: "
            f"{', '.join(XARRAY_BUILTINS)}",
        )


def check_parameters(backends: tuple[str, ...], parameters: object) -> None:
    """Refuse ``dask_chunks`` and ``dask_threads`` in a sweep none of whose backends has xarray."""
    if not isinstance(parameters, Mapping):
        return  # parse_parameters says what is wrong with it
    for name in XARRAY_PARAMETERS:
        if name in parameters:
            require_xarray(backends, f"parameters.{name}")

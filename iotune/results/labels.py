"""A measured point's label as a person should read it: what the library did, not the knob.

``chunks=auto`` is the library's choice, which differs by file and codec (contiguous
without a codec, 60x90x180 with zlib for one file): the label says which,
``chunks=auto (60x90x180)``.  A swept value the point did not apply (``level`` with
codec ``none``) is left out, so ``codec=none level=1`` is never printed for a winner.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.model import parameters

if TYPE_CHECKING:
    import xarray as xr

#: settings derived by the library, shown with what it chose
DERIVED = ("auto",)


def plain(value: Any) -> Any:
    """A NumPy scalar or 0-d array as a plain Python value; bytes as text."""
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else value


def value_label(dim: str, value: Any) -> str:
    """How a coordinate value is shown: byte sizes as ``64MiB``, others as text."""
    return parameters.show(dim, plain(value))


def label(coords: Mapping[str, Any]) -> str:
    """``chunks=8x128x128 codec=zlib chunk_cache=64MiB``."""
    parts = [f"{dim}={value_label(dim, value)}" for dim, value in coords.items()]
    return " ".join(parts) or "(single configuration)"


def point_label(
    coords: Mapping[str, Any], settings: Mapping[str, Any], point: xr.Dataset | None = None
) -> str:
    """``chunks=auto (16x64x64) codec=zlib level=1``: the coordinates a point applied.

    Parameters
    ----------
    coords
        The point's swept coordinates.
    settings
        Its effective settings (``ds.iotune.settings_of``); a ``None`` value there means
        the backend did not apply that parameter at this point.
    point
        The point's results, for the layout the library chose (``file_properties``).
    """
    chosen = _layout(point)
    parts = []
    for dim, value in applied(coords, settings).items():
        shown = parameters.show(dim, value)
        if dim == "chunks" and shown in DERIVED and chosen and chosen != shown:
            shown = f"{shown} ({chosen})"
        parts.append(f"{dim}={shown}")
    return " ".join(parts) or "(single configuration)"


def applied(coords: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """The coordinates a point applied, in their order: those its settings do not mark ``None``.

    A backend records a parameter it did not apply at a point (``level`` with codec
    ``none``, a cache of no use) as ``None`` in the point's effective settings
    (``ds.iotune.settings_of``); a parameter its backend does not take at all is left
    out too; any other coordinate the settings do not name counts as applied.
    """
    foreign = _foreign(coords, settings)
    return {
        d: v
        for d, v in coords.items()
        if not (d in settings and settings[d] is None) and d not in foreign
    }


def _foreign(coords: Mapping[str, Any], settings: Mapping[str, Any]) -> set[str]:
    """Swept coordinates the point's backend does not take (``chunks`` of a sweep's Zarr
    points on its in-place point), which it was measured at only as the grid's first value."""
    from iotune.backends import backend_names, get_backend

    backend = settings.get("backend")
    if not isinstance(backend, str) or backend not in backend_names():
        return set()
    takes = {*get_backend(backend).parameters, *parameters.generic(), "backend"}
    return {d for d in coords if d not in takes}


def _layout(point: xr.Dataset | None) -> str:
    if point is None or "file_properties" not in point:
        return ""
    text = str(point["file_properties"].values)
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return ""
    return str(found.get("layout") or "") if isinstance(found, dict) else ""

"""Each built-in backend's knobs, declared once with the library's defaults.

A backend's knobs are a frozen dataclass: its fields, in order, are the
backend's ``parameters``; a field's default is what the library does when a
spec leaves the knob out (``None``: the library's own choice, which iotune does
not name), and ``resolve``, ``verify`` and the exports read the defaults from
it.  Adding a knob is its entry in :mod:`iotune.model.parameters`, its field
here, the backend code that applies it, reads it back and exports it, and its test.
A backend built on another one's library (the object-store backends,
:mod:`iotune.backends.object.knobs`) takes that library's knobs through
:func:`combined` rather than naming them again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import MISSING, dataclass, field, fields, make_dataclass
from typing import Any, Self, cast

from iotune.model import parameters


@dataclass(frozen=True)
class Knobs:
    """Base of a backend's knobs: every field must be a registered parameter."""

    def __post_init__(self) -> None:
        for name in self.names():
            parameters.get(name)  # UsageError: the knob is not in the registry

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The knobs in declaration order: the backend's ``parameters``."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def default(cls, name: str) -> Any:
        """The library's default of knob ``name`` (``None``: the library's own choice)."""
        for f in fields(cls):
            if f.name == name:
                return None if f.default is MISSING else f.default
        raise KeyError(f"{cls.__name__} has no knob {name!r}; knobs: {', '.join(cls.names())}")

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every knob's library default, in declaration order."""
        return {f.name: cls.default(f.name) for f in fields(cls)}

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> Self:
        """The knobs of ``settings``: its values where set (not ``None``), defaults elsewhere."""
        return cls(**{n: settings[n] for n in cls.names() if settings.get(n) is not None})


#: the knobs of a read through xarray (``SlabBackend.open_dataset``): the last of each
#: format xarray opens; None: not given, the trial reads through the format's library
XARRAY_KNOBS = ("dask_chunks", "dask_threads")


@dataclass(frozen=True)
class LayoutKnobs(Knobs):
    """Chunks and codec: what every chunked format applies."""

    chunks: str = "auto"
    codec: str = "none"
    level: int | None = None
    shuffle: str | None = None


def combined(
    name: str,
    first: type[Knobs],
    then: type[Knobs],
    *,
    without: Collection[str] = (),
    module: str,
    doc: str,
) -> type[Knobs]:
    """Knobs whose fields are ``first``'s, but ``without``, then ``then``'s.

    For a backend built on another backend's library: its knobs are the ones of
    that library that apply, with their defaults, followed by its own; where a
    name is in both, it moves to ``then``'s place with ``then``'s default.

    Parameters
    ----------
    name
        The class's name, bound to it in ``module``.
    first
        The library's knobs.
    then
        The backend's own knobs.
    without
        ``first``'s knobs that do not apply.
    module
        The module that binds the class (``__name__``), so it is found by name.
    doc
        The class's docstring.
    """
    own = {*without, *then.names()}
    kept = [f for f in fields(first) if f.name not in own] + list(fields(then))
    specs = [(f.name, f.type, field(default=f.default)) for f in kept]
    namespace = {"__doc__": doc, "__module__": module}
    made = make_dataclass(name, specs, bases=(Knobs,), frozen=True, namespace=namespace)
    return cast("type[Knobs]", made)

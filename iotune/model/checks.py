"""Small validators shared by the spec parsers; each raises a SpecError naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iotune.core.errors import SpecError
from iotune.core.units import parse_size


def fail(path: str, message: str) -> SpecError:
    return SpecError(path, message)


def mapping(value: object, path: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise fail(path, f"expected a mapping with keys {', '.join(allowed)}, got {value!r}")
    for key in value:
        if key not in allowed:
            raise fail(
                f"{path}.{key}" if path else str(key), f"unknown key; allowed: {', '.join(allowed)}"
            )
    return value


def section(value: object) -> object:
    """An absent or empty section (``key:`` alone) means defaults; anything else is checked."""
    return {} if value is None else value


def integer(value: object, path: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, f"expected an integer, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        hi = "" if maximum is None else f" and <= {maximum}"
        raise fail(path, f"{value} is out of range; allowed: >= {minimum}{hi}")
    return value


def choice(value: object, path: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise fail(path, f"unknown value {value!r}; allowed: {', '.join(choices)}")
    return value


def positive_size(value: object, path: str) -> int:
    nbytes = byte_size(value, path)
    if nbytes < 1:
        raise fail(path, f"{value!r} must be at least 1 byte")
    return nbytes


def byte_size(value: object, path: str) -> int:
    try:
        return parse_size(value)
    except ValueError as err:
        raise fail(path, str(err)) from err

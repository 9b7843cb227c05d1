"""A plugin backend's own knobs, added to the parameter registry.

iotune's parameters are declared in :mod:`iotune.model.parameters`; a third-party
backend declares its own knob as a :class:`~iotune.model.parameters.ParameterDef`
and registers it here when its module is imported, so the spec parser, results
and listings treat it as any other parameter.
"""

from __future__ import annotations

from iotune.core.errors import UsageError
from iotune.model.parameters import PARAMETERS, ParameterDef


def register(definition: ParameterDef) -> None:
    """Add a plugin backend's own knob to the registry (once per process, at its import).

    Raises
    ------
    UsageError
        Another definition is registered under the name (a built-in's or another
        plugin's); registering the same definition again does nothing.
    """
    found = PARAMETERS.get(definition.name)
    if found is not None and found != definition:
        raise UsageError(f"parameter {definition.name!r} is already registered: {found.long_name}")
    PARAMETERS[definition.name] = definition

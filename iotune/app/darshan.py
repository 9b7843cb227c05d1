"""Darshan logs as a starting point: read one, and write the sweep that reproduces it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iotune.core.errors import UsageError


def from_darshan(
    path: str | Path, *, trial_size: str | int = "4GiB", all_files: bool = False
) -> Any:
    """Read a Darshan log: its summary, diagnosis and a spec reproducing the application.

    Parameters
    ----------
    path
        A Darshan log, read in a child process (a crash there is a ``DarshanError``).
    trial_size
        Largest volume a trial of the generated spec moves (at least one request per rank).
    all_files
        Also summarise the interpreter's and libraries' files, after the data files.

    Returns
    -------
    iotune.darshan_.study.Study
        ``text()``, ``spec`` (``None`` with a ``reason``), ``groups``, ``findings``, ``left_out``.

    Raises
    ------
    DarshanError
        Not a readable Darshan log (the message says why), or the library crashed or hung.
    UsageError
        A trial size that is not a size.
    """
    from iotune.backends import DARSHAN_MODULES, get_backend
    from iotune.core.units import parse_size
    from iotune.darshan_.study import study

    try:
        nbytes = parse_size(trial_size)
    except ValueError as err:
        raise UsageError(f"--trial-size {trial_size}: {err}") from err
    if nbytes < 1:
        raise UsageError(f"--trial-size {trial_size}: must be at least 1 byte")
    parallel, _why = get_backend(DARSHAN_MODULES["H5D"]).parallel_support()
    return study(path, budget=nbytes, parallel_h5py=parallel, all_files=all_files)


def write_darshan_spec(found: Any, path: str | Path | None = None) -> Path:
    """Write the spec of :func:`from_darshan` (default ``sweeps/<its name>.yaml``), validated.

    Raises
    ------
    DarshanError
        The log had nothing to reproduce (``found.reason``).
    SpecError
        The generated spec does not validate (a bug; the message names the field).
    """
    from iotune.specfile.parse import load_spec_text

    text = found.spec_text()
    target = Path(path) if path is not None else Path("sweeps") / f"{found.spec['name']}.yaml"
    load_spec_text(text, source=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target

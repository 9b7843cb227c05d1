"""The user's own read patterns of a sweep, timed on the real SOURCE and TARGET after ``apply``.

As in a sweep, the user's code never runs in iotune's own process: one child process
(spawned) opens each file through the format's xarray engine with the configuration's
``dask_chunks``, calls the function, computes what it returned and closes, from a
verified cold cache, timing those four steps (:mod:`iotune.runner.userread` does the
same for a trial).  The function gets the file as it is, with the converted variable
also under the name ``data`` (what the sweep's trials held), so code written for either
runs.  The answers from SOURCE and TARGET are compared
(:func:`iotune.measuring.sameanswer.compare`).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.core.errors import VerificationError
from iotune.model.userpatterns import UserPattern

if TYPE_CHECKING:
    import xarray as xr

#: the variable name the sweep's trials gave the function
TRIAL_VARIABLE = "data"


def user_patterns(ds: xr.Dataset | None, *, near: tuple[Path, ...] = ()) -> dict[str, UserPattern]:
    """The sweep's own-code patterns, their code looked for beside the results, then ``near``.

    The results keep the spec's text, not its folder: the code is found in the first
    of the results' folder, the ``near`` folders (the target's, the source's) and the
    current one that holds it; a ``call`` found in none may still import from the
    environment.
    """
    if ds is None:
        return {}
    data = yaml.safe_load(ds.iotune.spec or "{}") or {}
    entries = (data.get("read") or {}).get("patterns") or []
    source = ds.encoding.get("source")
    folders = ((Path(source).resolve().parent,) if source else ()) + near + (Path.cwd(),)
    found = {}
    for entry in entries:
        if isinstance(entry, Mapping) and "name" in entry:
            pattern = UserPattern.from_dict(dict(entry))
            base = next((f for f in folders if _holds(f, pattern)), folders[0])
            found[str(entry["name"])] = UserPattern.from_dict(dict(entry), base=str(base))
    return found


def _holds(folder: Path, pattern: UserPattern) -> bool:
    """Whether ``folder`` holds the pattern's script or the module its ``call`` names."""
    if pattern.script is not None:
        return (folder / pattern.script).is_file()
    module = Path(*str(pattern.module).split("."))
    return (folder / module.with_suffix(".py")).is_file() or (folder / module).is_dir()


def time_user(
    pattern: UserPattern,
    sides: Mapping[str, tuple[str, str]],
    *,
    repeats: int,
    limit: float,
    params: Mapping[str, Any],
    variable: str,
) -> dict[str, Any]:
    """Time ``pattern`` ``repeats`` times per side in a child process; its row of the record.

    ``sides`` maps ``source``/``target`` to (backend name, path).

    Raises
    ------
    UserCodeError
        The function cannot be loaded or raised (its last traceback line).
    VerificationError
        SOURCE and TARGET gave different answers.
    """
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        job = pool.submit(_in_child, pattern, dict(sides), repeats, limit, dict(params), variable)
        return job.result()


def _in_child(
    pattern: UserPattern,
    sides: dict[str, tuple[str, str]],
    repeats: int,
    limit: float,
    params: dict[str, Any],
    variable: str,
) -> dict[str, Any]:
    from iotune.measuring import sameanswer, usercode

    usercode.load_function(pattern)  # imported before the clock, as in a trial
    times: dict[str, list[float]] = {"source": [], "target": []}
    caches: dict[str, list[str]] = {"source": [], "target": []}
    answers: dict[str, Any] = {}
    # one untimed call per side first, as a trial's warm-up: the first call in a process
    # pays once for what the function's libraries set up (cftime, the engine, dask's
    # graph code): 1.0 s against 0.15 s after it, on a year of daily maps; each timed
    # call below starts from a cold cache again (prepare_cache)
    for side in ("source", "target"):
        _once(pattern, *sides[side], limit, params, variable)
    for r in range(repeats):
        for side in ("source", "target") if r % 2 == 0 else ("target", "source"):
            seconds, state, answer = _once(pattern, *sides[side], limit, params, variable)
            times[side].append(round(seconds, 6))
            caches[side].append(state)
            answers.setdefault(side, answer)
    try:
        sameanswer.compare(answers["source"], answers["target"])
    except VerificationError as err:
        raise VerificationError(f"read:{pattern.name}: SOURCE and TARGET differ: {err}") from None
    return {
        "source_s": times["source"],
        "target_s": times["target"],
        "cache_source": caches["source"],
        "cache_target": caches["target"],
        "call": pattern.describe(),
        "same_answer": True,
    }


def _once(
    pattern: UserPattern,
    backend_name: str,
    path: str,
    limit: float,
    params: dict[str, Any],
    variable: str,
) -> tuple[float, str, dict[str, Any]]:
    """One cold call: seconds (open, call, compute, close), cache state, flattened answer."""
    from iotune.backends import get_backend
    from iotune.backends.xarray_open import chunks_from_label
    from iotune.measuring import measure, sameanswer, usercode
    from iotune.runner.xarray_read import scheduler

    backend = get_backend(backend_name)()
    where = Path(path)
    files = backend.paths(where)  # type: ignore[attr-defined]  # a SlabBackend's
    state, _ = measure.prepare_cache(files, mode="cold", max_residency=limit)
    chunks = chunks_from_label(params.get("dask_chunks"))
    clock = measure.Stopwatch()
    with scheduler(params):
        with clock:
            opened = backend.open_dataset(where, params, chunks=chunks)  # type: ignore[attr-defined]
        try:
            given = opened
            if TRIAL_VARIABLE not in opened.variables:
                given = opened.assign({TRIAL_VARIABLE: opened[variable]})
            with clock:
                result = sameanswer.flatten(usercode.call(pattern, given))
        finally:
            with clock:
                opened.close()
    return clock.wall, state, result

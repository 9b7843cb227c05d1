"""Sweep spec version 1: parse YAML, validate, freeze.

Every problem raises :class:`~iotune.core.errors.SpecError` naming the field, the bad
value and what is allowed.  Unknown keys are errors, so typos never pass silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from iotune.backends import DEFAULT_BACKEND
from iotune.core.errors import SpecError, reason
from iotune.measuring.precision import MIN_AUTO_REPEATS
from iotune.model.checks import choice, fail, integer, mapping, section
from iotune.model.parameters import generic as generic_parameters
from iotune.model.renamed import with_current_names
from iotune.model.spec import (
    CACHE_MODES,
    DTYPES,
    FIELDS,
    ORDERS,
    PATTERNS,
    SPEC_VERSION,
    TOP_KEYS,
    MeasureSpec,
    ReadSpec,
    Sweep,
    Workload,
)
from iotune.model.userpatterns import UserPattern
from iotune.specfile.baseline import parse_baseline
from iotune.specfile.batches import (
    LOADER_KNOBS,
    check_loader_knobs,
    finish_batches,
    parse_batches,
)
from iotune.specfile.compare import parse_compare
from iotune.specfile.execution import parse_execution
from iotune.specfile.hints import check_hint_names, parse_hint_sets
from iotune.specfile.parameters import parse_parameters
from iotune.specfile.search import parse_search
from iotune.specfile.storage import check_backends, parse_storage
from iotune.specfile.userpatterns import parse_user_pattern
from iotune.specfile.xarray_reads import check_parameters as check_xarray_parameters
from iotune.specfile.xarray_reads import require_xarray

# --- small parse helpers ----------------------------------------------------


def parse_workload(value: object, *, base: Path | None = None, recorded: bool = False) -> Workload:
    """Parse ``workload``; with ``field: file`` the shape and dtype default to the file's.

    ``recorded``: the workload as a results file records it, shape and dtype resolved;
    its file is not opened (a replay reads no data, and the file may be elsewhere).
    """
    keys = ("shape", "dtype", "field", "seed", "path", "variable")
    data = mapping(value, "workload", keys)
    field = choice(data.get("field", "smooth"), "workload.field", FIELDS)
    source: dict[str, Any] | None = None
    if field == "file":
        source = _recorded_source(data) if recorded else _file_source(data, base)
    if field != "file":
        for key in ("path", "variable"):
            if key in data:
                raise fail(f"workload.{key}", "only used with field: file")
    if "shape" not in data and source is None:
        raise fail("workload.shape", "required, e.g. {time: 64, y: 512, x: 512}")
    raw = data.get("shape", source["shape"] if source else None)
    shape = mapping(raw, "workload.shape", tuple(raw) if isinstance(raw, Mapping) else ())
    if not 2 <= len(shape) <= 4:
        raise fail("workload.shape", f"{dict(shape)!r} has rank {len(shape)}; allowed: 2 to 4")
    file_dims = tuple(source["shape"]) if source else ()
    if source and set(map(str, shape)) == set(file_dims) and tuple(map(str, shape)) != file_dims:
        raise fail(
            "workload.shape",
            f"give the dimensions in the file's order "
            f"({', '.join(file_dims)}); the data is not transposed",
        )
    if source and len(shape) != len(source["shape"]):
        raise fail(
            "workload.shape",
            f"{dict(shape)!r} has rank {len(shape)} but "
            f"{source['variable']!r} in the file has {dict(source['shape'])}",
        )
    default_dtype = source["dtype"] if source else "int16"
    return Workload(
        dims=tuple(str(d) for d in shape),
        shape=tuple(integer(s, f"workload.shape.{d}", minimum=1) for d, s in shape.items()),
        dtype=choice(data.get("dtype", default_dtype), "workload.dtype", DTYPES),
        field=field,
        seed=integer(data.get("seed", 0), "workload.seed"),
        path=source["path"] if source else None,
        variable=source["variable"] if source else None,
    )


def _recorded_source(data: Mapping[str, Any]) -> dict[str, Any]:
    """The file source of a recorded workload: what the results say, without the file."""
    for key in ("path", "variable", "shape", "dtype"):
        if not data.get(key):
            raise fail(f"workload.{key}", "missing from the recorded workload")
    shape = mapping(data["shape"], "workload.shape", tuple(data["shape"]))
    return {
        "path": data["path"],
        "variable": data["variable"],
        "shape": dict(shape),
        "dtype": data["dtype"],
    }


def _file_source(data: Mapping[str, Any], base: Path | None) -> dict[str, Any]:
    """Check ``path`` and ``variable`` now, so a typo is a spec error, not 100 failed trials."""
    for key in ("path", "variable"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise fail(
                f"workload.{key}",
                "required with field: file (a file or store xarray opens, and the variable in it)",
            )
    path = Path(data["path"]).expanduser()
    path = path if path.is_absolute() or base is None else base / path
    from iotune.measuring.data import describe_file

    try:
        info = describe_file(path, data["variable"])
    except (OSError, ValueError, KeyError) as err:
        raise fail("workload.path", f"cannot use {str(path)!r}: {reason(err)}") from err
    return {"path": str(path.resolve()), "variable": data["variable"], **info}


def parse_read(value: object, workload: Workload, *, base: Path | None = None) -> ReadSpec:
    data = mapping(
        section(value), "read", ("patterns", "spatial", "timeseries", "random", "batches")
    )
    patterns = data.get("patterns", ["full"])
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list) or not patterns:
        raise fail(
            "read.patterns",
            f"expected a non-empty list of {', '.join(PATTERNS)} or {{name, call}} entries",
        )
    user: list[UserPattern] = []
    names: list[str] = []
    for i, entry in enumerate(patterns):
        if isinstance(entry, Mapping):  # the user's code: {name, call} or {name, script, ...}
            taken = (*PATTERNS, *(u.name for u in user))
            user.append(parse_user_pattern(entry, f"read.patterns[{i}]", base=base, taken=taken))
            names.append(user[-1].name)
        else:
            names.append(choice(entry, f"read.patterns[{i}]", PATTERNS))
    parsed = tuple(names)
    if len(set(parsed)) != len(parsed):
        raise fail("read.patterns", f"{patterns!r} lists a pattern twice")
    spatial = []
    for dim, size in mapping(data.get("spatial", {}), "read.spatial", workload.dims).items():
        path, full = f"read.spatial.{dim}", workload.shape[workload.dims.index(dim)]
        ok = isinstance(size, float) and 0 < size <= 1
        ok = ok or (isinstance(size, int) and not isinstance(size, bool) and 1 <= size <= full)
        if not ok:
            raise fail(
                path, f"{size!r} is not allowed; give a count 1..{full} or a fraction in (0, 1]"
            )
        spatial.append((dim, size))
    ts = mapping(data.get("timeseries", {}), "read.timeseries", ("pixels",))
    pixels = integer(ts.get("pixels", 16), "read.timeseries.pixels", minimum=1, maximum=100_000)
    rnd = mapping(section(data.get("random")), "read.random", ("ops", "shape"))
    ops = integer(rnd.get("ops", 64), "read.random.ops", minimum=1, maximum=1_000_000)
    box = mapping(section(rnd.get("shape")), "read.random.shape", workload.dims)
    shape = tuple(
        (
            d,
            integer(
                n,
                f"read.random.shape.{d}",
                minimum=1,
                maximum=workload.shape[workload.dims.index(d)],
            ),
        )
        for d, n in box.items()
    )
    if "batches" in data and "batches" not in parsed:
        raise fail("read.batches", "configures the batches pattern; add batches to read.patterns")
    batches = parse_batches(data.get("batches"), workload) if "batches" in parsed else None
    return ReadSpec(parsed, tuple(spatial), pixels, ops, shape, batches=batches, user=tuple(user))


def parse_measure(value: object) -> MeasureSpec:
    keys = (
        "repeats",
        "cache",
        "fsync",
        "max_cold_residency",
        "precision",
        "max_repeats",
        "order",
        "seed",
        "noise_probes",
    )
    data = mapping(section(value), "measure", keys)
    fsync = data.get("fsync", True)
    if not isinstance(fsync, bool):
        raise fail("measure.fsync", f"expected true or false, got {fsync!r}")
    limit = data.get("max_cold_residency", 0.05)
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not 0 <= limit <= 1:
        raise fail("measure.max_cold_residency", f"{limit!r} is not a fraction in [0, 1]")
    common: dict[str, Any] = {
        "cache": choice(data.get("cache", "cold"), "measure.cache", CACHE_MODES),
        "fsync": fsync,
        "max_cold_residency": float(limit),
        "order": choice(data.get("order", "auto"), "measure.order", ORDERS),
        "seed": integer(data.get("seed", 0), "measure.seed", minimum=0, maximum=2**32 - 1),
        "noise_probes": integer(
            data.get("noise_probes", 6), "measure.noise_probes", minimum=0, maximum=1000
        ),
    }
    if data.get("repeats") != "auto":
        for key in ("precision", "max_repeats"):
            if key in data:
                raise fail(f"measure.{key}", "only used with repeats: auto")
        repeats = integer(data.get("repeats", 3), "measure.repeats", minimum=1, maximum=1000)
        return MeasureSpec(repeats=repeats, **common)
    most = integer(
        data.get("max_repeats", 20), "measure.max_repeats", minimum=MIN_AUTO_REPEATS, maximum=1000
    )
    return MeasureSpec(
        adaptive=True, precision=_precision(data.get("precision", 0.05)), max_repeats=most, **common
    )


def _precision(value: object) -> float:
    """``5%`` or ``0.05``: the CI half-width allowed, relative to the median."""
    allowed = "allowed: a percentage like 5% or a fraction in (0, 1)"
    number: object = value
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            number = float(value.strip()[:-1]) / 100
        except ValueError:
            raise fail("measure.precision", f"{value!r} is not a number; {allowed}") from None
    if isinstance(number, bool) or not isinstance(number, int | float) or not 0 < number < 1:
        raise fail("measure.precision", f"{value!r} is not allowed; {allowed}")
    return float(number)


def parse_backends(value: object) -> tuple[str, ...]:
    from iotune.backends import BUILTINS, backend_names

    items = value if isinstance(value, list) else [value]
    if not items:
        raise fail("backend", f"empty list; allowed: {', '.join(backend_names())}")
    # a built-in name needs no look at the installed plugins (their metadata)
    names = tuple(b if b in BUILTINS else choice(b, "backend", backend_names()) for b in items)
    if len(set(names)) != len(names):
        raise fail("backend", f"{value!r} lists a backend twice")
    return names


def _parameters_allowed(backends: tuple[str, ...], read: ReadSpec) -> tuple[str, ...]:
    from iotune.backends import get_backend

    names: list[str] = []
    for backend in backends:
        names += [p for p in get_backend(backend).parameters if p not in names]
    # the trial runner, not the format, implements these; the loader's only with batches
    runner = [p for p in generic_parameters() if p not in names]
    if "batches" not in read.patterns:
        runner = [p for p in runner if p not in LOADER_KNOBS]
    return (*names, *runner)


def parse_spec(
    data: object,
    *,
    text: str = "",
    source: str | None = None,
    base: Path | None = None,
    recorded: bool = False,
) -> Sweep:
    """Validate a spec already read from YAML into a :class:`Sweep`.

    Relative paths in it (a workload file, the user's scripts and modules) are
    found from ``base``, by default the directory of ``source``.  ``recorded``: the
    workload is the one a results file recorded (see :func:`parse_workload`).
    """
    try:
        if data is None:
            raise fail("", "the spec is empty; it needs at least 'version' and 'workload'")
        data = mapping(data, "", TOP_KEYS)
        if "version" not in data:
            raise fail("version", f"required; allowed: {SPEC_VERSION}")
        if isinstance(data["version"], bool) or data["version"] != SPEC_VERSION:
            raise fail(
                "version", f"unsupported version {data['version']!r}; allowed: {SPEC_VERSION}"
            )
        if "workload" not in data:
            raise fail("workload", "required, e.g. {shape: {time: 64, y: 512, x: 512}}")
        data = with_current_names(data)
        base = base if base is not None else Path(source).parent if source else None
        workload = parse_workload(data["workload"], base=base, recorded=recorded)
        backends = parse_backends(data.get("backend", DEFAULT_BACKEND))
        name = data.get("name", Path(source).stem if source else "sweep")
        if not isinstance(name, str) or not name.strip():
            raise fail("name", f"expected a non-empty string, got {name!r}")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise fail("description", f"expected a string, got {description!r}")
        read = parse_read(data.get("read"), workload, base=base)
        if read.user:  # the user's code gets an xarray.Dataset: every trial must open as one
            where = f"read.patterns[{read.patterns.index(read.user[0].name)}]"
            require_xarray(backends, where, every=True)
        check_loader_knobs(data.get("parameters"), read)
        check_xarray_parameters(backends, data.get("parameters"))
        parameters = parse_parameters(
            data.get("parameters"), workload, _parameters_allowed(backends, read)
        )
        hints = parse_hint_sets(data.get("hints"))
        for param in parameters:
            if param.name == "hints":
                check_hint_names(param.values, hints, swept=param.swept)
        metrics = ("write", *(f"read:{p}" for p in read.patterns))
        storage = parse_storage(data["storage"]) if "storage" in data else None
        check_backends(storage, backends)
        measure = parse_measure(data.get("measure"))
        if storage is not None and measure.cache != "cold":
            raise fail(
                "measure.cache",
                f"{measure.cache!r} does not apply to object storage (every read is a new "
                "client with no cache); allowed: cold",
            )
        baselines, ways = parse_compare(data, backends, workload)
        sweep = Sweep(
            name=name,
            workload=workload,
            backends=backends,
            parameters=parameters,
            read=read,
            measure=measure,
            execution=parse_execution(data.get("execution")),
            description=description,
            hints=hints if "hints" in data else {},
            baseline=parse_baseline(data.get("baseline"), parameters, workload),
            baselines=baselines,
            compare=ways,
            search=parse_search(data["search"], metrics, tuple(p.name for p in parameters))
            if "search" in data
            else None,
            storage=storage,
            text=text,
            source=source,
        )
        return finish_batches(sweep)
    except SpecError as err:
        if source and err.source is None:
            raise SpecError(err.field, err.message, source=source) from None
        raise


def load_spec_text(
    text: str, *, source: str | None = None, base: Path | None = None, recorded: bool = False
) -> Sweep:
    """Parse spec text; malformed YAML is a :class:`SpecError` with its line."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SpecError("", f"malformed YAML{where}: {problem}", source=source) from err
    return parse_spec(data, text=text, source=source, base=base, recorded=recorded)


def load_spec(path: str | Path) -> Sweep:
    """Read and validate a sweep spec file.

    Parameters
    ----------
    path
        A YAML file in the spec format version 1.

    Raises
    ------
    SpecError
        The file is missing, malformed or invalid; the message names the field.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError("", f"cannot read spec: {err.strerror}", source=str(path)) from err
    except UnicodeDecodeError as err:
        raise SpecError(
            "",
            f"cannot read spec: not UTF-8 text ({err.reason} at byte {err.start})",
            source=str(path),
        ) from err
    return load_spec_text(text, source=str(path))

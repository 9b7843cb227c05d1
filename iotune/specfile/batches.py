"""The ``read.batches`` section and the loader knobs that only it gives a meaning to."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from iotune.core.errors import NotApplicable
from iotune.model.checks import choice, fail, integer, mapping, section
from iotune.model.spec import BatchSpec

if TYPE_CHECKING:
    from iotune.model.spec import ReadSpec, Sweep, Workload

KEYS = ("sample", "batch", "batches", "shuffle", "loader", "step", "device")
#: the parameters of the batches pattern's loader (:mod:`iotune.runner.loader`)
LOADER_KNOBS = ("num_workers", "prefetch_factor", "pin_memory")
LOADERS = ("auto", "torch", "iotune", "xbatcher")
DEVICES = ("cpu", "cuda")
#: a default repeat reads this many batches per batch in flight, so steady state dominates
BATCHES_PER_SLOT = 8
#: seconds per unit of ``read.batches.step``
STEP_UNITS = {"ms": 1e-3, "s": 1.0, "": 1.0}
#: more samples than this per repeat would take hours on any store
MAX_SAMPLES = 10_000_000


def parse_batches(value: object, workload: Workload) -> BatchSpec:
    """Parse ``read.batches`` (absent: one step of the first dimension per sample).

    Raises
    ------
    SpecError
        A key, dimension or value that is not allowed, or more samples per repeat
        than the workload holds.
    """
    data = mapping(section(value), "read.batches", KEYS)
    first = workload.dims[0]
    given = data.get("sample", {first: 1})
    sample = mapping(given, "read.batches.sample", workload.dims)
    if not sample:
        raise fail("read.batches.sample", f"{given!r} names no dimension; e.g. {{{first}: 1}}")
    extents = tuple(
        (
            dim,
            integer(
                size,
                f"read.batches.sample.{dim}",
                minimum=1,
                maximum=workload.shape[workload.dims.index(dim)],
            ),
        )
        for dim, size in sample.items()
    )
    batch = integer(data.get("batch", 32), "read.batches.batch", minimum=1, maximum=1_000_000)
    batches = integer(data.get("batches", 1), "read.batches.batches", minimum=1)
    shuffle = data.get("shuffle", True)
    if not isinstance(shuffle, bool):
        raise fail("read.batches.shuffle", f"{shuffle!r} is not allowed; allowed: true, false")
    spec = BatchSpec(
        extents,
        batch,
        batches,
        shuffle,
        loader=choice(data.get("loader", "auto"), "read.batches.loader", LOADERS),
        step=parse_step(data.get("step", 0)),
        device=choice(data.get("device", "cpu"), "read.batches.device", DEVICES),
        default_batches="batches" not in data,
    )
    samples = sample_count(workload, spec)
    wanted = batch * batches
    if wanted > min(samples, MAX_SAMPLES):
        raise fail(
            "read.batches",
            f"{batches} batches of {batch} need {wanted} samples; the workload holds "
            f"{samples} samples of {_shape(spec, workload)}; allowed: at most {samples}",
        )
    return spec


def parse_step(value: object) -> float:
    """``read.batches.step`` in seconds: ``50ms``, ``0.2s`` or a number of seconds (0: none)."""
    allowed = "allowed: a time like 50ms or 0.2s, or 0 for no step"
    if isinstance(value, bool):
        raise fail("read.batches.step", f"{value!r} is not a time; {allowed}")
    text = str(value).strip().replace(" ", "")
    unit = text.lstrip("0123456789.")
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        raise fail("read.batches.step", f"{value!r} is not a time; {allowed}") from None
    if unit not in STEP_UNITS or not math.isfinite(number) or number < 0:
        raise fail("read.batches.step", f"{value!r} is not a time; {allowed}")
    return number * STEP_UNITS[unit]


def sample_count(workload: Workload, spec: BatchSpec) -> int:
    """Samples of ``spec`` that tile ``workload`` without overlapping."""
    extents = dict(spec.sample)
    return math.prod(
        n // extents.get(d, n) for d, n in zip(workload.dims, workload.shape, strict=True)
    )


def _shape(spec: BatchSpec, workload: Workload) -> str:
    extents = dict(spec.sample)
    return "x".join(
        str(extents.get(d, n)) for d, n in zip(workload.dims, workload.shape, strict=True)
    )


def check_loader_knobs(parameters: object, read: ReadSpec) -> None:
    """Refuse the loader knobs (``num_workers``...) in a sweep whose reads have no ``batches``.

    ``parameters`` is the spec's section as written (checked before the values are).

    Raises
    ------
    SpecError
        Naming the parameter and what it needs.
    """
    if "batches" in read.patterns or not isinstance(parameters, Mapping):
        return
    for name in LOADER_KNOBS:
        if name in parameters:
            raise fail(
                f"parameters.{name}",
                f"{parameters[name]!r} applies only to the batches read pattern; "
                "allowed: add batches to read.patterns, or remove the parameter",
            )


def check_fidelity(sweep: Sweep) -> None:
    """Refuse a ``fidelity`` whose share of the workload holds too few samples for a repeat.

    Raises
    ------
    SpecError
        Naming the fidelity, the samples it holds and what the batches need.
    """
    spec = sweep.read.batches
    if spec is None:
        return
    for param in sweep.parameters:
        if param.name != "fidelity":
            continue
        for value in param.values:
            held = sample_count(sweep.workload_at(value), spec)
            if held < spec.batch * spec.batches:
                raise fail(
                    "parameters.fidelity",
                    f"{value} keeps {held} samples; read.batches needs "
                    f"{spec.batch * spec.batches}; allowed: a larger fidelity or fewer batches",
                )


def finish_batches(sweep: Sweep) -> Sweep:
    """``sweep`` with its default number of batches set, once the loader knobs are known.

    Also refuses a loader or device this machine or a backend cannot give.

    Raises
    ------
    SpecError
        Naming the field, the value and what is allowed.
    """
    spec = sweep.read.batches
    if spec is None:
        return sweep
    _check_loader(spec, sweep.backends)
    if spec.loader == "xbatcher":
        check_xbatcher(sweep, spec)
    if spec.default_batches:
        spec = replace(spec, batches=default_batches(sweep, spec))
        sweep = replace(sweep, read=replace(sweep.read, batches=spec))
    check_fidelity(sweep)
    return sweep


def default_batches(sweep: Sweep, spec: BatchSpec) -> int:
    """Enough batches that steady state dominates a repeat, as many as the smallest file holds.

    ``BATCHES_PER_SLOT`` batches per batch in flight (``num_workers x prefetch_factor``
    at the largest the sweep sets), at least 20.
    """
    values = {p.name: [v for v in p.values if isinstance(v, int)] for p in sweep.parameters}
    workers = max([1, *values.get("num_workers", [])])
    prefetch = max(values.get("prefetch_factor") or [2])
    fidelities = [v for p in sweep.parameters if p.name == "fidelity" for v in p.values] or [None]
    held = min(sample_count(sweep.workload_at(f), spec) for f in fidelities)
    most = min(held, MAX_SAMPLES) // spec.batch
    return max(1, min(max(20, BATCHES_PER_SLOT * workers * prefetch), most))


def torch_installed() -> bool:
    """Whether PyTorch can be imported here (looked up, not imported: that takes seconds)."""
    return importlib.util.find_spec("torch") is not None


def _check_loader(spec: BatchSpec, backends: tuple[str, ...]) -> None:
    from iotune.backends import get_backend
    from iotune.backends.exports_base import Target

    if spec.device == "cuda":
        _check_cuda(spec)
    if spec.loader != "torch":
        return
    if not torch_installed():
        raise fail(
            "read.batches.loader",
            "'torch' needs PyTorch, which is not installed here (pip install torch); "
            "allowed without it: auto, iotune",
        )
    target = Target("data", ("x",), (1,), "int16")
    for name in backends:
        try:
            get_backend(name).loader_open(target)
        except NotApplicable as err:
            raise fail(
                "read.batches.loader", f"'torch' cannot read {name}: {err}; allowed: auto, iotune"
            ) from None


def check_xbatcher(sweep: Sweep, spec: BatchSpec) -> None:
    """Refuse ``loader: xbatcher`` where xbatcher cannot read the sweep's batches.

    It needs xbatcher installed, formats xarray opens and samples whole along every
    dimension but the first.  It has no workers: a point with ``num_workers`` does not
    apply (:func:`iotune.runner.plan.resolve_point`).

    Raises
    ------
    SpecError
        Naming the field, the value and what is allowed.
    """
    from iotune.backends.xbatcher_exports import generator_arguments
    from iotune.core.extras import install_hint
    from iotune.specfile.xarray_reads import require_xarray

    if importlib.util.find_spec("xbatcher") is None:
        raise fail(
            "read.batches.loader",
            f"'xbatcher' needs xbatcher, which is not installed here ({install_hint('xbatcher')}); "
            "allowed without it: auto, torch, iotune",
        )
    require_xarray(sweep.backends, "read.batches.loader", every=True)
    w = sweep.workload
    try:
        generator_arguments(tuple(w.dims), tuple(w.shape), spec.to_dict())
    except NotApplicable as err:
        raise fail("read.batches.sample", f"{dict(spec.sample)!r}: {err}") from None


def _check_cuda(spec: BatchSpec) -> None:
    if spec.loader in ("iotune", "xbatcher"):
        raise fail(
            "read.batches.device",
            f"'cuda' needs the torch loader (read.batches.loader: {spec.loader}); allowed: cpu",
        )
    if not torch_installed():
        raise fail(
            "read.batches.device",
            "'cuda' needs PyTorch, which is not installed here (pip install torch); allowed: cpu",
        )
    import torch  # type: ignore[import-not-found,unused-ignore]

    if not torch.cuda.is_available():
        raise fail("read.batches.device", "'cuda': torch sees no CUDA GPU here; allowed: cpu")

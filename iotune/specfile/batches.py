"""The ``read.batches`` section and the loader knobs that only it gives a meaning to."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from iotune.model.checks import fail, integer, mapping, section
from iotune.model.spec import BatchSpec

if TYPE_CHECKING:
    from iotune.model.spec import ReadSpec, Sweep, Workload

KEYS = ("sample", "batch", "batches", "shuffle")
#: the parameters of the batches pattern's loader (:mod:`iotune.runner.loader`)
LOADER_KNOBS = ("workers", "prefetch")
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
    batches = integer(data.get("batches", 20), "read.batches.batches", minimum=1)
    shuffle = data.get("shuffle", True)
    if not isinstance(shuffle, bool):
        raise fail("read.batches.shuffle", f"{shuffle!r} is not allowed; allowed: true, false")
    spec = BatchSpec(extents, batch, batches, shuffle)
    samples = sample_count(workload, spec)
    wanted = batch * batches
    if wanted > min(samples, MAX_SAMPLES):
        raise fail(
            "read.batches",
            f"{batches} batches of {batch} need {wanted} samples; the workload holds "
            f"{samples} samples of {_shape(spec, workload)}; allowed: at most {samples}",
        )
    return spec


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
    """Refuse ``workers`` or ``prefetch`` in a sweep whose reads have no ``batches``.

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

"""What each trial task is expected to cost, so a task farm hands out the longest first.

Trials of one sweep differ in cost by two orders of magnitude (bzip2 at level 9
beside blosc-lz4 at level 1).  Handed out in grid order, the costly ones that
come last run alone while the other workers idle.  The estimate needs only
the order to be right: seconds per byte of each distinct codec from a short
probe (about 1 MiB of the workload's own data through the codec table of
:mod:`iotune.model.codecs`, once per ``(codec, level, shuffle)`` of the plan),
times the bytes a task moves (the workload, written once and read once per
pattern, per timed repeat), plus a fixed cost per task.  A backend that knows
better answers :meth:`~iotune.backends.base.Backend.expected_seconds`.

As tasks finish, :meth:`Expected.observe` scales the estimate of the task's
codec by what such tasks measured, so a probe that was off corrects itself.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping
from typing import Any

from iotune.model.records import TrialResult, TrialTask
from iotune.model.spec import MeasureSpec, Workload

#: bytes of the workload each distinct codec compresses in the probe
PROBE_BYTES = 2**20
#: an assumed speed of file systems for the bytes a file-backed trial moves: only the
#: order of the tasks depends on it, and a storage-bound trial's codec cost adds to it
IO_BYTES_PER_S = 1e9
#: what any task costs besides its bytes (opening, closing, verifying, the result's trip)
TASK_S = 0.02

CodecKey = tuple[str, Any, str]


def codec_key(params: Mapping[str, Any]) -> CodecKey | None:
    """``(codec, level, shuffle)`` of a trial's parameters; None when it has no codec."""
    if "codec" not in params:
        return None
    return (str(params["codec"]), params.get("level"), str(params.get("shuffle", "none")))


@dataclasses.dataclass(frozen=True)
class CodecCost:
    """What a codec did to the probe's bytes: seconds per raw byte each way, and its ratio."""

    encode_s_per_byte: float
    decode_s_per_byte: float
    #: stored bytes over raw bytes (1.0: no compression)
    stored_share: float

    @property
    def per_byte(self) -> float:
        """Encode and decode seconds per raw byte together."""
        return self.encode_s_per_byte + self.decode_s_per_byte


def probe_codecs(workload: Workload, keys: Iterable[CodecKey]) -> dict[CodecKey, float]:
    """Seconds per byte to compress and decompress the workload's data with each codec.

    Parameters
    ----------
    workload
        Its first planes (about :data:`PROBE_BYTES`) are the probe's data.
    keys
        The distinct ``(codec, level, shuffle)`` of the plan.

    Returns
    -------
    dict
        ``(encode + decode seconds) / bytes`` per key; a codec numcodecs cannot
        build here (its trials will be not applicable) is left out.
    """
    return {key: c.per_byte for key, c in profile_codecs(workload, keys, rounds=1).items()}


def profile_codecs(
    workload: Workload,
    keys: Iterable[CodecKey],
    *,
    rounds: int = 3,
    nbytes: int = PROBE_BYTES,
) -> dict[CodecKey, CodecCost]:
    """:class:`CodecCost` of each ``(codec, level, shuffle)`` on the workload's own data.

    Parameters
    ----------
    workload
        Its first planes (about ``nbytes``) are the probe's data.
    keys
        The distinct ``(codec, level, shuffle)``.
    rounds
        Each codec's fastest round counts (1: the quickest probe, for an order).

    A codec numcodecs cannot build here (its trials will be not applicable) is
    left out.
    """
    from iotune.core.errors import NotApplicable
    from iotune.measuring.data import Field
    from iotune.model import codecs

    workload = _probe_workload(workload)
    plane = max(1, workload.nbytes // max(1, workload.shape[0]))
    rows = max(1, min(workload.shape[0], nbytes // plane))
    data = Field(workload).slab(0, rows).tobytes()
    found: dict[CodecKey, CodecCost] = {}
    for key in set(keys):
        name, level, shuffle = key
        try:
            codec = codecs.Codec(name, None if level is None else int(level), shuffle)
            pipeline = codecs.numcodecs_pipeline(codec, itemsize=workload.itemsize)
        except (NotApplicable, ValueError, ImportError):
            continue
        found[key] = _codec_cost(pipeline, data, rounds=rounds)
    return found


def _probe_workload(workload: Workload) -> Workload:
    """``workload``, its planes cropped to about :data:`PROBE_BYTES` when larger.

    The field is generated plane by plane: a 1 GiB plane would cost the probe
    seconds.  A user's file (``field: file``) is stood in for by the smooth
    field of its shape: the probe only orders the trials, and a file that is
    missing or unreadable is for the trials to report, one by one.
    """
    if workload.field == "file":
        workload = dataclasses.replace(workload, field="smooth", path=None, variable=None)
    plane = workload.nbytes // max(1, workload.shape[0])
    if plane <= PROBE_BYTES or len(workload.shape) < 2:
        return workload
    side = max(2, int((PROBE_BYTES / workload.itemsize) ** (1 / (len(workload.shape) - 1))))
    cropped = (workload.shape[0], *(min(n, side) for n in workload.shape[1:]))
    return dataclasses.replace(workload, shape=cropped)


def _codec_cost(pipeline: list[Any], data: bytes, *, rounds: int = 3) -> CodecCost:
    """The codec's fastest of ``rounds``: the first pays for allocations, and a busy
    machine only ever slows a round down."""
    encode = decode = float("inf")
    encoded: Any = data
    for _ in range(rounds):
        t0 = time.perf_counter()
        encoded = data
        for step in pipeline:
            encoded = step.encode(encoded)
        t1 = time.perf_counter()
        decoded: Any = encoded
        for step in reversed(pipeline):
            decoded = step.decode(decoded)
        t2 = time.perf_counter()
        encode, decode = min(encode, t1 - t0), min(decode, t2 - t1)
    stored = len(memoryview(encoded).cast("B")) if pipeline else len(data)
    size = max(1, len(data))
    return CodecCost(encode / size, decode / size, stored / size)


def expected_repeats(measure: MeasureSpec) -> int:
    """Timed repeats a trial is expected to take (adaptive ones: at least their minimum)."""
    from iotune.measuring import precision

    return max(1, precision.MIN_AUTO_REPEATS if measure.adaptive else measure.repeats)


class Expected:
    """Expected seconds of trial tasks, refined by what finished tasks measured.

    Parameters
    ----------
    per_byte
        Codec seconds per byte, from :func:`probe_codecs`.
    """

    def __init__(self, per_byte: Mapping[CodecKey, float]) -> None:
        self.per_byte = dict(per_byte)
        self._fallback = max(per_byte.values(), default=0.0)
        self._measured: dict[Any, list[float]] = {}  # group: [measured s, expected s]

    @classmethod
    def of_tasks(cls, workload: Workload, params: Iterable[Mapping[str, Any]]) -> Expected:
        """The estimate of a plan's trials (``params`` of each), the codec probe run here."""
        keys = {k for p in params if (k := codec_key(p)) is not None}
        return cls(probe_codecs(workload, keys) if keys else {})

    def seconds(self, task: TrialTask) -> float:
        """The task's expected seconds, scaled by what its codec's tasks measured so far."""
        group = self._group(task)
        raw = self._raw(task)
        seen = self._measured.get(group)
        if seen and seen[1] > 0:
            return raw * seen[0] / seen[1]
        return raw * self._ratio()

    def observe(self, task: TrialTask, result: TrialResult) -> None:
        """Learn from a finished task (a failed one says nothing of the cost)."""
        if result.status != "ok" or result.seconds <= 0:
            return
        seen = self._measured.setdefault(self._group(task), [0.0, 0.0])
        seen[0] += result.seconds
        seen[1] += self._raw(task)

    def _ratio(self) -> float:
        measured = sum(s[0] for s in self._measured.values())
        expected = sum(s[1] for s in self._measured.values())
        return measured / expected if measured > 0 and expected > 0 else 1.0

    def _group(self, task: TrialTask) -> Any:
        return (task.trial.backend, codec_key(task.trial.params))

    def _raw(self, task: TrialTask) -> float:
        from iotune.backends import get_backend

        backend = get_backend(task.trial.backend)
        own = backend.expected_seconds(task.trial.params, task.workload)
        if own is not None:
            return TASK_S + own * expected_repeats(task.measure)
        nbytes = task.workload.nbytes * (1 + len(task.read.patterns))
        key = codec_key(task.trial.params)
        codec = self.per_byte.get(key, self._fallback) if key else 0.0
        io = 0.0 if not backend.io_bound else nbytes / IO_BYTES_PER_S
        return TASK_S + (nbytes * codec / 2 + io) * expected_repeats(task.measure)

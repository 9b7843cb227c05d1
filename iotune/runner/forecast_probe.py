"""The short probe a plan's forecast stands on, run in a scratch directory.

Two measurements, a second or so together: the file system's bytes per second
written with fsync and read back cold (a file of :data:`PROBE_FILE_BYTES`), and a
tiny real trial of the plan's (its layout and codec on a few chunks of smooth
data, one repeat, the sweep's built-in read patterns), whose time beyond what the
model gives its bytes is what any repeat costs besides its bytes.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path

from iotune.model.records import Trial, TrialTask
from iotune.model.spec import Sweep, Workload
from iotune.runner import forecast as model
from iotune.runner.expected import codec_key, profile_codecs

#: bytes the storage probe writes and reads back
PROBE_FILE_BYTES = 16 * 2**20
#: the probe's block size, as a slab of a trial writes
BLOCK_BYTES = 4 * 2**20
#: the tiny trial's extent along each dimension when its layout has no chunk shape
TINY_SIDE = 16


def unforecastable(sweep: Sweep, trials: tuple[Trial, ...]) -> str:
    """Why the model cannot forecast these trials (``""``: it can)."""
    from iotune.backends import get_backend

    if sweep.storage is not None:
        return "trials on an object store (the probe measures local files)"
    for trial in trials:
        if get_backend(trial.backend).launches(trial.params):
            return f"launched {trial.backend} ranks (their cost is the launcher's and the ranks')"
        if int(trial.params.get("concurrency", 1)) > 1:
            return "concurrent writers (their contention is what the sweep measures)"
    return ""


def predict(sweep: Sweep, trials: tuple[Trial, ...], directory: Path) -> model.Forecast:
    """Probe ``directory`` and the workload's codecs, then forecast ``trials``.

    Raises
    ------
    UsageError
        ``directory`` is not an existing directory.
    """
    from iotune.core.errors import UsageError

    if not directory.is_dir():
        raise UsageError(f"--scratch {directory}: not an existing directory")
    keys = {k for t in trials if (k := codec_key(t.params)) is not None}
    codecs = profile_codecs(sweep.workload, keys) if keys else {}
    write_bps, read_bps = storage_rates(directory)
    rates = model.Rates(write_bps, read_bps, repeat_s=0.0)
    if trials:
        rates = dataclasses.replace(
            rates, repeat_s=repeat_overhead(sweep, trials[0], directory, codecs, rates)
        )
    return model.forecast(sweep, trials, codecs, rates)


def storage_rates(directory: Path, *, nbytes: int = PROBE_FILE_BYTES) -> tuple[float, float]:
    """Bytes per second written (fsync included) and read cold in ``directory``."""
    from iotune.measuring.measure import evict

    block = os.urandom(BLOCK_BYTES)
    with tempfile.TemporaryDirectory(prefix="iotune-probe-", dir=directory) as tmp:
        path = Path(tmp) / "probe.bin"
        t0 = time.perf_counter()
        with path.open("wb") as fh:
            for _ in range(max(1, nbytes // BLOCK_BYTES)):
                fh.write(block)
            fh.flush()
            os.fsync(fh.fileno())
        wrote = time.perf_counter() - t0
        evict([path])
        t0 = time.perf_counter()
        with path.open("rb") as fh:
            while fh.read(BLOCK_BYTES):
                pass
        read = time.perf_counter() - t0
        size = path.stat().st_size
    return size / max(wrote, 1e-6), size / max(read, 1e-6)


def repeat_overhead(
    sweep: Sweep,
    trial: Trial,
    directory: Path,
    codecs: dict,
    rates: model.Rates,
) -> float:
    """Seconds a repeat costs besides its bytes: a tiny real trial, less its modelled bytes.

    The trial runs twice in this process and the second counts: the first pays
    for importing the format's library, which a run's trial worker pays once.
    """
    from iotune.runner.trial import run_trial

    tiny = _tiny_sweep(sweep, trial)
    task = TrialTask(trial, tiny.workload, tiny.read, tiny.measure, str(directory))
    seconds = []
    for _ in range(2):
        result = run_trial(task)
        if result.status != "ok":
            return 0.0  # the trials will say why; the forecast keeps to the bytes
        seconds.append(result.ended - result.started)
    modelled = model.trial_cost(tiny, trial, codecs, rates).seconds
    return max(0.0, seconds[-1] - modelled)


def _tiny_sweep(sweep: Sweep, trial: Trial) -> Sweep:
    """The sweep cut to a few of ``trial``'s chunks, one repeat, built-in reads."""
    from iotune.core.units import parse_chunk_label

    workload = sweep.workload
    label = parse_chunk_label(str(trial.params.get("chunks", "contiguous")))
    if isinstance(label, tuple) and len(label) == len(workload.shape):
        shape = tuple(min(c, n) for c, n in zip(label, workload.shape, strict=True))
    else:
        shape = tuple(min(TINY_SIDE, n) for n in workload.shape)
    small: Workload = dataclasses.replace(
        workload, shape=shape, field="smooth", path=None, variable=None
    )
    patterns = tuple(p for p in sweep.read.patterns if p in model.SELECTED_PATTERNS) or ("full",)
    # the windows at their defaults, which scale to the tiny shape (the sweep's may not fit)
    read = dataclasses.replace(
        sweep.read, patterns=patterns, user=(), spatial=(), random_shape=(), batches=None
    )
    measure = dataclasses.replace(sweep.measure, repeats=1, adaptive=False, noise_probes=0)
    return dataclasses.replace(sweep, workload=small, read=read, measure=measure)

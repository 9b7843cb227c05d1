"""Replay: a search measured by a recorded grid instead of the file system.

Each trial the search asks for is answered from that configuration's recorded
repeats in a grid's results (an ordinary ``iotune run`` results.nc): as many
repeats as were recorded, drawn with replacement, seeded by the search's seed
and the trial's id, so a replay is reproducible and a re-measurement sees fresh
draws.  Each answer costs the wall time the grid recorded for that
configuration at that fidelity (``trial_s``), pro rata when the search's rule
stops the repeats early, so a time budget is spent as it would have been.
Write and read figures of a repeat stay together, as a real repeat's do.
The point is matched by trial id (the hash of the effective parameters), so a
search over the grid's own spec finds every applicable point.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.core.errors import ResultsError
from iotune.measuring.precision import hopeless
from iotune.model.records import TrialResult, TrialTask
from iotune.results.lossy import ERRORS
from iotune.results.partial import PARTIAL

if TYPE_CHECKING:
    import xarray as xr

_WRITE = {"MiBps": "write_MiBps", "s": "write_s", "cpu_s": "write_cpu_s"}
_READ = {
    "MiBps": "read_MiBps",
    "s": "read_s",
    "cpu_s": "read_cpu_s",
    "resident_fraction": "resident_fraction",
    "ops_per_s": "read_ops_per_s",
}


class ReplayMeasurer:
    """Answers trials from the recorded grid ``grid`` (a results Dataset).

    Raises
    ------
    ResultsError
        ``grid`` has no ``trial_id`` or ``write_MiBps`` (not an iotune grid).
    """

    def __init__(self, grid: xr.Dataset, *, seed: int) -> None:
        if "trial_id" not in grid or "write_MiBps" not in grid:
            raise ResultsError("the replayed results are not an iotune grid (no trial_id)")
        flat = grid.iotune._flat()
        self.seed = seed
        self.patterns = list(grid.iotune.patterns)
        ids = flat["trial_id"].transpose("point", ...).values.astype(str).ravel()
        self.index = {tid: i for i, tid in enumerate(ids) if tid}
        self.raw_bytes = int(grid.attrs.get("raw_bytes", 0))
        self.arrays = {
            n: _points(flat, n) for n in (*_WRITE.values(), *_READ.values()) if n in flat
        }
        names: tuple[str, ...] = ("file_bytes", "status", "error", "read_bytes", "read_ops")
        names += ("read_cache", "trial_s", "ratio")
        for name in (*names, *ERRORS):
            if name in flat:
                self.arrays[name] = _points(flat, name)

    def measure(self, tasks: Sequence[TrialTask]) -> Iterator[TrialResult]:
        for task in tasks:
            yield self.answer(task)

    def answer(self, task: TrialTask) -> TrialResult:
        """The recorded repeats of the task's configuration, drawn again."""
        trial = task.trial
        base = trial.id.split(".")[0]
        i = self.index.get(base)
        if i is None:
            return TrialResult(trial.id, "failed", "not a measured point of the replayed grid")
        status = str(self.arrays["status"][i])
        writes = self.arrays["write_MiBps"][i]
        good = np.flatnonzero(np.isfinite(writes))
        # a partial point (its run was stopped) replays from the repeats it has
        if status not in ("ok", PARTIAL) or not good.size:  # a failure costs time too
            failed = TrialResult(trial.id, "failed", str(self.arrays["error"][i]) or status)
            failed.busy_s = self._cost(i)
            return failed
        digest = int(hashlib.sha256(trial.id.encode()).hexdigest()[:12], 16)
        rng = np.random.default_rng([self.seed, digest])
        drawn = rng.choice(good, size=good.size, replace=True)
        result = self._result(trial.id, i, drawn)
        if task.early_stop is not None:
            for n in range(1, drawn.size):
                part = self._result(trial.id, i, drawn[:n])
                if hopeless(part, task.early_stop):
                    result, part.stop = part, "stopped_early"
                    break
        # the recorded wall time of this configuration at this fidelity, per repeat run
        result.busy_s = self._cost(i) * len(result.write) / drawn.size
        return result

    def _cost(self, i: int) -> float:
        """Point ``i``'s recorded wall time; where the grid has none (a failure, a merged
        older grid), the grid's median, so no trial is free and no budget is endless."""
        times = self.arrays.get("trial_s")
        if times is None:
            return 0.0  # no time budget is allowed on such a grid (tuning.replay_outcome)
        if np.isfinite(times[i]):
            return float(times[i])
        finite = times[np.isfinite(times)]
        return float(np.median(finite)) if finite.size else 0.0

    def _result(self, trial_id: str, i: int, drawn: np.ndarray) -> TrialResult:
        write = [{k: float(self.arrays[v][i][r]) for k, v in _WRITE.items()} for r in drawn]
        reads = {p: self._reads(i, j, drawn) for j, p in enumerate(self.patterns)}
        stored = int(self.arrays["file_bytes"][i])
        ratio = float(self.arrays["ratio"][i]) if "ratio" in self.arrays else math.nan
        return TrialResult(
            trial_id,
            "ok",
            write=write,
            reads={p: runs for p, runs in reads.items() if runs},
            file_bytes=stored,
            # each point's own raw size: a grid may hold several fidelities
            raw_bytes=round(ratio * stored) if math.isfinite(ratio) else self.raw_bytes,
            stored=self._errors(i),
        )

    def _errors(self, i: int) -> dict[str, float]:
        """A quantised point's error, so a replayed search gates on it as a live one."""
        errors = {k: float(self.arrays[k][i]) for k in ERRORS if k in self.arrays}
        return errors if np.isfinite(errors.get("max_abs_error", np.nan)) else {}

    def _reads(self, i: int, j: int, drawn: np.ndarray) -> list[dict[str, Any]]:
        values = self.arrays.get("read_MiBps")
        if values is None or not np.isfinite(values[i][j]).any():
            return []
        runs = []
        for r in drawn:
            run: dict[str, Any] = {k: _plain(self.arrays[v][i][j][r]) for k, v in _READ.items()}
            run["cache"] = str(self.arrays["read_cache"][i][j][r])
            run["bytes"] = _plain(self.arrays["read_bytes"][i][j])
            run["ops"] = _plain(self.arrays["read_ops"][i][j])
            runs.append(run)
        return runs


def fractions_of_best(grid: xr.Dataset, objective: str) -> dict[str, float]:
    """Each measured point's score under ``objective`` (a metric or weights, as
    ``iotune recommend`` takes it) over the grid's best, by trial id: the true
    value, by the grid's medians, of whatever a replayed search recommends."""
    ranking = grid.iotune.rank(objective)
    best = max(c.score for c in ranking.candidates)
    return {str(grid["trial_id"].sel(c.coords).values): c.score / best for c in ranking.candidates}


def _points(flat: xr.Dataset, name: str) -> np.ndarray:
    """A variable with ``point`` first, as NumPy."""
    return flat[name].transpose("point", ...).values


def _plain(value: Any) -> Any:
    value = float(value)
    return int(value) if math.isfinite(value) and value.is_integer() else value

"""``plan``'s forecast: what a sweep will cost, from the plan and a short probe."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iotune.runner.expected import Expected
from iotune.runner.forecast import Forecast
from iotune.runner.plan import Plan

#: a trial predicted to take more than this share of the sweep is warned of when it starts
DOMINATING_SHARE = 0.5
#: below this many trials one of them is always a large share: no warning
MIN_TRIALS_TO_WARN = 4
#: nor a trial predicted to take less than this, whatever its share: nothing to plan around
MIN_SECONDS_TO_WARN = 1.0
#: a repeat's fixed cost when no tiny trial measured it (``plan`` measures it: 50-250 ms here)
REPEAT_S = 0.1
#: the codec probe of a serial run, which waits for it: shares need no precision
QUICK_PROBE_BYTES = 2**18


@dataclass(frozen=True)
class PlanForecast:
    """A plan's :class:`~iotune.runner.forecast.Forecast`, or why there is none."""

    forecast: Forecast | None
    reason: str = ""


def forecast_plan(plan: Plan, *, scratch: str | Path = ".") -> PlanForecast:
    """Probe ``scratch`` and forecast the plan's trials (see :mod:`iotune.runner.forecast`).

    Parameters
    ----------
    plan
        From :func:`~iotune.runner.plan.make_plan`.
    scratch
        The directory the run will measure in: the probe writes and reads there.
    """
    from iotune.core.errors import one_line
    from iotune.runner.forecast_probe import predict, unforecastable

    reason = unforecastable(plan.sweep, plan.trials)
    if reason:
        return PlanForecast(None, reason)
    try:
        return PlanForecast(predict(plan.sweep, plan.trials, Path(scratch)))
    except OSError as err:  # a scratch the probe cannot write: the plan itself still stands
        return PlanForecast(None, f"a probe that could not write in {scratch}: {one_line(err)}")


def forecast_text(found: PlanForecast, plan: Plan, *, scratch: str | Path = ".") -> list[str]:
    """The lines ``plan`` prints below the trials."""
    from iotune.views.forecast_text import forecast_lines

    if found.forecast is None:
        return [f"predicted wall time: none for {found.reason}"]
    per_host = plan.sweep.execution.per_host
    return forecast_lines(found.forecast, scratch=Path(scratch), per_host=per_host)


def forecast_json(found: PlanForecast, plan: Plan) -> dict[str, Any]:
    """The forecast as ``plan --format json`` gives it."""
    from iotune.views.forecast_text import forecast_dict

    if found.forecast is None:
        return {"none": found.reason}
    return forecast_dict(found.forecast, per_host=plan.sweep.execution.per_host)


def expect_and_forecast(plan: Plan, *, farm: bool) -> tuple[Expected, list[str]]:
    """A run's start: the farm's cost estimate and the warnings of dominating trials.

    One codec probe serves both.  No storage probe here (a run starts at once):
    the model's nominal storage rates stand in, which leave the trials' shares of
    the sweep, what the warning is about, mostly to their codecs and chunks.
    """
    from iotune.runner import expected, forecast
    from iotune.runner.forecast_probe import unforecastable
    from iotune.views.forecast_text import dominating_lines

    sweep, trials = plan.sweep, plan.trials
    warn = len(trials) >= MIN_TRIALS_TO_WARN and not unforecastable(sweep, trials)
    keys = {k for t in trials if (k := expected.codec_key(t.params)) is not None}
    probe = {"rounds": 1, "nbytes": expected.PROBE_BYTES if farm else QUICK_PROBE_BYTES}
    codecs = (
        expected.profile_codecs(sweep.workload, keys, **probe) if keys and (farm or warn) else {}
    )
    costs = Expected({k: c.per_byte for k, c in codecs.items()} if farm else {})
    if not warn:
        return costs, []
    rates = forecast.Rates(expected.IO_BYTES_PER_S, expected.IO_BYTES_PER_S, REPEAT_S)
    found = forecast.forecast(sweep, trials, codecs, rates)
    return costs, dominating_lines(found, DOMINATING_SHARE, at_least=MIN_SECONDS_TO_WARN)


def warn_dominating(lines: list[str]) -> None:
    """Each line as a :class:`~iotune.core.errors.CostWarning` (the CLI shows them)."""
    import warnings

    from iotune.core.errors import CostWarning

    for line in lines:
        warnings.warn(line, CostWarning, stacklevel=2)

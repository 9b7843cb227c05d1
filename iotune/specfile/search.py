"""The ``search`` section of a sweep spec: an adaptive search instead of the full grid.

::

    search:
      strategy: auto          # grid | random | tpe | gp | auto
      budget: 25%             # trials (re-measurements included), a share of the space,
                              # or time on the machine: 30min, 2h (the trials' wall times)
      objective: read:timeseries   # or weights: write=1,read:spatial=2
      max_size: 64MiB         # constraints as iotune recommend takes them
      max_tie_loss: 0.05      # a tie-break picks a point at most this much slower
      readers: [ncdump, h5netcdf]  # only codecs these open without plugins (all: every reader)
      seed: 0
      parallel: 2             # trials asked at once (default: what the executor runs at once)
      remeasure: 10%          # share of the budget kept to re-measure the leaders
      prior: [results/old-a]  # earlier results (grids or searches) to start from
      focus: [chunks, codec]  # parameters explored first (iotune darshan writes it)
      early_stop: true        # stop repeating a trial that is hopeless beyond noise

Only ``iotune tune`` reads it (``strategy`` defaults to ``auto`` there; a spec
without the section is searched with every default); ``iotune run`` measures
the grid as always.  A spec without the section keeps its digest, so old
journals resume.
"""

from __future__ import annotations

import importlib.util
import math

from iotune.core.errors import RecommendError
from iotune.model.checks import byte_size, choice, fail, integer, mapping, section
from iotune.model.spec import STRATEGIES, WITHOUT_TORCH, SearchSpec

SEARCH_KEYS = (
    "strategy",
    "budget",
    "objective",
    "max_size",
    "max_ratio_loss",
    "max_error",
    "min_digits",
    "max_tie_loss",
    "readers",
    "seed",
    "parallel",
    "remeasure",
    "prior",
    "focus",
    "early_stop",
)
#: the units a time budget may be given in, in seconds
TIME_UNITS = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0, "hr": 3600.0}


def parse_search(
    value: object, metrics: tuple[str, ...], swept: tuple[str, ...] = ()
) -> SearchSpec:
    """Validate the ``search`` section; ``metrics`` are those the reads measure,
    ``swept`` the spec's parameters (what ``focus`` may name; one held at a single
    value, by an override say, is simply not explored).

    Raises
    ------
    SpecError
        Naming the field, the bad value and what is allowed.
    """
    data = mapping(section(value), "search", SEARCH_KEYS)
    strategy = choice(data.get("strategy", "auto"), "search.strategy", STRATEGIES)
    if strategy == "gp" and importlib.util.find_spec("torch") is None:
        raise fail(
            "search.strategy",
            "'gp' needs PyTorch for optuna's GPSampler, which is not installed "
            f"(pip install torch); allowed without it: {', '.join(WITHOUT_TORCH)}",
        )
    budget, fraction, seconds = _budget(data.get("budget"))
    limit = _share(data.get("max_ratio_loss"), "search.max_ratio_loss")
    parallel = data.get("parallel")
    return SearchSpec(
        strategy=strategy,
        budget=budget,
        budget_fraction=fraction,
        objective=parse_objective_text(data.get("objective"), metrics),
        max_size=None if "max_size" not in data else byte_size(data["max_size"], "search.max_size"),
        max_ratio_loss=limit,
        max_tie_loss=_share(data.get("max_tie_loss"), "search.max_tie_loss"),
        readers=_readers(data.get("readers")),
        max_error=_max_error(data.get("max_error")),
        min_digits=None
        if data.get("min_digits") is None
        else integer(data["min_digits"], "search.min_digits", minimum=0),
        seed=integer(data.get("seed", 0), "search.seed"),
        parallel=None if parallel is None else integer(parallel, "search.parallel", minimum=1),
        remeasure=_remeasure(data.get("remeasure", SearchSpec.remeasure)),
        budget_seconds=seconds,
        prior=_names(data.get("prior"), "search.prior", "a list of results directories or files"),
        focus=_focus(data.get("focus"), swept),
        early_stop=_flag(data.get("early_stop", True), "search.early_stop"),
    )


def _budget(value: object) -> tuple[int | None, float | None, float | None]:
    if value is None:
        return None, None, None
    if isinstance(value, str) and value.strip().endswith("%"):
        return None, _fraction(value, "search.budget", upper=1.0), None
    if isinstance(value, str) and value.strip()[-1:].isalpha():
        return None, None, parse_duration(value, "search.budget")
    return integer(value, "search.budget", minimum=2), None, None


def parse_duration(value: str, path: str) -> float:
    """``30min``, ``2h``, ``90s``, ``1.5h`` in seconds (more than 0)."""
    text = value.strip().replace(" ", "")
    unit = text.lstrip("0123456789.")
    allowed = "allowed: trials (an integer), a share like 25%, or a time like 30min, 2h, 90s"
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        raise fail(path, f"{value!r} is not a number of {unit or 'units'}; {allowed}") from None
    if unit not in TIME_UNITS:
        raise fail(path, f"{value!r}: unknown unit {unit!r}; {allowed}")
    if not math.isfinite(number) or number <= 0:
        raise fail(path, f"{value!r} is not more than 0; {allowed}")
    return number * TIME_UNITS[unit]


def _names(value: object, path: str, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
        raise fail(path, f"{value!r}; allowed: {what}")
    return tuple(v.strip() for v in items)


def _focus(value: object, swept: tuple[str, ...]) -> tuple[str, ...]:
    names = _names(value, "search.focus", "a list of the spec's parameter names")
    for name in names:
        if name not in swept:
            raise fail(
                "search.focus",
                f"{name!r} is not a parameter of the spec; allowed: {', '.join(swept) or 'none'}",
            )
    return names


def _readers(value: object) -> tuple[str, ...] | None:
    """Reader names (a list, or text separated by commas; ``all``: every reader), checked
    against those the formats declare."""
    from iotune.backends import reader_names
    from iotune.model.readers import ALL, check_reader_names, parse_readers

    if value is None:
        return None
    allowed = f"allowed: {', '.join([ALL, *reader_names()])}"
    if not isinstance(value, str | list):
        raise fail("search.readers", f"{value!r}; {allowed}")
    try:
        names = parse_readers(value)
        return check_reader_names(names or (), reader_names())
    except RecommendError:
        raise fail("search.readers", f"{value!r}; {allowed}") from None


def _flag(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise fail(path, f"{value!r}; allowed: true, false")
    return value


def _remeasure(value: object) -> float:
    """0 (never re-measure: the best single trial wins) or a share up to 90 %."""
    if value == 0 and not isinstance(value, bool):
        return 0.0
    return _fraction(value, "search.remeasure", upper=0.9)


def _fraction(value: object, path: str, *, upper: float) -> float:
    """``25%`` or ``0.25``, in (0, upper]."""
    allowed = f"allowed: a percentage like 25% or a fraction in (0, {upper:g}]"
    number: object = value
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            number = float(value.strip()[:-1]) / 100
        except ValueError:
            raise fail(path, f"{value!r} is not a number; {allowed}") from None
    if not isinstance(number, int | float) or isinstance(number, bool):
        raise fail(path, f"{value!r} is not allowed; {allowed}")
    if not math.isfinite(number) or not 0 < number <= upper:
        raise fail(path, f"{value!r} is not allowed; {allowed}")
    return float(number)


def parse_objective_text(value: object, metrics: tuple[str, ...]) -> str:
    """``read:timeseries`` or ``write=1,read:spatial=2``, checked against ``metrics``.

    Returns the objective as given (stripped); an absent one is ``""`` (the
    default of ``iotune recommend``: :func:`iotune.model.objective.default_metric`).
    """
    if value is None:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise fail("search.objective", f"expected a metric or weights, got {value!r}")
    allowed = f"allowed: {', '.join(metrics)}, or weights like write=1,read:spatial=2"
    for part in value.split(","):
        metric, sep, weight = part.strip().partition("=")
        if metric not in metrics:
            raise fail("search.objective", f"unknown metric {metric!r}; {allowed}")
        if sep:
            try:
                number = float(weight)
            except ValueError:
                number = math.nan
            if not math.isfinite(number) or number <= 0:
                raise fail("search.objective", f"weight {weight!r} of {metric}; allowed: > 0")
        elif "," in value:
            raise fail("search.objective", f"{part.strip()!r} has no weight; {allowed}")
    return value.strip()


def _share(value: object, name: str) -> float | None:
    """A fraction from 0 to 1 (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise fail(name, f"{value!r} is not a fraction in [0, 1]")
    return float(value)


def _max_error(value: object) -> float | None:
    """The largest absolute error quantisation may add, a number of at least 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise fail("search.max_error", f"{value!r}; allowed: a number of at least 0")
    return float(value)

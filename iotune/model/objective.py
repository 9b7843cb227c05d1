"""What "best" means: one metric or weights over several, the limits a pick keeps to, alpha.

An :class:`Objective` is the one form the objective options travel in, from the
command line (``iotune recommend``), the notebook API (``iotune.recommend``,
``ds.iotune.best``) and a search's ``search`` section to the ranking
(:mod:`iotune.results.objective`) and the search's goal
(:class:`iotune.search.state.Goal`).  It is checked when it is made; which metrics
exist is known only beside the results, so :meth:`Objective.resolved` checks the
metric names against them and fills in the default metric.

Errors are :class:`~iotune.core.errors.RecommendError` naming the option as the
command line spells it (``--max-size: ...``), the bad value and what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from iotune.core.errors import RecommendError
from iotune.core.units import parse_size
from iotune.model.readers import parse_readers

if TYPE_CHECKING:
    from iotune.model.spec import SearchSpec

#: the significance level of the winner against the runner-up unless one is given
ALPHA = 0.05
#: how much slower than the fastest a tie-break may pick (a smaller file) unless one is given
MAX_TIE_LOSS = 0.05
#: a metric's data variable: ``write`` -> write_MiBps, ``read:<pattern>`` -> read_MiBps
METRIC_VARIABLES = {"write": "write_MiBps", "read": "read_MiBps"}


def split_metric(metric: str) -> tuple[str, str | None]:
    """A metric's variable and pattern: ``"read:spatial"`` -> ``("read_MiBps", "spatial")``."""
    kind, _sep, pattern = metric.partition(":")
    if kind not in METRIC_VARIABLES or (kind == "read") != bool(pattern):
        raise RecommendError(f"{metric!r} is not a metric; allowed: write, read:<pattern>")
    return METRIC_VARIABLES[kind], pattern or None


def parse_weights(text: str) -> dict[str, float]:
    """``"write=1,read:timeseries=3"`` -> ``{"write": 1.0, "read:timeseries": 3.0}``."""
    out = {}
    for part in text.split(","):
        metric, sep, value = part.strip().partition("=")
        try:
            weight = float(value) if sep else float("nan")
        except ValueError:
            weight = float("nan")
        if not metric or not math.isfinite(weight):
            raise RecommendError(
                f"--weights: {part.strip()!r}; allowed: METRIC=NUMBER pairs separated by "
                "commas, like write=1,read:timeseries=3"
            )
        out[metric] = weight
    return out


def parse_max_size(value: int | str | None) -> int | None:
    """Bytes from ``"64MiB"`` or a number of bytes; None stays None."""
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as err:
        raise RecommendError(f"--max-size: {err}") from err


def parse_max_ratio_loss(value: float | str | None) -> float | None:
    """A fraction from 0 to 1 from a number or its text; None stays None."""
    if value is None:
        return None
    example = "0.1 accepts a compression ratio 10% below the best"
    return _fraction(value, "--max-ratio-loss", example)


def parse_max_tie_loss(value: float | str | None) -> float:
    """A fraction from 0 to 1 from a number or its text; None is :data:`MAX_TIE_LOSS`."""
    if value is None:
        return MAX_TIE_LOSS
    example = "0.05 lets a tie-break pick a point at most 5% slower than the fastest"
    return _fraction(value, "--max-tie-loss", example)


def _fraction(value: float | str, option: str, example: str) -> float:
    """``value`` as a fraction from 0 to 1, or a one-line error naming ``option``."""
    loss: object = value
    if isinstance(value, str):
        try:
            loss = float(value)
        except ValueError:
            loss = math.nan
    if isinstance(loss, bool) or not (isinstance(loss, int | float) and 0 <= loss <= 1):
        raise RecommendError(f"{option}: {value!r}; allowed: a fraction from 0 to 1 ({example})")
    return float(loss)


def parse_max_error(value: float | str | None) -> float | None:
    """The largest absolute error quantisation may add (at least 0); None stays None."""
    return _at_least_zero("max_error", value, float)


def parse_min_digits(value: int | str | None) -> int | None:
    """The significant digits every quantised value keeps (at least 0); None stays None."""
    return _at_least_zero("min_digits", value, int)


def _at_least_zero(name: str, value: Any, cast: type) -> Any:
    if value is None:
        return None
    try:
        number = -1 if isinstance(value, bool) else cast(value)
    except (TypeError, ValueError):
        number = -1
    if not number >= 0:  # NaN too
        flag = "--" + name.replace("_", "-")
        raise RecommendError(
            f"{flag}: {value!r}; allowed: a number of at least 0 "
            "(the largest absolute error, or the significant digits every value keeps)"
        )
    return number


def check_alpha(alpha: float) -> None:
    """Raise :class:`RecommendError` unless ``0 < alpha < 1``."""
    if isinstance(alpha, bool) or not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise RecommendError(
            f"alpha: {alpha!r}; allowed: a significance level from 0 to 1, like 0.05"
        )


def default_metric(allowed: Sequence[str], *, own: Sequence[str] = ()) -> tuple[str, str]:
    """The objective when none is given, and why, from the metrics the results have.

    The first read pattern that is the user's own code (``own``), else the loader's
    (``batches``), else ``timeseries`` (the built-in patterns' documented default),
    else the sweep's first read pattern, else ``write``: a sweep measures the write
    of every trial, but a user who reads names what they read.
    """
    reads = [m for m in allowed if m.startswith("read:")]
    mine = [f"read:{p}" for p in own if f"read:{p}" in reads]
    if mine:
        return mine[0], "your code's first read pattern"
    for metric, why in (
        ("read:batches", "the sweep's loader pattern"),
        ("read:timeseries", "the built-in default"),
    ):
        if metric in reads:
            return metric, why
    if reads:
        return reads[0], "the sweep's first read pattern"
    return "write", "the sweep reads nothing"


def _check_weights(weights: Mapping[str, float]) -> None:
    if not weights:
        raise RecommendError("--weights: none given; allowed: METRIC=NUMBER pairs")
    for metric, weight in weights.items():
        if not isinstance(metric, str) or not metric:
            raise RecommendError(f"--weights: metric {metric!r}; allowed: write, read:<pattern>")
        ok = isinstance(weight, int | float) and not isinstance(weight, bool)
        if not (ok and math.isfinite(weight) and weight > 0):
            raise RecommendError(f"--weights: weight {weight!r} of {metric}; allowed: a number > 0")


@dataclass(frozen=True)
class Objective:
    """One metric or weights over several, the limits a pick keeps to, and ``alpha``.

    Parameters
    ----------
    metric
        ``"write"`` or ``"read:<pattern>"``; with neither ``metric`` nor ``weights``
        :meth:`resolved` picks :func:`default_metric`'s.
    weights
        Several metrics, ``{"write": 1.0, "read:timeseries": 3.0}`` (each > 0); not
        with ``metric``.
    max_size
        Largest stored size allowed, bytes.
    max_ratio_loss
        Fraction from 0 to 1 of the best compression ratio one may give up.
    max_error, min_digits
        What quantisation may cost (largest absolute error, significant digits
        kept); without either no quantised configuration is picked.
    alpha
        Significance level of the winner against the runner-up.
    readers
        Readers the pick must open without plugins (``ncdump``, ``h5netcdf``, ...;
        ``all``: every reader of its format, ``--portable``); names are checked
        against the formats' readers when ranking.
    max_tie_loss
        Fraction from 0 to 1: among configurations the repeats cannot tell apart, a
        smaller file is picked only when its estimate is at most this much slower
        than the fastest (:mod:`iotune.results.ties`); default :data:`MAX_TIE_LOSS`.

    Text as people type it (``"64MiB"``, ``"write=1,read:spatial=2"``) goes
    through :meth:`parse`.

    Raises
    ------
    RecommendError
        A bad value; the message names the option, the value and what is allowed.
    """

    metric: str | None = None
    weights: Mapping[str, float] | None = None
    max_size: int | None = None
    max_ratio_loss: float | None = None
    max_error: float | None = None
    min_digits: int | None = None
    alpha: float = ALPHA
    readers: tuple[str, ...] | None = None
    #: why the metric is the default one (set by :meth:`resolved`; empty when given)
    why: str = field(default="", compare=False)
    max_tie_loss: float = MAX_TIE_LOSS

    def __post_init__(self) -> None:
        if self.metric is not None and self.weights is not None:
            raise RecommendError("--objective and --weights: give one, not both")
        if self.metric is not None and (not isinstance(self.metric, str) or not self.metric):
            raise RecommendError(f"--objective: {self.metric!r}; allowed: write or read:<pattern>")
        if self.weights is not None:
            _check_weights(self.weights)
            object.__setattr__(self, "weights", {m: float(w) for m, w in self.weights.items()})
        # the parse_* helpers check (and keep) the values given as numbers too
        object.__setattr__(self, "max_size", parse_max_size(self.max_size))
        object.__setattr__(self, "max_ratio_loss", parse_max_ratio_loss(self.max_ratio_loss))
        object.__setattr__(self, "max_error", parse_max_error(self.max_error))
        object.__setattr__(self, "min_digits", parse_min_digits(self.min_digits))
        check_alpha(self.alpha)
        object.__setattr__(self, "readers", parse_readers(self.readers))
        object.__setattr__(self, "max_tie_loss", parse_max_tie_loss(self.max_tie_loss))

    @classmethod
    def parse(
        cls,
        objective: str | Mapping[str, float] | None = None,
        *,
        weights: str | Mapping[str, float] | None = None,
        max_size: int | str | None = None,
        max_ratio_loss: float | str | None = None,
        max_error: float | str | None = None,
        min_digits: int | str | None = None,
        alpha: float = ALPHA,
        readers: str | Sequence[str] | None = None,
        max_tie_loss: float | str | None = None,
    ) -> Objective:
        """The objective from options as people give them (text or numbers).

        ``objective`` may itself be weights (``"write=1,read:spatial=2"`` or a
        mapping) when ``weights`` is not given.
        """
        if weights is None and (isinstance(objective, Mapping) or "=" in str(objective or "")):
            objective, weights = None, objective
        if isinstance(weights, str):
            weights = parse_weights(weights)
        return cls(
            metric=None if objective is None else str(objective),
            weights=weights,
            max_size=parse_max_size(max_size),
            max_ratio_loss=parse_max_ratio_loss(max_ratio_loss),
            max_error=parse_max_error(max_error),
            min_digits=parse_min_digits(min_digits),
            alpha=alpha,
            readers=parse_readers(readers),
            max_tie_loss=parse_max_tie_loss(max_tie_loss),
        )

    @classmethod
    def from_search(cls, search: SearchSpec) -> Objective:
        """The objective of a spec's ``search`` section (already checked by the spec)."""
        return cls.parse(
            search.objective or None,
            max_size=search.max_size,
            max_ratio_loss=search.max_ratio_loss,
            max_error=search.max_error,
            min_digits=search.min_digits,
            max_tie_loss=search.max_tie_loss,
            readers=search.readers,
        )

    @property
    def limits(self) -> dict[str, Any]:
        """The limits given, ``{"max_size": bytes, "max_ratio_loss": 0.1, ...}``."""
        given = {
            "max_size": self.max_size,
            "max_ratio_loss": self.max_ratio_loss,
            "max_error": self.max_error,
            "min_digits": self.min_digits,
            "readers": list(self.readers) if self.readers else None,
        }
        return {k: v for k, v in given.items() if v is not None}

    def resolved(self, allowed: Sequence[str], *, own: Sequence[str] = ()) -> Objective:
        """This objective as weights over metrics the results have (``allowed``).

        Without ``metric`` and ``weights`` the metric is :func:`default_metric`'s,
        and :attr:`why` says why.  ``own`` names the read patterns that are the
        user's own code (preferred as the default).

        Raises
        ------
        RecommendError
            A metric the results do not have; the message lists those they have.
        """
        why = ""
        if self.weights is None:
            metric = self.metric
            if metric is None:
                metric, why = default_metric(allowed, own=own)
            weights, where = {metric: 1.0}, "--objective"
        else:
            weights, where = dict(self.weights), "--weights"
        for metric in weights:
            if metric not in allowed:
                raise RecommendError(
                    f"{where}: {metric!r} is not a metric of these results; "
                    f"allowed: {', '.join(allowed)}"
                )
        return replace(self, metric=None, weights=weights, why=why)

    @property
    def said(self) -> str:
        """The objective as one line says it: ``read:x (why; pass --objective to choose)``."""
        chosen = self.weights or ({self.metric: 1.0} if self.metric else {})
        name = ",".join(f"{m}={w:g}" for m, w in chosen.items())
        if len(chosen) == 1:
            name = next(iter(chosen))
        return f"{name} ({self.why}; pass --objective to choose)" if self.why else name

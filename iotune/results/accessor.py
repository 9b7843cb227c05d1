"""``ds.iotune``: the one way to read a results Dataset back.

Registered as an xarray accessor (like ``ds.rio`` in rioxarray) when :mod:`iotune` is
imported::

    import iotune
    ds = iotune.open_results("results/demo")
    ds.iotune.swept                      # ("chunks", "codec")
    ds.iotune.median("write")            # write_MiBps, median of the repeats
    ds.iotune.best("read:timeseries", max_size="64MiB").label
    ds.iotune.best("write").separation.text  # beats the runner-up beyond noise?
    ds.iotune.points(frame=True)         # one row per grid point

A DataArray gets ``da.iotune.median(dim="repeat")`` and ``da.iotune.spread()``.
Everything here reads the results schema (version 1) as :mod:`iotune.results.dataset`
writes it, and changes nothing in it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iotune.core.errors import RecommendError, ResultsError
from iotune.model.objective import Objective
from iotune.results import percall, sparse
from iotune.results.labels import label as label  # re-exported: importers also register
from iotune.results.labels import plain, point_label
from iotune.results.labels import value_label as value_label
from iotune.results.lossy import errors_of
from iotune.results.objective import Candidate, Ranking, figures, own_patterns, split_metric
from iotune.results.partial import usable
from iotune.results.stats import ALPHA, nanmedian
from iotune.results.written import without_nothing_written

if TYPE_CHECKING:
    import pandas as pd

#: dimensions that are never swept parameters
NOT_PARAMS = ("pattern", "repeat", "metric", "point", "trial", "probe", "request", "baseline")


@xr.register_dataarray_accessor("iotune")
class IotuneArrayAccessor:
    """``da.iotune``: statistics over the repeats of one results variable."""

    def __init__(self, da: xr.DataArray) -> None:
        self._da = da

    def median(self, dim: str = "repeat") -> xr.DataArray:
        """The median over ``dim``, ignoring NaN (all-NaN points stay NaN); attributes kept."""
        if dim not in self._da.dims:
            return self._da
        return self._da.reduce(nanmedian, dim=dim, keep_attrs=True)

    def spread(self, dim: str = "repeat") -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
        """Median, minimum and maximum over ``dim``, ignoring NaN."""
        da = self._da if dim in self._da.dims else self._da.expand_dims(dim)
        return (
            da.iotune.median(dim),
            da.reduce(np.fmin.reduce, dim=dim, keep_attrs=True),
            da.reduce(np.fmax.reduce, dim=dim, keep_attrs=True),
        )


@xr.register_dataset_accessor("iotune")
class IotuneAccessor:
    """``ds.iotune``: a results Dataset read back (see the module docstring)."""

    def __init__(self, ds: xr.Dataset) -> None:
        self._ds = ds

    # --- what the attributes say --------------------------------------------

    @property
    def swept(self) -> tuple[str, ...]:
        """The swept parameters in order: the ``swept`` attribute's names that are dims.

        A Dataset without the attribute (built by hand) has every dimension swept
        but ``pattern``, ``repeat`` and ``metric``.
        """
        ds = self._ds
        names = ds.attrs.get("swept")
        if names is None:
            return tuple(str(d) for d in ds.dims if d not in NOT_PARAMS)
        words = " ".join(str(n) for n in np.atleast_1d(names)).split()
        return sparse.swept(ds, words)  # a search's parameters are coordinates along point

    @property
    def patterns(self) -> tuple[str, ...]:
        """The read patterns (``full``, ``spatial``, ...)."""
        ds = self._ds
        return tuple(str(p) for p in ds["pattern"].values) if "pattern" in ds.dims else ()

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics an objective may name: ``write`` and ``read:<pattern>``."""
        found: tuple[str, ...] = ("write",) if "write_MiBps" in self._ds else ()
        if "read_MiBps" in self._ds:
            found += tuple(f"read:{p}" for p in self.patterns)
        return found

    @property
    def spec(self) -> str:
        """The sweep's spec (YAML text) as it was run."""
        return str(self._ds.attrs.get("spec", ""))

    @property
    def provenance(self) -> dict[str, str]:
        """Where and how the sweep ran: ``{"host": ..., "scratch_fs_type": ...}``."""
        prefix = "provenance_"
        attrs = self._ds.attrs
        return {k.removeprefix(prefix): v for k, v in attrs.items() if k.startswith(prefix)}

    @property
    def fixed(self) -> dict[str, Any]:
        """The parameters the spec held fixed, ``{name: label}``."""
        return self._json("fixed_parameters", {})

    @property
    def workload(self) -> dict[str, Any]:
        """The workload (shape, dtype, field, ...), as in the spec."""
        return self._json("workload", {})

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(str(self._ds.attrs.get("backends", "")).split())

    @property
    def hint_sets(self) -> dict[str, dict[str, Any]]:
        """The named MPI-IO hint sets, ``{name: {key: value}}``; ``{}`` without any."""
        sets = self._json("hint_sets", {})
        return sets if isinstance(sets, dict) else {}

    @property
    def noise(self) -> dict[str, float]:
        """The run's noise floor per metric, relative (:mod:`iotune.results.noise`)."""
        return {k: v for k, v in self._json("noise_floor", {}).items() if v is not None}

    def _json(self, name: str, default: Any) -> Any:
        try:
            return json.loads(str(self._ds.attrs.get(name) or "null")) or default
        except ValueError:
            return default

    # --- numbers --------------------------------------------------------------

    def metric(self, name: str) -> xr.DataArray:
        """A metric's figure, higher is better: ``write`` (write_MiBps), ``read:<pattern>``
        (read_MiBps there; calls/s for the user's own code, :mod:`iotune.results.percall`)."""
        var, pattern = split_metric(name)
        if var not in self._ds:
            raise ResultsError(f"the results have no {var!r} variable")
        if pattern is None:  # a write: none where the backend makes nothing
            return without_nothing_written(self._ds[var], self.backends)
        if pattern not in self.patterns:
            raise ResultsError(f"{name!r}: no read pattern {pattern!r}; patterns: {self.patterns}")
        if percall.per_call(self._ds, name):
            return percall.calls_per_second(self._ds, pattern)
        return self._ds[var].sel(pattern=pattern)

    def unit(self, name: str) -> str:
        """The unit of :meth:`metric`: ``MiB/s``, or ``calls/s`` for the user's own code."""
        return percall.unit(self._ds, name)

    def median(self, var: str | None = None) -> xr.DataArray | xr.Dataset:
        """The median over ``repeat``, ignoring NaN (all-NaN points stay NaN).

        Parameters
        ----------
        var
            A data variable (``read_s``) or a metric (``write``, ``read:spatial``);
            default every numeric variable (those without ``repeat`` unchanged).
        """
        ds = self._ds
        if var is None:
            numeric = [n for n, v in ds.data_vars.items() if v.dtype.kind in "fiu"]
            return xr.Dataset({n: ds[n].iotune.median() for n in numeric}, attrs=dict(ds.attrs))
        da = ds[var] if var in ds.data_vars else self.metric(var)
        if da.dtype.kind not in "fiu":
            raise ResultsError(f"{var!r} is not numeric, so it has no median")
        return da.iotune.median()

    def spread(self, var: str) -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
        """Median, minimum and maximum over ``repeat`` of a variable or metric, ignoring NaN."""
        return (self._ds[var] if var in self._ds.data_vars else self.metric(var)).iotune.spread()

    def counts(self) -> dict[str, int]:
        """How many grid points are ``ok``, ``partial``, ``failed``, ``not_applicable``,
        ``pending``."""
        values, n = np.unique(self._ds["status"].values.astype(str), return_counts=True)
        return dict(zip(values.tolist(), n.tolist(), strict=True))

    def dense(self) -> xr.Dataset:
        """A search's sparse points as the grid of their visited values (a grid: itself)."""
        return sparse.dense(self._ds, self.swept)

    # --- grid points ------------------------------------------------------------

    def coords_of(self, point: xr.Dataset | xr.DataArray) -> dict[str, Any]:
        """A grid point's swept coordinates as plain values, ``{"chunks": "auto", ...}``."""
        return {d: plain(point[d].values) for d in self.swept if d in point.coords}

    def settings_of(self, point: xr.Dataset) -> dict[str, Any]:
        """A point's effective parameters: its ``effective`` JSON, else coords and fixed ones."""
        text = str(point["effective"].values) if "effective" in point else ""
        if text:
            try:
                return dict(json.loads(text))
            except ValueError:
                pass  # fall back to what the coordinates say
        settings = dict(self.fixed)
        if len(self.backends) == 1:
            settings["backend"] = self.backends[0]
        return {**settings, **self.coords_of(point)}

    def _grid(self) -> xr.Dataset:
        """``ds`` without the length-1 dimensions that are not swept (fixed parameters)."""
        ds, swept = self._ds, self.swept
        extra = [str(d) for d in ds.dims if d not in (*swept, *NOT_PARAMS)]
        varying = [d for d in extra if ds.sizes[d] > 1]
        if varying:
            raise ResultsError(f"the results vary along {varying}, which are not swept parameters")
        return ds.isel({d: 0 for d in extra})

    def _flat(self) -> xr.Dataset:
        """One ``point`` dimension over the swept parameters, in grid (C) order."""
        if sparse.is_sparse(self._ds):
            return self._ds
        ds, dims = self._grid(), list(self.swept)
        return ds.stack(point=dims) if dims else ds.expand_dims(point=[0])

    def points(
        self, *, include_not_applicable: bool = False, frame: bool = False
    ) -> list[dict[str, Any]] | pd.DataFrame:
        """One row per grid point, in grid order.

        A row holds the swept coordinates, the median over repeats of every metric
        (``write``, ``read:<pattern>``, :meth:`unit`), ``file_bytes``, ``ratio``,
        ``status`` and ``error``.

        Parameters
        ----------
        include_not_applicable
            Also the points a format cannot express (``status`` ``not_applicable``).
        frame
            A :class:`pandas.DataFrame` instead of a list of plain dicts.
        """
        flat = self._flat()
        n = flat.sizes["point"]
        columns: dict[str, list] = {d: [plain(v) for v in flat[d].values] for d in self.swept}
        for name in self.metrics:
            med = flat.iotune.metric(name).iotune.median()
            columns[name] = med.transpose("point", ...).values.reshape(n).tolist()
        for name in ("file_bytes", "ratio"):
            if name in flat:
                columns[name] = flat[name].transpose("point", ...).values.reshape(n).tolist()
        for name in ("status", "error"):
            if name in flat:
                values = flat[name].transpose("point", ...).values.reshape(n)
                columns[name] = ["" if v is None else str(plain(v)) for v in values]
        rows = [{k: v[i] for k, v in columns.items()} for i in range(n)]
        if not include_not_applicable:
            rows = [r for r in rows if r.get("status") != "not_applicable"]
        if frame:
            import pandas as pd

            return pd.DataFrame(rows, columns=list(columns))
        return rows

    # --- the best point under an objective ------------------------------------------

    def rank(
        self,
        objective: str | Mapping[str, float] | None = None,
        *,
        weights: str | Mapping[str, float] | None = None,
        max_size: int | str | None = None,
        max_ratio_loss: float | str | None = None,
        max_error: float | str | None = None,
        min_digits: int | str | None = None,
        alpha: float = ALPHA,
    ) -> Ranking:
        """Every successful point scored under an objective, and those within the limits ranked.

        Parameters
        ----------
        objective
            One metric, ``"write"`` or ``"read:<pattern>"``, or weights over several
            (``"write=1,read:spatial=2"`` or a mapping).  Default
            :func:`~iotune.model.objective.default_metric`'s.  (An
            :class:`~iotune.model.objective.Objective` made elsewhere: :meth:`rank_by`.)
        weights
            Weights as a separate argument (as ``iotune recommend --weights``).
        max_size
            Largest stored size allowed (bytes or ``"64MiB"``).
        max_ratio_loss
            Fraction from 0 to 1: candidates must compress to at least
            ``(1 - max_ratio_loss)`` times the best compression ratio of the sweep.
        max_error, min_digits
            What lossy quantisation may cost: the largest absolute error of a stored
            value, the significant digits every value keeps.  Without either, quantised
            configurations are left out.
        alpha
            Significance level of the winner against the runner-up (``separation``).

        Raises
        ------
        RecommendError
            An unknown metric, a bad weight, constraint or ``alpha``, or no configuration left.
        """
        goal = Objective.parse(
            objective,
            weights=weights,
            max_size=max_size,
            max_ratio_loss=max_ratio_loss,
            max_error=max_error,
            min_digits=min_digits,
            alpha=alpha,
        )
        return self.rank_by(goal)

    def rank_by(self, objective: Objective) -> Ranking:
        """:meth:`rank` under an :class:`~iotune.model.objective.Objective` made elsewhere."""
        goal = objective.resolved(self.metrics, own=own_patterns(self._ds))
        everything = self._candidates(goal.weights or {})
        if not everything:
            raise RecommendError("the results hold no successful trial with every objective metric")
        return sparse.rank(self._ds, goal, everything, goal.alpha)  # a search: what it re-measured

    def best(
        self,
        objective: str | Mapping[str, float] | None = None,
        *,
        weights: str | Mapping[str, float] | None = None,
        max_size: int | str | None = None,
        max_ratio_loss: float | str | None = None,
        max_error: float | str | None = None,
        min_digits: int | str | None = None,
        alpha: float = ALPHA,
    ) -> Candidate:
        """The best successful point under an objective (see :meth:`rank`).

        Returns
        -------
        Candidate
            ``coords``, ``label``, effective ``settings``; per metric the ``median``,
            ``low`` and ``high`` over repeats (:meth:`unit`); ``score``, ``file_bytes``, ``ratio``;
            ``separation`` from the runner-up (a one-sided Mann-Whitney test over the
            repeats: ``beats_runner_up``, ``p_value``, ``separation.text``), ``None``
            when no other point qualifies.
        """
        return self.rank(
            objective,
            weights=weights,
            max_size=max_size,
            max_ratio_loss=max_ratio_loss,
            max_error=max_error,
            min_digits=min_digits,
            alpha=alpha,
        ).best

    def _candidates(self, weights: Mapping[str, float]) -> list[Candidate]:
        flat, dims = self._flat(), list(self.swept)
        npts = flat.sizes["point"]
        metric = flat.iotune.metric
        values = {m: metric(m).transpose("point", ...).values.reshape(npts, -1) for m in weights}
        ok = np.ones(npts, dtype=bool)
        if "status" in flat:
            ok &= usable(flat["status"].transpose("point", ...).values.astype(str))
        if "fidelity" in flat.coords:  # cheap trials inform a search; only full size is picked
            ok &= (share := flat["fidelity"].values.astype(float)) >= np.nanmax(share)
        bounds = {m: percall.intervals(flat, m) for m in weights}
        found = []
        for i, numbers in figures(values, weights, ok).items():
            one = flat.isel(point=i)
            coords = {d: plain(one[d].values) for d in dims}
            ci = {m: (float(lo[i]), float(hi[i])) for m, (lo, hi) in bounds.items()}
            settings = self.settings_of(one)
            found.append(
                Candidate(
                    coords=coords,
                    label=point_label(coords, settings, one),
                    settings=settings,
                    file_bytes=float(one["file_bytes"]) if "file_bytes" in one else float("nan"),
                    ratio=float(one["ratio"]) if "ratio" in one else float("nan"),
                    ci={m: lo_hi for m, lo_hi in ci.items() if lo_hi[0] <= lo_hi[1]},
                    errors=errors_of(one),
                    **percall.extras(flat, one, weights),
                    **numbers,
                )
            )
        return found

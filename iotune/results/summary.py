"""Text summaries of a results Dataset: the best configuration per metric, a table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.units import format_size

if TYPE_CHECKING:
    import xarray as xr


def swept_dims(ds: xr.Dataset) -> list[str]:
    return [d for d in str(ds.attrs.get("swept", "")).split() if d in ds.dims]


def _label(ds: xr.Dataset, index: dict[str, Any]) -> str:
    parts = []
    for dim, value in index.items():
        if dim == "chunk_cache":
            value = format_size(int(value))
        parts.append(f"{dim}={value}")
    return " ".join(parts) or "(single configuration)"


def best(ds: xr.Dataset) -> list[dict[str, Any]]:
    """The fastest ok configuration for writes and for each read pattern (median of repeats)."""
    rows = []
    metrics = [("write", ds["write_MiBps"])]
    metrics += [(f"read:{p}", ds["read_MiBps"].sel(pattern=p)) for p in ds["pattern"].values]
    for name, var in metrics:
        median = var.median("repeat")
        if bool(median.isnull().all()):
            rows.append({"metric": name, "config": "no successful trial", "MiBps": np.nan})
            continue
        flat = median.argmax(dim=swept_dims(ds)) if swept_dims(ds) else {}
        index = {d: ds[d].values[int(i)] for d, i in flat.items()}
        point = ds.isel({d: int(i) for d, i in flat.items()})
        rows.append(
            {
                "metric": name,
                "config": _label(ds, index),
                "MiBps": float(median.isel({d: int(i) for d, i in flat.items()})),
                "ratio": float(point["ratio"]),
            }
        )
    return rows


def format_best(ds: xr.Dataset) -> str:
    lines = ["best configuration (median of repeats):"]
    for row in best(ds):
        if np.isnan(row["MiBps"]):
            lines.append(f"  {row['metric']:<18} {row['config']}")
        else:
            lines.append(
                f"  {row['metric']:<18} {_num(row['MiBps']):>9} MiB/s  ratio "
                f"{row['ratio']:5.2f}  {row['config']}"
            )
    return "\n".join(lines)


def counts(ds: xr.Dataset) -> dict[str, int]:
    values, n = np.unique(ds["status"].values.astype(str), return_counts=True)
    return dict(zip(values.tolist(), n.tolist(), strict=True))


def table(ds: xr.Dataset, *, include_not_applicable: bool = False) -> str:
    """One row per grid point: parameters, median throughputs, ratio and status."""
    dims = swept_dims(ds)
    patterns = [str(p) for p in ds["pattern"].values]
    head = [*dims, "write", *(f"read:{p}" for p in patterns), "ratio", "status"]
    rows = []
    stacked = ds.stack(point=dims) if dims else ds.expand_dims(point=[0])
    write = stacked["write_MiBps"].median("repeat")
    read = stacked["read_MiBps"].median("repeat")
    for i in range(stacked.sizes["point"]):
        one = stacked.isel(point=i)
        status = str(one["status"].values)
        if status == "not_applicable" and not include_not_applicable:
            continue
        cells = [
            format_size(int(one[d])) if d == "chunk_cache" else str(one[d].values) for d in dims
        ]
        cells.append(_num(write.isel(point=i)))
        cells += [_num(read.isel(point=i).sel(pattern=p)) for p in patterns]
        cells.append(_num(one["ratio"], digits=2))
        cells.append(status if status == "ok" else f"{status}: {one['error'].values}"[:90])
        rows.append(cells)
    widths = [max(len(str(r[c])) for r in [head, *rows]) for c in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*r) for r in rows]
    hidden = counts(ds).get("not_applicable", 0) if not include_not_applicable else 0
    note = f"; {hidden} not-applicable points hidden (--all shows them)" if hidden else ""
    return "\n".join(out) + f"\n(throughput in MiB/s, median of repeats{note})"


def _num(value: Any, *, digits: int | None = None) -> str:
    """Fixed decimals when asked, else three significant digits (0.0123, 45.6, 1234)."""
    v = float(value)
    if np.isnan(v):
        return "-"
    if digits is not None:
        return f"{v:.{digits}f}"
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:#.3g}".rstrip(".")

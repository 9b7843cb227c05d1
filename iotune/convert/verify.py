"""Compare the target with the source, region by region, on the stored values.

Lossless settings must give identical values (NaN equal to NaN in the same places);
quantised ones values within the :class:`~iotune.convert.lossy.Tolerance`, whose
largest errors are measured per variable.  ``--verify sample`` checks the first,
the last and a middle region of each variable written by region, ``full`` every
region, ``none`` nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence

import numpy as np

from iotune.convert.lossy import Tolerance, within
from iotune.convert.regions import Region, sample
from iotune.convert.source import Source
from iotune.convert.whole import Rows, source_rows, target_rows
from iotune.core.errors import VerificationError
from iotune.model.quantize import ErrorMeter

VERIFY_MODES = ("full", "sample", "none")

Reader = Callable[[str, int | None, int | None], np.ndarray]
#: the part of a variable a region writes (slices by dimension name), None for none
KeyOf = Callable[[Region, str], "dict[str, slice] | None"]
BlockReader = Callable[[str, tuple[slice, ...]], np.ndarray]


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and values; NaN equals NaN for floating point."""
    if a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))


def verify(
    source: Source,
    read: Reader,
    *,
    by_region: Sequence[str],
    whole: Sequence[str],
    regions: Sequence[Region],
    region_dim: str,
    mode: str,
    whole_blocks: Mapping[str, Sequence[Rows]] | None = None,
    tolerance: Tolerance | None = None,
    lossy: Sequence[str] = (),
    meters: MutableMapping[str, ErrorMeter] | None = None,
    key: KeyOf | None = None,
    read_block: BlockReader | None = None,
) -> int:
    """Check the target through ``read(name, start, stop)``; return the regions checked.

    With ``key`` and ``read_block``, each region's part of each variable is the one
    ``key(region, name)`` names (blocks of two dimensions), read by ``read_block``.

    ``whole_blocks`` cuts the variables in ``whole`` along their own first dimension (see
    :mod:`iotune.convert.whole`); without it each is compared in one piece.  The
    variables in ``lossy`` are compared within ``tolerance``, their largest errors
    kept in ``meters`` (one :class:`ErrorMeter` per variable).

    Raises
    ------
    VerificationError
        A value differs (beyond the tolerance); the message names the variable and rows.
    """
    if mode == "none":
        return 0
    checked = list(regions) if mode == "full" else sample(regions)
    found = meters if meters is not None else {}

    def equal(name: str, expected: np.ndarray, got: np.ndarray, where: str) -> None:
        if tolerance is None or name not in lossy:
            if not same(expected, got):
                raise VerificationError(f"verify: {name}{where} differs from the source")
            return
        meter = found.setdefault(name, ErrorMeter())
        if not within(expected, got, tolerance, attrs=source.ds[name].attrs, meter=meter):
            raise VerificationError(
                f"verify: {name}{where} differs from the source beyond the error allowed by "
                f"quantize {tolerance.label} ({tolerance.text()}; largest error seen "
                f"{meter.max_abs:.3g}, relative {meter.max_rel:.3g})"
            )

    for name in whole:
        var = source.ds[name]
        if whole_blocks is None:
            equal(name, np.asarray(var.values), read(name, None, None), "")
            continue
        for block in whole_blocks.get(name) or ():
            rows = f" rows {block[0]}-{block[1]} of {var.dims[0]}" if var.ndim else ""
            got = target_rows(read, source.ds, name, block)
            equal(name, source_rows(source.ds, name, block), got, rows)
    for region in checked:
        if key is not None and read_block is not None:
            for name in by_region:
                part = key(region, name)
                if part is None:
                    continue
                var = source.ds[name]
                index = tuple(part.get(str(d), slice(None)) for d in var.dims)
                expected = np.asarray(var.isel(part).values)
                bounds = " x ".join(f"{cut.start}-{cut.stop}" for cut in part.values())
                where = f" rows {bounds} of {', '.join(part)}"
                equal(name, expected, read_block(name, index), where)
            continue
        for name in by_region:
            cut = {region_dim: slice(region.start, region.stop)}
            expected = np.asarray(source.ds[name].isel(cut).values)
            where = f" rows {region.start}-{region.stop} of {region_dim}"
            equal(name, expected, read(name, region.start, region.stop), where)
    return len(checked)

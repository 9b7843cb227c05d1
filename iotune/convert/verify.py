"""Compare the target with the source, region by region, on the stored values.

Lossless settings must give identical values (NaN equal to NaN in the same places);
``--verify sample`` checks the first, the last and a middle region of each variable
written by region, ``full`` every region, ``none`` nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from iotune.convert.regions import Region, sample
from iotune.convert.source import Source
from iotune.core.errors import VerificationError

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
    key: KeyOf | None = None,
    read_block: BlockReader | None = None,
) -> int:
    """Check the target through ``read(name, start, stop)``; return the regions checked.

    With ``key`` and ``read_block``, each region's part of each variable is the one
    ``key(region, name)`` names (blocks of two dimensions), read by ``read_block``.

    Raises
    ------
    VerificationError
        A value differs; the message names the variable and the rows.
    """
    if mode == "none":
        return 0
    checked = list(regions) if mode == "full" else sample(regions)
    for name in whole:
        if not same(np.asarray(source.ds[name].values), read(name, None, None)):
            raise VerificationError(f"verify: {name} differs from the source")
    for region in checked:
        if key is not None and read_block is not None:
            _check_blocks(source, region, by_region, key, read_block)
            continue
        for name in by_region:
            rows = {region_dim: slice(region.start, region.stop)}
            expected = np.asarray(source.ds[name].isel(rows).values)
            if not same(expected, read(name, region.start, region.stop)):
                raise VerificationError(
                    f"verify: {name} rows {region.start}-{region.stop} of {region_dim} "
                    "differ from the source"
                )
    return len(checked)


def _check_blocks(
    source: Source, region: Region, names: Sequence[str], key: KeyOf, read_block: BlockReader
) -> None:
    for name in names:
        part = key(region, name)
        if part is None:
            continue
        var = source.ds[name]
        expected = np.asarray(var.isel(part).values)
        index = tuple(part.get(str(d), slice(None)) for d in var.dims)
        if not same(expected, read_block(name, index)):
            raise VerificationError(
                f"verify: {name} {region.label()} of "
                f"{', '.join(map(str, var.dims[: len(region.bounds)]))} differ from the source"
            )

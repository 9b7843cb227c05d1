"""Compare the target with the source, region by region, on the stored values.

Lossless settings must give identical values (NaN equal to NaN in the same places);
``--verify sample`` checks the first, the last and a middle region of each variable
written by region, ``full`` every region, ``none`` nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from iotune.convert.blocks import Block, source_block, target_block
from iotune.convert.regions import Region, sample
from iotune.convert.source import Source
from iotune.core.errors import VerificationError

VERIFY_MODES = ("full", "sample", "none")

Reader = Callable[[str, int | None, int | None], np.ndarray]


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
    blocks: Mapping[str, Sequence[Block]] | None = None,
) -> int:
    """Check the target through ``read(name, start, stop)``; return the regions checked.

    ``blocks`` cuts the variables in ``whole`` along their own first dimension (see
    :mod:`iotune.convert.blocks`); without it each is compared in one piece.

    Raises
    ------
    VerificationError
        A value differs; the message names the variable and the rows.
    """
    if mode == "none":
        return 0
    checked = list(regions) if mode == "full" else sample(regions)
    for name in whole:
        for block in (blocks or {}).get(name) or ():
            if not same(
                source_block(source.ds, name, block), target_block(read, source.ds, name, block)
            ):
                dim = source.ds[name].dims[0] if source.ds[name].ndim else ""
                rows = f" rows {block[0]}-{block[1]} of {dim}" if dim else ""
                raise VerificationError(f"verify: {name}{rows} differs from the source")
        if blocks is None and not same(np.asarray(source.ds[name].values), read(name, None, None)):
            raise VerificationError(f"verify: {name} differs from the source")
    for region in checked:
        for name in by_region:
            rows = {region_dim: slice(region.start, region.stop)}
            expected = np.asarray(source.ds[name].isel(rows).values)
            if not same(expected, read(name, region.start, region.stop)):
                raise VerificationError(
                    f"verify: {name} rows {region.start}-{region.stop} of {region_dim} "
                    "differ from the source"
                )
    return len(checked)

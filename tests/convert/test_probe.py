"""What the dry run measures besides the sweep: the source read cold and verification's codec."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.convert.probe import verify_rate
from iotune.model.codecs import Codec


@pytest.mark.parametrize("codec", [Codec("zlib", 1, "byte"), Codec("zstd", 3), Codec("none")])
def test_verify_rate_decodes_and_compares_a_block(codec: Codec) -> None:
    rng = np.random.default_rng(1)
    block = np.cumsum(rng.normal(size=(8, 64, 64)), axis=0).astype("float32")
    rate = verify_rate(block, codec)
    assert rate is not None and rate > 0


def test_verify_rate_of_an_empty_block_is_unknown() -> None:
    assert verify_rate(np.zeros((0, 4), "float32"), Codec("zlib", 1)) is None

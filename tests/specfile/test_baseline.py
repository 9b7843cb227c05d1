"""The ``baseline`` section: a point of the grid; the digest changes only when present."""

from __future__ import annotations

import pytest

from iotune.core.errors import SpecError
from iotune.specfile.parse import parse_spec


def test_baseline_is_stored_as_labels_and_changes_the_digest(small_spec) -> None:
    plain = parse_spec(small_spec())
    with_base = parse_spec(small_spec({"baseline": {"chunks": [16, 16, 16], "codec": "zlib"}}))
    assert plain.baseline == {}
    assert with_base.baseline == {"chunks": "16x16x16", "codec": "zlib"}
    assert with_base.digest() != plain.digest()
    assert parse_spec(small_spec({"baseline": None})).digest() == plain.digest()


def test_digest_of_a_sweep_without_baseline_is_unchanged(small_spec) -> None:
    # the digest this spec had before the baseline section existed
    assert parse_spec(small_spec()).digest() == "4cac19fedcfff810"


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ({"level": 1}, "baseline.level: unknown key; allowed: chunks, codec"),
        (
            {"codec": "zstd"},
            "baseline.codec: zstd is not among the values of parameters.codec, so it would "
            "not be measured; allowed: none, zlib",
        ),
        ({"chunks": [1, 2]}, "baseline.chunks: [1, 2] has rank 2"),
    ],
)
def test_bad_baseline(small_spec, baseline: dict, message: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(small_spec({"baseline": baseline}))
    assert str(err.value).startswith(message)

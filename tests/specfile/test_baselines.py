"""The ``baselines`` list: names checked in one line; the digest changes only when present."""

from __future__ import annotations

import pytest

from iotune.core.errors import SpecError
from iotune.specfile.parse import parse_spec


def test_baselines_are_kept_in_order_and_change_the_digest(small_spec) -> None:
    plain = parse_spec(small_spec())
    named = parse_spec(small_spec({"baselines": ["cloud", "library"]}))
    assert plain.baselines == ()
    assert named.baselines == ("cloud", "library")
    assert named.digest() != plain.digest()
    assert parse_spec(small_spec({"baselines": None})).digest() == plain.digest()
    assert parse_spec(small_spec({"baselines": "balanced"})).baselines == ("balanced",)


def test_digest_of_a_sweep_without_baselines_is_unchanged(small_spec) -> None:
    # the digest this spec had before the baselines list existed
    assert parse_spec(small_spec()).digest() == "4cac19fedcfff810"


@pytest.mark.parametrize(
    ("baselines", "message"),
    [
        (
            ["library", "netcdf"],
            "baselines[1]: unknown baseline 'netcdf'; "
            "allowed: library, dask-auto, balanced, cloud, source",
        ),
        ([3], "baselines[0]: unknown baseline 3; allowed: library"),
        ({"library": 1}, "baselines: expected a list of names"),
        (["cloud", "cloud"], "baselines[1]: 'cloud' is listed twice"),
        (["source"], "baselines[0]: 'source' is the source file's own layout, so it needs field"),
    ],
)
def test_bad_baselines_are_refused_naming_the_entry(small_spec, baselines, message) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(small_spec({"baselines": baselines}))
    assert message in str(err.value)
    assert "\n" not in str(err.value)

"""A layout must not change the user's answer: exact, or within rounding and the lossy limit."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from iotune.core.errors import VerificationError
from iotune.measuring.sameanswer import compare, flatten, lossy_limit
from iotune.model.quantize import Quantize


def test_flatten_names_every_array_of_a_nested_result() -> None:
    da = xr.DataArray(np.arange(3.0), dims="month", coords={"month": [1, 2, 3]}, name="t")
    ds = xr.Dataset({"t": da})
    flat = flatten({"clim": da, "pair": (ds, 4)})
    assert set(flat) == {
        "['clim']",
        "['clim'].coords['month']",
        "['pair'][0]['t']",
        "['pair'][0]['month']",
        "['pair'][1]",
    }
    assert flat["['pair'][1]"] == 4


def test_integers_must_be_equal_and_the_place_is_named() -> None:
    want = {"[result]": np.arange(12).reshape(3, 4)}
    got = {"[result]": want["[result]"].copy()}
    compare(want, got)
    got["[result]"][2, 1] += 3
    with pytest.raises(VerificationError, match=r"largest difference 3 at \[result\]\[2, 1\]"):
        compare(want, got)


def test_floats_may_differ_by_summation_order_only() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((64, 1000)).astype(np.float32)
    want = {"m": data.mean(axis=1)}
    reordered = {"m": data[:, ::-1].reshape(64, 10, 100).sum(axis=2).sum(axis=1) / 1000}
    compare(want, reordered)  # another order: rounding, allowed
    with pytest.raises(VerificationError, match="at m"):
        compare(want, {"m": want["m"] + np.float32(1e-3)})


def test_nan_must_stay_nan() -> None:
    want = {"v": np.array([1.0, np.nan])}
    compare(want, {"v": np.array([1.0, np.nan])})
    with pytest.raises(VerificationError, match=r"largest difference inf at v\[1\]"):
        compare(want, {"v": np.array([1.0, 2.0])})


def test_a_quantised_trial_may_differ_within_its_limit() -> None:
    want = {"v": np.array([100.0, 200.0])}
    near = {"v": np.array([100.0, 200.0 + 200 * 2.0**-11])}
    limit = lossy_limit(Quantize("bitround", 10))
    assert limit == 2.0**-10 and lossy_limit(Quantize()) == 0
    assert lossy_limit(Quantize("digits", 3)) == pytest.approx(0.01)
    compare(want, near, relative=limit)
    with pytest.raises(VerificationError):
        compare(want, near)
    with pytest.raises(VerificationError):
        compare(want, {"v": np.array([100.0, 201.0])}, relative=limit)


def test_other_keys_or_shapes_are_different_answers() -> None:
    with pytest.raises(VerificationError, match="it holds"):
        compare({"a": np.zeros(2)}, {"b": np.zeros(2)})
    with pytest.raises(VerificationError, match=r"has shape \(3,\), the reference \(2,\)"):
        compare({"a": np.zeros(2)}, {"a": np.zeros(3)})

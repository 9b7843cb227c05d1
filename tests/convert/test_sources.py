"""A source of several files (a glob or a list) converted as one dataset along time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import xarray as xr

from iotune.cli.main import main
from tests.convert.conftest import make_cf_source
from tests.convert.test_convert import assert_same_data


def no_fill(ds: xr.Dataset) -> dict[str, dict[str, None]]:
    """Keep xarray from adding ``_FillValue: NaN`` to floats that have none."""
    return {
        str(n): {"_FillValue": None} for n, v in ds.variables.items() if "_FillValue" not in v.attrs
    }


def split(source: Path, where: Path, cuts: list[tuple[int, int]]) -> list[Path]:
    """The source's time steps ``cuts`` as files ``part0.nc``..., stored as the source."""
    parts = []
    with xr.open_dataset(source, decode_cf=False) as ds:
        for i, (a, b) in enumerate(cuts):
            part = ds.isel(time=slice(a, b))
            if i:
                part.attrs["title"] = f"part {i}"  # the first file's attributes are kept
            path = where / f"part{i}.nc"
            part.to_netcdf(path, unlimited_dims=["time"], encoding=no_fill(part))
            parts.append(path)
    return parts


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_a_glob_of_files_is_converted_as_one_dataset(tmp_path: Path, suffix: str) -> None:
    whole = make_cf_source(tmp_path / "whole.nc", time=40)
    data = tmp_path / "data"
    data.mkdir()
    parts = split(whole, data, [(0, 12), (12, 30), (30, 40)])
    target = tmp_path / f"out{suffix}"
    args = ["--settings", "chunks=16x8x8 codec=zlib level=1", "--max-mem", "200KB"]
    args += ["--verify", "full", "--no-progress", "--format", "json", "-o", str(target)]
    code = main(["apply", *args, str(data / "part*.nc")])
    assert code == 0
    assert_same_data(whole, target)  # values, coordinates, attributes, CF encodings
    journal = target.with_name(target.name + ".iotune-journal")
    header = json.loads(journal.read_text().splitlines()[0])["job"]
    assert header["sources"] == [str(p.resolve()) for p in parts]


def test_files_given_out_of_order_are_ordered_by_time(tmp_path: Path, capsys) -> None:
    whole = make_cf_source(tmp_path / "whole.nc", time=40)
    parts = split(whole, tmp_path, [(0, 20), (20, 40)])
    target = tmp_path / "out.nc"
    code = main(
        [
            "apply",
            "--settings",
            "chunks=8x8x8",
            "--no-progress",
            str(parts[1]),
            str(parts[0]),
            "-o",
            str(target),
        ]
    )
    assert code == 0
    with xr.open_dataset(whole) as before, xr.open_dataset(target) as after:
        xr.testing.assert_equal(before.load(), after.load())
        assert after.attrs["title"] == "part 1"  # the first file given
    assert f"{parts[1]}, {parts[0]} -> {target}" in capsys.readouterr().out


def rewrite(path: Path, change) -> None:
    with xr.open_dataset(path, decode_cf=False) as ds:
        changed = change(ds.load())
    changed.to_netcdf(path, unlimited_dims=["time"], encoding=no_fill(changed))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda ds: ds.isel(y=slice(0, 30)), "{p}: y has 30 values, 32 in {q}"),
        (lambda ds: ds.assign_coords(time=ds.time - 5), "{p}: time 15..34 overlaps {q}'s 0..19"),
        (
            lambda ds: ds.assign(tas=ds.tas.assign_attrs(scale_factor=0.02)),
            "{p}: tas scale_factor 0.02 differs from {q}'s 0.01 (the stored values would "
            "mean other things)",
        ),
        (
            lambda ds: ds.assign_coords(time=ds.time.copy(data=ds.time.values[::-1])),
            "{p}: its time values do not increase",
        ),
        (
            lambda ds: ds.drop_vars("pr"),
            "{p}: variables (tas, time, time_bnds, x, y) differ from {q}'s (pr, tas",
        ),
    ],
)
def test_files_that_do_not_combine_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change, why: str
) -> None:
    whole = make_cf_source(tmp_path / "whole.nc", time=40)
    parts = split(whole, tmp_path, [(0, 20), (20, 40)])
    rewrite(parts[1], change)
    before = sorted(tmp_path.iterdir())
    args = ["--settings", "chunks=8x8x8", str(tmp_path / "part?.nc"), "-o"]
    assert main(["apply", *args, str(tmp_path / "out.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert why.format(p=parts[1], q=parts[0]) in err[0]
    assert sorted(tmp_path.iterdir()) == before


def test_a_glob_matching_nothing_is_refused(tmp_path: Path, capsys) -> None:
    pattern = str(tmp_path / "tas_*.nc")
    assert main(["apply", "--settings", "chunks=8x8x8", pattern, "-o", str(tmp_path / "o.nc")]) == 2
    assert capsys.readouterr().err.strip() == f"iotune: error: source {pattern!r}: no file matches"

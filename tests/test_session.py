"""One session for grids and searches: a search is checked, and carries the limit, like a run."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import iotune
from iotune.app import api
from iotune.app.session import with_overrides
from iotune.app.tuning import search_trials
from iotune.core.errors import SpecError, UsageError
from iotune.runner import calibrate as cal
from iotune.runner.options import RunOptions
from iotune.search.space import Space
from iotune.specfile.parse import load_spec_text
from tests.test_cli_errors import assert_usage_error

MiB = 2**20


def tree(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_tune_refuses_a_search_whose_largest_trial_does_not_fit(tmp_path: Path) -> None:
    """One process fits on the disk, 256 concurrent ones do not: the search may ask for those."""
    fs = os.statvfs(tmp_path)
    free = fs.f_bavail * fs.f_frsize
    steps = max(1, free // 20 // (2 * MiB))  # one trial's file: about 5 % of the free space
    spec = tmp_path / "big.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": "big",
                "workload": {"shape": {"time": int(steps), "y": 1024, "x": 1024}},
                "backend": "posix",
                "parameters": {"concurrency": [1, 256]},
                "search": {"strategy": "random", "budget": 2},
            }
        )
    )
    before = tree(tmp_path)
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "iotune", "tune", str(spec), "-o", str(tmp_path / "out")]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    took = time.perf_counter() - start
    line = assert_usage_error(proc, "trial posix ", " concurrency=256 needs ", " free; --force")
    assert took < 5.0, f"{took:.2f} s: {line}"
    assert tree(tmp_path) == before  # nothing ran: no output, no journal, no scratch


def test_the_room_check_covers_a_large_space_by_its_extremes(make_spec) -> None:
    levels = list(range(1, 10))
    spec = make_spec(
        {
            "parameters": {
                "chunks": [[t, 64, 64] for t in range(1, 11)],
                "codec": ["zlib", "zstd"],
                "level": levels,
                "shuffle": ["none", "byte"],
                "concurrency": [*range(1, 33), 64, 128, 256],
            },
            "search": {"strategy": "random"},
        }
    )
    space = Space(api.load_spec(spec))
    assert space.size > 10_000
    concurrency = {t.params["concurrency"] for t in search_trials(space)}
    assert 256 in concurrency and len(concurrency) > 3


def test_a_search_carries_the_calibrated_device_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_spec
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    limit = cal.calibrate(scratch, size="2MiB", block="1MiB", repeats=1)
    spec = tmp_path / "s.yaml"
    search = {"strategy": "random", "budget": 2, "objective": "write"}
    spec.write_text(yaml.safe_dump(small_spec({"measure": {"repeats": 1}, "search": search})))
    out = tmp_path / "out"
    ds = iotune.tune(spec, out=out, scratch=scratch, progress=False)
    assert ds.attrs["device_limit_write_MiBps"] == limit["write_MiBps"]
    assert ds.attrs["device_limit_read_MiBps"] == limit["read_MiBps"]
    saved = iotune.open_results(out)
    assert saved.attrs["device_limit_write_MiBps"] == limit["write_MiBps"]
    fraction = saved["fraction_of_limit"].sel(metric="write")
    expected = saved["write_MiBps"] / limit["write_MiBps"]
    assert fraction.notnull().any() and bool(((fraction - expected).fillna(0) == 0).all())
    assert list(scratch.iterdir()) == []  # the search's scratch is gone


def test_tune_takes_every_option_of_run_and_recommend_by_the_same_name() -> None:
    tune = inspect.signature(api.tune).parameters
    run = inspect.signature(api.run).parameters
    recommend = inspect.signature(api.recommend).parameters
    wanted = (set(run) - {"spec"}) | {"objective", "weights", "max_size", "max_ratio_loss"}
    assert wanted <= set(tune), wanted - set(tune)
    for name in wanted & set(run):
        assert tune[name].default == run[name].default, name
        assert tune[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert {"weights", "max_ratio_loss"} <= set(recommend)


def test_tune_refuses_objective_and_weights_together(tmp_path: Path, small_spec) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(small_spec({"search": {"budget": 2}})))
    with pytest.raises(UsageError, match="--objective and --weights: give one, not both"):
        iotune.tune(spec, objective="write", weights="write=1", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_tune_weights_become_the_search_objective() -> None:
    from tests.search.conftest import SMALL_SPACE, _synthetic

    grid = _synthetic()(SMALL_SPACE, seed=1, noise=0.2)
    weights = "write=1,read:timeseries=2"
    ds = iotune.tune(replay=grid, weights=weights, max_ratio_loss="0.5", budget=4)
    assert ds.attrs["search_objective"] == weights
    assert ds.attrs["search_trials"] == 4
    with pytest.raises(SpecError, match=r"search.max_ratio_loss: 'lots' is not a fraction in"):
        iotune.tune(replay=grid, weights=weights, max_ratio_loss="lots", budget=4)


def test_execution_options_apply_to_a_loaded_sweep(small_spec) -> None:
    sweep = load_spec_text(yaml.safe_dump(small_spec()), source="s.yaml")
    changed = with_overrides(sweep, RunOptions(workers=3, per_host=2).execution_overrides())
    assert changed.execution.executor == "dask" and changed.execution.workers == 3
    assert changed.execution.per_host == 2 and changed.digest() == sweep.digest()
    assert with_overrides(sweep, {}) is sweep


def test_a_grid_search_over_a_huge_space_needs_yes(tmp_path: Path, make_spec) -> None:
    chunks = [[t, 32, 32] for t in range(1, 17)]
    spec = make_spec(
        {
            "parameters": {"chunks": chunks, "chunk_cache": list(range(1, 627))},
            "search": {"strategy": "grid", "budget": 2},
        }
    )
    with pytest.raises(
        UsageError, match=r"search.strategy: grid walks all 20,032 points.*--allow-large"
    ):
        iotune.tune(spec, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()

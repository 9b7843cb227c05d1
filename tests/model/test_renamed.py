"""Renamed parameters: specs and results files of the previous release keep working.

The fixtures in ``tests/fixtures/previous-release`` were written by iotune
0.1.0 before the naming pass: two specs with the old spellings and the
results files that release wrote from them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from iotune.core.errors import DeprecatedOptionWarning, SpecError
from iotune.model import parameters
from iotune.model.renamed import RENAMED, current, rename_keys
from iotune.results.dataset import open_results
from iotune.specfile.parse import load_spec, load_spec_text

IOTUNE = (sys.executable, "-m", "iotune")
PREVIOUS = Path(__file__).resolve().parents[1] / "fixtures" / "previous-release"


def test_every_new_name_is_registered_and_no_old_one_is() -> None:
    for old, (new, _why) in RENAMED.items():
        assert new in parameters.PARAMETERS
        assert old not in parameters.PARAMETERS


def test_an_old_spec_parses_with_one_warning_per_old_name() -> None:
    with pytest.warns(DeprecatedOptionWarning) as caught:
        sweep = load_spec(PREVIOUS / "mpiio-ranks.yaml")
    names = {p.name for p in sweep.parameters}
    assert {"bytes_per_rank", "stripe_count_hint", "stripe_size_hint"} <= names
    assert not names & set(RENAMED)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 3
    assert messages[0].startswith("block_size is deprecated, use bytes_per_rank")
    assert "in parameters;" in messages[0]


def test_old_names_in_baseline_and_focus_are_read_as_new() -> None:
    text = (PREVIOUS / "zarr-concurrency.yaml").read_text()
    text += "search: {budget: 4, focus: [async_concurrency]}\n"
    with pytest.warns(DeprecatedOptionWarning):
        sweep = load_spec_text(text)
    assert sweep.baseline["request_concurrency"] == 2
    assert sweep.search is not None and sweep.search.focus == ("request_concurrency",)


def test_old_and_new_spelling_together_is_refused() -> None:
    with pytest.raises(SpecError, match=r"parameters\.async_concurrency: given with its new name"):
        rename_keys({"async_concurrency": 2, "request_concurrency": 4}, where="parameters")


def test_new_names_give_no_warning() -> None:
    text = (
        (PREVIOUS / "zarr-concurrency.yaml")
        .read_text()
        .replace("async_concurrency", "request_concurrency")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_spec_text(text)
    assert current("chunks") == "chunks"


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("zarr-concurrency", "async_concurrency", "request_concurrency"),
        ("mpiio-ranks", "block_size", "bytes_per_rank"),
    ],
)
def test_a_previous_results_file_opens_with_the_new_names(name: str, old: str, new: str) -> None:
    ds = open_results(PREVIOUS / f"{name}.nc")
    assert new in ds.coords and old not in ds.variables
    records = [json.loads(t) for t in ds["effective"].values.flat if t]
    assert records and all(new in r and old not in r for r in records)
    best = ds.iotune.best("write")
    assert new in best.coords and new in best.settings


@pytest.mark.parametrize("command", ["show", "recommend"])
def test_the_cli_reads_a_previous_results_file(command: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "iotune", command, str(PREVIOUS / "zarr-concurrency.nc")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "request_concurrency" in proc.stdout and "async_concurrency" not in proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_previous_spec_runs_with_one_deprecation_line(tmp_path: Path) -> None:
    spec = PREVIOUS / "zarr-concurrency.yaml"
    proc = subprocess.run(
        [*IOTUNE, "run", str(spec), "-o", str(tmp_path / "out"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "deprecated" in line]
    assert lines == [
        "iotune: warning: async_concurrency is deprecated, use request_concurrency "
        "(one name for zarr's async.concurrency; in parameters, baseline; "
        "the old name goes in 0.3)"
    ]
    ds = open_results(tmp_path / "out")
    assert list(ds["request_concurrency"].values) == [2, 8]

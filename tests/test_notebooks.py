"""The notebooks: committed stripped, parameterised with literals, paired, and they run.

Every ``notebooks/*.ipynb`` is found here, so a new notebook is covered without
editing this file.  Each is paired by jupytext with a percent-format script
``notebooks/NAME.py`` (what ruff checks and reviews read); either side may be edited
and ``jupytext --sync notebooks/NAME.ipynb`` brings the other in line.  Executing
the notebooks is marked ``slow``.
"""

from __future__ import annotations

import ast
import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest
import xarray as xr
import yaml

from iotune.app.notebook import parse_parameters
from iotune.cli.main import main
from iotune.core.errors import UsageError
from iotune.core.units import format_number
from iotune.results.dataset import open_results

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]
#: the jupytext pairing every notebook declares, in its metadata and in the script's header
FORMATS = "ipynb,py:percent"
#: 01-quickstart shrunk to a handful of trials, for tests of the batch machinery
TINY = {
    "workload.shape": {"time": 8, "y": 32, "x": 32},
    "parameters.chunks": [[8, 16, 16]],
    "parameters.codec": ["none"],
    "parameters.chunk_cache": "1MiB",
    "read.spatial": {"time": 2, "y": 16, "x": 16},
    "measure.repeats": 1,
}


def parameters_cells(nb: nbformat.NotebookNode) -> list:
    return [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]


def test_there_are_notebooks() -> None:
    expected = {"01-quickstart", "02-chunking-and-compression", "03-chunk-cache", "05-explore"}
    assert expected | {"06-search"} <= set(IDS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has outputs: strip them"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution_count"
        assert "execution" not in cell.metadata, f"{path.name} cell {i} has execution timings"
    assert "widgets" not in nb.metadata, f"{path.name} stores widget state: strip it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_one_parameters_cell_of_literals(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    cells = parameters_cells(nb)
    assert len(cells) == 1, f"{path.name}: {len(cells)} cells tagged 'parameters', want one"
    tree = ast.parse(cells[0].source)
    assert tree.body, f"{path.name}: the parameters cell is empty"
    for node in tree.body:
        assert isinstance(node, ast.Assign | ast.AnnAssign), ast.dump(node)
        ast.literal_eval(node.value)  # raises if not a literal


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list]]:
    """What pairing keeps equal: each cell's type, source and tags (``parameters``)."""
    return [(c.cell_type, c.source, c.get("metadata", {}).get("tags", [])) for c in nb.cells]


def out_of_sync(ipynb: Path) -> str | None:
    """Why ``ipynb`` and its paired ``.py`` differ, or None when their cells agree."""
    script = ipynb.with_suffix(".py")
    shown = ipynb.relative_to(ROOT) if ipynb.is_relative_to(ROOT) else ipynb
    fix = f"run `jupytext --sync {shown}`"
    if not script.exists():
        return f"{ipynb.name} has no paired {script.name}: {fix}"
    nb, text = _cells(jupytext.read(ipynb)), _cells(jupytext.read(script))
    if nb == text:
        return None
    if len(nb) != len(text):
        where = f"{len(nb)} cells in {ipynb.name}, {len(text)} in {script.name}"
    else:
        i = next(i for i, (a, b) in enumerate(zip(nb, text, strict=True)) if a != b)
        where = f"cell {i} differs"
    return f"{ipynb.name} and {script.name} are out of sync ({where}): {fix}"


def test_every_notebook_has_its_script_and_every_script_its_notebook() -> None:
    scripts = sorted(p.stem for p in NOTEBOOK_DIR.glob("*.py"))
    assert scripts == IDS, (
        "each notebooks/NAME.ipynb is paired with notebooks/NAME.py and nothing else: "
        "`jupytext --set-formats ipynb,py:percent notebooks/NAME.ipynb` creates the script, "
        "`jupytext --to notebook notebooks/NAME.py` the notebook"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_and_script_are_paired_and_in_sync(path: Path) -> None:
    for side in (path, path.with_suffix(".py")):
        meta = jupytext.read(side).metadata
        assert meta.get("jupytext", {}).get("formats") == FORMATS, (
            f"{side.name} does not declare the pairing: "
            f"run `jupytext --set-formats {FORMATS} notebooks/{path.name}`"
        )
    assert (problem := out_of_sync(path)) is None, problem


def test_a_notebook_edited_in_jupyterlab_is_out_of_sync_with_its_pair(tmp_path: Path) -> None:
    """As a user would: a cell added to a copy of the .ipynb (say in JupyterLab)."""
    ipynb = tmp_path / "01-quickstart.ipynb"
    shutil.copy(NOTEBOOK_DIR / ipynb.name, ipynb)
    shutil.copy(NOTEBOOK_DIR / "01-quickstart.py", tmp_path)
    assert out_of_sync(ipynb) is None

    nb = nbformat.read(ipynb, as_version=4)
    n = len(nb.cells)
    nb.cells.append(nbformat.v4.new_code_cell('print("added in JupyterLab")'))
    nbformat.write(nb, ipynb)
    script_mtime = ipynb.with_suffix(".py").stat().st_mtime
    os.utime(ipynb, (script_mtime + 10, script_mtime + 10))  # the notebook is the newer
    problem = out_of_sync(ipynb)
    assert problem == (
        "01-quickstart.ipynb and 01-quickstart.py are out of sync "
        f"({n + 1} cells in 01-quickstart.ipynb, {n} in 01-quickstart.py): "
        f"run `jupytext --sync {ipynb}`"
    )
    assert out_of_sync(NOTEBOOK_DIR / ipynb.name) is None, "only the edited copy is affected"

    # the advice works: the newer side's cells go to the other
    sync = [sys.executable, "-m", "jupytext", "--sync", str(ipynb)]
    subprocess.run(sync, check=True, capture_output=True)
    assert out_of_sync(ipynb) is None
    assert '# %%\nprint("added in JupyterLab")' in ipynb.with_suffix(".py").read_text()

    ipynb.with_suffix(".py").unlink()
    assert out_of_sync(ipynb) == (
        f"01-quickstart.ipynb has no paired 01-quickstart.py: run `jupytext --sync {ipynb}`"
    )


def test_cli_parameters_are_yaml_literals() -> None:
    params = parse_parameters(
        [("size", "full"), ("n", "16"), ("codecs", "[zlib, none]"), ("o", "{a.b: 1}")]
    )
    assert params == {"size": "full", "n": 16, "codecs": ["zlib", "none"], "o": {"a.b": 1}}
    with pytest.raises(UsageError, match="-p n: given twice"):
        parse_parameters([("n", "1"), ("n", "2")])
    with pytest.raises(UsageError, match="-p 2x: a parameter name must be a Python identifier"):
        parse_parameters([("2x", "1")])
    with pytest.raises(UsageError, match=r"-p o '\[1': not a YAML literal"):
        parse_parameters([("o", "[1")])


def test_cli_refuses_unknown_parameter(tmp_path: Path, capsys) -> None:
    nb = NOTEBOOK_DIR / "05-explore.ipynb"
    assert main(["notebook", str(nb), "-p", "metrik", "ratio", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "iotune: error: -p metrik: not a parameter of 05-explore.ipynb; "
        "its parameters: results, out, metric, top"
    )


def test_cli_refuses_missing_notebook(tmp_path: Path, capsys) -> None:
    assert main(["notebook", str(tmp_path / "nope.ipynb")]) == 2
    assert "does not exist" in capsys.readouterr().err


def _outputs_without_errors(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{path.name}: {out.ename}: {out.evalue}"
            if out.output_type == "stream" and out.name == "stderr":
                assert "Traceback" not in out.text, out.text
    return nb


# Every notebook running with its own defaults, from Binder's environment and within its
# memory: tests/test_binder.py.


@pytest.mark.slow
def test_cli_runs_a_batch_job_into_one_folder(tmp_path: Path, capsys) -> None:
    nb = NOTEBOOK_DIR / "01-quickstart.ipynb"
    out = tmp_path / "batch"
    args = ["notebook", str(nb), "-p", "overrides", yaml.safe_dump(TINY, default_flow_style=True)]
    assert main([*args, "-p", "size", "full", "-o", str(out)]) == 0
    assert f"notebook: {out / nb.name}" in capsys.readouterr().out
    executed = _outputs_without_errors(out / nb.name)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert f'out = "{out.resolve()}"' in injected[0].source
    ds = open_results(out / "results.nc")
    assert list(ds["codec"].values) == ["none"]
    assert ds.sizes["repeat"] == 1
    assert "with overrides" in ds.attrs["spec"]
    # the summary says what recommend says first: here one point against the library's layout
    printed = next(
        o["text"] for c in executed.cells for o in c.get("outputs", []) if "best_text" in c.source
    )
    lines = printed.splitlines()
    assert lines[0].startswith(("recommended for read:timeseries: ", "keep your settings (library"))
    said = " ".join(x.strip() for x in lines)  # wrapped at 100 characters
    assert lines[0] == "recommended for read:timeseries: chunks=8x16x16 codec=none" or (
        "the pick (chunks=8x16x16 codec=none) is not better beyond noise" in said
    )
    against = next(i for i, x in enumerate(lines) if x.startswith("  against library (chunks="))
    assert "95% intervals: write " in lines[against] and " size " in said
    more = lines.index("  (more: iotune recommend --objective read:timeseries)")
    assert lines[more + 1] == "best configuration (median of repeats):"


@pytest.mark.slow
def test_cli_reports_a_failing_cell_in_one_line(tmp_path: Path, capsys) -> None:
    nb = NOTEBOOK_DIR / "01-quickstart.ipynb"
    assert main(["notebook", str(nb), "-p", "spec", "missing.yaml", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("iotune: 01-quickstart.ipynb failed in cell ")
    assert "SpecError: missing.yaml: cannot read spec" in err
    assert f"(traceback in {tmp_path / nb.name})" in err
    assert len(err.splitlines()) == 1


@pytest.mark.slow
def test_search_notebook_replays_a_recorded_grid(tmp_path: Path) -> None:
    """06-search with ``grid``: the replay, and the convergence plot against the grid's best."""
    import papermill

    from iotune.results.dataset import save
    from tests.search.conftest import SMALL_SPACE, _synthetic

    grid = save(_synthetic()(SMALL_SPACE, seed=1), tmp_path / "grid.nc")
    executed = tmp_path / "06-search.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK_DIR / "06-search.ipynb"),
        str(executed),
        parameters={"grid": str(grid), "out": str(tmp_path / "out"), "budget": "25%"},
        cwd=str(NOTEBOOK_DIR),
        progress_bar=False,
    )
    nb = _outputs_without_errors(executed)
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "search 'quick': auto (seed 0), 6 of 6 trials" in text
    ds = open_results(tmp_path / "out")
    assert ds.attrs["search_strategy"] == "auto" and ds.sizes["trial"] == 6


def test_a_corrupt_darshan_log_raises_in_a_notebook_and_the_kernel_lives(tmp_path: Path) -> None:
    """A real kernel: the log that crashed Darshan's C library (and the kernel) before
    iotune checked logs and read them in a child process, then a cell that still runs."""
    pytest.importorskip("darshan")
    import nbclient

    from tests.darshan.conftest import CRASHER, flipped

    source, flip = CRASHER
    log = tmp_path / "corrupt.darshan"
    log.write_bytes(flipped(source, flip))
    cells = [
        "import os\nimport iotune\nfrom iotune.core.errors import DarshanError\npid = os.getpid()",
        f"try:\n    iotune.from_darshan({str(log)!r})\n"
        "except DarshanError as err:\n    print('from_darshan:', err)",
        # the library itself, without iotune's check in front: it crashes, in its child
        "from pathlib import Path\nfrom iotune.darshan_.reader import read_log\n"
        f"try:\n    read_log(Path({str(log)!r}))\n"
        "except DarshanError as err:\n    print('read_log:', err)",
        "print('alive', os.getpid() == pid, 6 * 7)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    said = ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]
    assert not [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert said[1].startswith(f"from_darshan: {log}: corrupt Darshan log: its names region")
    assert said[2].startswith(f"read_log: {log}: corrupt Darshan log: Darshan's C library crashed")
    assert said[3] == "alive True 42\n"


#: 09-your-analysis on a file of the test's own, shrunk to a few trials
YOURS = {
    "box": {"lat": [2, 10], "lon": [0, 8]},  # in the file's coordinates (degrees)
    "chunks": [[60, 8, 8], [5, 16, 32]],
    "backends": ["netcdf4", "zarr"],
    "dask_chunks": ["storage"],
    "workers": [0],
    "batch": 4,
    "step": "5ms",
}

#: the baselines 09-your-analysis measures, in each format it sweeps
SPEC_BASELINES = ("library", "dask-auto", "balanced")


@pytest.mark.slow
def test_your_analysis_notebook_tunes_your_file_for_your_function(tmp_path: Path, capsys) -> None:
    """09 with ``path``: the user's variable, their climatology and the batches, vs baselines."""
    import pandas as pd

    # precipitation in kg m-2 s-1: values near 1e-5, which a table rounded to 2 decimals shows as 0
    data = np.random.default_rng(3).normal(3e-5, 1e-5, (60, 16, 32)).astype("float32")
    coords = {"time": pd.date_range("2000-01-01", periods=60), "lat": np.arange(16.0) - 2}
    coords["lon"] = np.arange(32.0)
    mine = xr.Dataset({"pr": (("time", "lat", "lon"), data)}, coords=coords)
    mine.to_netcdf(tmp_path / "mine.nc")  # the notebook's analysis selects by coordinates
    out = tmp_path / "run"
    args = ["notebook", str(NOTEBOOK_DIR / "09-your-analysis.ipynb"), "-o", str(out)]
    args += ["-p", "path", str(tmp_path / "mine.nc"), "-p", "variable", "pr"]
    for name, value in YOURS.items():
        args += ["-p", name, yaml.safe_dump(value, default_flow_style=True).strip()]
    assert main(args) == 0, capsys.readouterr().err
    executed = _outputs_without_errors(out / "09-your-analysis.ipynb")
    text = "".join(
        o.get("text", "") + "".join(o.get("data", {}).get("text/plain", ""))
        for c in executed.cells
        for o in c.get("outputs", [])
    )
    assert "objective: read:climatology" in text and "objective: read:batches" in text
    assert "DataLoader(Dataset(path), batch_size=4, shuffle=True" in text
    assert "class Dataset" in text and "xr.open_" in text  # the open_dataset line
    assert any(
        "image/png" in o.get("data", {}) for c in executed.cells for o in c.get("outputs", [])
    ), "the speedup over the baselines is drawn"
    ds = open_results(out / "results.nc")
    assert set(ds["status"].values.ravel()) == {"ok"}
    assert list(ds["codec"].values) == ["none", "zlib"]  # compressed layouts swept too
    assert list(ds["pattern"].values) == ["climatology", "batches", "timeseries"]
    assert list(ds["baseline"].values) == [
        f"{name}:{backend}" for backend in YOURS["backends"] for name in SPEC_BASELINES
    ]
    assert (out / "myanalysis.py").exists() and not (out / "tas.nc").exists()
    # the accelerator's utilisation against the loader's workers, drawn and tabulated
    assert json.loads(ds.attrs["batches"])["step"] == 0.005
    (busy,) = [c for c in executed.cells if "utilisation(ds)" in c.source]
    kinds = [k for o in busy.get("outputs", []) for k in o.get("data", {})]
    assert "image/png" in kinds, "the utilisation is drawn"
    assert (out / "utilisation.png").exists()
    table = busy.outputs[-1]["data"]["text/plain"]
    assert table.splitlines()[0].split() == ["num_workers", "0"], table
    assert "accelerator >= 90% busy" in text or "no configuration keeps the accelerator" in text
    # the recommendation applied to the file: predicted, converted, measured before and after
    assert "dry run: would apply" in text and "measured after (3 cold repeats" in text
    (record,) = out.glob("mine-climatology.*.iotune-apply.json")
    after = json.loads(record.read_text())["patterns"]
    assert list(after) == ["climatology", "timeseries"]  # the sweep's, but the loader's
    assert all(row["low"] <= row["speedup"] <= row["high"] for row in after.values()), after
    assert after["climatology"]["same_answer"] is True
    assert (out / "before-after.png").exists()
    # the function the notebook wrote gives, on the user's file, what the trials gave
    monthly_mean = runpy.run_path(str(out / "myanalysis.py"))["monthly_mean"]
    box = data[:, 4:13, 0:9]  # lat 2..10 and lon 0..8 by the file's coordinates
    expected = [box[:31].mean(), box[31:].mean()]  # January and February of 2000
    with xr.open_dataset(tmp_path / "mine.nc") as mine:
        means = monthly_mean(mine).values
    np.testing.assert_allclose(means, expected, rtol=1e-5)
    # the notebook's answer table: four significant digits, not 0.0
    (table,) = [
        o["data"]["text/plain"]
        for c in executed.cells
        if "answer.map(" in c.source
        for o in c.get("outputs", [])
        if "text/plain" in o.get("data", {})
    ]
    shown = dict(line.split() for line in table.splitlines()[2:])
    assert shown == {
        str(m): format_number(v, significant=4) for m, v in zip((1, 2), means, strict=True)
    }, table

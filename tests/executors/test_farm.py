"""The dask task farm keeps sixteen workers busy on two cores: trials that wait, longest first.

The trials of tests/fixtures/napping.py sleep a known time (1 to 6 s) and
compute nothing, so sixteen workers can all be busy on this 2-core machine
and what is measured is the farm's scheduling: the order the trials are
handed out, the round trips, the tail.  Both orders run on the same cluster;
the efficiency excludes worker start-up, as ``iotune run``'s line reports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iotune.core import plugins
from iotune.model.parameters import PARAMETERS

pytestmark = pytest.mark.slow

#: 32 trials from 1 to 6 s in grid order, shortest first: the costly ones come last
#: (long enough that a scheduler round trip on a loaded machine is a small share)
NAPS_MS = [1000 + round(i * 5000 / 31) for i in range(32)]
SPEC = f"""\
version: 1
name: naps
workload: {{shape: {{time: 2, y: 8, x: 8}}}}
backend: napping
parameters: {{nap_ms: {NAPS_MS}}}
read: {{patterns: [full]}}
measure: {{repeats: 1, noise_probes: 0, order: sequential}}
"""


@pytest.fixture
def napping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The ``napping`` backend registered through an entry point of a distribution."""
    site = tmp_path / "site"
    info = site / "iotune_napping-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: iotune-napping\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[iotune.backends]\nnapping = tests.fixtures.napping:NappingBackend\n"
    )
    monkeypatch.syspath_prepend(str(site))  # the cluster's spawned workers inherit sys.path
    plugins._installed.cache_clear()
    yield
    plugins._installed.cache_clear()
    PARAMETERS.pop("nap_ms", None)


@pytest.mark.usefixtures("napping")
def test_sixteen_workers_stay_busy_longest_first_and_grid_order_does_worse(tmp_path):
    import time

    from iotune.executors.dask_ import DaskExecutor
    from iotune.model.records import TrialTask
    from iotune.runner.efficiency import efficiency
    from iotune.runner.expected import Expected
    from iotune.runner.plan import make_plan
    from iotune.specfile.parse import load_spec_text

    sweep = load_spec_text(SPEC)
    plan = make_plan(sweep)
    tasks = [
        TrialTask(t, sweep.workload, sweep.read, sweep.measure, str(tmp_path)) for t in plan.trials
    ]
    asked = time.time()
    executor = DaskExecutor(workers=16)
    try:
        executor.expect(Expected.of_tasks(sweep.workload, [t.params for t in plan.trials]))
        longest = efficiency(asked, list(executor.map(tasks)), executor.workers())
        executor.expected = None  # the caller's order: the grid's
        grid = efficiency(time.time(), list(executor.map(tasks)), executor.workers())
    finally:
        executor.close()
    assert longest is not None and grid is not None
    assert longest.workers == grid.workers == 16
    ideal = sum(NAPS_MS) / 1000 / 16
    assert longest.busy >= 0.85, (longest.line(), ideal)
    # shortest first leaves the 6 s naps to run alone at the end: about 0.75 at best
    assert grid.busy < longest.busy - 0.05, (grid.line(), longest.line())
    assert grid.tail_s > longest.tail_s

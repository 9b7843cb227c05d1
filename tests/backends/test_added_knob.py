"""A knob added through the registry, a backend and its test only is swept, read back, exported.

The backend (tests/fixtures/knobbed.py) registers its ``pad_bytes`` with the
parameter registry and is registered under the ``iotune.backends`` entry point
group from a distribution written here, as an installed plugin is; the sweep's
worker processes find it the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from iotune.core import plugins
from iotune.model.parameters import PARAMETERS

SPEC = """\
version: 1
name: padded
workload: {shape: {time: 4, y: 16, x: 16}}
backend: padded
parameters: {pad_bytes: [0, 4KiB]}
read: {patterns: [full]}
measure: {repeats: 1, noise_probes: 0}
"""


@pytest.fixture
def padded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The ``padded`` backend registered through an entry point of a distribution on sys.path."""
    site = tmp_path / "site"
    info = site / "iotune_padded-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: iotune-padded\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[iotune.backends]\npadded = tests.fixtures.knobbed:PaddedBackend\n"
    )
    monkeypatch.syspath_prepend(str(site))  # spawned workers inherit sys.path
    plugins._installed.cache_clear()
    yield
    plugins._installed.cache_clear()
    PARAMETERS.pop("pad_bytes", None)


@pytest.mark.usefixtures("padded")
def test_an_added_knob_is_swept_read_back_and_exported(tmp_path: Path) -> None:
    from iotune.app import api
    from iotune.backends import get_backend
    from iotune.specfile.parse import load_spec_text

    assert get_backend("padded").parameters == ("pad_bytes",)  # registers pad_bytes too
    ds = api.run(load_spec_text(SPEC), out=tmp_path / "out", progress=False)
    assert (ds.status == "ok").all(), ds.error.values
    assert [int(v) for v in ds.pad_bytes.values] == [0, 4096]
    read_back = [json.loads(str(v))["pad_bytes"] for v in ds.file_properties.values.ravel()]
    assert read_back == [0, 4096]

    rec = api.recommend(ds, objective="read:full")
    pad = rec.winner.settings["pad_bytes"]
    assert rec.exports["padded_header"]["value"] == pad
    assert f"bytes({pad})" in rec.exports["padded_header"]["text"]


def test_a_knob_the_registry_lacks_is_refused_with_its_name() -> None:
    from dataclasses import dataclass

    from iotune.backends.knobs import Knobs
    from iotune.core.errors import UsageError

    @dataclass(frozen=True)
    class Unregistered(Knobs):
        no_such_knob: int = 1

    with pytest.raises(UsageError, match="unknown parameter 'no_such_knob'"):
        Unregistered()

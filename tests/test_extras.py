"""The extras: one line naming the extra to install, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iotune.core.errors import UsageError
from iotune.core.extras import EXTRAS, MissingExtraError, install_hint, installed, missing, require


def installed_as(site: Path, monkeypatch: pytest.MonkeyPatch, direct_url: dict | None) -> None:
    """An iotune distribution as pip records it, first on sys.path (PEP 610's record or none)."""
    info = site / "iotune-9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: iotune\nVersion: 9.9\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    monkeypatch.syspath_prepend(str(site))


def test_a_missing_module_names_its_extra(tmp_path: Path, monkeypatch) -> None:
    installed_as(tmp_path / "site", monkeypatch, None)  # from an index: no direct_url.json
    with pytest.raises(MissingExtraError) as caught:
        require("iotune_no_such_module", extra="search", feature="iotune tune")
    message = str(caught.value)
    assert message == (
        "iotune tune needs iotune_no_such_module, which is not installed: "
        "pip install 'iotune[search]'"
    )
    assert isinstance(caught.value, UsageError)  # the CLI: one line, exit 2


def test_the_mpi_extra_also_names_the_wheel_for_laptops(tmp_path: Path, monkeypatch) -> None:
    installed_as(tmp_path / "site", monkeypatch, None)
    with pytest.raises(MissingExtraError, match=r"'iotune\[mpi\]' \(or 'iotune\[mpich\]'"):
        require("iotune_no_such_module", extra="mpi", feature="the mpiio backend")


@pytest.mark.parametrize(("editable", "flag"), [(True, "-e "), (False, "")])
def test_a_clone_gets_the_clones_command(tmp_path: Path, monkeypatch, editable, flag) -> None:
    """pip install 'iotune[search]' would replace the clone by a released iotune."""
    clone = tmp_path / "my clone"
    clone.mkdir()
    record = {"url": clone.as_uri(), "dir_info": {"editable": editable}}
    installed_as(tmp_path / "site", monkeypatch, record)
    assert install_hint("search") == f"pip install {flag}'{clone}[search]'"
    assert install_hint("mpi").endswith(f"(or '{clone}[mpich]' on a laptop)")
    with pytest.raises(MissingExtraError, match="not installed: pip install"):
        require("iotune_no_such_module", extra="search", feature="iotune tune")
    assert missing("iotune_no_such_module", extra="search") == (
        f"needs iotune_no_such_module (pip install {flag}'{clone}[search]')"
    )
    assert missing("numpy", extra="search") == ""


def test_a_removed_clone_or_a_wheels_url_gets_the_index(tmp_path: Path, monkeypatch) -> None:
    gone = {"url": (tmp_path / "gone").as_uri(), "dir_info": {"editable": True}}
    installed_as(tmp_path / "a", monkeypatch, gone)
    assert install_hint("search") == "pip install 'iotune[search]'"
    monkeypatch.undo()
    wheel = {"url": "https://example.org/iotune-9.9-py3-none-any.whl", "archive_info": {}}
    installed_as(tmp_path / "b", monkeypatch, wheel)
    assert install_hint("jupyter") == "pip install 'iotune[jupyter]'"


def test_an_installed_module_passes_and_is_not_imported() -> None:
    import sys

    sys.modules.pop("optuna", None)
    require("optuna", extra="search", feature="iotune tune")
    assert "optuna" not in sys.modules
    assert installed("numpy") and not installed("iotune_no_such_module.sub")


def test_an_unknown_extra_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown extra 'searhc'; known: mpi, mpich"):
        require("numpy", extra="searhc", feature="x")
    assert set(EXTRAS) == {
        *("mpi", "mpich", "jupyter", "search", "darshan", "jobqueue", "objectstore", "virtual"),
        "xbatcher",
    }

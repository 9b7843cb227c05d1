"""Findings name their counters and the parameter; a missing module is a finding too."""

from __future__ import annotations

import dataclasses

from iotune.darshan_.diagnosis import diagnose
from iotune.darshan_.log import Log, open_log
from iotune.darshan_.summary import groups
from tests.darshan.conftest import HDF5_LOG, MACSIO_LOG, MPIIO_LOG, NOPOSIX_LOG, counters


def _findings(log: Log) -> dict:
    return {f.code: f for f in diagnose(log, groups(log))}


def _edited(log: Log, module: str, kind: str, changes: dict) -> Log:
    """A copy of ``log`` whose ``module`` counters are changed: a fixture for a finding."""
    records = {m: dict(k) for m, k in log.records.items()}
    df = records[module][kind].copy()
    for column, value in changes.items():
        df[column] = value
    records[module][kind] = df
    return dataclasses.replace(log, records=records)


def test_independent_shared_file_names_io_and_its_counters() -> None:
    found = _findings(open_log(HDF5_LOG))
    c, _ = counters(HDF5_LOG, "MPI-IO")
    finding = found["independent-shared"]
    assert finding.parameters == ("io",)
    assert finding.counters["MPIIO_INDEP_WRITES"] == c["MPIIO_INDEP_WRITES"].iloc[0] == 23
    assert finding.counters["MPIIO_COLL_WRITES"] == 0


def test_small_requests_name_transfer_size_and_hints() -> None:
    finding = _findings(open_log(HDF5_LOG))["small-writes"]
    assert finding.parameters == ("transfer_size", "hints")
    assert "cb_buffer_size" in finding.text
    c, _ = counters(HDF5_LOG, "MPI-IO")
    small = sum(c[f"MPIIO_SIZE_WRITE_AGG_{b}"].iloc[0] for b in ("0_100", "100_1K", "100K_1M"))
    assert finding.counters["MPIIO_SIZE_WRITE_AGG_0_100..100K_1M"] == small


def test_large_requests_are_not_small() -> None:
    found = _findings(open_log(MPIIO_LOG))
    assert "small-writes" not in found
    assert "one-stripe" not in found  # 24 stripes


def test_one_stripe_on_a_large_shared_file() -> None:
    log = _edited(open_log(MPIIO_LOG), "LUSTRE", "components", {"LUSTRE_COMP_STRIPE_COUNT": 1})
    finding = _findings(log)["one-stripe"]
    assert finding.parameters == ("stripe_count",)
    assert finding.counters["LUSTRE_COMP_STRIPE_COUNT"] == 1


def test_chunks_that_cut_across_the_access() -> None:
    log = _edited(open_log(HDF5_LOG), "H5D", "counters", {"H5D_CHUNK_SIZE_D5": 10000})
    finding = _findings(log)["chunks-cut"]
    assert finding.parameters == ("chunks",)
    assert finding.counters == {"H5D_CHUNK_SIZE_D5": 10000, "H5D_ACCESS1_LENGTH_D5": 32768}
    aligned = _edited(open_log(HDF5_LOG), "H5D", "counters", {"H5D_CHUNK_SIZE_D5": 8192})
    assert "chunks-cut" not in _findings(aligned)


def test_missing_modules_are_findings() -> None:
    assert "no-lustre" in _findings(open_log(MACSIO_LOG))
    assert _findings(open_log(HDF5_LOG))["no-filters"].kind == "missing"
    noposix = _findings(open_log(NOPOSIX_LOG))
    assert "no POSIX or MPI-IO records (modules: LUSTRE, STDIO)" in noposix["no-file-io"].text
    assert not [f for f in noposix.values() if f.kind == "problem"]


def test_an_hdf5_file_names_its_file_level_knobs() -> None:
    found = _findings(open_log(HDF5_LOG))
    # 55 of 59 POSIX requests to this HDF5 file start off the 1 MiB file alignment
    assert found["misaligned"].parameters == ("transfer_size", "stripe_size", "alignment")
    assert "alignment (HDF5 places its chunks on it)" in found["misaligned"].text
    metadata = found["small-metadata"]
    assert metadata.parameters == ("meta_block_size", "page_size")
    # read: 3 + 17, write: 3 + 4 requests under 10 KiB, of 59 MPI-IO requests
    assert metadata.counters["MPIIO_SIZE_*_0_100..1K_10K"] == 27
    assert metadata.counters["requests (all sizes)"] == 59


def test_the_generated_spec_sweeps_the_named_file_knobs(tmp_path) -> None:
    import yaml

    from iotune.darshan_.generate import generate
    from iotune.specfile.parse import load_spec_text

    log = open_log(HDF5_LOG)
    found = diagnose(log, groups(log))
    spec, _notes = generate(log, groups(log), found, budget=2**26, parallel_h5py=False)
    params = spec["parameters"]
    assert params["alignment"] == ["0", "1MiB"] and params["page_size"] == ["0", "4MiB"]
    assert params["meta_block_size"] == ["2KiB", "1MiB"]
    load_spec_text(yaml.safe_dump(spec))  # the spec iotune run takes

"""The summary's figures equal the counters pydarshan reports, read here independently."""

from __future__ import annotations

import re

from iotune.darshan_.log import open_log
from iotune.darshan_.summary import BINS, groups
from tests.darshan.conftest import FPP_LOG, HDF5_LOG, MPIIO_LOG, counters


def _row(path, module, name_part, kind="counters"):
    df, names = counters(path, module, kind)
    ids = [i for i, n in names.items() if n.endswith(name_part)]
    return df[df["id"].isin(ids)].iloc[0]


def test_mpiio_shared_file_figures_equal_the_counters() -> None:
    main = groups(open_log(MPIIO_LOG))[0]
    c = _row(MPIIO_LOG, "MPI-IO", "vpicio.hdf5")
    f = _row(MPIIO_LOG, "MPI-IO", "vpicio.hdf5", "fcounters")
    p = _row(MPIIO_LOG, "POSIX", "vpicio.hdf5")
    lustre = _row(MPIIO_LOG, "LUSTRE", "vpicio.hdf5", "components")
    assert main.name.endswith("vpicio.hdf5")
    assert (main.shared, main.ranks, main.layer, main.io) == (True, 2048, "MPI-IO", "collective")
    assert main.bytes_written == c["MPIIO_BYTES_WRITTEN"] == 2199023259968
    assert main.bytes_read == c["MPIIO_BYTES_READ"]
    assert main.write_time == f["MPIIO_F_WRITE_TIME"]
    assert (main.coll_writes, main.indep_writes) == (
        c["MPIIO_COLL_WRITES"],
        c["MPIIO_INDEP_WRITES"],
    )
    assert main.writes == c["MPIIO_COLL_WRITES"] + c["MPIIO_INDEP_WRITES"]
    assert main.sizes["WRITE"] == {b: c[f"MPIIO_SIZE_WRITE_AGG_{b}"] for b in BINS}
    assert main.request == c["MPIIO_ACCESS1_ACCESS"] == 128 * 2**20
    assert main.common[0][1] == c["MPIIO_ACCESS1_COUNT"]
    assert (main.seq_writes, main.consec_writes) == (
        p["POSIX_SEQ_WRITES"],
        p["POSIX_CONSEC_WRITES"],
    )
    assert main.not_aligned == p["POSIX_FILE_NOT_ALIGNED"]
    assert main.stripe_count == lustre["LUSTRE_COMP_STRIPE_COUNT"] == 24
    assert main.stripe_size == lustre["LUSTRE_COMP_STRIPE_SIZE"]
    slowest = f"slowest (rank {c['MPIIO_SLOWEST_RANK']})"
    assert main.rank_bytes[slowest] == c["MPIIO_SLOWEST_RANK_BYTES"]
    assert main.rank_time[slowest] == f["MPIIO_F_SLOWEST_RANK_TIME"]


def test_hdf5_dataset_figures_equal_the_h5d_counters() -> None:
    main = groups(open_log(HDF5_LOG))[0]
    df, names = counters(HDF5_LOG, "H5D")
    (ds,) = main.datasets
    assert names[int(df["id"].iloc[0])].endswith(ds.name)
    assert ds.ndims == df["H5D_DATASPACE_NDIMS"].iloc[0] == 1
    assert ds.npoints == df["H5D_DATASPACE_NPOINTS"].iloc[0]
    assert ds.itemsize == df["H5D_DATATYPE_SIZE"].iloc[0]
    assert ds.chunks is None and df["H5D_CHUNK_SIZE_D5"].iloc[0] == 0
    assert ds.access == (df["H5D_ACCESS1_LENGTH_D5"].iloc[0],)
    assert ds.bytes_written == df["H5D_BYTES_WRITTEN"].sum()
    assert ds.collective is False
    assert main.io == "independent"


def test_files_per_process_form_one_group_with_summed_counters() -> None:
    main = groups(open_log(FPP_LOG))[0]
    df, names = counters(FPP_LOG, "POSIX")
    pattern = re.compile(r".*/ior-posix\.out\.\d+$")
    mine = df[df["id"].map(lambda i: bool(pattern.match(names[i])))]
    assert main.files == len(mine) == 2048
    assert (main.shared, main.layout, main.ranks, main.layer) == (False, "fpp", 2048, "POSIX")
    assert main.bytes_written == mine["POSIX_BYTES_WRITTEN"].sum()
    assert main.writes == mine["POSIX_WRITES"].sum()
    assert main.sizes["WRITE"]["1M_4M"] == mine["POSIX_SIZE_WRITE_1M_4M"].sum()
    assert sum(main.rank_bytes.values()) == main.bytes_written

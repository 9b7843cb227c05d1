"""Figures per file or group of files, straight from a log's counters.

Every figure is a sum (or a ratio of sums) of pydarshan's counters of the
records of a group, so a test can recompute it from ``DarshanReport``.  The
application-level module describes requests: MPI-IO for files opened with
MPI-IO (the sizes the application asked for, before ROMIO split or merged
them), POSIX otherwise; sequential and consecutive fractions and alignment
only exist at the POSIX level.  A file written by all ranks is one record
with rank -1 (Darshan reduces shared files); files of one name pattern, each
written by one rank, form a file-per-process group.

A log also records what the interpreter and its libraries open: a Python
application's ``site-packages``, ``__pycache__`` and ``.so`` files, /proc and
/etc.  Those are not the application's data and are left out unless asked
for (:func:`is_data`), as I/O-analysis tools leave them out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune.darshan_.log import Log, frame

if TYPE_CHECKING:
    import pandas as pd

#: request-size bins, as Darshan names them
BINS: tuple[str, ...] = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M")
BINS += ("4M_10M", "10M_100M", "100M_1G", "1G_PLUS")
#: bins of requests smaller than 1 MiB (Drishti's "small")
SMALL_BINS = BINS[:5]
_PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO"}
#: what darshan-runtime itself does not record by default (darshan-config.c), and /run
SYSTEM_DIRS: tuple[str, ...] = (
    "/etc/",
    "/dev/",
    "/usr/",
    "/bin/",
    "/boot/",
    "/lib/",
    "/lib64/",
    "/opt/",
)
SYSTEM_DIRS += ("/sbin/", "/sys/", "/proc/", "/var/", "/run/")
#: an interpreter's or a library's own files: packages, byte code, sources, shared objects
_CODE = re.compile(
    r"/(site-packages|dist-packages|__pycache__|lib/python\d[\d.]*)/"
    r"|\.(py|pyc|pyo|pyd|pth|so|egg-link)$|\.so(\.\d+)+$|/pyvenv\.cfg$"
)
_SIZE = {"POSIX": "{p}_SIZE_{op}_{b}", "MPI-IO": "{p}_SIZE_{op}_AGG_{b}"}


@dataclass(frozen=True)
class Dataset:
    """An HDF5 dataset's H5D records: shape facts, chunking and access (dims slowest first)."""

    name: str
    ndims: int
    npoints: int
    itemsize: int
    chunks: tuple[int, ...] | None
    access: tuple[int, ...]
    access_count: int
    bytes_written: int
    bytes_read: int
    collective: bool


@dataclass(frozen=True)
class Group:
    """One file, or one file-per-process group, and what the application did to it."""

    name: str
    files: int
    shared: bool
    ranks: int
    layer: str
    bytes_read: int
    bytes_written: int
    read_time: float
    write_time: float
    reads: int
    writes: int
    sizes: dict[str, dict[str, int]]
    common: tuple[tuple[int, int], ...]
    seq_writes: int = 0
    consec_writes: int = 0
    seq_reads: int = 0
    consec_reads: int = 0
    posix_writes: int = 0
    posix_reads: int = 0
    not_aligned: int = 0
    alignment: int = 0
    coll_writes: int = 0
    indep_writes: int = 0
    coll_reads: int = 0
    indep_reads: int = 0
    rank_bytes: dict[str, int] = field(default_factory=dict)
    rank_time: dict[str, float] = field(default_factory=dict)
    stripe_count: int | None = None
    stripe_size: int | None = None
    datasets: tuple[Dataset, ...] = ()

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def request(self) -> int | None:
        """The most common request size (bytes), None without requests."""
        return self.common[0][0] if self.common else None

    @property
    def layout(self) -> str:
        return "shared" if self.shared else "fpp"

    @property
    def io(self) -> str | None:
        """``collective``, ``independent``, or None without MPI-IO."""
        if self.layer != "MPI-IO":
            return None
        coll, indep = self.coll_writes + self.coll_reads, self.indep_writes + self.indep_reads
        return "collective" if coll >= indep and coll else "independent"


def is_data(name: str) -> bool:
    """Whether a file is the application's data, not its interpreter's or libraries' files."""
    return not name.startswith(SYSTEM_DIRS) and _CODE.search(name) is None


def left_out(log: Log) -> list[str]:
    """The files :func:`groups` leaves out unless ``all_files`` (see :func:`is_data`)."""
    return sorted(n for n in _ids_of(log) if not is_data(n))


def _ids_of(log: Log) -> dict[str, list[int]]:
    """File name -> record ids of every file that POSIX, MPI-IO or STDIO saw."""
    found: dict[str, list[int]] = {}
    for module in ("MPI-IO", "POSIX", "STDIO"):
        df = frame(log, module)
        if df is None:
            continue
        for rid in dict.fromkeys(int(i) for i in df["id"]):
            name = log.names.get(rid, str(rid))
            if name.startswith("<") or rid in found.get(name, []):
                continue  # <STDIN>, <STDOUT>, <STDERR>
            found.setdefault(name, []).append(rid)
    return found


def _rows(log: Log, module: str, ids: set[int], kind: str = "counters") -> pd.DataFrame | None:
    df = frame(log, module, kind)
    if df is None:
        return None
    rows = df[df["id"].astype("uint64").isin(ids)]
    return rows if len(rows) else None


def _sum(df: pd.DataFrame | None, column: str) -> float:
    if df is None or column not in df:
        return 0
    return float(df[column].clip(lower=0).sum())


def groups(log: Log, *, all_files: bool = False) -> list[Group]:
    """The data files or file-per-process groups, most bytes first.

    With ``all_files`` the interpreter's and libraries' files follow them
    (most bytes first too), so the application's data still comes first.
    """
    files = _ids_of(log)
    found = _grouped(log, {n: ids for n, ids in files.items() if is_data(n)})
    if all_files:
        found += _grouped(log, {n: ids for n, ids in files.items() if not is_data(n)})
    return found


def _grouped(log: Log, files: dict[str, list[int]]) -> list[Group]:
    pattern: dict[str, list[str]] = {}
    for name in files:
        pattern.setdefault(re.sub(r"\d+", "#", name), []).append(name)
    found = []
    for key, names in pattern.items():
        ids = {i for n in names for i in files[n]}
        shared = _is_shared(log, ids)
        if len(names) > 1 and not shared:
            found.append(_group(log, key, ids, files=len(names)))
        else:
            found += [_group(log, n, set(files[n]), files=1) for n in names]
    return sorted(found, key=lambda g: (-g.bytes, g.name))


def _is_shared(log: Log, ids: set[int]) -> bool:
    """Reduced by Darshan (rank -1), or one file's records from several ranks."""
    for module in ("MPI-IO", "POSIX"):
        df = _rows(log, module, ids)
        if df is None:
            continue
        if bool((df["rank"] < 0).any()) or df.groupby("id")["rank"].nunique().max() > 1:
            return True
    return False


def _group(log: Log, name: str, ids: set[int], *, files: int) -> Group:
    layer = "MPI-IO" if _rows(log, "MPI-IO", ids) is not None else "POSIX"
    if _rows(log, layer, ids) is None:
        layer = "STDIO"
    c, f = _rows(log, layer, ids), _rows(log, layer, ids, "fcounters")
    p = _PREFIX.get(layer, layer)
    posix = _rows(log, "POSIX", ids)
    shared = _is_shared(log, ids)
    ranks = len({int(r) for r in c["rank"]}) if c is not None else 0
    ranks = log.nprocs if c is not None and bool((c["rank"] < 0).any()) else ranks
    return Group(
        name=name,
        files=files,
        shared=shared,
        ranks=ranks,
        layer=layer,
        bytes_read=int(_sum(c, f"{p}_BYTES_READ")),
        bytes_written=int(_sum(c, f"{p}_BYTES_WRITTEN")),
        read_time=_sum(f, f"{p}_F_READ_TIME"),
        write_time=_sum(f, f"{p}_F_WRITE_TIME"),
        reads=int(_ops(c, p, "READS")),
        writes=int(_ops(c, p, "WRITES")),
        sizes={op: _sizes(c, layer, op) for op in ("READ", "WRITE")} if layer != "STDIO" else {},
        common=_common(c, p),
        **_posix_figures(posix),
        **_mpiio_figures(_rows(log, "MPI-IO", ids)),
        **_rank_figures(c, f, p),
        **_stripes(log, ids),
        datasets=_datasets(log, name if files == 1 else None),
    )


def _ops(df: pd.DataFrame | None, p: str, what: str) -> float:
    if p != "MPIIO":
        return _sum(df, f"{p}_{what}")
    return sum(_sum(df, f"MPIIO_{kind}_{what}") for kind in ("INDEP", "COLL", "SPLIT", "NB"))


def _sizes(df: pd.DataFrame | None, layer: str, op: str) -> dict[str, int]:
    p = _PREFIX[layer]
    return {b: int(_sum(df, _SIZE[layer].format(p=p, op=op, b=b))) for b in BINS}


def _common(df: pd.DataFrame | None, p: str) -> tuple[tuple[int, int], ...]:
    """The most common request sizes over the records, ``((size, count), ...)``."""
    counts: Counter[int] = Counter()
    if df is None or f"{p}_ACCESS1_ACCESS" not in df:
        return ()
    for i in range(1, 5):
        for size, n in zip(df[f"{p}_ACCESS{i}_ACCESS"], df[f"{p}_ACCESS{i}_COUNT"], strict=True):
            if n > 0 and size > 0:
                counts[int(size)] += int(n)
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0])))


def _posix_figures(df: pd.DataFrame | None) -> dict[str, Any]:
    keys = {
        "seq_writes": "SEQ_WRITES",
        "consec_writes": "CONSEC_WRITES",
        "seq_reads": "SEQ_READS",
        "consec_reads": "CONSEC_READS",
        "posix_writes": "WRITES",
        "posix_reads": "READS",
        "not_aligned": "FILE_NOT_ALIGNED",
    }
    found = {k: int(_sum(df, f"POSIX_{c}")) for k, c in keys.items()}
    found["alignment"] = int(df["POSIX_FILE_ALIGNMENT"].max()) if df is not None else 0
    return found


def _mpiio_figures(df: pd.DataFrame | None) -> dict[str, Any]:
    keys = ("coll_writes", "indep_writes", "coll_reads", "indep_reads")
    return {k: int(_sum(df, f"MPIIO_{k.upper()}")) for k in keys}


def _rank_figures(c: pd.DataFrame | None, f: pd.DataFrame | None, p: str) -> dict[str, Any]:
    """Bytes and I/O time per rank; a shared file has only its fastest and slowest rank."""
    if c is None or p not in ("POSIX", "MPIIO"):
        return {}
    if bool((c["rank"] < 0).any()):
        row, frow = c[c["rank"] < 0].iloc[0], f[f["rank"] < 0].iloc[0] if f is not None else {}
        rank_bytes = {
            f"fastest (rank {int(row[f'{p}_FASTEST_RANK'])})": int(row[f"{p}_FASTEST_RANK_BYTES"]),
            f"slowest (rank {int(row[f'{p}_SLOWEST_RANK'])})": int(row[f"{p}_SLOWEST_RANK_BYTES"]),
        }
        times = [float(frow.get(f"{p}_F_{k}_RANK_TIME", 0)) for k in ("FASTEST", "SLOWEST")]
        return {"rank_bytes": rank_bytes, "rank_time": dict(zip(rank_bytes, times, strict=True))}
    moved = c[f"{p}_BYTES_READ"].clip(lower=0) + c[f"{p}_BYTES_WRITTEN"].clip(lower=0)
    per_rank = moved.groupby(c["rank"].astype(int)).sum()
    return {"rank_bytes": {f"rank {int(r)}": int(b) for r, b in per_rank.items()}}


def _stripes(log: Log, ids: set[int]) -> dict[str, Any]:
    df = _rows(log, "LUSTRE", ids, "components")
    if df is None:
        return {}
    row = df.iloc[0]
    return {
        "stripe_count": int(row["LUSTRE_COMP_STRIPE_COUNT"]),
        "stripe_size": int(row["LUSTRE_COMP_STRIPE_SIZE"]),
    }


def _datasets(log: Log, path: str | None) -> tuple[Dataset, ...]:
    df = frame(log, "H5D")
    if df is None or path is None:
        return ()
    found = []
    for rid, rows in df.groupby(df["id"].astype("uint64")):
        name = log.names.get(int(rid), "")
        if not name.startswith(path + ":"):
            continue
        found.append(_dataset(name.removeprefix(path + ":"), rows))
    return tuple(found)


def _dataset(name: str, rows: pd.DataFrame) -> Dataset:
    """One dataset from its H5D records; Darshan right-aligns dimensions in D1..D5."""
    row = rows.iloc[0]
    ndims = int(row["H5D_DATASPACE_NDIMS"])
    if not 0 <= ndims <= 5:
        ndims = 0  # a corrupt count: Darshan records at most 5 dimensions, D1..D5
    dims = [f"D{i}" for i in range(6 - ndims, 6)] if ndims else []
    chunks = tuple(int(row[f"H5D_CHUNK_SIZE_{d}"]) for d in dims)
    return Dataset(
        name=name,
        ndims=ndims,
        npoints=int(row["H5D_DATASPACE_NPOINTS"]),
        itemsize=int(row["H5D_DATATYPE_SIZE"]),
        chunks=chunks if chunks and all(c > 0 for c in chunks) else None,
        access=tuple(int(row[f"H5D_ACCESS1_LENGTH_{d}"]) for d in dims),
        access_count=int(_sum(rows, "H5D_ACCESS1_COUNT")),
        bytes_written=int(_sum(rows, "H5D_BYTES_WRITTEN")),
        bytes_read=int(_sum(rows, "H5D_BYTES_READ")),
        collective=bool((rows["H5D_USE_MPIIO_COLLECTIVE"] > 0).any()),
    )

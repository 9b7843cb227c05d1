"""Findings in the Drishti spirit: what the counters show, and the iotune parameter to sweep.

Each :class:`Finding` carries the counters behind it (summed over the records
of its file or group), so a reader can check it against ``darshan-parser``,
and the parameters of a generated spec that address it.  Thresholds follow
Drishti's defaults (hpc-io/drishti-io): more than 10 % small (< 1 MiB) or
misaligned requests, more than 20 % non-sequential requests, more than 15 %
imbalance between the fastest and slowest rank.  What a log lacks for a
finding (a module Darshan did not record) is a finding too.

Sizes come from the exact common access sizes the log records
(``*_ACCESS1..4_ACCESS`` and their counts) before its histogram, whose
``100K_1M`` bin includes requests of exactly 1 MiB: those are not small.
Problems are ranked by the share of the file's requests, bytes or time they
concern, largest first; a generated spec's ``search.focus`` keeps that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from iotune.core.units import format_size
from iotune.darshan_.log import Log
from iotune.darshan_.summary import BINS, SMALL_BINS, Group

SMALL, MISALIGNED, RANDOM, IMBALANCE = 0.10, 0.10, 0.20, 0.15
#: requests under 10 KiB: in an HDF5 file, its metadata
TINY_BINS = BINS[:3]
#: fewer requests than this say nothing about a pattern (the first is never sequential)
MIN_OPS = 10
#: a shared file this large should be striped over more than one OST
LARGE_SHARED = 2**30
MiB = 2**20


@dataclass(frozen=True)
class Finding:
    """One finding: ``kind`` ("problem" or "missing"), its text, counters and parameters.

    ``share`` is the fraction of the file's requests, bytes or I/O time the
    problem concerns (0 to 1), by which problems are ranked.
    """

    code: str
    kind: str
    text: str
    counters: dict[str, float] = field(default_factory=dict)
    parameters: tuple[str, ...] = ()
    group: str = ""
    share: float = 0.0


def diagnose(log: Log, groups: list[Group]) -> list[Finding]:
    """Findings of the log (missing modules), then the problems of its busiest file or
    group, the largest share first."""
    found: list[Finding] = []
    if groups and groups[0].layer != "STDIO":
        main = groups[0]
        for check in (
            _small,
            _metadata,
            _misaligned,
            _random,
            _independent,
            _posix_shared,
            _stripes,
            _imbalance,
            _chunks,
        ):
            found += [f for f in check(main) if f is not None]
    return _missing(log, groups) + sorted(found, key=lambda f: -f.share)


def _missing(log: Log, groups: list[Group]) -> list[Finding]:
    modules = set(log.modules)
    found = [
        Finding(
            "partial",
            "missing",
            f"Darshan ran out of memory for {m} records: the log "
            "holds only some of them, so its figures are lower bounds",
        )
        for m in log.partial
    ]
    if not modules & {"POSIX", "MPI-IO"}:
        have = ", ".join(log.modules) or "none"
        found.append(
            Finding(
                "no-file-io",
                "missing",
                f"no POSIX or MPI-IO records (modules: "
                f"{have}): iotune has no request sizes or layout to reproduce",
            )
        )
    elif groups and groups[0].layer == "STDIO":
        found.append(
            Finding(
                "stdio-only",
                "missing",
                f"the busiest file {groups[0].name} was "
                "accessed through STDIO only: no request sizes to reproduce",
            )
        )
    if log.nprocs > 1 and "MPI-IO" not in modules and "POSIX" in modules:
        found.append(
            Finding(
                "no-mpiio",
                "missing",
                "no MPI-IO records: the ranks used POSIX "
                "(or Darshan's MPI-IO module was off); collective I/O cannot be judged",
            )
        )
    if "LUSTRE" not in modules:
        found.append(
            Finding(
                "no-lustre",
                "missing",
                "no LUSTRE records (not on Lustre, or the "
                "module was off): stripe settings unknown, the spec keeps the "
                "file system's defaults",
            )
        )
    if "H5F" in modules and "H5D" not in modules:
        found.append(
            Finding(
                "no-h5d",
                "missing",
                "HDF5 files but no H5D records (Darshan "
                "before 3.2, or the module was off): chunking unknown",
            )
        )
    if "H5D" in modules:
        found.append(
            Finding(
                "no-filters",
                "missing",
                "Darshan's H5D records carry no filter "
                "information: the baseline assumes no compression (codec: none)",
            )
        )
    return found


def _prefix(g: Group) -> str:
    return "MPIIO" if g.layer == "MPI-IO" else g.layer


def _small(g: Group) -> list[Finding | None]:
    out: list[Finding | None] = []
    agg = "_AGG" if g.layer == "MPI-IO" else ""
    exact = dict(g.common)
    for op, word in (("WRITE", "writes"), ("READ", "reads")):
        bins = g.sizes.get(op, {})
        total, binned = sum(bins.values()), sum(bins.get(b, 0) for b in SMALL_BINS)
        # requests of exactly 1 MiB sit in the 100K_1M bin; the common sizes count them
        one = min(exact.get(MiB, 0), bins.get("100K_1M", 0))
        small = binned - one
        if not total or small / total <= SMALL:
            continue
        params = ("transfer_size", "hints") if g.layer == "MPI-IO" else ("transfer_size",)
        cb = " and a larger cb_buffer_size (hints)" if g.layer == "MPI-IO" else ""
        sizes = [f"{format_size(n, exact=False)} x{c}" for n, c in g.common if n < MiB][:2]
        counters = {f"{_prefix(g)}_SIZE_{op}{agg}_0_100..100K_1M": binned}
        if one:
            counters[f"{_prefix(g)}_ACCESS1..4 of exactly 1 MiB"] = exact[MiB]
        out.append(
            Finding(
                f"small-{word}",
                "problem",
                f"{small / total:.0%} of {total} {word} are smaller than 1 MiB ("
                + (
                    f"the file's most common small sizes, reads and writes: {', '.join(sizes)}"
                    if sizes
                    else "by Darshan's histogram"
                )
                + f"): sweep a larger transfer_size{cb}",
                {**counters, f"{word} (all sizes)": total},
                params,
                g.name,
                small / total,
            )
        )
    return out


def _misaligned(g: Group) -> list[Finding | None]:
    ops = g.posix_reads + g.posix_writes
    if ops < MIN_OPS or not g.alignment or g.not_aligned / ops <= MISALIGNED:
        return []
    # in an HDF5 file, H5Pset_alignment places chunks and datasets on the boundary
    hdf5 = ", or alignment (HDF5 places its chunks on it)" if g.datasets else ""
    return [
        Finding(
            "misaligned",
            "problem",
            f"{g.not_aligned / ops:.0%} of {ops} POSIX requests do not start at a multiple of the "
            f"file alignment {format_size(g.alignment)}: sweep transfer_size (and stripe_size) as "
            f"multiples of it{hdf5}",
            {
                "POSIX_FILE_NOT_ALIGNED": g.not_aligned,
                "POSIX_FILE_ALIGNMENT": g.alignment,
                "POSIX_READS + POSIX_WRITES": ops,
            },
            ("transfer_size", "stripe_size", *(("alignment",) if g.datasets else ())),
            g.name,
            g.not_aligned / ops,
        )
    ]


def _metadata(g: Group) -> list[Finding | None]:
    """Requests under 10 KiB to an HDF5 file: its metadata, read and written piece by piece."""
    if not g.datasets:
        return []
    bins = [g.sizes.get(op, {}) for op in ("READ", "WRITE")]
    total = sum(sum(b.values()) for b in bins)
    tiny = sum(b.get(name, 0) for b in bins for name in TINY_BINS)
    if total < MIN_OPS or tiny / total <= SMALL:
        return []
    return [
        Finding(
            "small-metadata",
            "problem",
            f"{tiny / total:.0%} of {total} requests to this HDF5 file are under 10 KiB, "
            "which in HDF5 is mostly metadata: sweep meta_block_size (metadata aggregation) "
            "and page_size (paged aggregation, with page_buffer for reads)",
            {f"{_prefix(g)}_SIZE_*_0_100..1K_10K": tiny, "requests (all sizes)": total},
            ("meta_block_size", "page_size"),
            g.name,
            tiny / total,
        )
    ]


def _random(g: Group) -> list[Finding | None]:
    out: list[Finding | None] = []
    for word, ops, seq in (
        ("writes", g.posix_writes, g.seq_writes),
        ("reads", g.posix_reads, g.seq_reads),
    ):
        if ops < MIN_OPS or (ops - seq) / ops <= RANDOM:
            continue
        params = ("hints",) if g.layer == "MPI-IO" else ("transfer_size",)
        out.append(
            Finding(
                f"random-{word}",
                "problem",
                f"{(ops - seq) / ops:.0%} of {ops} POSIX {word} are not sequential (each after "
                "the previous one): sweep data sieving (romio_ds_*) or larger requests",
                {f"POSIX_{word.upper()}": ops, f"POSIX_SEQ_{word.upper()}": seq},
                params,
                g.name,
                (ops - seq) / ops,
            )
        )
    return out


def _independent(g: Group) -> list[Finding | None]:
    if g.layer != "MPI-IO" or not g.shared or g.ranks < 2:
        return []
    indep, coll = g.indep_writes + g.indep_reads, g.coll_writes + g.coll_reads
    if not indep or indep <= coll:
        return []
    return [
        Finding(
            "independent-shared",
            "problem",
            f"{indep} of {indep + coll} MPI-IO requests to a file shared by {g.ranks} ranks are "
            "independent: sweep io: collective (collective buffering merges them)",
            {
                "MPIIO_INDEP_WRITES": g.indep_writes,
                "MPIIO_INDEP_READS": g.indep_reads,
                "MPIIO_COLL_WRITES": g.coll_writes,
                "MPIIO_COLL_READS": g.coll_reads,
            },
            ("io",),
            g.name,
            indep / (indep + coll),
        )
    ]


def _posix_shared(g: Group) -> list[Finding | None]:
    if g.layer != "POSIX" or not g.shared or g.ranks < 2:
        return []
    return [
        Finding(
            "posix-shared",
            "problem",
            f"{g.ranks} ranks share this file through POSIX, without MPI-IO: sweep io (MPI-IO "
            "collective vs independent) in the generated mpiio spec",
            {"POSIX_WRITES": g.posix_writes, "POSIX_READS": g.posix_reads, "rank": -1},
            ("io",),
            g.name,
            1.0,
        )
    ]


def _stripes(g: Group) -> list[Finding | None]:
    if g.stripe_count != 1 or not g.shared or g.bytes < LARGE_SHARED:
        return []
    return [
        Finding(
            "one-stripe",
            "problem",
            f"a {format_size(g.bytes, exact=False)} file shared by {g.ranks} ranks sits on one "
            "Lustre OST: sweep stripe_count",
            {
                "LUSTRE_COMP_STRIPE_COUNT": 1,
                "LUSTRE_COMP_STRIPE_SIZE": g.stripe_size or 0,
                f"{_prefix(g)}_BYTES_READ + _WRITTEN": g.bytes,
            },
            ("stripe_count",),
            g.name,
            1.0,
        )
    ]


def _imbalance(g: Group) -> list[Finding | None]:
    times = list(g.rank_time.values())
    if len(times) != 2 or not times[1] or (times[1] - times[0]) / times[1] <= IMBALANCE:
        return []
    p = _prefix(g)
    return [
        Finding(
            "imbalance",
            "problem",
            f"the slowest rank spent {times[1]:.3g} s in I/O, the fastest {times[0]:.3g} s "
            f"({(times[1] - times[0]) / times[1]:.0%} imbalance): sweep io: collective, whose "
            "aggregators even out the ranks' requests",
            {f"{p}_F_SLOWEST_RANK_TIME": times[1], f"{p}_F_FASTEST_RANK_TIME": times[0]},
            ("io",) if g.layer == "MPI-IO" else ("transfer_size",),
            g.name,
            (times[1] - times[0]) / times[1],
        )
    ]


def _chunks(g: Group) -> list[Finding | None]:
    out: list[Finding | None] = []
    for ds in g.datasets:
        if ds.chunks is None or not ds.access:
            continue
        cut = [a % c and c % a for a, c in zip(ds.access, ds.chunks, strict=True) if a and c]
        if not any(cut):
            continue
        shape, access = "x".join(map(str, ds.chunks)), "x".join(map(str, ds.access))
        out.append(
            Finding(
                "chunks-cut",
                "problem",
                f"dataset {ds.name}: chunks {shape} cut across the application's selections "
                f"{access}: every access touches partial chunks; sweep chunks",
                {
                    **{f"H5D_CHUNK_SIZE_D{6 - ds.ndims + i}": c for i, c in enumerate(ds.chunks)},
                    **{
                        f"H5D_ACCESS1_LENGTH_D{6 - ds.ndims + i}": a
                        for i, a in enumerate(ds.access)
                    },
                },
                ("chunks",),
                g.name,
                (ds.bytes_written + ds.bytes_read) / g.bytes if g.bytes else 1.0,
            )
        )
    return out

"""The two kinds of format backend and what they share.

A backend writes and reads one array in one format with given parameters: no sweeps, no timing.

:class:`SlabBackend`
    driven slab by slab by the trial runner (:mod:`iotune.runner.steps`), which times the
    calls: netCDF4, h5py, Zarr, POSIX, memory.
:class:`LaunchedBackend`
    run as MPI ranks by a rank program of its own; :meth:`~LaunchedBackend.run_launched` is
    the one launch flow (stripe the directory, launch, aggregate the slowest rank, record
    hints and striping): MPI-IO, and h5py with ``nprocs > 1``, which is of both kinds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from iotune.backends import exports_base
from iotune.backends.knobs import Knobs
from iotune.backends.target import TargetWriter
from iotune.backends.xarray_open import Chunks
from iotune.core.plugins import named
from iotune.measuring.access import Selection
from iotune.model.codecs import Codec
from iotune.model.readers import ReaderGroup
from iotune.model.records import TrialResult, TrialTask
from iotune.model.spec import StorageSpec, Workload


def check_properties(stored: Mapping[str, Any], asked: Mapping[str, Any]) -> None:
    """Raise VerificationError naming every property whose stored value is not the asked one."""
    from iotune.core.errors import VerificationError

    wrong = {k: (stored.get(k), v) for k, v in asked.items() if stored.get(k) != v}
    if wrong:
        detail = ", ".join(f"{k}={got!r} (asked {want!r})" for k, (got, want) in wrong.items())
        raise VerificationError(f"file properties differ from the request: {detail}")


class Writer(ABC):
    """An open file being written slab by slab along the first dimension."""

    @abstractmethod
    def write(self, start: int, data: np.ndarray) -> None:
        """Store ``data`` at ``[start : start + len(data)]`` along the first dimension."""

    @abstractmethod
    def close(self) -> None:
        """Flush library buffers and close; fsync is the caller's business."""

    def traffic(self) -> dict[str, Any] | None:
        """Requests the write sent to an object store (counts, bytes, retries); None: a file."""
        return None


class Reader(ABC):
    """An open file being read by selections."""

    @abstractmethod
    def read(self, selection: Selection) -> np.ndarray:
        """Return the selected values as a NumPy array (no masking, no scaling)."""

    @abstractmethod
    def close(self) -> None:
        """Close the file."""

    def traffic(self) -> dict[str, Any] | None:
        """Requests the read sent to an object store (counts, bytes, first-byte times)."""
        return None


class Backend(ABC):
    """What every storage format declares.

    Class attributes describe it without importing its library, so the spec
    can be validated and ``iotune backends`` can list it cheaply.
    """

    name: ClassVar[str]
    library: ClassVar[str]
    #: the pip extra that installs ``library`` when it is not part of iotune's core
    extra: ClassVar[str | None] = None
    suffix: ClassVar[str]
    parameters: ClassVar[tuple[str, ...]]
    #: the knobs with the library's defaults; a built-in's ``parameters`` are their
    #: names (a plugin may declare its ``parameters`` alone)
    knobs: ClassVar[type[Knobs] | None] = None
    description: ClassVar[str] = ""
    #: ``"module:Class"`` of the format's apply target writer; None: not an apply target
    target_writer: ClassVar[str | None] = None
    #: parameters accepted (so multi-format sweeps can sweep them) but without effect
    inapplicable: ClassVar[tuple[str, ...]] = ()
    #: trials contend for storage: executors run at most ``per_host`` at once per host
    io_bound: ClassVar[bool] = True
    #: ``module:function`` computing the chunks the format's library picks when given none,
    #: ``function(workload, codec)``; None: no library default (posix, memory, MPI-IO)
    default_chunks: ClassVar[str | None] = None
    #: nothing reaches a file system: no fsync, no page cache
    in_memory: ClassVar[bool] = False
    #: the programs that open what it stores, by how they find filters (none: raw bytes)
    readers: ClassVar[tuple[ReaderGroup, ...]] = ()
    #: the way of reading (``compare``) it measures, by what its write makes: ``rewrite``
    #: (a data copy), ``references`` (to the source) or ``in-place`` (nothing is made)
    one_off: ClassVar[str] = "rewrite"

    @classmethod
    def available(cls) -> tuple[bool, str]:
        """Whether the backend's library imports here, and its version or the error."""
        import importlib

        try:
            module = importlib.import_module(cls.library)
        except ImportError as err:
            return False, f"{cls.library} is not importable: {err}"
        return True, str(getattr(module, "__version__", "unknown"))

    @classmethod  # noqa: B027 - most backends need nothing here
    def check_workload(cls, workload: Workload) -> None:
        """Refuse a workload the format cannot measure at all, before any trial (UsageError)."""

    @classmethod  # noqa: B027 - most backends need nothing here
    def prepare_process(cls) -> None:
        """Adjust a fresh worker process before the backend's library is imported."""

    @classmethod
    def apply_target(cls) -> type[TargetWriter] | None:
        """The writer of ``iotune apply``'s target in this format; None: not an apply target.

        The writer applies every knob of the format a file or store carries and
        names the ones only a reader sets (:mod:`iotune.backends.target`).  It is
        named in :attr:`target_writer` and imported when asked, as a plugin is.
        """
        if cls.target_writer is None:
            return None
        found: type[TargetWriter] = named(cls.target_writer)
        return found

    @classmethod
    def library_chunks(cls, workload: Workload, codec: Codec) -> str | tuple[int, ...]:
        """The chunks the format's library picks when given none (the ``library`` baseline):
        :attr:`default_chunks`'s function, imported when asked (``NotApplicable``: none)."""
        from iotune.core.errors import NotApplicable

        if cls.default_chunks is None:
            raise NotApplicable(f"{cls.name} has no format library choosing default chunks")
        chunks: str | tuple[int, ...] = named(cls.default_chunks)(workload, codec)
        return chunks

    @classmethod
    def expected_seconds(cls, params: Mapping[str, Any], workload: Workload) -> float | None:
        """Seconds one timed repeat of a trial with ``params`` is expected to take, or None.

        None (the default) lets :mod:`iotune.runner.expected` estimate it from the
        bytes and a codec probe; a task farm only needs the order to be right.
        """
        return None

    @classmethod
    def launches(cls, params: Mapping[str, Any]) -> bool:
        """Whether a trial with ``params`` runs as launched MPI ranks.

        Such a trial is not driven slab by slab in the trial's process:
        :meth:`LaunchedBackend.run_launched` starts the ranks.
        """
        return False

    @classmethod
    def parallel_support(cls) -> tuple[bool, str]:
        """Whether trials may use ``nprocs > 1`` here, and what provides it or why not."""
        return False, f"{cls.name} has no parallel mode"

    @classmethod
    def import_library(cls) -> None:
        """Import what the backend uses, outside any timed span."""
        import importlib

        importlib.import_module(cls.library)

    @classmethod
    def exports(
        cls,
        settings: Mapping[str, Any],
        target: exports_base.Target,
        *,
        hints: Mapping[str, Any] | None = None,
        storage: StorageSpec | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Code and commands that configure a program as one measured point, by name.

        Parameters
        ----------
        settings
            The point's effective parameters (``resolve``'s output, with ``backend``).
        target
            The variable the exports describe.
        hints
            The point's MPI-IO hints, ``None`` when the sweep set none.
        storage
            The object store the sweep measured, ``None`` for local storage.

        Returns
        -------
        dict
            ``{name: {"text", "value"}}``, or ``{name: {"unavailable": reason}}`` for an
            export the settings cannot be written in
            (:func:`iotune.backends.exports_base.make_all`).  The default has none.
        """
        return {}

    @classmethod
    def loader_open(cls, target: exports_base.Target) -> tuple[str, list[str]]:
        """How an exported ``Dataset`` opens ``target`` in a loader worker.

        Returns the import line and the lines that bind ``self._array`` (indexed by
        a tuple of slices, giving raw values as NumPy) from ``self.path``
        (:mod:`iotune.backends.loader_exports`).

        Raises
        ------
        NotApplicable
            The format has no such export (the default).
        """
        from iotune.core.errors import NotApplicable

        raise NotApplicable(f"{cls.name} has no Dataset export for the batches pattern")

    @classmethod
    @abstractmethod
    def resolve(
        cls, params: Mapping[str, Any], workload: Workload
    ) -> tuple[dict[str, Any], list[str]]:
        """Return the effective parameters and notes on values that do not apply.

        Defaults are filled in; values that do not apply become ``None`` and
        get a note.  Combinations the library cannot express raise
        :class:`~iotune.core.errors.NotApplicable`.
        """


class SlabBackend(Backend):
    """A format the trial runner drives slab by slab in its own process."""

    #: what the library applied while the last writer was open and the file does not
    #: keep (set by ``open_writer``, read back by ``verify``); empty until then
    _applied: Mapping[str, Any] = MappingProxyType({})

    @abstractmethod
    def open_writer(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Writer:
        """Create the file at ``path`` ready for slabs."""

    @abstractmethod
    def open_reader(self, path: Path, workload: Workload, params: Mapping[str, Any]) -> Reader:
        """Open the file at ``path`` with the read-side parameters applied."""

    @abstractmethod
    def verify(self, path: Path, params: Mapping[str, Any]) -> dict[str, Any]:
        """Check the file holds what ``params`` asked for and describe it.

        Raises :class:`~iotune.core.errors.VerificationError` on a mismatch.
        """

    def slab_budget(self, params: Mapping[str, Any]) -> int | None:
        """Largest slab (bytes) the runner should hand ``write``; None: the runner's default."""
        return None

    def read_budget(self, params: Mapping[str, Any]) -> int | None:
        """Largest selection (bytes) of a full read; None: the runner's default slab."""
        return None

    def syncs(self, params: Mapping[str, Any]) -> bool:
        """Whether the writer makes its data durable itself, so the runner's fsync is skipped."""
        return False

    def stored_bytes(self, path: Path) -> int:
        """Bytes the stored array occupies."""
        return sum(p.stat().st_size for p in self.paths(path))

    def remove(self, path: Path) -> None:
        """Delete the stored array (called inside the trial's own scratch directory)."""
        import shutil

        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()

    def paths(self, path: Path) -> list[Path]:
        """Every file that makes up the stored array (a store may be a directory)."""
        if path.is_dir():
            return sorted(p for p in path.rglob("*") if p.is_file())
        return [path] if path.exists() else []

    def open_dataset(
        self,
        path: Path,
        params: Mapping[str, Any],
        *,
        chunks: Chunks,
        workload: Workload | None = None,
    ) -> Any:
        """Open the stored array as its users open it: an ``xarray.Dataset``.

        The Dataset holds the variable ``data`` with the workload's dimension
        names, read through the format's xarray engine with the trial's read-side
        parameters (chunk cache, request concurrency, an object store's client).

        Parameters
        ----------
        path
            The stored array, as ``open_reader`` takes it.
        params
            The trial's effective parameters.
        chunks
            ``open_dataset``'s ``chunks``: None (no dask), ``"auto"``, ``{dim: n}``,
            or ``"storage"``, one dask chunk per stored chunk
            (:mod:`iotune.backends.xarray_open`).
        workload
            The trial's array, when the caller has it (h5py's chunk-cache slot count
            uses its item size; without it the item size is read from the file).

        Returns
        -------
        xarray.Dataset
            Closing it closes everything the open made (files, stores, clients).

        Raises
        ------
        UsageError
            The format cannot be opened with xarray (this default), or ``chunks``
            is not one of the values above.
        """
        from iotune.core.errors import UsageError

        raise UsageError(
            f"backend {self.name}: format {self.name} cannot be opened with xarray "
            "(netcdf4, h5py, zarr and their object-store variants can)"
        )


class LaunchedBackend(Backend):
    """A format measured by MPI ranks that a rank program of its own runs.

    Subclasses name the program (``python -m PROGRAM JOB.json``, built on
    :mod:`iotune.mpi.rank`) and say how many bytes and calls a trial moves.
    """

    #: module the ranks run, e.g. ``iotune.backends.mpiio.rank``
    rank_program: ClassVar[str]

    @classmethod
    def launches(cls, params: Mapping[str, Any]) -> bool:
        return True

    @abstractmethod
    def launched_bytes(self, params: Mapping[str, Any], workload: Workload) -> int:
        """Bytes all ranks together write (and read back) in one repeat."""

    @abstractmethod
    def launched_ops(self, params: Mapping[str, Any]) -> int:
        """I/O calls all ranks together make to read the data once."""

    def run_launched(self, task: TrialTask, workdir: Path, result: TrialResult) -> None:
        """Launch the ranks for every repeat of ``task`` and fill ``result``.

        Raises
        ------
        VerificationError
            A rank read back other bytes than it wrote, or the file differs
            from what was asked (layout, filters, offsets, values).
        MpiError
            The launcher or a rank failed.
        """
        import dataclasses

        from iotune.measuring import precision
        from iotune.mpi import launch

        params = task.trial.params
        data = workdir / "data"
        hints = dict(task.trial.hints)
        stripe, hints = launch.striped_directory(data, params, hints)
        total = self.launched_bytes(params, task.workload)
        first = None
        # adaptive repeats: a launch per batch, each with its own untimed warm-up repeat
        for count in precision.batches(task.measure, result):
            measure = dataclasses.replace(task.measure, repeats=count, adaptive=False)
            batch = dataclasses.replace(task, measure=measure)
            report = launch.launch_trial(
                batch, workdir, data, hints=hints, stripe=stripe, program=self.rank_program
            )
            launch.fill_result(result, report, total=total, ops=self.launched_ops(params))
            first = first or report
        assert first is not None
        result.stored = launch.stored_info(first, task=task, hints=hints, stripe=stripe)

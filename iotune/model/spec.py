"""The sweep spec as plain frozen dataclasses: no parsing, no I/O.

Everything below the spec parser (backends, the trial runner, the rank programs) depends
on these types only, never on the parser in :mod:`iotune.specfile.parse`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from iotune.core.units import chunk_label
from iotune.model.userpatterns import UserPattern

SPEC_VERSION = 1
DTYPES = ("int16", "int32", "uint16", "float32", "float64")
FIELDS = ("smooth", "random", "zeros", "file")
PATTERNS = ("full", "spatial", "timeseries", "random", "batches")
CACHE_MODES = ("cold", "warm")
#: how repeats of different trials are ordered (``auto``: interleaved where that costs
#: nothing, i.e. trials run in a worker's own process; launched and concurrent trials
#: would pay a launch per repeat, so they run back to back unless asked)
ORDERS = ("auto", "interleaved", "sequential")
#: parameters every backend accepts because the trial runner implements them
TOP_KEYS = (
    "version",
    "name",
    "description",
    "workload",
    "backend",
    "parameters",
    "read",
    "measure",
    "execution",
    "hints",
    "baseline",
    "search",
    "storage",
    "baselines",
    "compare",
)
#: named layouts measured beside the grid (the ``baselines`` list): the format library's
#: default, dask's ``auto``, Rew's balanced chunking, the 1-4 MiB cloud rule, the source file's
BASELINES = ("library", "dask-auto", "balanced", "cloud", "source")
#: ``compare``'s ways to read a source: as it is, or as a backend's write makes it (``one_off``)
WAYS = ("in-place", "references", "rewrite")
#: adaptive search strategies (``search.strategy``); ``grid`` measures every point
#: ``search.strategy``'s names, the one list the spec, the search and the CLI read
STRATEGIES = ("grid", "random", "tpe", "gp", "auto")
#: the strategies that run without PyTorch (``gp`` is optuna's GPSampler)
WITHOUT_TORCH = tuple(s for s in STRATEGIES if s != "gp")


@dataclass(frozen=True)
class Parameter:
    """One parameter: its values, and whether the spec swept it (a list)."""

    name: str
    values: tuple[Any, ...]
    swept: bool

    def labels(self) -> tuple[Any, ...]:
        """Coordinate values as stored in results (chunk shapes become labels)."""
        # shapes (chunks, shards) are the only tuple values; results store them as labels
        return tuple(chunk_label(v) if isinstance(v, tuple) else v for v in self.values)


@dataclass(frozen=True)
class ExecutionSpec:
    """Where trials run; not part of the sweep's digest, so a run may resume elsewhere."""

    executor: str = "serial"
    workers: int | None = None
    scheduler: str | None = None
    per_host: int = 1
    cluster: dict[str, Any] | None = None
    #: how MPI trials start, e.g. "srun -n {nprocs}"; None: the mpiexec beside Python
    launcher: str | None = None

    @property
    def contended(self) -> bool:
        return self.executor == "dask" and self.per_host > 1


@dataclass(frozen=True)
class Workload:
    """The array every trial writes: named dimensions, dtype and content."""

    dims: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: str = "int16"
    field: str = "smooth"
    seed: int = 0
    path: str | None = None
    variable: str | None = None

    @property
    def itemsize(self) -> int:
        return 8 if self.dtype.endswith("64") else 4 if self.dtype.endswith("32") else 2

    @property
    def nbytes(self) -> int:
        n = self.itemsize
        for size in self.shape:
            n *= size
        return n

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": dict(zip(self.dims, self.shape, strict=True)),
            "dtype": self.dtype,
            "field": self.field,
            "seed": self.seed,
            **({"path": self.path, "variable": self.variable} if self.field == "file" else {}),
        }


@dataclass(frozen=True)
class BatchSpec:
    """The ``batches`` pattern: samples drawn in batches, as a training loop reads them.

    ``sample`` is the extent of one sample per named dimension (dimensions not
    named are whole): ``(("time", 1),)`` is one map per sample, a window of every
    dimension tiles the array into boxes.  A repeat reads ``batches`` batches of
    ``batch`` samples, in a random order from the workload seed with ``shuffle``,
    else in order.  ``loader`` is who reads them (``auto``: torch's ``DataLoader``
    where torch is importable, else iotune's own loader); ``step`` the seconds a
    simulated accelerator computes per batch (0: none); ``device`` where each batch goes.
    """

    sample: tuple[tuple[str, int], ...] = ()
    batch: int = 32
    batches: int = 20
    shuffle: bool = True
    loader: str = "auto"
    step: float = 0.0
    device: str = "cpu"
    #: ``batches`` was not given: the spec sets it from the loader knobs (specfile/batches.py)
    default_batches: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for dim, size in self.sample:
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise ValueError(f"read.batches.sample.{dim}: {size!r}; allowed: an integer >= 1")
        for name in ("batch", "batches"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"read.batches.{name}: {value!r}; allowed: an integer >= 1")

    def to_dict(self) -> dict[str, Any]:
        # loader, step and device only when set, so sweeps without them keep their digest
        extra = {
            k: v
            for k, v in (("loader", self.loader), ("step", self.step), ("device", self.device))
            if v != getattr(BatchSpec, k)
        }
        return {
            "sample": dict(self.sample),
            "batch": self.batch,
            "batches": self.batches,
            "shuffle": self.shuffle,
            **extra,
        }


@dataclass(frozen=True)
class ReadSpec:
    patterns: tuple[str, ...] = ("full",)
    spatial: tuple[tuple[str, float], ...] = ()
    timeseries_pixels: int = 16
    random_ops: int = 64
    random_shape: tuple[tuple[str, int], ...] = ()
    #: the ``batches`` pattern's configuration; out of the repr (the digest's ``read``),
    #: so sweeps without it keep their digest: :meth:`Sweep.digest` adds it when set
    batches: BatchSpec | None = field(default=None, repr=False)
    #: the patterns that call the user's code, also named in ``patterns``; repr=False
    #: keeps the digest of sweeps without them (the digest adds them itself)
    user: tuple[UserPattern, ...] = field(default=(), repr=False)

    def user_pattern(self, name: str) -> UserPattern | None:
        """The user's pattern called ``name``; None for a built-in pattern."""
        return next((u for u in self.user if u.name == name), None)


@dataclass(frozen=True)
class MeasureSpec:
    """How each trial is measured.

    With ``adaptive`` (``repeats: auto``) a trial repeats until the 95 %
    confidence interval of each metric's median is within ``precision`` of
    the median, or ``max_repeats`` is reached; ``repeats`` is then unused.
    """

    repeats: int = 3
    cache: str = "cold"
    fsync: bool = True
    max_cold_residency: float = 0.05
    # repr=False keeps the digest of sweeps with fixed repeats as it always was
    adaptive: bool = field(default=False, repr=False)
    precision: float = field(default=0.05, repr=False)
    max_repeats: int = field(default=20, repr=False)
    #: the order of repeats and the noise probes change when, not what, is measured:
    #: not in the digest, so a run may resume with another order
    order: str = field(default="auto", repr=False)
    seed: int = field(default=0, repr=False)
    noise_probes: int = field(default=6, repr=False)

    @property
    def most(self) -> int:
        """The largest number of timed repeats a trial may take."""
        return self.max_repeats if self.adaptive else self.repeats


@dataclass(frozen=True)
class SearchSpec:
    """The ``search`` section: how an adaptive search picks trials (``iotune tune``).

    ``budget`` counts full-size trials, re-measurements included, a trial at fidelity
    ``f`` as ``f`` of one (cost, not launches); ``budget_fraction`` (``25%``) is a share
    of measuring each applicable point at full size; ``budget_seconds`` (``2h``) is the
    sum of the trials' measured wall times (all None: the whole space).
    ``prior`` names earlier results that seed the search (warm start); ``focus`` the
    parameters explored first (a Darshan study's findings, in rank order). ``objective``
    is a metric or weights as ``iotune recommend`` takes them, ``max_tie_loss`` how much
    slower than the fastest a tie-break may pick (None: the objective's default),
    ``readers`` those the pick must open without plugins (``("all",)``: every reader);
    ``parallel`` trials are asked at once (None: as many as the executor runs at once);
    ``remeasure`` is the share of the budget kept for re-measuring the leading
    candidates.
    """

    strategy: str = "auto"
    budget: int | None = None
    budget_fraction: float | None = None
    objective: str = ""
    max_size: int | None = None
    max_ratio_loss: float | None = None
    max_error: float | None = None
    min_digits: int | None = None
    max_tie_loss: float | None = None
    readers: tuple[str, ...] | None = None
    seed: int = 0
    parallel: int | None = None
    remeasure: float = 0.1
    budget_seconds: float | None = None
    prior: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()
    early_stop: bool = True

    def key(self) -> dict[str, object]:
        """What decides which trials the search measures (the journal's digest).

        Budget and parallelism are left out, so a search resumes with a larger budget.
        """
        return {
            "strategy": self.strategy,
            "objective": self.objective,
            "max_size": self.max_size,
            "max_ratio_loss": self.max_ratio_loss,
            "seed": self.seed,
            "remeasure": self.remeasure,
            # only when set, so searches from before these limits keep their digest
            **({"max_error": self.max_error} if self.max_error is not None else {}),
            **({"min_digits": self.min_digits} if self.min_digits is not None else {}),
            **({"max_tie_loss": self.max_tie_loss} if self.max_tie_loss is not None else {}),
            **({"readers": list(self.readers)} if self.readers else {}),
            **({"prior": list(self.prior)} if self.prior else {}),
            **({"focus": list(self.focus)} if self.focus else {}),
            **({} if self.early_stop else {"early_stop": False}),
        }


#: object-store URL schemes (``file://`` is a local directory through the same clients)
STORAGE_SCHEMES = ("s3", "gs", "az", "file")
#: what a price table may price: request kinds, and ``transfer_GB`` (per GB out of the store)
PRICE_KEYS = ("GET", "PUT", "HEAD", "LIST", "DELETE", "POST", "transfer_GB")


@dataclass(frozen=True)
class StorageSpec:
    """The ``storage`` section: where trials write, an object store instead of a local path.

    Credentials are never part of it: the clients take them from the
    environment or the user's standard configuration files.  ``prices`` are
    per request (by kind) and per GB transferred out of the store, in any one
    currency, for the cost estimate.
    """

    url: str
    endpoint: str | None = None
    region: str | None = None
    anonymous: bool = False
    prices: tuple[tuple[str, float], ...] = ()

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0]

    @property
    def bucket(self) -> str:
        """The bucket or container (empty for ``file://``)."""
        if self.scheme == "file":
            return ""
        return self.url.split("://", 1)[1].split("/", 1)[0]

    @property
    def prefix(self) -> str:
        """The key prefix under the bucket (a directory for ``file://``), no slashes around."""
        rest = self.url.split("://", 1)[1]
        if self.scheme == "file":
            return rest.rstrip("/")
        return rest.split("/", 1)[1].strip("/") if "/" in rest else ""

    def key(self) -> dict[str, object]:
        """What decides where trials measure (the sweep's digest): never a credential."""
        return {"url": self.url, "endpoint": self.endpoint, "region": self.region}


@dataclass(frozen=True)
class Sweep:
    """A validated sweep spec."""

    name: str
    workload: Workload
    backends: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    read: ReadSpec = ReadSpec()
    measure: MeasureSpec = MeasureSpec()
    execution: ExecutionSpec = field(default_factory=ExecutionSpec)
    description: str = ""
    #: named MPI-IO hint sets (the top-level ``hints`` section), swept by name
    hints: dict[str, dict[str, str]] = field(default_factory=dict)
    #: the application's own settings (the ``baseline`` section), ``{parameter: label}``;
    #: a point of the grid, so it is measured and ``recommend`` compares against it
    baseline: dict[str, Any] = field(default_factory=dict)
    #: the ``baselines`` list: named layouts (:data:`BASELINES`) measured beside the grid
    baselines: tuple[str, ...] = ()
    compare: tuple[str, ...] = ()  # the ``compare`` list (:data:`WAYS`): said by recommend
    #: the ``search`` section; None for plain grids (``iotune run``)
    search: SearchSpec | None = None
    #: the ``storage`` section; None: trials write in a local scratch directory
    storage: StorageSpec | None = None
    text: str = field(default="", compare=False)
    source: str | None = field(default=None, compare=False)

    @property
    def swept(self) -> tuple[Parameter, ...]:
        return tuple(p for p in self.parameters if p.swept)

    def workload_at(self, fidelity: float | None) -> Workload:
        """The workload a trial at ``fidelity`` writes (None or 1: the whole of it).

        A fraction of the steps along the first dimension (time, usually the
        record dimension), never fewer than the longest chunk or shard along it
        among the sweep's values, so every configuration keeps its chunk shape
        at every fidelity and cheap trials rank like full-size ones as far as
        they can.
        """
        if fidelity is None or fidelity >= 1:
            return self.workload
        floor = 1
        for param in self.parameters:
            if param.name in ("chunks", "shards"):
                floor = max([floor, *(v[0] for v in param.values if isinstance(v, tuple))])
        steps = max(floor, math.ceil(self.workload.shape[0] * fidelity))
        steps = min(steps, self.workload.shape[0])
        return replace(self.workload, shape=(steps, *self.workload.shape[1:]))

    def digest(self) -> str:
        """Hash of everything that changes what is measured (not name or text)."""
        data = {
            "workload": self.workload.to_dict(),
            "backends": self.backends,
            "parameters": [(p.name, p.labels(), p.swept) for p in self.parameters],
            "read": repr(self.read),
            "measure": repr(self.measure),
            **(
                {"adaptive": [self.measure.precision, self.measure.max_repeats]}
                if self.measure.adaptive
                else {}
            ),
        }
        if any(self.hints.values()):  # only then, so older sweeps keep their digest
            data["hints"] = self.hints
        if self.baseline:  # likewise: sweeps without a baseline keep their digest
            data["baseline"] = self.baseline
        if self.baselines:  # likewise: sweeps without baselines keep their digest
            data["baselines"] = list(self.baselines)
        if self.search is not None:  # only then, so grids keep their digest
            data["search"] = self.search.key()
        if self.storage is not None:  # likewise for sweeps on local storage
            data["storage"] = self.storage.key()
        if self.read.batches is not None:  # likewise for sweeps without the batches pattern
            data["batches"] = self.read.batches.to_dict()
        if self.read.user:  # likewise for sweeps reading with built-in patterns only
            data["user_patterns"] = [u.to_dict() for u in self.read.user]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

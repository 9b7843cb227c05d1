"""What a search did: its trials in order (:class:`Step`) and its :class:`Outcome`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from iotune.model.records import TrialResult
from iotune.model.spec import SearchSpec
from iotune.search.budget import Budget
from iotune.search.fidelity import Ladder
from iotune.search.state import State, Visit


@dataclass
class Step:
    """One trial of the search, in the order asked."""

    id: str
    visit: Visit
    kind: str  # explore, or what the policy that asked it says: prior, promote, control, remeasure
    handle: Any = None  # the sampler's trial
    score: float = math.nan  # this trial's own log score
    leader: int = -1  # the visit leading once this trial was told
    result: TrialResult | None = None

    @property
    def cost(self) -> float:
        """Its share of a full-size trial in a trial budget: its fidelity (1 without rungs)."""
        fidelity = self.visit.fidelity
        return 1.0 if fidelity is None else fidelity

    @property
    def seconds(self) -> float:
        """What the trial cost in time (0 until measured)."""
        return self.result.seconds if self.result is not None else 0.0


class Recorder(Protocol):
    """What the results ask of a search's policies (:class:`~iotune.search.policy.Policy`)."""

    def attrs(self, out: Outcome) -> dict[str, Any]: ...


@dataclass
class Outcome:
    """What a search did: its visits, its trials in order, and its pick."""

    search: SearchSpec
    limit: Budget
    space_size: int
    applicable: int
    state: State
    ladder: Ladder
    steps: list[Step] = field(default_factory=list)
    #: earlier results that seeded the search: what each was and how it was scaled
    prior: list[dict[str, Any]] = field(default_factory=list)
    #: the search's policies, in the order the loop calls them
    policies: tuple[Recorder, ...] = ()

    @property
    def budget(self) -> int | float:
        """The budget in its unit: full-size trials (an integer) or seconds."""
        return self.limit.trials if self.limit.trials is not None else self.limit.total

    @property
    def spent(self) -> float:
        """What the trials cost, in the budget's unit (a cheap trial: its fidelity's share)."""
        return self.limit.used(self.steps)

    @property
    def seconds(self) -> float:
        """Wall time of every trial measured."""
        return sum(s.seconds for s in self.steps)

    @property
    def leader(self) -> Visit | None:
        """The search's running leader (:meth:`State.leader`: the best confirmed score).

        Not the configuration ``tune`` names: that is the results' pick, ranked and
        tie-broken as ``recommend`` does (:func:`iotune.search.results.search_dataset`).
        """
        return self.state.leader()

    def policy_attrs(self) -> dict[str, Any]:
        """What the policies record in the results' attributes, in their order."""
        return {k: v for policy in self.policies for k, v in policy.attrs(self).items()}

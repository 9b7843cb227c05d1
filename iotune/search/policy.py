"""The search's policies behind one interface, as optuna keeps pruners apart from samplers.

The loop (:mod:`iotune.search.loop`) asks the sampler for new configurations,
measures batches and tells the sampler how they did.  Everything else a search
does is a *policy*'s, one module each:

- :mod:`~iotune.search.rungs`: fidelity rungs (explore cheap, climb to full size,
  controls, the rank-correlation fallback);
- :mod:`~iotune.search.warm_start`: earlier results measured first, then told to
  the sampler;
- :mod:`~iotune.search.early_stop`: the rule that stops a hopeless trial's repeats;
- :mod:`~iotune.search.racing`: re-measuring near-ties at full size until the
  leader is confirmed.

A policy subclasses :class:`Policy` and overrides the hooks it needs (each does
nothing by default).  The loop calls every policy in order, at these points:

- :meth:`~Policy.start` once the loop is built; :meth:`~Policy.resumed` for each
  trial taken from an earlier run's log;
- :meth:`~Policy.before_batch`, then :meth:`~Policy.plan` until one policy
  chooses the batch (none does: the sampler fills it).  Choosing, a policy may
  call back :meth:`Loop.fill` (new configurations: each policy's
  :meth:`~Policy.propose` first, then the sampler, then, when the sampler stalls,
  :meth:`~Policy.propose_stalled`), :meth:`Loop.remeasure` and :meth:`Loop.confirm`
  (every policy's :meth:`~Policy.remeasure`, the first :meth:`~Policy.confirm`);
- :meth:`~Policy.early_stop` for each task (the first rule given is used);
- :meth:`~Policy.told` for each result, after the sampler is told.

What a policy records: the kind of each trial it asks (``Step.kind``, written to
the search log and to the results' ``search_kind``), its own state on the
:class:`~iotune.search.outcome.Outcome` if the caller needs it, and the results'
attributes it returns from :meth:`~Policy.attrs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from iotune.model.records import EarlyStop
    from iotune.search.outcome import Outcome, Step
    from iotune.search.space import Resolved, Space
    from iotune.search.state import Visit
    from iotune.search.strategies import Proposer


class Loop(Protocol):
    """What a policy may use of the search loop."""

    #: what the search did so far: its state, ladder, budget and trials
    out: Outcome
    space: Space
    proposer: Proposer
    #: the search's one random generator (the draws' order is part of a seed's search)
    rng: np.random.Generator
    #: the sampler has nothing new to propose at the entry rung
    exhausted: bool

    def fill(self, steps: list[Step], k: int) -> list[Step]:
        """``steps`` filled up to ``k`` with new configurations."""
        ...

    def remeasure(self, steps: list[Step], k: int) -> list[Step]:
        """Visits to measure again, up to ``k`` with ``steps``."""
        ...

    def confirm(self) -> list[Step]:
        """What to measure when nothing else is left to do (may be nothing)."""
        ...

    def step(self, visit: Visit, kind: str) -> Step:
        """A new trial of ``visit``, asked as ``kind``."""
        ...

    def entry_scores(self) -> list[tuple[dict[str, Any], float]]:
        """Every scored visit at the entry fidelity: what the sampler should know."""
        ...


class Policy:
    """A search policy: every hook does nothing until a subclass overrides it."""

    def start(self, loop: Loop) -> None:
        """The loop is built (its budget, state and sampler exist); nothing measured yet."""

    def resumed(self, loop: Loop, step: Step) -> None:
        """``step`` was taken from an earlier run's log (it is told next, if it finished)."""

    def before_batch(self, loop: Loop) -> None:
        """A batch is about to be chosen."""

    def plan(self, loop: Loop, k: int) -> list[Step] | None:
        """The next batch, up to ``k`` steps (empty: the search is over); None: not mine."""
        return None

    def propose(self, loop: Loop) -> Step | None:
        """A new configuration to measure before the sampler's; None when there is none."""
        return None

    def propose_stalled(self, loop: Loop, skip: set[str]) -> Resolved | None:
        """A point whose trial is not in ``skip``, when the sampler keeps proposing those."""
        return None

    def remeasure(self, loop: Loop, steps: list[Step], k: int) -> list[Step]:
        """Up to ``k - len(steps)`` visits to measure again, none of them in ``steps``."""
        return []

    def confirm(self, loop: Loop) -> list[Step]:
        """What to measure once nothing else is left (the leader again, or nothing)."""
        return []

    def early_stop(self, loop: Loop, step: Step) -> EarlyStop | None:
        """The rule that stops ``step``'s repeats early; None: it runs every repeat."""
        return None

    def told(self, loop: Loop, step: Step) -> None:
        """``step`` has its result (and the sampler, if it asked it, its score)."""

    def attrs(self, out: Outcome) -> dict[str, Any]:
        """Attributes for the search's results (JSON-able values)."""
        return {}

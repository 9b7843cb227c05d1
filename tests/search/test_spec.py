"""The ``search`` section: validated like the rest, and no digest change without it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from iotune.app.api import load_spec
from iotune.core.errors import SpecError

QUICK = Path(__file__).resolve().parents[2] / "sweeps" / "quick.yaml"


def test_defaults_and_values() -> None:
    sweep = load_spec(QUICK, overrides={"search.budget": "25%", "search.seed": 3})
    assert sweep.search is not None
    assert (sweep.search.strategy, sweep.search.budget_fraction, sweep.search.seed) == (
        "auto",
        0.25,
        3,
    )
    assert sweep.search.budget is None and sweep.search.parallel is None
    sized = load_spec(QUICK, overrides={"search.budget": 12, "search.max_size": "1MiB"})
    assert sized.search is not None
    assert (sized.search.budget, sized.search.max_size) == (12, 2**20)


def test_a_spec_without_search_keeps_its_digest() -> None:
    """The digest of quick.yaml as every earlier iotune computed it (journals resume).

    The demo spec has since gained ``baselines`` (measured beside the grid), which
    changes what it measures; without them its digest is the one it always had.
    """
    assert load_spec(QUICK, overrides={"baselines": None}).digest() == "fef90125ee8a6a68"
    searched = load_spec(QUICK, overrides={"search.strategy": "tpe"})
    assert searched.digest() != load_spec(QUICK).digest()


def test_budget_and_parallel_do_not_change_the_digest() -> None:
    """A search resumes with a larger budget or more workers."""
    a = load_spec(QUICK, overrides={"search.budget": 10, "search.parallel": 1})
    b = load_spec(QUICK, overrides={"search.budget": 20, "search.parallel": 4})
    c = load_spec(QUICK, overrides={"search.budget": 10, "search.seed": 1})
    assert a.digest() == b.digest() != c.digest()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("strategy", "bayes", "search.strategy: unknown value 'bayes'; allowed: grid, random"),
        ("budget", 1, "search.budget: 1 is out of range; allowed: >= 2"),
        ("budget", "125%", "search.budget: '125%' is not allowed; allowed: a percentage"),
        ("budget", "lots%", "search.budget: 'lots%' is not a number"),
        ("objective", "read:map", "search.objective: unknown metric 'read:map'; allowed: write"),
        ("objective", "write=0", "search.objective: weight '0' of write; allowed: > 0"),
        ("remeasure", 0.95, "search.remeasure: 0.95 is not allowed"),
        ("parallel", 0, "search.parallel: 0 is out of range; allowed: >= 1"),
        ("max_size", "lots", "search.max_size:"),
        ("colour", 1, "search.colour: unknown key; allowed: strategy, budget"),
    ],
)
def test_bad_values_name_field_value_and_what_is_allowed(key, value, message) -> None:
    with pytest.raises(SpecError) as err:
        load_spec(QUICK, overrides={f"search.{key}": value})
    assert message in str(err.value)
    assert len(str(err.value).splitlines()) == 1


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_gp_without_torch_is_a_spec_error_saying_what_is_needed() -> None:
    with pytest.raises(SpecError) as err:
        load_spec(QUICK, overrides={"search.strategy": "gp"})
    text = str(err.value)
    assert "search.strategy: 'gp' needs PyTorch" in text and "pip install torch" in text

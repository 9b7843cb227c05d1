"""Objective: what "best" means, checked when made, one line per mistake."""

from __future__ import annotations

import pytest

from iotune.core.errors import RecommendError, UsageError
from iotune.model.objective import ALPHA, MAX_TIE_LOSS, Objective
from iotune.model.spec import SearchSpec


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"weights": "write=fast"}, "--weights: 'write=fast'; allowed: METRIC=NUMBER pairs"),
        ({"weights": {"write": 0}}, "--weights: weight 0 of write; allowed: a number > 0"),
        ({"weights": {}}, "--weights: none given; allowed: METRIC=NUMBER pairs"),
        ({"max_size": "12XB"}, "--max-size: expected"),
        ({"max_size": -1}, "--max-size: size must not be negative, got -1"),
        ({"max_ratio_loss": "lots"}, "--max-ratio-loss: 'lots'; allowed: a fraction from 0 to 1"),
        ({"max_ratio_loss": 1.5}, "--max-ratio-loss: 1.5; allowed: a fraction from 0 to 1"),
        ({"max_error": -0.1}, "--max-error: -0.1; allowed: a number of at least 0"),
        ({"min_digits": "many"}, "--min-digits: 'many'; allowed: a number of at least 0"),
        ({"max_tie_loss": "some"}, "--max-tie-loss: 'some'; allowed: a fraction from 0 to 1"),
        ({"max_tie_loss": -0.1}, "--max-tie-loss: -0.1; allowed: a fraction from 0 to 1"),
        ({"alpha": 1.0}, "alpha: 1.0; allowed: a significance level from 0 to 1"),
        ({"objective": "write", "weights": "write=1"}, "--objective and --weights: give one"),
    ],
)
def test_a_bad_objective_is_one_line_naming_it(given: dict, message: str) -> None:
    with pytest.raises(RecommendError) as err:
        Objective.parse(**given)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value) and isinstance(err.value, UsageError)


def test_the_constructor_checks_what_parse_checks() -> None:
    with pytest.raises(RecommendError, match=r"^--max-ratio-loss: 2\.0; allowed"):
        Objective(max_ratio_loss=2.0)
    with pytest.raises(RecommendError, match=r"^--objective and --weights: give one"):
        Objective(metric="write", weights={"write": 1.0})
    with pytest.raises(RecommendError, match=r"^--min-digits: -1; allowed"):
        Objective(min_digits=-1)


def test_text_and_numbers_make_equal_objectives() -> None:
    typed = Objective.parse(
        "write=1,read:full=2", max_size="1KiB", max_ratio_loss="0.5", min_digits="3"
    )
    assert typed == Objective(
        weights={"write": 1.0, "read:full": 2.0}, max_size=1024, max_ratio_loss=0.5, min_digits=3
    )
    assert typed.limits == {"max_size": 1024, "max_ratio_loss": 0.5, "min_digits": 3}
    assert Objective.parse({"write": 2}) == Objective(weights={"write": 2.0})
    assert Objective.parse("write") == Objective(metric="write")
    assert Objective().alpha == ALPHA and Objective().limits == {}


def test_resolving_checks_the_metrics_and_picks_the_default() -> None:
    allowed = ("write", "read:full", "read:timeseries")
    assert Objective().resolved(allowed).weights == {"read:timeseries": 1.0}
    assert Objective().resolved(("write",)).weights == {"write": 1.0}
    assert Objective(metric="write").resolved(allowed) == Objective(weights={"write": 1.0})
    kept = Objective(max_error=0.5).resolved(allowed)
    assert kept.max_error == 0.5 and kept.metric is None
    with pytest.raises(RecommendError, match=r"^--objective: 'read:map' is not a metric of these"):
        Objective(metric="read:map").resolved(allowed)
    with pytest.raises(RecommendError, match=r"^--weights: 'read:map' is not a metric of these"):
        Objective(weights={"read:map": 1.0}).resolved(allowed)


@pytest.mark.parametrize(
    ("allowed", "own", "metric", "why"),
    [
        (("write", "read:full", "read:box", "read:batches"), ("box",), "read:box", "your code's"),
        (("write", "read:full", "read:batches"), (), "read:batches", "loader"),
        (("write", "read:full", "read:timeseries"), (), "read:timeseries", "built-in default"),
        (("write", "read:spatial", "read:full"), (), "read:spatial", "first read pattern"),
        (("write",), (), "write", "reads nothing"),
    ],
    ids=["own-code", "loader", "timeseries", "first-read", "write"],
)
def test_the_default_is_what_the_sweep_reads_and_says_why(allowed, own, metric, why) -> None:
    """A sweep that only reads with the user's function is not ranked by its write (issue 40)."""
    goal = Objective().resolved(allowed, own=own)
    assert goal.weights == {metric: 1.0}
    assert why in goal.why and goal.said.endswith("; pass --objective to choose)")
    assert goal.said.startswith(f"{metric} (")
    given = Objective(metric="write").resolved(allowed, own=own)
    assert given.why == "" and given.said == "write"


def test_a_search_section_makes_its_objective() -> None:
    search = SearchSpec(objective="write=1,read:full=3", max_size=2048, min_digits=2)
    assert Objective.from_search(search) == Objective(
        weights={"write": 1.0, "read:full": 3.0}, max_size=2048, min_digits=2
    )
    assert Objective.from_search(SearchSpec()) == Objective()
    assert Objective.from_search(SearchSpec(objective="write")) == Objective(metric="write")


def test_the_tie_loss_is_5_percent_unless_given_and_a_search_section_gives_it() -> None:
    from iotune.core.errors import SpecError
    from iotune.specfile.search import parse_search

    assert Objective().max_tie_loss == MAX_TIE_LOSS == 0.05
    assert Objective.parse(max_tie_loss="0.1") == Objective(max_tie_loss=0.1)
    section = parse_search({"max_tie_loss": 0.2}, ("write",))
    assert Objective.from_search(section).max_tie_loss == 0.2
    assert Objective.from_search(SearchSpec()).max_tie_loss == MAX_TIE_LOSS
    assert "max_tie_loss" not in SearchSpec().key()  # searches from before keep their digest
    with pytest.raises(SpecError, match=r"search\.max_tie_loss.*2 is not a fraction in \[0, 1\]"):
        parse_search({"max_tie_loss": 2}, ("write",))


def test_a_search_section_gives_the_readers_a_pick_must_open_without_plugins() -> None:
    from iotune.core.errors import SpecError
    from iotune.specfile.search import parse_search

    section = parse_search({"readers": ["ncdump", "h5netcdf"]}, ("write",))
    assert Objective.from_search(section).readers == ("ncdump", "h5netcdf")
    assert parse_search({"readers": "all"}, ("write",)).readers == ("all",)
    assert section.key()["readers"] == ["ncdump", "h5netcdf"]
    assert "readers" not in SearchSpec().key()  # searches from before keep their digest
    with pytest.raises(SpecError) as err:
        parse_search({"readers": ["ncdump", "ncdmp"]}, ("write",))
    assert str(err.value).startswith("search.readers: ['ncdump', 'ncdmp']; allowed: all")
    assert "\n" not in str(err.value)

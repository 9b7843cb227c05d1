"""iotune's log records and warnings as the CLI shows them; third-party loggers put back."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from iotune.core.errors import IotuneWarning, StripingWarning
from iotune.core.logs import configure, quiet


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Put back what :func:`configure` changes: the iotune logger and ``warnings.showwarning``."""
    logger = logging.getLogger("iotune")
    handlers, level = list(logger.handlers), logger.level
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


@pytest.mark.parametrize(
    ("verbosity", "shown"),
    [(-1, ["error"]), (0, ["warning", "error"]), (1, ["info", "warning", "error"])],
)
def test_verbosity_chooses_the_lines(restored, capsys, verbosity: int, shown: list[str]) -> None:
    configure(verbosity)
    log = logging.getLogger("iotune.runner.scratch")
    log.debug("debug")
    log.info("info")
    log.warning("warning")
    log.error("error")
    assert capsys.readouterr().err.splitlines() == [f"iotune: {w}" for w in shown]


def test_configure_twice_keeps_one_handler(restored, capsys) -> None:
    configure(0)
    configure(2)
    logging.getLogger("iotune.app.session").debug("where: %s", "here")
    assert capsys.readouterr().err == "iotune: where: here\n"


def test_iotune_warnings_are_lines_and_hidden_by_quiet(restored, capsys) -> None:
    configure(0)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("striping not applied", StripingWarning, stacklevel=1)
        assert capsys.readouterr().err == "iotune: warning: striping not applied\n"
        configure(-1)
        warnings.warn("striping not applied", StripingWarning, stacklevel=1)
        assert capsys.readouterr().err == ""


def test_a_notebook_filters_iotune_warnings_by_class() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=IotuneWarning)
        warnings.warn("striping not applied", StripingWarning, stacklevel=1)
        warnings.warn("someone else's", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["someone else's"]


def test_quiet_restores_the_level_even_when_the_block_fails() -> None:
    logger = logging.getLogger("optuna")
    before = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with pytest.raises(RuntimeError), quiet("optuna"):
            assert logger.level == logging.WARNING
            raise RuntimeError
        assert logger.level == logging.DEBUG
        logger.setLevel(logging.ERROR)
        with quiet("optuna"):
            assert logger.level == logging.ERROR  # already quieter: left alone
    finally:
        logger.setLevel(before)


def test_a_search_keeps_optuna_quiet_and_puts_its_level_back(make_spec) -> None:
    """optuna says "A new study created" and "Trial 3 finished" at INFO: not during a search."""
    import optuna  # noqa: F401 - configures its logger first, as any earlier use would

    from iotune.app.api import load_spec
    from iotune.search.space import Space
    from iotune.search.strategies import Proposer

    logger = logging.getLogger("optuna")
    heard: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = heard.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    before = logger.level
    logger.setLevel(logging.INFO)  # a notebook that wants optuna's trial lines
    try:
        space = Space(load_spec(make_spec({"search": {"strategy": "tpe"}})))
        proposer = Proposer("tpe", seed=0, budget=4, space=space)
        _found, trial = proposer.ask(set())
        proposer.tell(trial, 1.0)
        assert [r.getMessage() for r in heard if r.levelno < logging.WARNING] == []
        assert logger.level == logging.INFO
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)


def test_the_cli_shows_iotune_warnings_in_its_own_format(tmp_path: Path) -> None:
    code = (
        "import warnings, iotune.cli.main\n"
        "from iotune.core.errors import StripingWarning\n"
        "iotune.cli.main.main(['backends'])\n"
        "warnings.warn('stripe_count not applied', StripingWarning)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "iotune: warning: stripe_count not applied\n"

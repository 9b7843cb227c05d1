import json

import pytest

from iotune.core.errors import LockError, ResultsError
from iotune.model.records import TrialResult
from iotune.runner.journal import DirectoryLock, Journal


def result(i: str) -> TrialResult:
    return TrialResult(id=i, status="ok", write=[{"s": 1.0, "cpu_s": 0.5, "MiBps": 2.0}])


def test_appended_trials_survive_and_resume_keeps_them(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, digest="d1", name="s", resume=False)
    journal.append(result("a"))
    journal.append(result("b"))
    again = Journal(path, digest="d1", name="s", resume=True)
    assert set(again.done) == {"a", "b"}
    assert again.done["a"] == result("a")


def test_a_line_cut_by_a_crash_is_dropped_and_overwritten(tmp_path):
    path = tmp_path / "journal.jsonl"
    Journal(path, digest="d1", name="s", resume=False).append(result("a"))
    with path.open("a") as fh:
        fh.write('{"id": "b", "status": "o')  # the process died mid-line
    journal = Journal(path, digest="d1", name="s", resume=True)
    assert set(journal.done) == {"a"}
    journal.append(result("c"))
    lines = path.read_text().splitlines()
    assert [json.loads(line).get("id") for line in lines[1:]] == ["a", "c"]


def test_existing_journal_needs_resume_and_the_same_sweep(tmp_path):
    path = tmp_path / "journal.jsonl"
    Journal(path, digest="d1", name="s", resume=False).append(result("a"))
    with pytest.raises(ResultsError, match="--resume"):
        Journal(path, digest="d1", name="s", resume=False)
    with pytest.raises(ResultsError, match="other settings"):
        Journal(path, digest="d2", name="s", resume=True)
    assert "a" in path.read_text()


def test_directory_lock_refuses_a_second_holder(tmp_path):
    with (
        DirectoryLock(tmp_path),
        pytest.raises(LockError, match="in use by another iotune run"),
        DirectoryLock(tmp_path),
    ):
        pass
    with DirectoryLock(tmp_path):
        pass

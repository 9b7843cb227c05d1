import os
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from iotune.backends import get_backend
from iotune.measuring.data import Field
from iotune.model.records import TrialTask
from iotune.model.spec import MeasureSpec, ReadSpec
from iotune.runner import trial as trial_module
from iotune.runner.plan import make_plan
from iotune.runner.trial import run_trial
from iotune.specfile.parse import load_spec_text

SPEC = """
version: 1
workload: {shape: {time: 16, y: 128, x: 128}}
parameters: {chunks: [16, 32, 32], codec: zlib}
read: {patterns: [full, spatial, timeseries], timeseries: {pixels: 4}}
"""


def task(tmp_path, *, cache="cold", repeats=2, text=SPEC):
    sweep = load_spec_text(text)
    (trial,) = make_plan(sweep).trials
    measure = MeasureSpec(repeats=repeats, cache=cache)
    return TrialTask(trial, sweep.workload, sweep.read, measure, str(tmp_path))


def test_cold_trial_measures_everything_and_cleans_scratch(tmp_path):
    result = run_trial(task(tmp_path))
    assert result.status == "ok", result.error
    assert len(result.write) == 2
    assert all(w["s"] > 0 and w["MiBps"] > 0 for w in result.write)
    assert set(result.reads) == {"full", "spatial", "timeseries"}
    for runs in result.reads.values():
        assert len(runs) == 2
        assert all(r["cache"] == "cold" and r["resident_fraction"] <= 0.05 for r in runs)
    full = result.reads["full"][0]
    assert full["bytes"] == 16 * 128 * 128 * 2
    assert result.reads["timeseries"][0]["bytes"] == 4 * 16 * 2
    assert 1.3 < result.raw_bytes / result.file_bytes < 4
    assert result.stored["layout"] == "16x32x32"
    assert list(tmp_path.iterdir()) == []


def test_warm_reads_find_the_file_in_the_page_cache(tmp_path):
    result = run_trial(task(tmp_path, cache="warm", repeats=1))
    assert result.status == "ok", result.error
    assert result.reads["full"][0]["cache"] == "warm"
    assert result.reads["full"][0]["resident_fraction"] > 0.9


def test_result_round_trips_through_a_dict(tmp_path):
    result = run_trial(task(tmp_path, repeats=1))
    assert type(result).from_dict(result.to_dict()) == result


def test_a_real_write_failure_is_recorded_and_scratch_is_removed(tmp_path):
    """Files larger than RLIMIT_FSIZE fail with EFBIG, as on a full quota."""
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(tmp_path)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
        from iotune.runner.plan import make_plan
        from iotune.specfile.parse import load_spec_text
        from iotune.model.spec import MeasureSpec
        from iotune.model.records import TrialTask
        from iotune.runner.trial import run_trial
        sweep = load_spec_text({SPEC!r})
        (trial,) = make_plan(sweep).trials
        t = TrialTask(trial, sweep.workload, sweep.read, MeasureSpec(repeats=1), {str(tmp_path)!r})
        r = run_trial(t)
        print(r.status)
        print(r.error)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    status, error = out.stdout.splitlines()[:2]
    assert status == "failed"
    assert "\n" not in error and error
    assert list(tmp_path.iterdir()) == []
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY


# --- the crc32c check of the data read back --------------------------------------
#
# A storage stack that hands back other bytes than were written (bit rot, a buggy
# library or file system) must never yield an "ok" trial with plausible figures.
# The bytes are changed after write and fsync and before the reads: on disk, in the
# data region of a real file, or on their way out of the backend's reader.

CHECKED = """
version: 1
workload: {{shape: {{time: 16, y: 128, x: 128}}, dtype: {dtype}}}
backend: {backend}
parameters: {parameters}
read: {{patterns: [full, spatial, timeseries], timeseries: {{pixels: 4}}}}
"""
#: formats whose data region holds the array's bytes as they are (no codec)
UNCOMPRESSED = {
    "posix": "{transfer_size: 64KiB}",
    "netcdf4": "{chunks: [16, 32, 32], codec: none}",
}


def checked_task(tmp_path, backend, dtype, parameters):
    text = CHECKED.format(backend=backend, dtype=dtype, parameters=parameters)
    return task(tmp_path, repeats=1, text=text)


def data_offset(backend, file, workload):
    """Offset of some bytes of the array inside ``file``, found from the data itself."""
    data = Field(workload).slab(0, workload.shape[0])
    blob = file.read_bytes()
    if backend == "posix":  # the array's C-order bytes and nothing else
        assert blob == data.tobytes()
        return len(blob) // 2
    first_chunk = np.ascontiguousarray(data[:16, :32, :32]).tobytes()  # chunks 16x32x32
    at = blob.find(first_chunk)
    assert at >= 0, "the first chunk is not stored verbatim"
    return at + len(first_chunk) // 2


def rewrite_after_verify(monkeypatch, backend, workload, *, flip):
    """After each write+fsync+verify, rewrite 4 bytes of the data region on disk.

    ``flip`` inverts them (corruption); otherwise the same bytes go back (control,
    so the rewrite itself is shown to be harmless).  Returns the offsets rewritten.
    """
    cls = get_backend(backend)
    original = cls.verify
    rewritten = []

    def verify(self, path, params):
        described = original(self, path, params)
        (file,) = self.paths(path)
        offset = data_offset(backend, file, workload)
        fd = os.open(file, os.O_RDWR)
        try:
            before = os.pread(fd, 4, offset)
            after = bytes(b ^ 0xFF for b in before) if flip else before
            assert os.pwrite(fd, after, offset) == 4
            os.fsync(fd)
            assert os.pread(fd, 4, offset) == after
        finally:
            os.close(fd)
        rewritten.append(offset)
        return described

    monkeypatch.setattr(cls, "verify", verify)
    return rewritten


@pytest.mark.parametrize("dtype", ["int16", "float32"])
@pytest.mark.parametrize("backend", sorted(UNCOMPRESSED))
def test_bytes_changed_on_disk_fail_the_trial_on_the_crc32c(tmp_path, monkeypatch, backend, dtype):
    t = checked_task(tmp_path, backend, dtype, UNCOMPRESSED[backend])
    # warmed up already: the timed repeat, not the warm-up, must catch the corruption
    monkeypatch.setattr(trial_module, "_WARMED", {backend})
    rewritten = rewrite_after_verify(monkeypatch, backend, t.workload, flip=True)
    result = run_trial(t)
    assert len(rewritten) == 1  # the file was really corrupted, once
    assert result.status == "failed"
    assert "VerificationError" in result.error and "crc32" in result.error, result.error
    assert "full" not in result.reads  # no figures from the corrupted read
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dtype", ["int16", "float32"])
@pytest.mark.parametrize("backend", sorted(UNCOMPRESSED))
def test_the_same_bytes_written_back_pass_the_crc32c(tmp_path, monkeypatch, backend, dtype):
    t = checked_task(tmp_path, backend, dtype, UNCOMPRESSED[backend])
    monkeypatch.setattr(trial_module, "_WARMED", set())  # a fresh process: warm-up, then the repeat
    rewritten = rewrite_after_verify(monkeypatch, backend, t.workload, flip=False)
    result = run_trial(t)
    assert len(rewritten) == 2  # both rewrites harmless: the warm-up's and the timed repeat's
    assert result.status == "ok", result.error
    assert result.error == ""
    assert [r["bytes"] for r in result.reads["full"]] == [t.workload.nbytes]
    assert [r["cache"] for r in result.reads["full"]] == ["cold"]  # read back from the device


class _AlteringReader:
    """A reader that returns one value changed by one unit, as a faulty decoder might."""

    def __init__(self, reader):
        self._reader = reader

    def read(self, selection):
        data = np.array(self._reader.read(selection))  # a copy: the file stays intact
        flat = data.reshape(-1)
        flat[flat.size // 2] += 1
        return data

    def close(self):
        self._reader.close()


@pytest.mark.parametrize("alter", [True, False])
@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_values_altered_by_a_compressed_formats_reader_fail_the_trial(
    tmp_path, monkeypatch, dtype, alter
):
    """zlib-compressed netCDF4: corrupted chunks on disk would fail to inflate, not
    differ; a decoder returning wrong values must be caught by the crc32c all the same."""
    t = checked_task(tmp_path, "netcdf4", dtype, "{chunks: [16, 32, 32], codec: zlib}")
    cls = get_backend("netcdf4")
    original, opened = cls.open_reader, []

    def open_reader(self, path, workload, params):
        opened.append(path)
        reader = original(self, path, workload, params)
        return _AlteringReader(reader) if alter else reader

    monkeypatch.setattr(cls, "open_reader", open_reader)
    result = run_trial(t)
    assert opened  # the reads went through the wrapper
    if alter:
        assert result.status == "failed"
        assert "VerificationError" in result.error and "crc32" in result.error, result.error
    else:
        assert result.status == "ok", result.error
        assert 1.3 < result.raw_bytes / result.file_bytes < 4  # really compressed
    assert list(tmp_path.iterdir()) == []


def test_read_spec_defaults():
    assert ReadSpec().patterns == ("full",)

"""05-explore in real JupyterLab, driven through Debian's Chromium with Playwright.

The test starts JupyterLab from this environment on a free localhost port with a
token, opens a copy of ``notebooks/05-explore.ipynb`` whose parameters point at a
small results file, runs all cells from the Run menu, changes the explorer's metric
and checks that the figure changed and that no cell errored.  Screenshots go to
``tests/artifacts/`` (``IOTUNE_UPDATE_SCREENSHOT=1`` also refreshes
``docs/img/explorer.png``).

It skips when Chromium or Playwright is missing, unless ``IOTUNE_REQUIRE_BROWSER=1``
(as in CI), where that is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from iotune.results.dataset import save

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts"
TIMEOUT_MS = 60_000


def _require(reason: str) -> None:
    if os.environ.get("IOTUNE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"IOTUNE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _prepare(tmp: Path, fake_results) -> Path:
    """A small results file and a copy of 05-explore whose parameters point at it."""
    results = tmp / "small.nc"
    save(fake_results({"parameters.chunk_cache": ["1MiB", "64MiB"]}, seed=5), results)
    nb = nbformat.read(ROOT / "notebooks" / "05-explore.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source = (
        f'results = {str(results)!r}\nout = {str(tmp / "out")!r}\nmetric = "write_MiBps"\ntop = 5'
    )
    path = tmp / "05-explore.ipynb"
    nbformat.write(nb, path)
    return path


def _quiet_lab_settings(settings: Path) -> None:
    """No news or update pop-ups over the notebook."""
    target = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


@contextlib.contextmanager
def jupyterlab(root: Path) -> Iterator[str]:
    """Run JupyterLab on ``root``; yield its base URL with the token."""
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        _require(f"{jupyter} is missing")
    port, token = _free_port(), secrets.token_hex(16)
    home = root.parent / "jupyter-home"
    _quiet_lab_settings(home / "settings")
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
    }
    command = [
        str(jupyter),
        "lab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]
    log = (root.parent / "jupyterlab.log").open("wb")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=log, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(f"{base}/api/status?token={token}", server)
        yield f"{base}/lab/tree/05-explore.ipynb?token={token}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def _wait_for_server(url: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}; see jupyterlab.log")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer within {timeout:.0f} s")


def _run_all_cells(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()
    # every code cell has an execution number, none is queued or running
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=TIMEOUT_MS,
    )
    _kernel_idle(page)


def _kernel_idle(page) -> None:
    """The kernel is connected and idle (the status bar says so, not only the indicator)."""
    page.wait_for_selector(
        '.jp-Notebook-ExecutionIndicator[data-status="idle"]', state="attached", timeout=TIMEOUT_MS
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]"
        ".some(e => / \\| Idle$/.test(e.textContent.trim()))",
        timeout=TIMEOUT_MS,
    )


def _assert_no_errors(page) -> None:
    stderr = page.locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    ).all_inner_texts()
    errors = [text for text in stderr if "Traceback" in text or "Error" in text]
    assert not errors, "a cell errored:\n" + "\n".join(errors)
    outputs = " ".join(page.locator(".jp-OutputArea-output").all_inner_texts())
    assert "Error displaying widget" not in outputs
    assert "Failed to load model class" not in outputs


def test_explorer_in_jupyterlab(tmp_path: Path, fake_results) -> None:
    if not CHROMIUM.exists():
        _require(f"{CHROMIUM} is not installed (Debian package 'chromium')")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require("playwright is not installed (pip install playwright; no browser download)")
    started = time.monotonic()
    ARTIFACTS.mkdir(exist_ok=True)
    root = tmp_path / "lab"
    root.mkdir()
    _prepare(root, fake_results)
    with jupyterlab(root) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=TIMEOUT_MS)
            _kernel_idle(page)
            _run_all_cells(page)
            figure = page.locator(".iotune-figure")
            figure.wait_for(state="visible")
            figure.scroll_into_view_if_needed()
            page.wait_for_function(
                "() => document.querySelector('.iotune-figure').naturalWidth > 0"
            )
            before_src = figure.get_attribute("src")
            before_png = figure.screenshot(path=str(ARTIFACTS / "explorer-before.png"))
            table = page.locator(".iotune-best")
            assert "write_MiBps" in table.inner_text()
            _assert_no_errors(page)

            page.locator(".iotune-metric select").select_option(label="read_MiBps (MiB/s)")
            page.wait_for_function(
                "old => document.querySelector('.iotune-figure').src !== old", arg=before_src
            )
            page.wait_for_function(
                "() => document.querySelector('.iotune-figure').complete"
                " && document.querySelector('.iotune-figure').naturalWidth > 0"
            )
            after_png = figure.screenshot(path=str(ARTIFACTS / "explorer-after.png"))
            assert after_png != before_png, "the figure looks the same after changing the metric"
            assert "read_MiBps" in table.inner_text()
            explorer = page.locator(".iotune-explorer")
            explorer.screenshot(path=str(ARTIFACTS / "explorer.png"))
            page.screenshot(path=str(ARTIFACTS / "jupyterlab.png"), full_page=True)
            _assert_no_errors(page)
        finally:
            browser.close()
    if os.environ.get("IOTUNE_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(ARTIFACTS / "explorer.png", ROOT / "docs" / "img" / "explorer.png")
    elapsed = time.monotonic() - started
    print(f"browser test: {elapsed:.1f} s")
    assert elapsed < 90, f"the browser test took {elapsed:.0f} s"

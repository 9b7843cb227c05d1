"""Run a parameterised notebook as a batch job with papermill.

The notebooks in ``notebooks/`` each have one cell tagged ``parameters``.
:func:`run_notebook` executes a notebook with some of those parameters changed
and writes the executed notebook into an output directory; a notebook with an
``out`` parameter is told to write its results there too, so the notebook and
its results Dataset land together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iotune.core.errors import IotuneError, UsageError
from iotune.core.extras import require

#: the parameter through which a notebook is told where its results go
OUT_PARAMETER = "out"
#: set (to anything but "" or "0") to keep notebooks at demo sizes, e.g. on Binder
SMALL_ENV = "IOTUNE_SMALL"


def small_requested() -> bool:
    """Whether the environment asks notebooks to stay at demo sizes (``IOTUNE_SMALL``)."""
    return os.environ.get(SMALL_ENV, "") not in ("", "0")


def parse_parameters(pairs: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Turn ``[(NAME, VALUE), ...]`` from the command line into parameters.

    Values are YAML literals: ``16`` is an int, ``[zlib, none]`` a list,
    ``{parameters.codec: [zlib]}`` a mapping, ``null`` is None and anything
    else a string.

    Raises
    ------
    UsageError
        A name is not a Python identifier, is given twice, or a value is not YAML.
    """
    import yaml

    params: dict[str, Any] = {}
    for name, text in pairs:
        if not name.isidentifier():
            raise UsageError(f"-p {name}: a parameter name must be a Python identifier")
        if name in params:
            raise UsageError(f"-p {name}: given twice")
        try:
            params[name] = yaml.safe_load(text)
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise UsageError(f"-p {name} {text!r}: not a YAML literal ({problem})") from err
    return params


def notebook_parameters(notebook: str | Path) -> dict[str, str]:
    """The names and default values (as source text) of a notebook's parameters."""
    require("papermill", extra="jupyter", feature="notebook parameters")
    import papermill

    path = _existing_notebook(notebook)
    found = papermill.inspect_notebook(str(path))
    return {name: str(info.get("default", "")) for name, info in found.items()}


def run_notebook(
    notebook: str | Path,
    *,
    parameters: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    kernel: str | None = None,
    progress: bool = False,
    timeout: float | None = None,
) -> Path:
    """Execute ``notebook`` with papermill; return the executed notebook's path.

    Parameters
    ----------
    notebook
        A notebook with one cell tagged ``parameters``.
    parameters
        Values for some of its parameters; each name must be one of them.
    out
        Directory for the executed notebook (same file name) and, when the
        notebook has an ``out`` parameter that ``parameters`` does not set,
        its results.  Default ``results/<notebook stem>``.
    kernel
        Jupyter kernel name; default the notebook's own.
    progress
        Show papermill's progress bar.
    timeout
        Seconds one cell may run; default no limit.

    Returns
    -------
    pathlib.Path
        The executed notebook, with its outputs.

    Raises
    ------
    UsageError
        The notebook does not exist or a parameter name is not one of its.
    IotuneError
        A cell raised; the message names the error and the executed notebook.
    """
    require("papermill", extra="jupyter", feature="iotune notebook")
    import papermill
    from papermill.exceptions import PapermillExecutionError

    path = _existing_notebook(notebook)
    params = dict(parameters or {})
    declared = notebook_parameters(path)
    unknown = [name for name in params if name not in declared]
    if unknown:
        raise UsageError(
            f"-p {unknown[0]}: not a parameter of {path.name}; "
            f"its parameters: {', '.join(declared) or '(none)'}"
        )
    target = Path(out) if out is not None else Path("results") / path.stem
    target.mkdir(parents=True, exist_ok=True)
    if OUT_PARAMETER in declared and OUT_PARAMETER not in params:
        params[OUT_PARAMETER] = str(target.resolve())
    executed = target / path.name
    try:
        papermill.execute_notebook(
            str(path),
            str(executed),
            parameters=params,
            kernel_name=kernel,
            cwd=str(path.parent),
            progress_bar=progress,
            execution_timeout=timeout,
        )
    except PapermillExecutionError as err:
        message = f"{err.ename}: {err.evalue}".splitlines()[0]
        raise IotuneError(
            f"{path.name} failed in cell {err.exec_count}: {message} (traceback in {executed})"
        ) from err
    return executed


def _existing_notebook(notebook: str | Path) -> Path:
    path = Path(notebook)
    if path.suffix != ".ipynb":
        raise UsageError(f"notebook: {str(path)!r} is not a .ipynb file")
    if not path.is_file():
        raise UsageError(f"notebook: {str(path)!r} does not exist")
    return path

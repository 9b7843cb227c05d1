"""The user's function as a read pattern: load it, call it, force its result, count the bytes.

Runs in trial processes (and the child process that makes the reference),
never in iotune's main process: loading a module runs its top level.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iotune.core.errors import UserCodeError
from iotune.model.userpatterns import UserPattern


def load_function(pattern: UserPattern) -> Callable[[Any], Any]:
    """The function ``pattern`` names, imported once per process.

    Raises
    ------
    UserCodeError
        The module or script cannot be loaded, or has no such function.
    """
    # ``base`` is not part of a pattern's equality: it is where the code is, so it is in the key
    return _load(pattern, pattern.base)


@functools.cache
def _load(pattern: UserPattern, base: str) -> Callable[[Any], Any]:
    try:
        if pattern.call is not None:
            assert pattern.module is not None
            if pattern.base and pattern.base not in sys.path:
                sys.path.insert(0, pattern.base)  # the spec's directory, as the spec check saw it
            module = importlib.import_module(pattern.module)
        else:
            module = _load_script(pattern)
        function = getattr(module, pattern.attribute)
    except Exception as err:
        raise UserCodeError(f"{pattern.describe()} cannot be loaded: {last_line(err)}") from err
    if not callable(function):
        raise UserCodeError(f"{pattern.describe()} is not callable: {type(function).__name__}")
    return function


def _load_script(pattern: UserPattern) -> Any:
    path = pattern.script_path
    assert path is not None
    name = f"iotune_user_{pattern.name}"  # its own name: two scripts may share a file name
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


def call(pattern: UserPattern, dataset: Any) -> Any:
    """``function(dataset)`` with its result forced (lazy arrays computed).

    Raises
    ------
    UserCodeError
        The function raised; the message is its last traceback line.
    """
    function = load_function(pattern)
    try:
        return force(function(dataset))
    except Exception as err:
        raise UserCodeError(f"{pattern.name}: {last_line(err)}") from err


def force(value: Any) -> Any:
    """``value`` with everything lazy in it computed: xarray and dask objects, in containers."""
    if isinstance(value, dict):
        return {k: force(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(force(v) for v in value)
    compute = getattr(value, "compute", None)
    return compute() if callable(compute) else value


def last_line(err: BaseException) -> str:
    """``ZeroDivisionError: division by zero (myanalysis.py:12)``.

    The place is the deepest frame in the user's own code: the last frame of
    the traceback is often inside numpy or xarray, which says less, and code a
    library generates at run time (a dataclass's ``__init__``, ``<string>``) is
    no file the user can open.
    """
    frames = traceback.extract_tb(err.__traceback__) if err.__traceback__ else []
    own = [f for f in frames if _users(f.filename)]
    chosen = own or list(frames)
    where = f" ({Path(chosen[-1].filename).name}:{chosen[-1].lineno})" if chosen else ""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}{': ' + text if text else ''}{where}"


def _users(filename: str) -> bool:
    """Whether ``filename`` is a file of the user's: neither generated code nor a library's."""
    return not filename.startswith("<") and not filename.startswith(_library_dirs())


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    """Where code that is not the user's lives: iotune, the standard library, installed packages."""
    import sysconfig

    paths = sysconfig.get_paths()
    found = {str(Path(__file__).resolve().parents[1])}
    found |= {str(Path(paths[k]).resolve()) for k in ("stdlib", "purelib", "platlib") if k in paths}
    return tuple(p + "/" for p in found)


def process_io() -> dict[str, int]:
    """This process's I/O counters (``/proc/self/io``): ``read_bytes`` came from storage.

    Counted over every thread of the process, so dask's threads are included.
    Empty where the kernel does not keep them.
    """
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return {}
    pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {key.strip(): int(value) for key, value in pairs}

"""MPI-IO hint sets: the top-level ``hints:`` section of a spec, validated.

A hint set maps ROMIO / Cray MPI-IO hint names to values.  Names come from
the MPI standard's reserved keys, ROMIO's documented hints and the Cray
MPI-IO hints of the HPC-centre talks the project was built from; a typo is
an error that names the close matches.  Anything else is passed through
only when marked as a vendor hint with the ``x-`` prefix
(``x-cray_ds_write_lock: 1`` is handed to MPI as ``cray_ds_write_lock=1``),
so an unknown name is never accepted by accident.

Values are normalised to the strings MPI_Info holds: sizes such as
``16MiB`` become byte counts, booleans ``true``/``false``.  The library may
still ignore a hint; the trial records what ``MPI_File_get_info`` reports.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from iotune.model.checks import byte_size, fail, section

VENDOR_PREFIX = "x-"
#: every swept hint-set name resolves; ``default`` (no hints) needs no definition
DEFAULT_SET = "default"

_SWITCH = ("enable", "disable", "automatic")
_ONOFF = ("enable", "disable")
_BOOL = ("true", "false")

#: name -> kind: a tuple of allowed words, or "size", "int", "count", "str"
KNOWN_HINTS: dict[str, tuple[str, ...] | str] = {
    # reserved by the MPI standard
    "access_style": "str",
    "collective_buffering": _BOOL,
    "cb_block_size": "size",
    "cb_buffer_size": "size",
    "cb_nodes": "int",
    "file_perm": "str",
    "io_node_list": "str",
    "nb_proc": "int",
    "num_io_nodes": "int",
    "striping_factor": "count",
    "striping_unit": "size",
    "start_iodevice": "int",
    # ROMIO
    "romio_cb_read": _SWITCH,
    "romio_cb_write": _SWITCH,
    "romio_ds_read": _SWITCH,
    "romio_ds_write": _SWITCH,
    "cb_config_list": "str",
    "ind_rd_buffer_size": "size",
    "ind_wr_buffer_size": "size",
    "romio_no_indep_rw": _BOOL,
    "romio_cb_pfr": _SWITCH,
    "romio_cb_fr_types": "str",
    "romio_cb_fr_alignment": "int",
    "romio_cb_ds_threshold": "size",
    "romio_cb_alltoall": _SWITCH,
    "romio_synchronized_flush": ("enabled", "disabled"),
    "romio_visibility_immediate": _BOOL,
    "romio_lustre_co_ratio": "int",
    "romio_lustre_coll_threshold": "size",
    "romio_lustre_ds_in_coll": _ONOFF,
    "romio_lustre_start_iodevice": "int",
    "direct_read": _BOOL,
    "direct_write": _BOOL,
    # Cray MPI-IO (MPICH_MPIIO_HINTS)
    "cray_cb_write_lock_mode": "int",
    "cray_cb_nodes_multiplier": "int",
}


def _value(kind: tuple[str, ...] | str, value: object, path: str) -> str:
    """One hint value as the string MPI_Info stores, or a SpecError naming ``path``."""
    if isinstance(kind, tuple):
        word: object = value
        if kind == _BOOL and isinstance(value, bool):
            word = "true" if value else "false"
        if word not in kind:
            raise fail(path, f"unknown value {value!r}; allowed: {', '.join(kind)}")
        return str(word)
    if kind == "size":
        size = byte_size(value, path)
        if size < 1:
            raise fail(path, f"{value!r} must be at least 1 byte")
        return str(size)
    if kind in ("int", "count"):
        low = -1 if kind == "count" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise fail(path, f"expected an integer >= {low}, got {value!r}")
        return str(value)
    if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
        raise fail(path, f"expected a non-empty string, got {value!r}")
    return str(value)


def _unknown(name: str, path: str) -> Exception:
    close = difflib.get_close_matches(name, list(KNOWN_HINTS), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return fail(
        path,
        f"unknown MPI-IO hint; {hint}(a vendor hint not in iotune's list: prefix it "
        f"with {VENDOR_PREFIX!r}, e.g. {VENDOR_PREFIX}{name})",
    )


def parse_hint_set(value: object, path: str) -> dict[str, str]:
    """Validate one hint set; vendor keys lose their ``x-`` prefix.

    Parameters
    ----------
    value
        A mapping of hint name to value (``{}`` or ``None`` for no hints).
    path
        Dotted spec path of the set, e.g. ``hints.cb_off``, for error messages.

    Returns
    -------
    dict
        Hint name -> value string, sorted by name.
    """
    data = section(value)
    if not isinstance(data, Mapping):
        raise fail(path, f"expected a mapping of MPI-IO hint names to values, got {value!r}")
    out: dict[str, str] = {}
    for key, raw in data.items():
        name, where = str(key), f"{path}.{key}"
        if name.startswith(VENDOR_PREFIX):
            name = name[len(VENDOR_PREFIX) :]
            if not name:
                raise fail(where, "a vendor hint needs a name after the prefix")
            out[name] = _value("str", raw, where)
        elif name in KNOWN_HINTS:
            out[name] = _value(KNOWN_HINTS[name], raw, where)
        else:
            raise _unknown(name, where)
    return dict(sorted(out.items()))


def parse_hint_sets(value: object) -> dict[str, dict[str, str]]:
    """Parse the top-level ``hints`` section: set name -> hint set."""
    data = section(value)
    if not isinstance(data, Mapping):
        raise fail("hints", f"expected a mapping of hint-set names to hint sets, got {value!r}")
    sets: dict[str, dict[str, str]] = {DEFAULT_SET: {}}
    for name, hints in data.items():
        if not isinstance(name, str) or not name:
            raise fail("hints", f"hint-set names must be non-empty strings, got {name!r}")
        sets[name] = parse_hint_set(hints, f"hints.{name}")
    return sets


def check_hint_names(names: tuple[object, ...], sets: Mapping[str, object], *, swept: bool) -> None:
    """Every hint-set name under ``parameters.hints`` must be defined in ``hints``."""
    for i, name in enumerate(names):
        if name not in sets:
            where = f"parameters.hints[{i}]" if swept else "parameters.hints"
            raise fail(where, f"unknown hint set {name!r}; defined: {', '.join(sets)}")

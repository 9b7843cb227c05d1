"""Files iotune writes for people: created with the umask's permissions, replaced atomically.

``tempfile.mkstemp`` creates its file with mode 0600 whatever the umask, so a results file
renamed from one could not be read by colleagues on a shared file system even under
umask 022.  The temporary file here is opened with mode 0666, which the umask trims as it
trims every other file the user creates.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

#: what ``open()`` asks for a new file; the process's umask removes bits from it
SHARED_MODE = 0o666


def temporary_beside(path: Path, *, tries: int = 100) -> Path:
    """Create an empty hidden file beside ``path`` with the umask's permissions.

    Parameters
    ----------
    path
        The file it will replace (its directory must exist).
    tries
        Names to try before giving up (another process may take one).

    Returns
    -------
    Path
        The new file, ``.NAME.<random>.tmp`` in ``path``'s directory.
    """
    for _ in range(tries):
        candidate = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SHARED_MODE)
        except FileExistsError:
            continue
        os.close(fd)
        return candidate
    raise FileExistsError(f"no free temporary name beside {path} after {tries} tries")

"""The pre-flight check of an object store: one small object written, read and deleted.

Before any trial runs, an unreachable endpoint, a missing bucket, refused or
expired credentials become one line naming the store and what to do, within
seconds (:data:`~iotune.objectstore.target.CONNECT_TIMEOUT_S` per attempt,
no retries), and nothing is left behind.
"""

from __future__ import annotations

import re
import uuid

from iotune.core.errors import StorageError
from iotune.objectstore.target import Target

PROBE = ".iotune-preflight-"
BODY = b"iotune pre-flight\n"
#: per request of the check: a store that accepts connections but never answers
#: must not hold a run for the two minutes a trial's request may take
CHECK_TIMEOUT_S = 4


def check(target: Target) -> None:
    """PUT, HEAD, GET and DELETE one small object in ``target``'s prefix.

    Raises
    ------
    StorageError
        The store is unreachable, the bucket missing, or access denied.
    """
    import obstore as obs

    store = target.obstore(retries=0, timeout_s=CHECK_TIMEOUT_S)
    key = target.key(f"{PROBE}{uuid.uuid4().hex}")
    where = target.url(key).rsplit("/", 1)[0]
    refused = False  # the PUT failed: there is no probe to delete
    try:
        try:
            obs.put(store, key, BODY)
        except Exception as err:
            refused = True
            raise StorageError(f"storage.url {where}: {explain(err)}") from err
        obs.head(store, key)
        if bytes(obs.get(store, key).bytes()) != BODY:
            raise StorageError(f"storage.url {where}: an object read back differs from its PUT")
    except StorageError:
        raise
    except Exception as err:
        raise StorageError(f"storage.url {where}: {explain(err)}") from err
    finally:  # also when interrupted, even during the PUT: the probe may have landed
        if not refused:
            _delete(store, key, where)


def _delete(store: object, key: str, where: str) -> None:
    import sys

    import obstore as obs

    pending = sys.exc_info()[1]  # what the check is already raising, if anything
    try:
        obs.delete(store, key)  # type: ignore[arg-type]
    except Exception as err:
        if pending is None:  # a probe left behind is the user's to know
            raise StorageError(f"storage.url {where}: cannot delete ({explain(err)})") from err


def _status(code: int) -> str:
    """A pattern for HTTP status ``code`` as obstore and botocore print it."""
    return rf"(status(?: code)?:? {code}\b|\b{code} [A-Z][a-z])"


#: (pattern in the client's message, what it means for a user)
_CAUSES = (
    (r"NoSuchBucket|bucket.*(does not exist|not found)", "the bucket does not exist"),
    (
        r"InvalidAccessKeyId|SignatureDoesNotMatch|ExpiredToken|TokenRefreshRequired|"
        r"InvalidToken|credential",
        "the credentials were refused (unknown, wrong or expired keys): check "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or ~/.aws/credentials",
    ),
    # status codes only as statuses: obstore's messages also carry timings ("in 403.2µs")
    (
        rf"AccessDenied|{_status(403)}|Forbidden|{_status(401)}|Unauthorized",
        "access denied: the credentials may not write here",
    ),
    (
        r"error sending request|Connection refused|connect|dns|timed out|timeout",
        "the endpoint cannot be reached",
    ),
    (rf"{_status(404)}|NotFound|not found", "the bucket does not exist"),
)


def explain(err: BaseException) -> str:
    """One line for a client error: the cause a user can act on, and the server's code."""
    text = str(err)
    code = re.search(r"<Code>([^<]+)</Code>", text)
    for pattern, meaning in _CAUSES:
        if re.search(pattern, text, re.IGNORECASE):
            return meaning + (f" ({code.group(1)})" if code else "")
    first = text.strip().splitlines()[0] if text.strip() else type(err).__name__
    return first[:200]

"""The keys of the service's own records: jobs and owners, beside the session layout.

The jobs API writes and reads these, the agent handler writes some of them, the CDK constructs
grant access to them and the bucket's lifecycle rule expires one of them: this module is their
one owner. The session layout (``elsai.session.layout.keys``) knows sessions only; under
tenant isolation every owner gets that layout and ``jobs/`` again below its own prefix.

jobs/<job_id>/
  task_token.json        # the parked task token of a job waiting for interrupt responses
  node_waits.json        # a Graph/Swarm job's waits by node and the token of its current park
  answers/<digest>.json  # create-only claim of the answer to one wait
  version.json           # the agent function version the job runs on, its policy, upgrades
  fingerprint.json       # the build fingerprint its slices compare against
  cancelled.json         # a client cancelled the job
owners/<tag>/            # one owner's storage: session_<id>/... and jobs/<job_id>/... as above

A key function given ``"*"`` for an id gives the IAM pattern of every such object.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

# -- jobs (the serverless runtime's records of a job) -----------------------------------------

#: Where every job's records live (relative to the bucket root or an owner's prefix).
JOBS_PREFIX: Final = "jobs/"


def job_dir(job_id: str) -> str:
    """The folder of one job's records."""
    return f"{JOBS_PREFIX}{job_id}/"


def job_token_key(job_id: str) -> str:
    """Where a job waiting for interrupt responses parks its Step Functions task token."""
    return job_dir(job_id) + "task_token.json"


def node_waits_key(job_id: str) -> str:
    """A Graph/Swarm job's waits by node (interrupts, answers) and the token of its current park."""
    return job_dir(job_id) + "node_waits.json"


def answers_prefix(job_id: str) -> str:
    """The folder of a job's answer claims (one per answered wait)."""
    return job_dir(job_id) + "answers/"


def job_answer_key(job_id: str, task_token: str) -> str:
    """Create-only record of the answer to one wait (one parked token): answered at most once."""
    digest = hashlib.sha256(task_token.encode()).hexdigest()[:32]
    return f"{answers_prefix(job_id)}{digest}.json"


def job_version_key(job_id: str) -> str:
    """The job's version record: the agent function version it runs on, its policy, upgrades."""
    return job_dir(job_id) + "version.json"


def job_fingerprint_key(job_id: str) -> str:
    """The build fingerprint a job's slices compare against (elsai.serverless.fingerprint)."""
    return job_dir(job_id) + "fingerprint.json"


def job_cancel_key(job_id: str) -> str:
    """Where the jobs API records that a client cancelled a job (Step Functions only says ABORTED)."""
    return job_dir(job_id) + "cancelled.json"


# -- the parked token's expiry ------------------------------------------------------------------

#: The object tag the bucket's lifecycle rule expires parked task tokens by (their age is the
#: right measure: one object per wait, useless after it). A tag, not a prefix, reaches
#: ``owners/<tag>/jobs/`` of every owner: lifecycle prefixes have no wildcards.
EXPIRING_TAG: Final = ("elsai-expires", "parked-task-token")


def object_tagging(key: str) -> str | None:
    """The S3 ``Tagging`` a write of `key` carries (a parked token's expiry tag), or None.

    The agent handler gives this to the job's S3 session store as its tagging policy
    (``S3SessionManager(tagging=...)``): the store tags what it is told to, knowing no jobs.
    """
    if key.endswith("/task_token.json") and split_owner(key)[1].startswith(JOBS_PREFIX):
        return f"{EXPIRING_TAG[0]}={EXPIRING_TAG[1]}"
    return None


# -- owners (tenant isolation in the serverless runtime) --------------------------------------

#: Where owner-namespaced storage lives: ``owners/<tag>/`` + the session layout and ``jobs/``.
OWNERS_PREFIX: Final = "owners/"
#: Hex characters of an owner tag (96 bits of SHA-256: collisions are out of reach).
OWNER_TAG_CHARS: Final = 24
_OWNER_TAG_RE = re.compile(rf"^[0-9a-f]{{{OWNER_TAG_CHARS}}}$")


def owner_tag(owner: str) -> str:
    """A short, path-safe tag for an owner identity (a hash: no identity text in keys)."""
    if not owner:
        raise ValueError("an owner identity must not be empty")
    return hashlib.sha256(owner.encode("utf-8")).hexdigest()[:OWNER_TAG_CHARS]


def owner_prefix(tag: str) -> str:
    """The storage prefix of one owner: every session and job record of theirs is below it."""
    if not _OWNER_TAG_RE.match(tag):
        raise ValueError(f"not an owner tag: {tag[:40]!r}")
    return f"{OWNERS_PREFIX}{tag}/"


def split_owner(key: str) -> tuple[str, str]:
    """(owner prefix, rest) of a bucket key: ``("owners/<tag>/", "session_x/...")``.

    A key outside any well-formed owner prefix belongs to the bucket root: ``("", key)``.
    """
    if key.startswith(OWNERS_PREFIX):
        tag, sep, rest = key[len(OWNERS_PREFIX) :].partition("/")
        if sep and _OWNER_TAG_RE.match(tag):
            return f"{OWNERS_PREFIX}{tag}/", rest
    return "", key

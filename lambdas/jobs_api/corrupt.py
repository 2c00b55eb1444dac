"""A session the inspection routes cannot read: answered 422 with what is corrupt, never 500.

Under tenant isolation a tool may write its own session, so one bad write must not turn its
owner's inspection routes into "internal error". The report is what `elsai sessions check`
finds (`elsai.session.inspect.check`), with paths relative to the bucket's session folder
(no bucket names), capped at `MAX_PROBLEMS` findings.
"""

from elsai.session.inspect.check import check_session
from elsai.session.inspect.snapshot import Problem
from elsai.session.layout import keys
from elsai.session.layout.records import SessionCorruptError
from elsai.session.storage.base import StorageBackend
from elsai_lambdas.jobs_api.errors import CorruptSession

MAX_PROBLEMS = 50
#: What a reader of stored JSON raises on a file that is not what it claims to be.
READ_ERRORS = (SessionCorruptError, ValueError, TypeError, KeyError, AttributeError)


def _relative(path: str, session_id: str) -> str:
    folder = keys.session_dir(session_id)
    at = path.find(folder)
    return path[at:] if at >= 0 else path.rsplit("/", 1)[-1]


def problem_json(problem: Problem, session_id: str) -> dict[str, str]:
    """One finding as JSON: severity, the file (relative to the bucket) and what is wrong."""
    return {
        "severity": problem.severity,
        "path": _relative(problem.path, session_id),
        "message": problem.message[:500],
    }


def corrupt_session(
    storage: StorageBackend, session_id: str, found: list[Problem] | None = None
) -> CorruptSession:
    """The 422 for `session_id`: the check's findings (or `found`, if the check finds none)."""
    try:
        problems = [p for p in check_session(storage, session_id) if p.severity == "error"]
    except READ_ERRORS as exc:  # the check itself tripped: report what tripped it
        problems = [Problem("error", keys.session_dir(session_id), f"unreadable: {exc}")]
    problems = (
        problems
        or list(found or [])
        or [Problem("error", keys.session_dir(session_id), "a stored file could not be read")]
    )
    return CorruptSession(
        f"session {session_id!r} has corrupt files; `elsai sessions check` shows the same",
        session_id,
        [problem_json(p, session_id) for p in problems[:MAX_PROBLEMS]],
    )

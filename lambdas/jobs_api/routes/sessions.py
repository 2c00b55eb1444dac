"""The HTTP contract of /sessions: a read-only view of a stored session."""

import re
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai.ids import MAX_ID_LENGTH, validate_id
from elsai.serverless import limits
from elsai_lambdas.jobs_api import aws, owner
from elsai_lambdas.jobs_api.errors import InvalidRequest, NotFound
from elsai_lambdas.jobs_api.telemetry import tracer

router = Router()
_SESSION_ID = re.compile(limits.SAFE_ID_PATTERN)  # the ids POST /jobs accepts, no others


def _owner_param() -> str | None:
    """``?owner=``, given at most once (other query parameters are ignored, as before)."""
    multi = router.current_event.multi_value_query_string_parameters or {}
    if len(multi.get("owner") or []) > 1:
        raise InvalidRequest("give owner at most once")
    return (router.current_event.query_string_parameters or {}).get("owner")


@router.get("/sessions/<session_id>")
@tracer.capture_method(capture_response=False)
def get_session(session_id: str) -> dict[str, Any]:
    """Agents, message counts, last message and checkpoint bookmark of a stored session.

    422 with the findings of `elsai sessions check` when a file it reads is corrupt.
    ``?owner=<tag>``: an admin reads that owner's session (tenant isolation).
    """
    session_id = unquote(session_id)  # REST API Gateway passes the path still percent-encoded
    try:
        validate_id(session_id, "session_id")
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    if not _SESSION_ID.fullmatch(session_id):
        raise InvalidRequest(
            f"session_id must be 1-{MAX_ID_LENGTH} characters of letters, digits, '_', '-', ':' "
            "or single dots"
        )
    from elsai.session.inspect.snapshot import load_session
    from elsai.session.inspect.summary import summarize_session
    from elsai.session.layout import keys
    from elsai_lambdas.jobs_api.corrupt import READ_ERRORS, corrupt_session

    try:
        prefix = owner.session_prefix(_owner_param())
    except NotFound:
        raise NotFound(f"no session {session_id!r}") from None
    storage = aws.storage(prefix)
    if storage.read(keys.session_key(session_id)) is None:
        raise NotFound(f"no session {session_id!r}")
    # What the summary reads (each agent's newest message, bookmark, records), judged by the
    # check's rules first: a corrupt file is a 422 report, never a 500.
    snap = load_session(storage, session_id, last=1)
    errors = [p for p in snap.problems if p.severity == "error"] if snap else []
    if errors:
        raise corrupt_session(storage, session_id, errors)
    try:
        summary = summarize_session(storage, session_id)
    except READ_ERRORS as exc:  # changed since the snapshot, or a kind it does not judge
        raise corrupt_session(storage, session_id) from exc
    if summary is None:
        raise NotFound(f"no session {session_id!r}")
    return summary

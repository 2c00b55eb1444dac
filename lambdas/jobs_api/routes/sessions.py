"""The HTTP contract of /sessions: a read-only view of a stored session."""

import re
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai.ids import MAX_ID_LENGTH, validate_id
from elsai.serverless import limits
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.errors import InvalidRequest, NotFound
from elsai_lambdas.jobs_api.telemetry import tracer

router = Router()
_SESSION_ID = re.compile(limits.SAFE_ID_PATTERN)  # the ids POST /jobs accepts, no others


@router.get("/sessions/<session_id>")
@tracer.capture_method(capture_response=False)
def get_session(session_id: str) -> dict[str, Any]:
    """Agents, message counts, last message and checkpoint bookmark of a stored session."""
    try:
        validate_id(session_id, "session_id")
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    if not _SESSION_ID.fullmatch(session_id):
        raise InvalidRequest(
            f"session_id must be 1-{MAX_ID_LENGTH} characters of letters, digits, '_', '-', ':' "
            "or single dots"
        )
    from elsai.session.inspect.summary import summarize_session

    summary = summarize_session(aws.storage(), session_id)
    if summary is None:
        raise NotFound(f"no session {session_id!r}")
    return summary

"""The HTTP contract of /sessions: a read-only view of a stored session."""

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai.ids import validate_id
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.errors import InvalidRequest, NotFound
from elsai_lambdas.jobs_api.telemetry import tracer

router = Router()


@router.get("/sessions/<session_id>")
@tracer.capture_method(capture_response=False)
def get_session(session_id: str) -> dict[str, Any]:
    """Agents, message counts, last message and checkpoint bookmark of a stored session."""
    try:
        validate_id(session_id, "session_id")
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    from elsai.session.inspect.summary import summarize_session

    summary = summarize_session(aws.storage(), session_id)
    if summary is None:
        raise NotFound(f"no session {session_id!r}")
    return summary

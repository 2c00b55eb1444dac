"""The route of /sessions: a read-only view of a stored session."""

from __future__ import annotations

import re
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai.ids import MAX_ID_LENGTH, validate_id
from elsai.serverless import limits
from elsai.serverless.contract.jobs_api import SessionSummary
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.errors import InvalidRequest, NotFound
from elsai_lambdas.jobs_api.owner import session_prefix
from elsai_lambdas.jobs_api.routing import route

router = Router()
_SESSION_ID = re.compile(limits.SAFE_ID_PATTERN)  # the ids POST /jobs accepts, no others


@route(router, "getSession")
def get_session(session_id: str, owner: str | None) -> SessionSummary:
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
    return SessionSummary.model_validate(_summary(session_id, owner))


def _summary(session_id: str, owner_tag: str | None) -> dict[str, object]:
    from elsai.session.inspect.snapshot import load_session
    from elsai.session.inspect.summary import summarize_session
    from elsai.session.layout import keys
    from elsai_lambdas.jobs_api.corrupt import READ_ERRORS, corrupt_session

    try:
        prefix = session_prefix(owner_tag)
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

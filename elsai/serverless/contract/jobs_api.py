"""The jobs API, once: every route with its parameters, bodies, statuses and IAM grants.

`JobsApi` is the table (one `operation` stub per route, see `elsai.serverless.contract.http`)
and, bound to a transport, the client: ``JobsApi(transport).start("...")`` sends POST /jobs and
returns a `StartedJob`. Everything else about a route is made from or checked against this
class: the handler's Powertools routes (`elsai_lambdas.jobs_api.routing`), the 405 ``Allow``
answers, the local server's matcher (`elsai.local.http`), the API Gateway resources, methods,
request models and the API role's grants (`elsai.cdk.api`), and the OpenAPI document
(`elsai.serverless.contract.openapi`, ``docs/openapi.json``). README.md in this folder says
how to add a route.

The request bodies are in `jobs_api_requests` (imported here: one name for each model).
Response models accept fields they do not name (``extra="allow"``), so an older client reads
a newer server; the handler validates its own answers against them before sending.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from elsai.serverless import limits
from elsai.serverless.contract import service_keys
from elsai.serverless.contract.http import (
    Api,
    Grant,
    Param,
    header_param,
    operation,
    path_param,
    puts,
    query_param,
    reads,
)
from elsai.serverless.contract.jobs_api_requests import AnswerJob, StartJob
from elsai.serverless.contract.service_keys import OWNER_TAG_CHARS
from elsai.session.layout.keys import session_dir

# -- parameters ------------------------------------------------------------------------------

JOB_ID_SCHEMA = {"type": "string", "pattern": limits.JOB_ID_PATTERN, "minLength": 1,
                 "maxLength": limits.MAX_JOB_ID_LENGTH}  # fmt: skip
SESSION_ID_SCHEMA = {"type": "string", "pattern": limits.SAFE_ID_PATTERN, "minLength": 1,
                     "maxLength": limits.MAX_ID_LENGTH}  # fmt: skip
CURSOR_SCHEMA = {"type": "string", "maxLength": limits.MAX_CURSOR_CHARS}  # "": from the start
#: The ``?status=`` filters of GET /jobs (Step Functions execution statuses).
LIST_STATUSES = ("RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")


def _limit(maximum: int, default: int) -> Param:
    schema = {"type": "integer", "minimum": 1, "maximum": maximum, "default": default}
    return query_param(schema, f"Page size, 1-{maximum}.")


def _after(what: str) -> Param:
    return query_param(CURSOR_SCHEMA, f"The `cursor` of the previous page of {what}.")


JobId = Annotated[str, path_param(JOB_ID_SCHEMA, "The job id `POST /jobs` answered.")]
SessionId = Annotated[str, path_param(SESSION_ID_SCHEMA, "A session id.")]
# -- response bodies -------------------------------------------------------------------------


class Body(BaseModel):
    """A response body: unknown fields are kept, and `as_dict` gives the body back as sent."""

    model_config = ConfigDict(extra="allow")

    def as_dict(self) -> dict[str, Any]:
        """The JSON object this model was read from (fields it was not given stay out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class StartedJob(Body):
    """202 of POST /jobs: the job's ids and its status (RUNNING, or a replayed job's)."""

    job_id: str
    session_id: str
    agent_id: str
    status: str


class JobError(Body):
    """Why a job ended FAILED, TIMED_OUT or ABORTED (Step Functions' error and cause)."""

    error: str | None = None
    cause: str | None = None


class Interrupt(Body):
    """A question a waiting job asks; a Graph's or Swarm's also names its `node`."""

    id: str
    name: str | None = None
    reason: Any = None
    tool_use_id: str | None = None
    node: str | None = None


class NodesStatus(Body):
    """A Graph or Swarm job's nodes: each one's status, from ``multi_agent.json``."""

    kind: str | None = None
    status: str | None = None
    nodes: dict[str, str] = {}
    current_node: str | None = None


class Job(Body):
    """200 of GET /jobs/{job_id}: status, and the result, error or interrupts it has."""

    job_id: str
    status: str
    session_id: str | None = None
    agent_id: str | None = None
    started_at: str | None = None
    stopped_at: str | None = None
    executions: int | None = None  # the job's Step Functions executions (continuations)
    result: Any = None  # SUCCEEDED: the final slice's result
    error: JobError | None = None
    interrupts: list[Interrupt] | None = None  # WAITING_FOR_INPUT
    multi_agent: NodesStatus | None = None
    version: str | None = None
    version_policy: str | None = None
    current_version: str | None = None
    version_is_current: bool | None = None
    upgrades: list[str] | None = None
    build_changes: list[str] | None = None


class ListedJob(Body):
    """One job of a GET /jobs page."""

    job_id: str
    status: str
    started_at: str | None = None
    stopped_at: str | None = None


class JobPage(Body):
    """200 of GET /jobs: the newest jobs first; `cursor` is None on the last page."""

    jobs: list[ListedJob]
    cursor: str | None


class EventPage(Body):
    """200 of GET /jobs/{job_id}/events: pass `cursor` back as ``after`` for the next page."""

    job_id: str
    status: str
    events: list[dict[str, Any]] = Field(
        description="Progress events in order, each with `type` and `at`. An event of a "
        "Graph's or Swarm's node slice (slice_started, retry, attempt_failed, resumed, "
        "slice_ended, interrupted) also has `node`, the node it ran; the job's own slices have "
        "none."
    )
    cursor: str


class Answered(Body):
    """200 of POST /jobs/{job_id}/responses: the interrupt ids answered."""

    job_id: str
    status: str
    answered: list[str]


class Cancelled(Body):
    """200 of DELETE /jobs/{job_id}."""

    job_id: str
    status: str
    stopped_at: str | None = None


class Upgraded(Body):
    """200 of POST /jobs/{job_id}/upgrade: the version it resumes on and whether it moved."""

    job_id: str
    version: str
    upgraded: bool
    event: str | None = None


class AgentSummary(Body):
    """One agent of a stored session: messages, the last one, and its bookmark."""

    agent_id: str
    message_count: int
    last_message: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    next_invoke: str | None = None


class SessionSummary(Body):
    """200 of GET /sessions/{session_id}: what `elsai sessions show` summarizes."""

    session_id: str
    session: dict[str, Any] | None = None
    agents: list[AgentSummary]
    multi_agent: dict[str, Any] | None = None


# -- the operations --------------------------------------------------------------------------

_DESCRIBE = Grant(("states:DescribeExecution",), "executions")
_HISTORY = Grant(("states:DescribeExecution", "states:GetExecutionHistory"), "executions")
_JOB_RECORDS = reads(service_keys.JOBS_PREFIX + "*")  # parked tokens, cancel, version, node waits
_SESSIONS = reads(session_dir("*").rstrip("/"))  # session_<id>/...: every stored session
#: Key patterns of the records the API writes (any job: "*").
_VERSION = service_keys.job_version_key("*")
_ANSWERS = service_keys.answers_prefix("*") + "*"
_NODE_WAITS = service_keys.node_waits_key("*")
_CANCEL = service_keys.job_cancel_key("*")
_THE_JOB = {"job_id": "$response.body#/job_id"}
_IDEMPOTENCY_KEY = header_param(
    "Idempotency-Key",
    {"type": "string", "pattern": limits.IDEMPOTENCY_KEY_PATTERN, "minLength": 1,
     "maxLength": limits.MAX_IDEMPOTENCY_KEY_CHARS},
    "Retrying with the same key and body starts nothing new (the job id is derived from it); "
    "the same key with another body is a 409.",
)  # fmt: skip
_OWNER = query_param(
    {"type": "string", "pattern": f"^[0-9a-f]{{{OWNER_TAG_CHARS}}}$"},
    "Admins (tenant isolation): read this owner's session; the tag a job id carries "
    "(`o<tag>-...`). Others: their own only.",
)


class JobsApi(Api):
    """The jobs API; on a transport, its client (`elsai.client.http_client`, `LocalRuntime.jobs`)."""

    @operation(
        "POST", "/jobs", "startJob", summary="Start a job", status=202, request=StartJob,
        errors=(409, 413),
        grants=(Grant(("states:StartExecution",), "state_machine"), _DESCRIBE, _JOB_RECORDS,
                puts(_VERSION)),
        headers={
            "Location": ({"type": "string"}, "The job's URL: `/jobs/{job_id}`."),
            "Idempotent-Replayed": ({"type": "string", "enum": ["true", "false"]},
                                    "Whether an earlier request with this key started the job."),
        },
        links={"GetJob": ("getJob", _THE_JOB), "GetEvents": ("getEvents", _THE_JOB),
               "AnswerJob": ("answerJob", _THE_JOB), "CancelJob": ("cancelJob", _THE_JOB),
               "GetSession": ("getSession", {"session_id": "$response.body#/session_id"})},
    )  # fmt: skip
    def start(
        self, prompt: str, session_id: str | None = None, agent_id: str = "agent",
        version_policy: str | None = None,
        idempotency_key: Annotated[str | None, _IDEMPOTENCY_KEY] = None,
    ) -> StartedJob:  # fmt: skip
        """Start an execution of the jobs state machine on `prompt`.

        A new session unless `session_id` names one to continue; a repeated Idempotency-Key
        with the same body starts nothing new.
        """
        ...

    @operation(
        "GET", "/jobs/{job_id}", "getJob", summary="A job's status", errors=(404,),
        grants=(_HISTORY, _SESSIONS, _JOB_RECORDS),
    )  # fmt: skip
    def get(self, job_id: JobId) -> Job:
        """Status; the result when SUCCEEDED, error and cause when it ended otherwise.

        A job waiting for a person reports WAITING_FOR_INPUT and the interrupts it waits on.
        """
        ...

    @operation(
        "GET", "/jobs/{job_id}/events", "getEvents", summary="A job's progress events",
        errors=(404, 422), grants=(_HISTORY, _SESSIONS, _JOB_RECORDS),
        unknown_query="reject",
        links={"NextEvents": ("getEvents", {"job_id": "$request.path.job_id",
                                            "after": "$response.body#/cursor"})},
    )  # fmt: skip
    def events(
        self, job_id: JobId,
        after: Annotated[str | None, _after("events")] = None,
        limit: Annotated[int | None, _limit(limits.MAX_EVENTS_PAGE, limits.DEFAULT_PAGE)] = None,
    ) -> EventPage:  # fmt: skip
        """Events since `after` (stored messages, slices, retries, resumes, interrupts)."""
        ...

    @operation(
        "POST", "/jobs/{job_id}/responses", "answerJob", summary="Answer a job's interrupts",
        request=AnswerJob, errors=(404, 409, 413),
        grants=(_HISTORY, Grant(("states:SendTaskSuccess",), "task_tokens"), _JOB_RECORDS,
                puts(_ANSWERS, _NODE_WAITS, _VERSION)),
    )  # fmt: skip
    def answer(self, job_id: JobId, responses: list[dict[str, Any]]) -> Answered:
        """Send the parked task token with the answers; each pending interrupt exactly once."""
        ...

    @operation(
        "DELETE", "/jobs/{job_id}", "cancelJob", summary="Cancel a job", errors=(404, 409),
        grants=(Grant(("states:DescribeExecution", "states:StopExecution"), "executions"),
                _JOB_RECORDS, puts(_CANCEL)),
    )  # fmt: skip
    def cancel(self, job_id: JobId) -> Cancelled:
        """Stop a running job; its session stays valid and the job reports CANCELLED."""
        ...

    @operation(
        "POST", "/jobs/{job_id}/upgrade", "upgradeJob", summary="Move a job to the current version",
        errors=(404, 409), grants=(_DESCRIBE, _JOB_RECORDS, puts(_VERSION)),
    )  # fmt: skip
    def upgrade(self, job_id: JobId) -> Upgraded:
        """The job runs on the current agent version after its next wait for input (409 if it ended)."""
        ...

    @operation(
        "GET", "/sessions/{session_id}", "getSession", summary="A stored session",
        errors=(404, 422), grants=(_SESSIONS,),
    )  # fmt: skip
    def session(
        self, session_id: SessionId, owner: Annotated[str | None, _OWNER] = None
    ) -> SessionSummary:
        """Agents, message counts, last message and checkpoint bookmark of a stored session.

        422 with the findings of `elsai sessions check` when a file it reads is corrupt.
        """
        ...

    # Last: in the class body below it, `list` would name this method.
    @operation(
        "GET", "/jobs", "listJobs", summary="List jobs, newest first", unknown_query="reject",
        grants=(Grant(("states:ListExecutions",), "state_machine"), _JOB_RECORDS),
    )  # fmt: skip
    def list(
        self,
        limit: Annotated[int | None, _limit(limits.MAX_JOBS_PAGE, limits.DEFAULT_PAGE)] = None,
        after: Annotated[str | None, _after("jobs")] = None,
        status: Annotated[str | None, query_param(
            {"type": "string", "enum": list(LIST_STATUSES)},
            "Only jobs whose execution has this status.")] = None,
    ) -> JobPage:  # fmt: skip
        """The newest jobs first, a page at a time (under tenant isolation: the caller's own)."""
        ...

"""What the deployed parts agree on: one owner for the names and payloads they exchange.

The state machine (``elsai.cdk``), the agent handler (``elsai_lambdas.agent_handler``) and the
local runtime (``elsai.local``) all import from here: the statuses the machine's Choice states
branch on, the error names its Retry and Catch lists match, and the request and result models
of the single-agent steps. Error names the handler raises are derived from the exception
classes (the Lambda runtime reports a class's ``__name__`` as the error), so a renamed class
renames its entry in the machine. ``tests/unit/cdk/test_contract.py`` checks the synthesized
machine against these.

The CDK constructs name the handlers by module path (below); the bundle and the local runtime
import them by the same paths, and a checkout's editable install and a wheel provide them the
same way (``pyproject.toml`` maps ``lambdas/`` to the ``elsai_lambdas`` package).

The steps themselves (each action, its two models and the function serving it) are the
registry in ``elsai.serverless.contract.steps``; the models of the steps only a Graph or
Swarm job takes are in ``elsai.serverless.contract.node_steps``; the keys of the service's
job and owner records in ``elsai.serverless.contract.service_keys``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from elsai.errors import AgentFactoryError, AgentInUseError, ElsaiError, SessionConflictError
from elsai.serverless.errors import (
    BuildMismatchError,
    InterruptPayloadTooLargeError,
    ModelAccessDeniedError,
)
from elsai.serverless.limits import MAX_JOB_ID_LENGTH

# -- the handlers ----------------------------------------------------------------------------

#: The installed package that holds the Lambda handlers (source: this repository's lambdas/).
HANDLERS_PACKAGE = "elsai_lambdas"
#: The hashed lock the Lambda bundle installs, a data file of the handler package: the one name
#: of it (``elsai.cdk.lock.LOCK_FILE`` is where it is; ``make lock`` rewrites that file).
LAMBDA_LOCK_NAME = "lock-py312.txt"
#: The lock as a person finds it in an installed elsai (``lambdas/`` in elsai's repository).
LAMBDA_LOCK = f"{HANDLERS_PACKAGE}/{LAMBDA_LOCK_NAME}"

#: The cloud-assembly metadata entry DurableAgentService writes (its code paths), which the
#: local runtime reads to run the same code; never part of the CloudFormation template.
SERVICE_METADATA = "elsai:service"

#: Each function's handler module, by role.
HANDLER_MODULES = {
    "agent": f"{HANDLERS_PACKAGE}.agent_handler",
    "api": f"{HANDLERS_PACKAGE}.api_handler",
    "sweeper": f"{HANDLERS_PACKAGE}.sweeper",
}


def handler_name(role: str) -> str:
    """The Lambda ``Handler`` setting of the function playing ``role`` (``module.handler``)."""
    return f"{HANDLER_MODULES[role]}.handler"


# -- the job's pinned version ----------------------------------------------------------------

#: The state field (and job input field) naming the qualified ARN of the agent function
#: version a job runs on: every task invokes ``FunctionName.$`` = this path, so a deploy never
#: changes the code under a job in flight (docs/operations.md, "Deploys and jobs in flight").
AGENT_FUNCTION_FIELD: Final = "agent_function"
AGENT_FUNCTION_PATH: Final = f"$.{AGENT_FUNCTION_FIELD}"
#: The API function's environment variable holding the current version's qualified ARN.
CURRENT_VERSION_ENV: Final = "ELSAI_AGENT_VERSION_ARN"
#: ``version_policy`` at job start: stay on the start version, or move to the current one at
#: the next resume after a wait for input.
VersionPolicy = Literal["pinned", "upgrade_on_resume"]
VERSION_POLICIES: Final[tuple[str, ...]] = get_args(VersionPolicy)


def version_of(function_arn: str) -> str:
    """The version part of a qualified function ARN (``...:function:name:7`` -> ``"7"``)."""
    _, _, rest = function_arn.partition(":function:")
    _, _, qualifier = rest.partition(":")
    return qualifier or "$LATEST"


# -- statuses: what a step returns and the machine's Choice states branch on -----------------

#: The job (or node) is done.
COMPLETED: Final = "completed"
#: The slice stopped at a boundary before the deadline; the next slice resumes it.
CONTINUE: Final = "continue"
#: The agent waits for interrupt responses.
INTERRUPTED: Final = "interrupted"
#: The factory built a Graph or Swarm: the job takes the multi-agent path.
ORCHESTRATE: Final = "orchestrate"
#: Plan/Fold: a batch of nodes is ready to run.
RUN: Final = "run"
#: Plan/Fold: the run failed; a node slice: the node failed.
FAILED: Final = "failed"
#: An execution's output when the job continues in the next execution (its continuation).
CONTINUED: Final = "continued"

#: How a job that used up a budget fails (single agents: Fail states of these names; Graph
#: and Swarm jobs: the error type Fold reports, naming the node that crossed the budget).
SLICE_BUDGET_EXHAUSTED: Final = "SliceBudgetExhausted"
MODEL_CALL_BUDGET_EXHAUSTED: Final = "ModelCallBudgetExhausted"
#: Any other end of a failed Graph or Swarm run (a node failed, a limit of the orchestrator).
MULTI_AGENT_FAILED: Final = "MultiAgentFailed"

SliceStatus = Literal["completed", "continue", "interrupted", "orchestrate"]
RunStatus = Literal["run", "completed", "failed", "interrupted"]
NodeSliceStatus = Literal["completed", "continue", "interrupted", "failed"]
STATUSES: Final[frozenset[str]] = frozenset(
    {*get_args(SliceStatus), *get_args(RunStatus), *get_args(NodeSliceStatus), CONTINUED}
)

# -- error names the machine's Retry and Catch lists match ------------------------------------

#: Errors Lambda, Step Functions and the Lambda runtime define (no class of ours has them).
LAMBDA_SERVICE_ERRORS: Final = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.Unknown",  # what a hard timeout or crash of the function surfaced as before
)
#: The function ran past its timeout (the newer name of that event).
SANDBOX_TIMEDOUT: Final = "Sandbox.Timedout"
#: The runtime process died (e.g. SIGKILL, out of memory).
RUNTIME_EXIT_ERROR: Final = "Runtime.ExitError"
#: A task ran past its TimeoutSeconds (or a task token was not answered in time).
STATES_TIMEOUT: Final = "States.Timeout"
#: Any other error of a task, e.g. an exception the handler raised.
STATES_TASK_FAILED: Final = "States.TaskFailed"
#: Every error (a Catch's last resort).
STATES_ALL: Final = "States.ALL"
#: Reserved concurrency or the account's limit reached.
LAMBDA_THROTTLED: Final = "Lambda.TooManyRequestsException"
#: Starting the next execution failed on the Step Functions side.
SFN_SERVICE_ERROR: Final = "StepFunctions.SfnException"
#: The next execution's name is taken: a retried start whose first attempt succeeded.
EXECUTION_ALREADY_EXISTS: Final = "StepFunctions.ExecutionAlreadyExistsException"

#: Exceptions that retrying cannot fix: the machine matches them first, with MaxAttempts 0,
#: so that the States.TaskFailed wildcard never retries them. SessionConflictError: a second
#: writer holds the session, retrying would fight it. AgentFactoryError: the deployed factory
#: is misconfigured. ModelAccessDeniedError: the account has no access to the model yet (an
#: admin must act). InterruptPayloadTooLargeError: the same slice would produce them again.
#: BuildMismatchError: the code a pinned job runs on is not the build it started on.
NON_RETRYABLE_EXCEPTIONS: Final[tuple[type[Exception], ...]] = (
    SessionConflictError,
    AgentFactoryError,
    ModelAccessDeniedError,
    InterruptPayloadTooLargeError,
    BuildMismatchError,
)
#: Exceptions retried after backoff like a crash. AgentInUseError: another live process
#: holds the agent's lease (a subclass of SessionConflictError, matched by its own name).
RETRYABLE_EXCEPTIONS: Final[tuple[type[Exception], ...]] = (AgentInUseError,)

NON_RETRYABLE_ERRORS: Final = tuple(cls.__name__ for cls in NON_RETRYABLE_EXCEPTIONS)
#: Lambda's own transient failures and crashes of the function: also what the park call retries.
#: States.Timeout there means nobody answered in time, and States.TaskFailed would include an
#: API-side SendTaskFailure: both must end the job.
PARK_RETRYABLE_ERRORS: Final = (*LAMBDA_SERVICE_ERRORS, SANDBOX_TIMEDOUT, RUNTIME_EXIT_ERROR)
#: What a step running agent code (a slice, a node slice, Plan, Fold) is retried on.
RETRYABLE_ERRORS: Final = (
    *PARK_RETRYABLE_ERRORS,
    STATES_TIMEOUT,
    STATES_TASK_FAILED,
    *(cls.__name__ for cls in RETRYABLE_EXCEPTIONS),
)


class AnswersWaitingError(ElsaiError):
    """The job was about to park while answers for its nodes were already stored.

    Sleeping on a token nobody would send stalls the job: the state machine catches this
    error by name and plans again, so the answered nodes run now.
    """


#: The multi-agent park found answers already stored: the machine plans again, never waits.
ANSWERS_WAITING_ERROR: Final = AnswersWaitingError.__name__
#: Throttling gets its own, longer retry: waiting for a free slot is normal under load.
THROTTLE_ERRORS: Final = (LAMBDA_THROTTLED,)
#: What starting the job's next execution (its continuation) is retried on.
CONTINUATION_RETRYABLE_ERRORS: Final = (SFN_SERVICE_ERROR, STATES_TASK_FAILED)

# -- requests and results of the steps ---------------------------------------------------------


class JobStepRequest(BaseModel):
    """What every step (slice, plan, node slice, fold) gets: ids and answers, never a transcript.

    The models of the steps a single-agent slice never takes build their validators on first
    use (`defer_build`), and a Graph's or Swarm's (plan, node slice, fold) live in `node_steps`,
    imported with them: a single-agent cold start pays for neither.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="ignore", defer_build=True)

    job_id: str = Field(min_length=1, max_length=MAX_JOB_ID_LENGTH)
    execution_id: str = Field(min_length=1)
    session_id: str
    agent_id: str = "agent"
    prompt: str | None = None
    interrupt_responses: list[dict[str, Any]] | None = None
    #: The qualified ARN of the version this step was invoked as (the job's pinned version).
    agent_function: str | None = None


class SliceRequest(JobStepRequest):
    """What the state machine hands a slice: ids and answers, never the transcript."""

    model_config: ClassVar[ConfigDict] = ConfigDict(defer_build=False)  # every slice validates one

    slice: int = 0
    #: Step Functions retry count of this slice (`$$.State.RetryCount`), when the state
    #: machine passes it; only telemetry reads it.
    attempt: int | None = None


class SliceResult(BaseModel):
    """The small status the state machine branches on (completed, continue, interrupted).

    "orchestrate": the factory built a Graph or Swarm; the state machine runs it as
    Plan → Map(node slices) → Fold (`elsai.serverless.orchestration`), `text` names its kind.
    """

    status: SliceStatus
    stop_reason: str
    text: str = ""
    interrupts: list[dict[str, Any]] = Field(default_factory=list)
    resumed_from_checkpoint: bool = False
    resume_position: str | None = None
    cycles: int = 0
    model_calls: int = 0  # this slice's; the state machine sums them for maxModelCalls
    slice: int = 0


class ParkRequest(BaseModel):
    """Park a task token: the job waits until the jobs API answers its interrupts.

    Both parks take it: a single agent's (``park``) and a Graph's or Swarm's whose nodes left
    all wait for people (``park_nodes``, whose waits are stored per node already).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="ignore", defer_build=True)

    task_token: str
    job_id: str
    session_id: str
    agent_id: str = "agent"
    #: The interrupts the job waits on (stored with a single agent's token; shown locally).
    interrupts: list[dict[str, Any]] | None = None
    #: The qualified ARN of the version this step was invoked as (the job's pinned version).
    agent_function: str | None = None


class ParkResult(BaseModel):
    """The park call's output (the wait's real result is the API's SendTaskSuccess)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(defer_build=True)

    parked: bool = True

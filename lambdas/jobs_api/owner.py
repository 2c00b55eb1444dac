"""Who is calling, and which jobs and sessions are theirs (tenant isolation).

With ``ELSAI_TENANCY=owner`` (the CDK stack's ``tenantIsolation`` knob, on by default) every
request names its caller, and the caller owns what it creates:

- **Identity.** IAM auth (default): API Gateway's verified SigV4 principal,
  ``requestContext.identity.userArn``. An assumed-role ARN
  (``arn:aws:sts::<acct>:assumed-role/<role>/<session>``) is kept as the *role session*: two
  sessions of one role are two owners (an SSO user's session name is the user). Callers that
  share a role and want to share jobs must use one session name. Without ``userArn``,
  ``accountId`` + ``caller`` (the principal id) is used. With ``ELSAI_AUTH=cognito`` (a
  Cognito user pool authorizer) the identity is the token's ``sub`` claim. No identity: 401.
- **Storage.** An owner's sessions and job records live under ``owners/<tag>/``
  (`elsai.serverless.contract.service_keys.owner_prefix`, a hash of the identity), the spec's
  layout unchanged below it: two callers' ``customer-42`` are different sessions.
- **Jobs.** A job's id carries its owner's tag (``o<tag>-...``,
  `elsai.serverless.scoped.owned_job_id`), so the slices find the owner's prefix from the job
  id alone and every job route checks ownership without a lookup. Another owner's job is a
  404, exactly like a job that does not exist: an id's existence is never confirmed.
- **Admins.** ``ELSAI_ADMIN_ARNS`` (IAM: user, role or assumed-role ARNs) or
  ``ELSAI_ADMIN_GROUPS`` (Cognito groups) may read and steer every job, and read any owner's
  session with ``GET /sessions/{id}?owner=<tag>`` (the tag a job id carries after its ``o``);
  without ``owner`` the session read is their own. A job id without a tag (started before
  the stack turned isolation on) is visible to admins only, its records read at the root.

Without ``ELSAI_TENANCY`` nothing here applies: one shared namespace at the bucket root.
"""

import contextvars
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elsai.serverless import limits
from elsai.serverless.contract import service_keys
from elsai.serverless.scoped import job_owner_tag, owned_job_id
from elsai_lambdas.jobs_api.errors import InvalidRequest, NotFound, Unidentified

TENANCY_ENV = "ELSAI_TENANCY"
AUTH_ENV = "ELSAI_AUTH"
ADMIN_ARNS_ENV = "ELSAI_ADMIN_ARNS"
ADMIN_GROUPS_ENV = "ELSAI_ADMIN_GROUPS"
MAX_IDENTITY_CHARS = 2048

_ASSUMED = re.compile(r"^arn:([\w-]+):sts::(\d{12}):assumed-role/([\w+=,.@-]+)/([\w+=,.@-]+)$")
_ROLE = re.compile(r"^arn:([\w-]+):iam::(\d{12}):role/(?:[\w+=,.@/-]*/)?([\w+=,.@-]+)$")
_PRINCIPAL = re.compile(r"^arn:[\w-]+:(iam|sts)::\d{12}:[\w+=,.@/:-]+$")
_JOB_PATH = re.compile(r"^/jobs/([^/]+)")
_JOB_ID = re.compile(limits.JOB_ID_PATTERN)


@dataclass(frozen=True)
class Caller:
    """The identified caller: its normalized identity, storage tag, and admin right."""

    owner: str
    admin: bool = False

    @property
    def tag(self) -> str:
        """The owner tag of this caller (in its job ids and storage prefix)."""
        return service_keys.owner_tag(self.owner)

    @property
    def prefix(self) -> str:
        """Where this caller's sessions and job records live."""
        return service_keys.owner_prefix(self.tag)


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("caller", default=None)
_prefix: contextvars.ContextVar[str] = contextvars.ContextVar("prefix", default="")


def _env(name: str) -> str:
    import os

    return os.environ.get(name, "").strip()


def isolation_on() -> bool:
    """Whether the API runs with tenant isolation (``ELSAI_TENANCY=owner``)."""
    return _env(TENANCY_ENV).lower() == "owner"


def _listed(name: str) -> set[str]:
    return {item.strip() for item in _env(name).split(",") if item.strip()}


def _text(value: Any, what: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_IDENTITY_CHARS or not value.isprintable():
        raise Unidentified(f"the request's {what} is not a valid caller identity")
    return value


def identify(raw_event: dict[str, Any]) -> Caller:
    """The caller of an API Gateway proxy event; Unidentified if it names none."""
    context = raw_event.get("requestContext")
    context = context if isinstance(context, dict) else {}
    if _env(AUTH_ENV).lower() == "cognito":
        return _cognito_caller(context)
    identity = context.get("identity")
    identity = identity if isinstance(identity, dict) else {}
    arn = _text(identity.get("userArn"), "userArn")
    if arn is not None:
        if not _PRINCIPAL.match(arn):
            raise Unidentified(
                "the request's caller identity (userArn) is not an IAM or STS principal ARN"
            )
        return Caller(owner=f"iam:{arn}", admin=_is_admin_arn(arn))
    account = _text(identity.get("accountId"), "accountId")
    principal = _text(identity.get("caller"), "caller")
    if account and principal:
        return Caller(owner=f"iam-principal:{account}:{principal}")
    raise Unidentified(
        "the request carries no caller identity (requestContext.identity.userArn); "
        "the jobs API must sit behind API Gateway with IAM authorization"
    )


def _cognito_caller(context: dict[str, Any]) -> Caller:
    authorizer = context.get("authorizer")
    claims = authorizer.get("claims") if isinstance(authorizer, dict) else None
    sub = _text(claims.get("sub") if isinstance(claims, dict) else None, "sub claim")
    if sub is None:
        raise Unidentified(
            "the request carries no caller identity: no Cognito 'sub' claim (is the authorizer on?)"
        )
    assert isinstance(claims, dict)
    # REST API authorizers pass claims as strings: "ops,oncall" or "[ops oncall]".
    raw = claims.get("cognito:groups") or ""
    groups = raw if isinstance(raw, list) else re.split(r"[,\s]+", str(raw).strip("[]"))
    admin = bool({str(g).strip() for g in groups} & _listed(ADMIN_GROUPS_ENV))
    return Caller(owner=f"cognito:{sub}", admin=admin)


def _is_admin_arn(arn: str) -> bool:
    """Whether `arn` is listed as an admin, itself or (assumed role) through its role."""
    admins = _listed(ADMIN_ARNS_ENV)
    if arn in admins:
        return True
    assumed = _ASSUMED.match(arn)
    if assumed is None:
        return False
    partition, account, role, _session = assumed.groups()
    for entry in admins:
        listed = _ROLE.match(entry)
        if listed is not None and listed.groups() == (partition, account, role):
            return True
    return False


def current() -> Caller | None:
    """The caller of the request being handled (None without isolation)."""
    return _caller.get()


def storage_prefix() -> str:
    """The storage prefix this request reads and writes under ("" without isolation)."""
    return _prefix.get()


def session_prefix(owner_tag: str | None) -> str:
    """The prefix a session read looks under: the caller's own, or (admins) `owner_tag`'s.

    A non-admin naming another owner gets the 404 a missing session gets; a malformed tag,
    or ``owner`` without isolation, is a 400.
    """
    if owner_tag is None:
        return storage_prefix()
    caller = current()
    if caller is None:
        raise InvalidRequest(
            "owner= applies only with tenant isolation (one shared namespace here)"
        )
    try:
        prefix = service_keys.owner_prefix(owner_tag)
    except ValueError:
        raise InvalidRequest(
            f"owner must be an owner tag: {service_keys.OWNER_TAG_CHARS} lowercase hex characters "
            "(the part of a job id between its 'o' and the first '-')"
        ) from None
    if not (caller.admin or owner_tag == caller.tag):
        raise NotFound("not visible")  # the caller of the route words the 404
    return prefix


def new_job_id(rest: str) -> str:
    """A job id for the current caller: `rest`, tagged with the owner when isolation is on."""
    caller = current()
    return rest if caller is None else owned_job_id(caller.tag, rest)


def may_see(job_id: str) -> bool:
    """Whether the current caller may see job `job_id` (always, without isolation)."""
    caller = current()
    if caller is None or caller.admin:
        return True
    return job_owner_tag(job_id) == caller.tag


def _authorize(raw_event: dict[str, Any], path: str) -> tuple[Caller, str]:
    caller = identify(raw_event)
    match = _JOB_PATH.match(path)
    if match is None or not _JOB_ID.match(match.group(1)):
        return caller, caller.prefix  # not a job route, or an id the route refuses as 400
    job_id = match.group(1)
    tag = job_owner_tag(job_id)
    if tag is None and caller.admin:
        return caller, ""  # a job started before isolation: its records are at the root
    if tag is None or not (caller.admin or tag == caller.tag):
        raise NotFound(f"no job {job_id!r}")  # the same answer as for a job that never was
    return caller, service_keys.owner_prefix(tag)


def middleware(app: Any, next_middleware: Callable[[Any], Any]) -> Any:
    """Identify the caller and check job ownership before any route runs."""
    if not isolation_on():
        return next_middleware(app)
    caller, prefix = _authorize(app.current_event.raw_event, app.current_event.path)
    caller_token, prefix_token = _caller.set(caller), _prefix.set(prefix)
    try:
        return next_middleware(app)
    finally:
        _caller.reset(caller_token)
        _prefix.reset(prefix_token)

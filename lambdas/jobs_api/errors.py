"""Why the jobs API refuses a request, without any HTTP in it.

The job logic raises these; `jobs_api.app` maps each kind to its status code, so the rules
and the wire format stay apart.
"""


class RequestRefused(Exception):
    """A deliberate refusal; `message` is shown to the client as it is."""

    def __init__(self, message: str) -> None:
        """Keep `message` for the response body."""
        super().__init__(message)
        self.message = message


class InvalidRequest(RequestRefused):
    """The request is malformed or breaks a rule (shown as 400)."""


class Unidentified(RequestRefused):
    """The request names no caller (or a malformed one) while isolation is on (shown as 401)."""


class NotFound(RequestRefused):
    """The job or session named does not exist (shown as 404)."""


class Conflict(RequestRefused):
    """The request is valid but not in the job's current state (shown as 409)."""


class TooLarge(RequestRefused):
    """The request would break Step Functions' payload cap (shown as 413)."""


class CorruptSession(RequestRefused):
    """A stored session file is corrupt: reported with the findings (shown as 422)."""

    def __init__(self, message: str, session_id: str, problems: list[dict[str, str]]) -> None:
        """Keep the findings (`elsai sessions check`'s, as JSON) for the response body."""
        super().__init__(message)
        self.session_id = session_id
        self.problems = problems

"""The serverless runtime's size and id limits, in one place.

The jobs API Lambda validates requests against these, and the CDK request models in
`elsai/cdk/api.py` are built from them, so the coarse API Gateway gate can never drift
stricter than the handler behind it. Ids follow the session store's rules
(`elsai.ids.validate_id`); the pattern here is the character set the API admits on
top of them.
"""

from __future__ import annotations

from elsai.ids import MAX_ID_LENGTH

#: Longest prompt `POST /jobs` accepts, in characters.
MAX_PROMPT_CHARS = 100_000
#: Step Functions' cap on an execution's input and on a task's output, in UTF-8 bytes.
MAX_SFN_PAYLOAD_BYTES = 256 * 1024
#: Final-answer text a slice hands back (Step Functions state stays far below its cap).
MAX_SLICE_TEXT_CHARS = 8_000

#: Characters a session or agent id may use in the jobs API (a subset of what the store allows).
ID_CHARS = "A-Za-z0-9_.:-"
#: Full-match pattern for a session or agent id; its length bound is the store's own.
ID_PATTERN = rf"^[{ID_CHARS}]{{1,{MAX_ID_LENGTH}}}$"
_RUN = ID_CHARS.replace(".", "")
#: `ID_PATTERN`'s characters without what the store refuses on top ("." alone, ".."): single
#: dots between runs of the others. Exactly the ids the API accepts (with `MAX_ID_LENGTH`).
SAFE_ID_PATTERN = rf"^\.?[{_RUN}]+(?:\.[{_RUN}]+)*\.?$"

#: Longest job id: a Step Functions execution name is at most 80 characters.
MAX_JOB_ID_LENGTH = 80
#: Job ids the API creates and accepts (execution names; no '.' or ':').
JOB_ID_PATTERN = rf"^[A-Za-z0-9_-]{{1,{MAX_JOB_ID_LENGTH}}}$"
#: Bounds of a client's `Idempotency-Key` header, in characters.
MAX_IDEMPOTENCY_KEY_CHARS = 256
#: An `Idempotency-Key` is visible ASCII (no spaces, which HTTP servers may trim).
IDEMPOTENCY_KEY_PATTERN = rf"^[!-~]{{1,{MAX_IDEMPOTENCY_KEY_CHARS}}}$"

#: Answers one `POST /jobs/{job_id}/responses` may carry.
MAX_INTERRUPT_RESPONSES = 100
#: Longest `interruptId` an answer may name.
MAX_INTERRUPT_ID_CHARS = 256

#: Page size of `GET /jobs` and `GET /jobs/{job_id}/events` when the client names none.
DEFAULT_PAGE = 50
#: Largest page of `GET /jobs/{job_id}/events` (``?limit=``).
MAX_EVENTS_PAGE = 200
#: Largest page of `GET /jobs` (``?limit=``; Step Functions lists at most 1,000).
MAX_JOBS_PAGE = 100
#: Longest paging cursor (``?after=``), and longest query parameter the jobs API reads.
MAX_CURSOR_CHARS = 2_000

__all__ = [
    "DEFAULT_PAGE",
    "ID_CHARS",
    "ID_PATTERN",
    "IDEMPOTENCY_KEY_PATTERN",
    "JOB_ID_PATTERN",
    "MAX_CURSOR_CHARS",
    "MAX_EVENTS_PAGE",
    "MAX_ID_LENGTH",
    "MAX_IDEMPOTENCY_KEY_CHARS",
    "MAX_INTERRUPT_ID_CHARS",
    "MAX_INTERRUPT_RESPONSES",
    "MAX_JOB_ID_LENGTH",
    "MAX_JOBS_PAGE",
    "MAX_PROMPT_CHARS",
    "MAX_SFN_PAYLOAD_BYTES",
    "MAX_SLICE_TEXT_CHARS",
    "SAFE_ID_PATTERN",
]

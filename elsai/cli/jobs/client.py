"""The jobs API client, which lives in `elsai.client.jobs` (the console uses it too)."""

from elsai.client.jobs import (
    LOCAL_URL_ENV,
    ApiError,
    JobsClient,
    local_state_file,
    local_url,
    stack_api_url,
)

__all__ = [
    "LOCAL_URL_ENV",
    "ApiError",
    "JobsClient",
    "local_state_file",
    "local_url",
    "stack_api_url",
]

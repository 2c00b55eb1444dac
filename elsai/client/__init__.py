"""Clients of elsai's HTTP APIs, shared by the CLI (`elsai jobs`) and the console (`elsai console`).

`http_client(url)` is the jobs API over HTTP (SigV4 for API Gateway): a `JobsApi`, the same
class `LocalRuntime.jobs` is, on another transport. README.md here says what lives where.
"""

from elsai.client.http import CALLER_HEADER, HttpTransport, http_client
from elsai.client.locations import LOCAL_URL_ENV, local_state_file, local_url, stack_api_url
from elsai.serverless.contract.http import ApiError
from elsai.serverless.contract.jobs_api import JobsApi

__all__ = [
    "CALLER_HEADER",
    "LOCAL_URL_ENV",
    "ApiError",
    "HttpTransport",
    "JobsApi",
    "http_client",
    "local_state_file",
    "local_url",
    "stack_api_url",
]

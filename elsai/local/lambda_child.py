"""One agent Lambda invocation in its own process.

Like a Lambda sandbox: the event comes in, the "init phase" imports the real
`agent_handler`, then the handler runs with a context whose deadline counts down from the
function timeout. The result goes to stdout as one marked line (Powertools logs share
stdout); an exception goes to stderr as Lambda's error JSON and the exit code is 1. A
SIGKILL leaves no result at all: the parent turns that into `Runtime.ExitError`.

Two ways in: `python -m elsai.local.lambda_child` (event on stdin: a cold process), or
`run_forked`, forked from a server that pre-imported the heavy libraries (boto3, pydantic,
Powertools, elsai) so each invocation skips ~1 s of imports. Neither imports the handler or
the user's factory before the invocation's environment is in place.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import traceback
from typing import Any

PRELOAD = ["boto3", "botocore.session", "pydantic", "aws_lambda_powertools", "aws_lambda_powertools.metrics",
           "elsai", "elsai.serverless", "elsai.session", "elsai.local.instrument"]  # fmt: skip


def _handle(event: dict[str, Any]) -> int:
    from elsai.local.shapes import ERROR_MARK, EVENT_MARK, RESULT_MARK, LocalLambdaContext
    from elsai_lambdas import agent_handler  # init phase: not counted in the function timeout

    sys.stdout.write(
        EVENT_MARK + json.dumps({"type": "handler_started"}) + "\n"
    )  # the timeout starts now
    sys.stdout.flush()
    _import_user_factory()
    context = LocalLambdaContext(
        os.environ.get("ELSAI_LOCAL_FUNCTION_NAME", "elsai-agent"),
        int(os.environ.get("ELSAI_LOCAL_TIMEOUT_MS", "900000")),
        int(os.environ.get("ELSAI_LOCAL_MEMORY_MB", "1024")),
        os.environ.get("ELSAI_LOCAL_REQUEST_ID"),
    )
    try:
        result = agent_handler.handler(event, context)
    except Exception as exc:
        error = {
            "errorType": type(exc).__name__,
            "errorMessage": str(exc),
            "stackTrace": traceback.format_exception(exc),
        }
        sys.stderr.write(ERROR_MARK + json.dumps(error) + "\n")
        sys.stderr.flush()
        return 1
    sys.stdout.write(RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


def _import_user_factory() -> None:
    """Import the user's factory module now, as the handler's own `load_factory` would first.

    The child's factory is the wrapper in `elsai.local.instrument`, which imports the user's
    module only when it builds the agent; a module that sets up tracing at import (as
    applications do) must be in place before the handler opens its first span. An import
    error is left for the wrapper to report, as the handler would.
    """
    from elsai.local.instrument import USER_FACTORY_ENV

    module = os.environ.get(USER_FACTORY_ENV, "").partition(":")[0]
    if module:
        with contextlib.suppress(Exception):
            importlib.import_module(module)


def main() -> int:
    """Run one invocation whose event arrives on stdin (the child's entry point)."""
    return _handle(json.load(sys.stdin))


def run_forked(
    event: dict[str, Any], env: dict[str, str], cwd: str, out_path: str, err_path: str
) -> None:
    """Entry point in a process forked from the preloading server: set up stdio, env, paths."""
    os.chdir(cwd)
    for fd, path in ((1, out_path), (2, err_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    os.environ.clear()
    os.environ.update(env)
    sys.path[:0] = [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path
    ]
    try:
        code = _handle(event)
    except BaseException:  # anything else is a runtime crash, as on Lambda
        traceback.print_exc()
        code = 2
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())

"""Jobs API Lambda entry point (`api_handler.handler`, the name the CDK stack configures).

The API itself is the `jobs_api` package: the resolver and error mapping in `jobs_api.app`,
the routes in `jobs_api.routes`, the Step Functions job logic in `jobs_api.jobs`.
"""

from elsai_lambdas.startup import quiet_gc

with quiet_gc():  # init's imports, without collection passes (startup.py)
    from elsai_lambdas.jobs_api.app import app, handler
    from elsai_lambdas.jobs_api.telemetry import logger, tracer

__all__ = ["app", "handler", "logger", "tracer"]

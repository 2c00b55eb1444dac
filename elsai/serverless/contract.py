"""What the deployed parts agree on: one owner for the names they exchange.

The CDK constructs name the handlers by these module paths, the bundle and the local runtime
import them by the same paths, and a checkout's editable install and a wheel provide them the
same way (``pyproject.toml`` maps ``lambdas/`` to the ``elsai_lambdas`` package).
"""

from __future__ import annotations

#: The installed package that holds the Lambda handlers (source: this repository's lambdas/).
HANDLERS_PACKAGE = "elsai_lambdas"

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
